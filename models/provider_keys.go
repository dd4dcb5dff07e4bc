package models

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/agenta-go/agenta/internal/sealed"
)

// ProviderKeys holds LLM provider credentials by key name, such as
// OPENAI_API_KEY, for NewEvaluation.LMProvidersKeys. Build it with
// NewProviderKeys; its zero value holds none.
//
// It is opaque: no reflection path reads a key. fmt prints the names with
// [REDACTED] values under every verb, at any depth, in an unexported field
// of your own struct too; so do slog's text and JSON handlers,
// encoding/json and encoding/xml. Printers that walk fields themselves
// (go-spew, a test's diff) find the values sealed with a key that lives
// outside the value. Only the request body CreateEvaluation sends carries
// them. Names lists what it holds.
type ProviderKeys struct {
	// keys is behind a pointer: fmt prints a nested pointer as an address.
	keys *providerKeys
}

// providerKeys is the immutable content of a ProviderKeys: the names,
// sorted, and each value sealed (see internal/sealed).
type providerKeys struct {
	names  []string
	values [][]byte
}

func init() {
	sealed.ProviderKeys = func(keys any) map[string]string {
		k, _ := keys.(ProviderKeys)
		if k.keys == nil {
			return nil
		}
		out := make(map[string]string, len(k.keys.names))
		for i, name := range k.keys.names {
			out[name] = sealed.Open(name, k.keys.values[i])
		}
		return out
	}
}

// NewProviderKeys returns the provider keys of keys, a map from key name
// (such as OpenAIAPIKey) to credential. It copies keys; an empty or nil
// map gives the zero ProviderKeys, which sends none.
func NewProviderKeys(keys map[string]string) ProviderKeys {
	if len(keys) == 0 {
		return ProviderKeys{}
	}
	k := &providerKeys{names: slices.Sorted(maps.Keys(keys))}
	for _, name := range k.names {
		k.values = append(k.values, sealed.Seal(name, keys[name]))
	}
	return ProviderKeys{keys: k}
}

// Names returns the key names set, sorted; never the values.
func (k ProviderKeys) Names() []string {
	if k.keys == nil {
		return nil
	}
	return slices.Clone(k.keys.names)
}

// Len returns how many keys are set.
func (k ProviderKeys) Len() int {
	if k.keys == nil {
		return 0
	}
	return len(k.keys.names)
}

// Has reports whether a key of that name is set.
func (k ProviderKeys) Has(name string) bool {
	if k.keys == nil {
		return false
	}
	_, found := slices.BinarySearch(k.keys.names, name)
	return found
}

// IsZero reports whether no key is set; encoding/json's omitzero then
// leaves the field out.
func (k ProviderKeys) IsZero() bool { return k.Len() == 0 }

// redacted is the text that stands for a provider key's value.
const redacted = "[REDACTED]"

// String prints the names with redacted values, as a map prints:
// map[OPENAI_API_KEY:[REDACTED]].
func (k ProviderKeys) String() string { return k.keys.String() }

// GoString prints Go syntax that builds keys of the same names:
// models.NewProviderKeys(map[string]string{"OPENAI_API_KEY":"[REDACTED]"}).
func (k ProviderKeys) GoString() string { return k.keys.GoString() }

// Format prints String, or GoString for %#v, whatever the verb, so that no
// verb reaches the values.
func (k ProviderKeys) Format(f fmt.State, verb rune) { k.keys.Format(f, verb) }

// MarshalJSON writes the names with redacted values, so that a request
// logged as JSON shows no credential; null when none is set.
func (k ProviderKeys) MarshalJSON() ([]byte, error) { return k.keys.MarshalJSON() }

// MarshalXML writes one <key name="…">[REDACTED]</key> element per name.
func (k ProviderKeys) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	return k.keys.MarshalXML(e, start)
}

// LogValue logs the names with redacted values.
func (k ProviderKeys) LogValue() slog.Value { return k.keys.LogValue() }

// UnmarshalJSON reads an object of key names and credentials, such as a
// configuration file holds, or null for none. What MarshalJSON writes reads
// back as keys whose values are the text [REDACTED]: keys cannot travel
// through their own JSON encoding.
func (k *ProviderKeys) UnmarshalJSON(data []byte) error {
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("models: provider keys: want an object of key names and credentials: %w", err)
	}
	*k = NewProviderKeys(m)
	return nil
}

// The methods of the content print the same, should a printer that walks
// unexported fields ask it: it never shows a value either.

func (p *providerKeys) list() []string {
	if p == nil {
		return nil
	}
	return p.names
}

func (p *providerKeys) String() string {
	var b strings.Builder
	b.WriteString("map[")
	for i, name := range p.list() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		b.WriteString(":" + redacted)
	}
	b.WriteString("]")
	return b.String()
}

func (p *providerKeys) GoString() string {
	if p == nil {
		return "models.ProviderKeys{}"
	}
	var b strings.Builder
	b.WriteString("models.NewProviderKeys(map[string]string{")
	for i, name := range p.names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(name) + `:"` + redacted + `"`)
	}
	b.WriteString("})")
	return b.String()
}

func (p *providerKeys) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(p.GoString()))
		return
	}
	_, _ = f.Write([]byte(p.String()))
}

func (p *providerKeys) MarshalJSON() ([]byte, error) {
	if p == nil {
		return []byte("null"), nil
	}
	names := make(map[string]string, len(p.names))
	for _, name := range p.names {
		names[name] = redacted
	}
	return json.Marshal(names)
}

func (p *providerKeys) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	for _, name := range p.list() {
		key := xml.StartElement{Name: xml.Name{Local: "key"}, Attr: []xml.Attr{{Name: xml.Name{Local: "name"}, Value: name}}}
		if err := e.EncodeElement(redacted, key); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

func (p *providerKeys) LogValue() slog.Value { return slog.StringValue(p.String()) }
