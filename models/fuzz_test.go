package models

// Fuzz targets for everything that reads what a server sends: each response
// type, and the timestamp parser. Seeds: f.Add below and testdata/fuzz/,
// which covers every body shape in ../shared/contract/README.md. Run one with
//
//	go test ./models -run '^$' -fuzz '^FuzzDecodeSpan$' -fuzztime 30s

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzRoundTrip is the property of every response type: decoding never panics,
// and a decoded value marshals and decodes back to the same value.
func fuzzRoundTrip[T any](t *testing.T, data []byte) {
	var first T
	if err := json.Unmarshal(data, &first); err != nil {
		return
	}
	out, err := json.Marshal(first)
	if err != nil {
		t.Fatalf("a decoded %T does not marshal: %v\ninput: %q", first, err, data)
	}
	var second T
	if err := json.Unmarshal(out, &second); err != nil {
		t.Fatalf("a re-marshalled %T does not decode: %v\ninput:  %q\noutput: %q", first, err, data, out)
	}
	if diff := fuzzSameValue(reflect.ValueOf(first), reflect.ValueOf(second), "$"); diff != "" {
		t.Fatalf("%T changed in a marshal round trip at %s\ninput:  %q\noutput: %q", first, diff, data, out)
	}
}

var (
	fuzzTimestampType = reflect.TypeOf(Timestamp{})
	fuzzTimeType      = reflect.TypeOf(time.Time{})
	fuzzRawType       = reflect.TypeOf(json.RawMessage(nil))
)

// fuzzSameValue compares two decoded values semantically and returns the path
// of the first difference, or "". Times are compared as instants with Equal;
// json.RawMessage as JSON (its bytes may differ in whitespace and escaping);
// a nil and an empty slice or map are the same, since omitempty writes
// neither.
func fuzzSameValue(a, b reflect.Value, path string) string {
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s (type %s vs %s)", path, a.Type(), b.Type())
	}
	switch a.Type() {
	case fuzzTimestampType, fuzzTimeType:
		ta, tb := fuzzTimeOf(a), fuzzTimeOf(b)
		if !ta.Equal(tb) {
			return fmt.Sprintf("%s (%s vs %s)", path, ta.Format(time.RFC3339Nano), tb.Format(time.RFC3339Nano))
		}
		return ""
	case fuzzRawType:
		if !fuzzSameJSON(a.Bytes(), b.Bytes()) {
			return fmt.Sprintf("%s (%s vs %s)", path, a.Bytes(), b.Bytes())
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + " (nil vs non-nil)"
			}
			return ""
		}
		return fuzzSameValue(a.Elem(), b.Elem(), path)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + " (nil vs non-nil)"
			}
			return ""
		}
		return fuzzSameValue(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if d := fuzzSameValue(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s (length %d vs %d)", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := fuzzSameValue(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s (size %d vs %d)", path, a.Len(), b.Len())
		}
		iter := a.MapRange()
		for iter.Next() {
			other := b.MapIndex(iter.Key())
			if !other.IsValid() {
				return fmt.Sprintf("%s[%q] (missing)", path, iter.Key())
			}
			if d := fuzzSameValue(iter.Value(), other, fmt.Sprintf("%s[%q]", path, iter.Key())); d != "" {
				return d
			}
		}
		return ""
	case reflect.Float32, reflect.Float64:
		fa, fb := a.Float(), b.Float()
		if fa != fb && !(math.IsNaN(fa) && math.IsNaN(fb)) {
			return fmt.Sprintf("%s (%v vs %v)", path, fa, fb)
		}
		return ""
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return fmt.Sprintf("%s (%v vs %v)", path, a.Interface(), b.Interface())
	}
	return ""
}

func fuzzTimeOf(v reflect.Value) time.Time {
	switch x := v.Interface().(type) {
	case Timestamp:
		return x.Time
	case time.Time:
		return x
	}
	panic("not a time")
}

// fuzzSameJSON reports whether two JSON texts hold the same value; numbers are
// compared by their text, which marshalling a RawMessage never changes.
func fuzzSameJSON(a, b []byte) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	va, errA := fuzzDecodeAny(a)
	vb, errB := fuzzDecodeAny(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}

func fuzzDecodeAny(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// Seeds shared by the f.Add calls; testdata/fuzz holds the full corpus.
const (
	fuzzSeedScenario = `[{"id":"s-1","evaluation_id":"e-1","inputs":[{"name":"country","type":"text","value":"France"}],` +
		`"outputs":[{"result":{"type":"text","value":"Paris","error":null},"cost":null,"latency":0.81}],` +
		`"evaluation":null,"correct_answer":"Paris","is_pinned":false,"note":null,` +
		`"results":[{"evaluator_config":"c-1","result":{"type":"number","value":0.5}}]}]`
	fuzzSeedEvaluation = `{"id":"e-1","app_id":"a-1","user_id":"u-1","user_username":"ana","variant_ids":["v-1"],` +
		`"variant_names":["app.default"],"variant_revision_ids":["r-1"],"revisions":["1"],"testset_id":"t-1",` +
		`"testset_name":"faq","status":{"type":"status","value":"EVALUATION_STARTED","error":null},` +
		`"aggregated_results":[],"average_cost":null,"total_cost":null,"average_latency":null,` +
		`"created_at":"2024-06-26T12:22:31.775000+00:00","updated_at":"2024-06-26T12:22:31.775000"}`
	fuzzSeedVariant = `{"app_id":"a-1","app_name":"app","variant_id":"v-1","variant_name":"app.default",` +
		`"parameters":{"temperature":0.7},"previous_variant_name":null,"user_id":"u-1","base_name":"app",` +
		`"base_id":"b-1","config_name":"default","uri":null,"revision":2,"organization_id":null,"workspace_id":null}`
	fuzzSeedSpan = `{"id":"sp-1","name":"generate","parent_span_id":null,"created_at":"2024-06-26T12:22:31.775000",` +
		`"variant":{"variant_id":"v-1","variant_name":"app.default","revision":1,"environment":"staging"},` +
		`"environment":"production","spankind":"LLM","status":"OK","metadata":{"cost":0.1,"usage":{"total_tokens":3}},` +
		`"trace_id":"tr-1","user_id":null,"content":{"inputs":{},"internals":{},"outputs":{}},` +
		`"children":[{"id":"sp-2","name":"retrieve","parent_span_id":"sp-1","created_at":"2024-06-26T12:22:31+00:00",` +
		`"variant":{},"spankind":"RERANKER","status":"ERROR","metadata":{},"content":{},"children":null}],"config":{}}`
	fuzzSeedHuman = `{"id":"h-1","app_id":"a-1","user_id":"u-1","user_username":"ana","evaluation_type":"human_a_b_testing",` +
		`"variant_ids":["v-1","v-2"],"variant_names":["a","b"],"variants_revision_ids":["r-1","r-2"],"revisions":["1","2"],` +
		`"testset_id":"t-1","testset_name":"faq","status":"EVALUATION_FINISHED",` +
		`"created_at":"2024-06-26T12:22:31.775000","updated_at":"2024-06-26T12:22:31.775000+00:00"}`
)

func FuzzDecodeEvaluationScenario(f *testing.F) {
	f.Add([]byte(fuzzSeedScenario))
	f.Add([]byte(`[{"evaluation_id":"e","inputs":[],"outputs":[],"results":[],"correct_answers":[{"key":"k","value":"v"}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRoundTrip[[]EvaluationScenario](t, data)
		fuzzRoundTrip[EvaluationScenario](t, data)
		fuzzRoundTrip[Result](t, data)
	})
}

func FuzzDecodeEvaluation(f *testing.F) {
	f.Add([]byte(fuzzSeedEvaluation))
	f.Add([]byte(`[` + fuzzSeedEvaluation + `]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRoundTrip[[]Evaluation](t, data)
		fuzzRoundTrip[Evaluation](t, data)
		fuzzRoundTrip[AggregatedResult](t, data)
	})
}

func FuzzDecodeAppVariantResponse(f *testing.F) {
	f.Add([]byte(fuzzSeedVariant))
	f.Add([]byte(`{"revision":1e2,"parameters":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRoundTrip[AppVariantResponse](t, data)
	})
}

func FuzzDecodeSpan(f *testing.F) {
	f.Add([]byte(fuzzSeedSpan))
	f.Add([]byte(`{"children":[{"children":[{"children":[{}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRoundTrip[Span](t, data)
	})
}

func FuzzDecodeHumanEvaluation(f *testing.F) {
	f.Add([]byte(`[` + fuzzSeedHuman + `]`))
	f.Add([]byte(fuzzSeedHuman))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRoundTrip[[]HumanEvaluation](t, data)
		fuzzRoundTrip[HumanEvaluation](t, data)
	})
}

// FuzzParseTimestamp checks that the strict parser never accepts what a
// time.Time cannot hold exactly: whatever it accepts formats back to the same
// date, time, fraction and offset, agrees with Go's own RFC 3339 parser, and
// survives a JSON round trip. ParseTimestamp and Timestamp.UnmarshalJSON
// must agree with it.
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range fuzzTimestampSeeds {
		f.Add(s)
	}
	for _, tc := range fuzzTimestampRefusals {
		f.Add(tc.value)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseTimestamp(s)

		pub, err := ParseTimestamp(s)
		if ok != (err == nil) || ok && !pub.Equal(got) {
			t.Fatalf("ParseTimestamp(%q) = %v, %v; parseTimestamp says %v, %v", s, pub, err, got, ok)
		}
		if utf8.ValidString(s) {
			quoted, _ := json.Marshal(s) // may escape <, >, & or U+2028: the slow path
			var ts Timestamp
			err := ts.UnmarshalJSON(quoted)
			if ok != (err == nil) || ok && !ts.Equal(got) {
				t.Fatalf("UnmarshalJSON(%s) = %v, %v; parseTimestamp(%q) says %v, %v", quoted, ts.Time, err, s, got, ok)
			}
		}
		if !ok {
			return
		}

		// Re-formatting gives back the same fields.
		if f := got.Format("2006-01-02"); f != s[:10] {
			t.Fatalf("parseTimestamp(%q): date formats back as %s", s, f)
		}
		if f := got.Format("15:04:05"); f != s[11:19] {
			t.Fatalf("parseTimestamp(%q): time formats back as %s", s, f)
		}
		rest := s[19:]
		frac := ""
		if strings.HasPrefix(rest, ".") {
			n := 1
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			frac, rest = rest[1:n], rest[n:]
		}
		if len(frac) > 9 {
			t.Fatalf("parseTimestamp(%q) accepted %d fractional digits; a time.Time holds 9", s, len(frac))
		}
		if want := (frac + "000000000")[:9]; fmt.Sprintf("%09d", got.Nanosecond()) != want {
			t.Fatalf("parseTimestamp(%q): nanoseconds %09d, want %s", s, got.Nanosecond(), want)
		}
		zone := got.Format("-07:00")
		switch rest {
		case "", "Z", "z", "+00:00", "-00:00":
			if zone != "+00:00" {
				t.Fatalf("parseTimestamp(%q): offset %s, want UTC", s, zone)
			}
		default:
			if zone != rest {
				t.Fatalf("parseTimestamp(%q): offset %s, want %s", s, zone, rest)
			}
		}

		// Go's RFC 3339 parser agrees on the instant.
		norm := s[:10] + "T" + s[11:]
		switch rest {
		case "":
			norm += "Z"
		case "z":
			norm = norm[:len(norm)-1] + "Z"
		}
		if ref, err := time.Parse(time.RFC3339Nano, norm); err != nil || !ref.Equal(got) {
			t.Fatalf("parseTimestamp(%q) = %v, but time.Parse(RFC3339Nano, %q) = %v, %v", s, got, norm, ref, err)
		}

		// A JSON round trip keeps the instant and the offset.
		out, err := Timestamp{got}.MarshalJSON()
		if err != nil {
			t.Fatalf("an accepted timestamp %q does not marshal: %v", s, err)
		}
		var back Timestamp
		if err := back.UnmarshalJSON(out); err != nil || !back.Equal(got) || back.Format("-07:00") != zone {
			t.Fatalf("%q marshalled as %s, read back as %v, %v", s, out, back.Time, err)
		}
	})
}

var fuzzTimestampSeeds = []string{
	"2024-06-26T12:22:31.775000",       // stored objects: no zone, microseconds
	"2024-06-26T12:22:31.775000+00:00", // freshly created objects
	"2024-06-26T12:22:31Z",
	"2024-06-26T12:22:31.123456789Z",
	"2024-06-26 12:22:31.5",
	"2024-06-26t12:22:31z",
	"2024-06-26T12:22:31+05:30",
	"2024-06-26T12:22:31-23:59",
	"2024-02-29T00:00:00",
	"2000-02-29T23:59:59.999999999",
	"0000-01-01T00:00:00+01:00",
	"9999-12-31T23:59:59.999999999-01:00",
	"2019-08-24T14:15:22Z",
	"1940-05-02T07:28:01.0Z",
}

// fuzzTimestampRefusals are values a time.Time cannot hold as written, or that
// are not timestamps at all.
var fuzzTimestampRefusals = []struct{ name, value string }{
	{"ten fractional digits", "2024-06-26T12:22:31.1234567891"},
	{"leap second", "2016-12-31T23:59:60Z"},
	{"February 30", "2024-02-30T00:00:00"},
	{"February 29 of a common year", "2023-02-29T00:00:00"},
	{"February 29 of 1900", "1900-02-29T00:00:00"},
	{"April 31", "2024-04-31T00:00:00"},
	{"hour 24", "2024-06-26T24:00:00"},
	{"minute 60", "2024-06-26T12:60:00"},
	{"month 13", "2024-13-01T00:00:00"},
	{"day 0", "2024-06-00T00:00:00"},
	{"offset hour 24", "2024-06-26T12:22:31+24:00"},
	{"offset minute 60", "2024-06-26T12:22:31+01:60"},
	{"offset without colon", "2024-06-26T12:22:31+0100"},
	{"dot without digits", "2024-06-26T12:22:31.Z"},
	{"five-digit year", "10000-01-01T00:00:00"},
	{"negative year", "-001-01-01T00:00:00"},
	{"date only", "2024-06-26"},
	{"trailing text", "2024-06-26T12:22:31Z garbage"},
	{"comma fraction", "2024-06-26T12:22:31,5"},
	{"signed field", "2024-+6-26T12:22:31"},
	{"empty", ""},
}

func TestTimestampRefusesWhatItCannotRepresent(t *testing.T) {
	for _, tc := range fuzzTimestampRefusals {
		if got, err := ParseTimestamp(tc.value); err == nil {
			t.Errorf("%s: ParseTimestamp(%q) = %v, want an error", tc.name, tc.value, got)
		}
	}
	for _, s := range fuzzTimestampSeeds {
		if _, err := ParseTimestamp(s); err != nil {
			t.Errorf("ParseTimestamp(%q): %v, want it accepted", s, err)
		}
	}
}
