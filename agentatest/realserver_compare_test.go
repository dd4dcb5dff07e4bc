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
	"testing"
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

// storageOrder puts in one order the lists the service reads back without
// an ORDER BY: a run's scenarios, each scenario's results, and a run's
// aggregated results (joined to their evaluator configs). Postgres answers
// them in storage order, or in the order of whichever join its planner
// picks for the tables' sizes: on a fresh server that is usually the order
// they were written in, but on a shared or long-lived one a later row
// fills an earlier gap and the plan changes as tables grow (the shared
// server gave L8's scenarios, L7's results and eval_ok's aggregates in
// other orders from one run to the next). Each such list is sorted by its
// items' normalised JSON, leaving out the fields the allow-list lets
// differ, so that both sides sort alike.
func storageOrder(v any) any {
	switch t := v.(type) {
	case orderedObject:
		out := make(orderedObject, len(t))
		for i, m := range t {
			out[i] = member{m.key, storageOrder(m.value)}
		}
		return out
	case []any:
		out := make([]any, len(t))
		scenarios, results := len(t) > 0, len(t) > 0
		for i, x := range t {
			out[i] = storageOrder(x)
			o, _ := out[i].(orderedObject)
			scenarios = scenarios && hasKeys(o, "inputs", "outputs", "results")
			results = results && hasKeys(o, "evaluator_config", "result")
		}
		if scenarios || results {
			sortBySortKey(out)
		}
		return out
	}
	return v
}

// hasKeys reports whether an object has every one of keys: a scenario has
// inputs, outputs and results; a result, scenario's or aggregated, has an
// evaluator_config and a result.
func hasKeys(o orderedObject, keys ...string) bool {
	for _, key := range keys {
		if _, ok := lookup(o, key); !ok {
			return false
		}
	}
	return true
}

func sortBySortKey(list []any) {
	slices.SortStableFunc(list, func(a, b any) int { return strings.Compare(sortKey(a), sortKey(b)) })
}

// sortKey is a value's JSON without the members the allow-list accepts as
// different (costs, latencies, stack traces).
func sortKey(v any) string {
	var strip func(any) any
	strip = func(v any) any {
		switch t := v.(type) {
		case orderedObject:
			var out orderedObject
			for _, m := range t {
				switch m.key {
				case "cost", "latency", "stacktrace":
					continue
				}
				out = append(out, member{m.key, strip(m.value)})
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, x := range t {
				out[i] = strip(x)
			}
			return out
		}
		return v
	}
	b, _ := json.Marshal(strip(v))
	return string(b)
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

// The service reads a run's scenarios, each scenario's results and a
// run's aggregated results with no ORDER BY: Postgres answers them in storage order, which on a server
// with some history (space freed by deleted or rolled-back rows) is not the
// order they were written in. The comparison must not fail on that, and
// must still see a scenario that differs.
func TestCompareUnorderedReads(t *testing.T) {
	scenario := func(country, answer string, results ...string) string {
		return `{"id":"0190b5a2-1234-7abc-8def-0123456789ab","inputs":[{"name":"country","type":"text","value":"` + country + `"}],` +
			`"outputs":[{"result":{"type":"text","value":"` + answer + `","error":null},"cost":0.0001,"latency":0.01}],` +
			`"results":[` + strings.Join(results, ",") + `]}`
	}
	exact := `{"evaluator_config":"0190b5a2-1234-7abc-8def-00000000000e","result":{"type":"bool","value":true,"error":null}}`
	lev := `{"evaluator_config":"0190b5a2-1234-7abc-8def-00000000000f","result":{"type":"number","value":0,"error":null}}`
	answer := func(body string) exchange {
		return exchange{Status: 200, ContentType: "application/json", Body: decodeAnswer([]byte(body))}
	}
	written := answer(`[` + scenario("France", "Paris", exact, lev) + `,` + scenario("Japan", "Tokyo", exact, lev) + `]`)
	stored := answer(`[` + scenario("Japan", "Tokyo", lev, exact) + `,` + scenario("France", "Paris", exact, lev) + `]`)
	if diffs := compareExchange("scen", stored, written); len(diffs) != 0 {
		t.Errorf("scenarios in another storage order: want no difference, got %v", diffs)
	}
	aggregated := func(results ...string) exchange {
		return answer(`{"id":"0190b5a2-1234-7abc-8def-0123456789ab","aggregated_results":[` + strings.Join(results, ",") + `]}`)
	}
	exactMean := `{"evaluator_config":{"id":"0190b5a2-1234-7abc-8def-00000000000e","name":"Exact match"},"result":{"type":"number","value":1.0,"error":null}}`
	levMean := `{"evaluator_config":{"id":"0190b5a2-1234-7abc-8def-00000000000f","name":"Edit distance"},"result":{"type":"number","value":0.0,"error":null}}`
	if diffs := compareExchange("eval", aggregated(levMean, exactMean), aggregated(exactMean, levMean)); len(diffs) != 0 {
		t.Errorf("aggregated results in another order: want no difference, got %v", diffs)
	}
	if diffs := compareExchange("eval", aggregated(levMean, exactMean), aggregated(exactMean, strings.Replace(levMean, "0.0", "0", 1))); len(diffs) == 0 {
		t.Error("an aggregate spelt 0 against 0.0: want a difference, got none")
	}
	wrong := answer(`[` + scenario("Japan", "Kyoto", lev, exact) + `,` + scenario("France", "Paris", exact, lev) + `]`)
	if diffs := compareExchange("scen", wrong, written); len(diffs) == 0 {
		t.Error("a scenario with another answer: want a difference, got none")
	}
}
