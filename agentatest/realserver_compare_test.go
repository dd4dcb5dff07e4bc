package agentatest_test

// The comparison of the differential suite (realserver_test.go): answers
// decoded with their key order and number spelling, normalised for ids and
// timestamps, and walked field by field, as ../shared/realserver/diff.py
// does.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// member is one key and value of a decoded JSON object.
type member struct {
	key   string
	value any
}

// orderedObject is a decoded JSON object with its keys in the order sent.
type orderedObject []member

// MarshalJSON writes the members in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// decodeAnswer decodes a body as JSON that keeps key order and number
// spelling (objects become orderedObject, numbers json.Number), or returns
// the text itself when it is not JSON.
func decodeAnswer(body []byte) any {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return string(body)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return string(body)
	}
	return v
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch delim {
	case '{':
		o := orderedObject{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{k.(string), v})
		}
		_, err := dec.Token()
		return o, err
	case '[':
		list := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	}
	return nil, fmt.Errorf("unexpected %v", delim)
}

var (
	uuidPattern      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestampPattern = regexp.MustCompile(`^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?$`)
)

// normalise replaces what differs between any two servers by nature: ids
// become <uuid>, and a timestamp becomes its shape (separator, fraction,
// zone), so that the form is still compared but not the value.
func normalise(v any) any {
	switch t := v.(type) {
	case orderedObject:
		out := make(orderedObject, len(t))
		for i, m := range t {
			out[i] = member{m.key, normalise(m.value)}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalise(x)
		}
		return out
	case string:
		if timestampPattern.MatchString(t) {
			return timestampShape(t)
		}
		return uuidPattern.ReplaceAllString(t, "<uuid>")
	}
	return v
}

func timestampShape(s string) string {
	sep, frac, zone := "space", "nofrac", "naive"
	if strings.Contains(s, "T") {
		sep = "T"
	}
	if strings.Contains(s, ".") {
		frac = "frac"
	}
	switch {
	case strings.HasSuffix(s, "Z"):
		zone = "Z"
	case strings.HasSuffix(s, "+00:00"):
		zone = "+00:00"
	}
	return "<ts:" + sep + "," + frac + "," + zone + ">"
}

// difference is one field where the two servers' answers differ.
type difference struct {
	path       string // the probe, then the JSON path: "create_ok.body[0].user_username"
	kind       string // value, key order, length, only real, only fake, numeric spelling
	real, fake any
}

func (d difference) String() string {
	return fmt.Sprintf("%s: %s: real %s / fake %s", d.path, d.kind, clip(d.real), clip(d.fake))
}

// clip renders a value for a failure message, at most 300 bytes.
func clip(v any) string {
	if v == nil {
		return "(absent)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprint(v))
	}
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// compare walks two normalised answers and returns where they differ.
func compare(path string, real, fake any) []difference {
	var out []difference
	walk(path, real, fake, &out)
	return out
}

func walk(path string, real, fake any, out *[]difference) {
	switch r := real.(type) {
	case orderedObject:
		f, ok := fake.(orderedObject)
		if !ok {
			break
		}
		realKeys, fakeKeys := keysOf(r), keysOf(f)
		all := append(slices.Clone(realKeys), fakeKeys...)
		slices.Sort(all)
		all = slices.Compact(all)
		for _, k := range all {
			rv, rok := lookup(r, k)
			fv, fok := lookup(f, k)
			switch {
			case !fok:
				*out = append(*out, difference{path + "." + k, "only real", rv, nil})
			case !rok:
				*out = append(*out, difference{path + "." + k, "only fake", nil, fv})
			default:
				walk(path+"."+k, rv, fv, out)
			}
		}
		if !slices.Equal(realKeys, fakeKeys) && sameSet(realKeys, fakeKeys) {
			*out = append(*out, difference{path, "key order", realKeys, fakeKeys})
		}
		return
	case []any:
		f, ok := fake.([]any)
		if !ok {
			break
		}
		if len(r) != len(f) {
			*out = append(*out, difference{path, "length", len(r), len(f)})
		}
		for i := range min(len(r), len(f)) {
			walk(fmt.Sprintf("%s[%d]", path, i), r[i], f[i], out)
		}
		return
	case json.Number:
		f, ok := fake.(json.Number)
		if !ok {
			break
		}
		rf, _ := strconv.ParseFloat(string(r), 64)
		ff, _ := strconv.ParseFloat(string(f), 64)
		switch {
		case rf != ff && !(math.IsNaN(rf) && math.IsNaN(ff)):
			*out = append(*out, difference{path, "value", r, f})
		case r != f:
			*out = append(*out, difference{path, "numeric spelling", r, f})
		}
		return
	}
	if !equalJSON(real, fake) {
		*out = append(*out, difference{path, "value", real, fake})
	}
}

func keysOf(o orderedObject) []string {
	keys := make([]string, len(o))
	for i, m := range o {
		keys[i] = m.key
	}
	return keys
}

func lookup(o orderedObject, key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// equalJSON compares two decoded scalars, or values of different kinds.
func equalJSON(a, b any) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return bytes.Equal(ab, bb)
}
