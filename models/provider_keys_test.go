package models

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contractREADME holds the facts about the real service, beside the
// repository; it is never copied into it.
const contractREADME = "../../shared/contract/README.md"

// TestProviderKeyNamesAreTheContracts checks ProviderKeyNames against the
// contract README's list of lm_providers_keys names, which includes
// GEMINI_API_KEY.
func TestProviderKeyNamesAreTheContracts(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	doc, err := os.ReadFile(contractREADME)
	if err != nil {
		require.False(t, ci, "CI=true, so the contract README must be readable: %v", err)
		t.Skipf("skipped: %s is absent (the contract lives in ../shared beside the repository)", contractREADME)
	}
	text := string(doc)
	start := strings.Index(text, "`lm_providers_keys` names:")
	require.GreaterOrEqual(t, start, 0, "the README no longer lists the lm_providers_keys names")
	end := strings.Index(text[start:], "another name gets a 422")
	require.Greater(t, end, 0, "the README's list of names has no end")
	want := regexp.MustCompile(`[A-Z]+_API_KEY`).FindAllString(text[start:start+end], -1)
	require.NotEmpty(t, want)
	assert.Equal(t, want, ProviderKeyNames(), "the provider key names, in the contract's order")
	assert.Contains(t, ProviderKeyNames(), GeminiAPIKey)
}

// leakKey is long enough that every run of 12 of its characters is
// checked: any of them in output is a leak.
const leakKey = "sk-proj-LEAK4fJk2LmN9pQrStUvWxYz0123456789abcdefABCDEF"

// leaked returns the first run of 12 characters of leakKey in out, or "".
func leaked(out string) string {
	for i := 0; i+12 <= len(leakKey); i++ {
		if strings.Contains(out, leakKey[i:i+12]) {
			return leakKey[i : i+12]
		}
	}
	return ""
}

// userRequest is how a user's code may hold a request: in exported and
// unexported fields, by value and by pointer, inside interfaces.
type userRequest struct {
	Name    string
	Eval    *NewEvaluation
	Keys    ProviderKeys
	hidden  NewEvaluation
	keys    ProviderKeys
	ptr     *ProviderKeys
	anyKeys any
	list    []ProviderKeys
	byName  map[string]ProviderKeys
}

func keyShapes() map[string]any {
	keys := NewProviderKeys(map[string]string{OpenAIAPIKey: leakKey, AnthropicAPIKey: leakKey + "-2"})
	ev := NewEvaluation{AppID: "app-1", VariantIDs: []string{"v-1"}, RateLimit: DefaultRateLimit(), LMProvidersKeys: keys}
	evPtr := &ev
	user := userRequest{Name: "u", Eval: &ev, Keys: keys, hidden: ev, keys: keys, ptr: &keys, anyKeys: keys,
		list: []ProviderKeys{keys}, byName: map[string]ProviderKeys{"k": keys}}
	return map[string]any{
		"ProviderKeys": keys, "*ProviderKeys": &keys, "NewEvaluation": ev, "*NewEvaluation": &ev,
		"**NewEvaluation": &evPtr, "[]any{&ev}": []any{&ev}, "[][]any{{&ev}}": [][]any{{&ev}},
		"[1]NewEvaluation": [1]NewEvaluation{ev}, "map[string]any": map[string]any{"x": &ev, "k": keys},
		"map[int]ProviderKeys": map[int]ProviderKeys{1: keys}, "user struct": user, "*user struct": &user,
		"[]any{user}": []any{user, 1},
		"anonymous": struct {
			a ProviderKeys
			b *NewEvaluation
		}{keys, &ev},
	}
}

// No fmt verb, at any depth, in exported or unexported fields, shows any
// run of 12 characters of a key.
func TestProviderKeysNeverPrinted(t *testing.T) {
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%t", "%c", "%U", "%e", "%f", "%g",
		"%b", "%o", "%O", "%T", "%10.3s", "%-40v", "%+q", "%#x", "% x", "%p", "%w"}
	for name, v := range keyShapes() {
		for _, verb := range verbs {
			out := fmt.Sprintf(verb, v) //nolint:govet // every verb, misuses included
			if w := leaked(out); w != "" {
				t.Errorf("fmt.Sprintf(%q, %s) shows %q: %.300s", verb, name, w, out)
			}
		}
		for _, out := range []string{fmt.Sprint(v), fmt.Sprintln(v), fmt.Errorf("wrapped: %v", v).Error()} {
			if w := leaked(out); w != "" {
				t.Errorf("fmt.Sprint(%s) shows %q: %.300s", name, w, out)
			}
		}
	}
	keys := NewProviderKeys(map[string]string{OpenAIAPIKey: leakKey, AnthropicAPIKey: "x"})
	assert.Equal(t, "map[ANTHROPIC_API_KEY:[REDACTED] OPENAI_API_KEY:[REDACTED]]", fmt.Sprint(keys))
	assert.Equal(t, `models.NewProviderKeys(map[string]string{"ANTHROPIC_API_KEY":"[REDACTED]", "OPENAI_API_KEY":"[REDACTED]"})`, fmt.Sprintf("%#v", keys))
	assert.Equal(t, "map[]", fmt.Sprint(ProviderKeys{}))
	ev := NewEvaluation{AppID: "app-1", VariantIDs: []string{"v-1"}, RateLimit: DefaultRateLimit(), LMProvidersKeys: keys}
	assert.Equal(t, `models.NewEvaluation{AppID:"app-1", VariantIDs:[]string{"v-1"}, EvaluatorConfigIDs:[]string(nil), TestsetID:"", RateLimit:models.RateLimit{BatchSize:10, MaxRetries:3, RetryDelay:3, DelayBetweenBatches:5}, LMProvidersKeys:models.NewProviderKeys(map[string]string{"ANTHROPIC_API_KEY":"[REDACTED]", "OPENAI_API_KEY":"[REDACTED]"}), CorrectAnswerColumn:"", Repeats:0}`,
		fmt.Sprintf("%#v", ev))
	assert.Contains(t, fmt.Sprintf("%+v", &ev), "LMProvidersKeys:map[ANTHROPIC_API_KEY:[REDACTED] OPENAI_API_KEY:[REDACTED]]")
}

// slog's text and JSON handlers, encoding/json and encoding/xml show the
// names, never a value, however the keys are nested.
func TestProviderKeysNeverEncoded(t *testing.T) {
	for name, v := range keyShapes() {
		for handler, make := range map[string]func(*bytes.Buffer) slog.Handler{
			"JSON": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
			"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		} {
			var buf bytes.Buffer
			l := slog.New(make(&buf))
			l.Info("create", "value", v)
			l.Info("create", slog.Group("outer", slog.Any("value", v)))
			l.With("value", v).Info("create")
			if w := leaked(buf.String()); w != "" {
				t.Errorf("slog's %s handler shows %q of %s: %.300s", handler, w, name, buf.String())
			}
		}
		if out, err := json.Marshal(v); err == nil {
			if w := leaked(string(out)); w != "" {
				t.Errorf("encoding/json shows %q of %s: %s", w, name, out)
			}
		}
		if out, err := xml.Marshal(v); err == nil {
			if w := leaked(string(out)); w != "" {
				t.Errorf("encoding/xml shows %q of %s: %s", w, name, out)
			}
		}
	}
	keys := NewProviderKeys(map[string]string{OpenAIAPIKey: leakKey})
	ev := NewEvaluation{AppID: "a", LMProvidersKeys: keys}
	out, err := json.Marshal(ev)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"lm_providers_keys":{"OPENAI_API_KEY":"[REDACTED]"}`)
	out, err = json.Marshal(NewEvaluation{AppID: "a"})
	require.NoError(t, err)
	assert.NotContains(t, string(out), "lm_providers_keys", "no keys, no field")
	out, err = xml.Marshal(xmlRequest{Keys: keys})
	require.NoError(t, err)
	assert.Equal(t, `<xmlRequest><Keys><key name="OPENAI_API_KEY">[REDACTED]</key></Keys></xmlRequest>`, string(out))
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("create", "keys", keys, "req", ev)
	assert.Contains(t, buf.String(), "OPENAI_API_KEY:[REDACTED]", "the names stay visible")
}

// A printer that walks unexported fields itself, as testify's diff does
// with methods off, finds sealed bytes only; and two keys built alike
// still compare equal.
func TestProviderKeysSealedInMemory(t *testing.T) {
	a := NewProviderKeys(map[string]string{OpenAIAPIKey: leakKey})
	b := NewProviderKeys(map[string]string{OpenAIAPIKey: leakKey})
	assert.True(t, reflect.DeepEqual(a, b), "keys built from the same map are DeepEqual")
	assert.False(t, reflect.DeepEqual(a, NewProviderKeys(map[string]string{OpenAIAPIKey: leakKey + "x"})))
	rec := &recordingT{}
	assert.Equal(rec, NewEvaluation{AppID: "1", LMProvidersKeys: a}, NewEvaluation{AppID: "2", LMProvidersKeys: a})
	require.NotEmpty(t, rec.out, "the comparison must fail and print a diff")
	if w := leaked(rec.out); w != "" {
		t.Errorf("testify's diff shows %q: %s", w, rec.out)
	}
	// reflect reads unexported strings; it finds none that holds a key.
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		if depth > 10 {
			return
		}
		switch v.Kind() {
		case reflect.String:
			if w := leaked(v.String()); w != "" {
				t.Errorf("reflection reads %q", w)
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				if w := leaked(string(v.Bytes())); w != "" {
					t.Errorf("reflection reads %q in bytes", w)
				}
				return
			}
			for i := range v.Len() {
				walk(v.Index(i), depth+1)
			}
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), depth+1)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i), depth+1)
			}
		}
	}
	walk(reflect.ValueOf(a), 0)
}

type xmlRequest struct{ Keys ProviderKeys }

type recordingT struct{ out string }

func (r *recordingT) Errorf(format string, args ...any) { r.out += fmt.Sprintf(format, args...) }

func TestProviderKeysNames(t *testing.T) {
	keys := NewProviderKeys(map[string]string{OpenAIAPIKey: "a", GroqAPIKey: "b"})
	assert.Equal(t, []string{GroqAPIKey, OpenAIAPIKey}, keys.Names())
	assert.Equal(t, 2, keys.Len())
	assert.True(t, keys.Has(GroqAPIKey))
	assert.False(t, keys.Has(MistralAPIKey))
	assert.False(t, keys.IsZero())
	keys.Names()[0] = "changed"
	assert.Equal(t, GroqAPIKey, keys.Names()[0], "Names returns a copy")
	var zero ProviderKeys
	assert.True(t, zero.IsZero())
	assert.Nil(t, zero.Names())
	assert.True(t, NewProviderKeys(nil).IsZero())
	assert.True(t, NewProviderKeys(map[string]string{}).IsZero())

	// A map changed after NewProviderKeys does not change the keys.
	m := map[string]string{OpenAIAPIKey: "a"}
	keys = NewProviderKeys(m)
	m[GroqAPIKey] = "b"
	assert.Equal(t, []string{OpenAIAPIKey}, keys.Names())

	var read NewEvaluation
	require.NoError(t, json.Unmarshal([]byte(`{"lm_providers_keys":{"OPENAI_API_KEY":"sk-1"}}`), &read))
	assert.Equal(t, []string{OpenAIAPIKey}, read.LMProvidersKeys.Names())
	require.NoError(t, json.Unmarshal([]byte(`{"lm_providers_keys":null}`), &read))
	assert.True(t, read.LMProvidersKeys.IsZero())
	require.Error(t, json.Unmarshal([]byte(`{"lm_providers_keys":["sk-1"]}`), &read))
}
