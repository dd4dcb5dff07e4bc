package models

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigInt is past 2^53: a float64 would read it as 9007199254740992.
// longDecimal has more digits than a float64 keeps.
const (
	bigInt      = "9007199254740993"
	longDecimal = "0.1000000000000000055511151231257827"
	// In key order, as encoding/json writes a map. 1e400 is past a float64's
	// range: encoding/json refuses it as a float64, and keeps it as text.
	exactValues = `{"nested":{"list":[` + bigInt + `,1e400]},"seed":` + bigInt + `,"top_p":` + longDecimal + `}`
)

// Values the SDK does not model keep their numbers' text, decoded and
// encoded again: parameters, settings, a span's maps at any depth.
func TestUnmodeledNumbersAreExact(t *testing.T) {
	for name, tc := range map[string]struct {
		doc   string
		into  func() any
		value func(any) map[string]any
	}{
		"AppVariantResponse.Parameters": {`{"variant_id":"v","parameters":` + exactValues + `}`,
			func() any { return new(AppVariantResponse) }, func(v any) map[string]any { return v.(*AppVariantResponse).Parameters }},
		"AddVariantFromBase.Parameters": {`{"base_id":"b","parameters":` + exactValues + `}`,
			func() any { return new(AddVariantFromBase) }, func(v any) map[string]any { return v.(*AddVariantFromBase).Parameters }},
		"EvaluatorConfig.SettingsValues": {`{"id":"c","settings_values":` + exactValues + `}`,
			func() any { return new(EvaluatorConfig) }, func(v any) map[string]any { return v.(*EvaluatorConfig).SettingsValues }},
		"Span.Metadata": {`{"id":"s","metadata":` + exactValues + `}`,
			func() any { return new(Span) }, func(v any) map[string]any { return v.(*Span).Metadata }},
		"Span.Children.Content": {`{"id":"s","children":[{"id":"c","children":[{"id":"g","content":` + exactValues + `}]}]}`,
			func() any { return new(Span) }, func(v any) map[string]any { return v.(*Span).Children[0].Children[0].Content }},
		"Span.Config": {`{"id":"s","config":` + exactValues + `}`,
			func() any { return new(Span) }, func(v any) map[string]any { return v.(*Span).Config }},
	} {
		t.Run(name, func(t *testing.T) {
			v := tc.into()
			require.NoError(t, json.Unmarshal([]byte(tc.doc), v))
			m := tc.value(v)
			assert.Equal(t, json.Number(bigInt), m["seed"])
			assert.Equal(t, json.Number(longDecimal), m["top_p"])
			out, err := json.Marshal(m)
			require.NoError(t, err)
			assert.Equal(t, exactValues, string(out), "encoded again, the text is the server's")
		})
	}
	// Evaluation holds evaluator configs; its decoding reaches them.
	var ev Evaluation
	require.NoError(t, json.Unmarshal([]byte(`{"aggregated_results":[{"evaluator_config":{"settings_values":{"threshold":`+bigInt+`}}}]}`), &ev))
	assert.Equal(t, json.Number(bigInt), ev.AggregatedResults[0].EvaluatorConfig.SettingsValues["threshold"])

	// A type error still names the field.
	var v AppVariantResponse
	err := json.Unmarshal([]byte(`{"parameters":[1]}`), &v)
	var typeErr *json.UnmarshalTypeError
	require.ErrorAs(t, err, &typeErr)
	assert.Equal(t, "parameters", typeErr.Field)
	err = json.Unmarshal([]byte(`{"revision":"three"}`), &v)
	require.ErrorAs(t, err, &typeErr)
	assert.Equal(t, "revision", typeErr.Field)
	assert.Equal(t, "AppVariantResponse", typeErr.Struct)
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want float64
		ok   bool
	}{
		{json.Number("0.25"), 0.25, true}, {json.Number(bigInt), 9007199254740992, true}, {json.Number("x"), 0, false},
		{0.5, 0.5, true}, {float32(2), 2, true}, {3, 3, true}, {int64(4), 4, true}, {uint(5), 5, true},
		{"6", 0, false}, {nil, 0, false}, {true, 0, false},
	} {
		got, ok := Number(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Number(%#v) = %v, %v; want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
	s := Span{Metadata: map[string]any{"cost": json.Number("0.0042"), "latency": 2.5}}
	if c, ok := s.Cost(); !ok || c != 0.0042 {
		t.Errorf("Cost() = %v, %v", c, ok)
	}
	if l, ok := s.Latency(); !ok || l != 2.5 {
		t.Errorf("Latency() = %v, %v", l, ok)
	}
}

// FuzzDecodeMap holds decodeMap to what a json.Decoder with UseNumber
// gives, for any JSON object.
func FuzzDecodeMap(f *testing.F) {
	f.Add([]byte(exactValues))
	f.Add([]byte(`{"a":"\u00e9\ud83d\ude00 \"q\"","b":[true,false,null,{}],"c":{"d":[]} , "a":-1.5e-3}`))
	f.Add([]byte("{\"k\":\"bad \xff utf-8\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw json.RawMessage
		if json.Unmarshal(data, &raw) != nil || len(raw) == 0 || raw[0] != '{' {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var want map[string]any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeMap(raw, "T", "f")
		if err != nil {
			t.Fatalf("decodeMap(%q): %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeMap(%q) = %#v, want %#v", raw, got, want)
		}
	})
}
