package models

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResultAccessors(t *testing.T) {
	type want struct {
		hasValue bool
		f        float64
		fOK      bool
		b, bOK   bool
		s        string
		sOK      bool
		str      string
	}
	for _, tc := range []struct {
		value string // "" means absent
		want  want
	}{
		{``, want{str: "null"}},
		{`null`, want{str: "null"}},
		{` null `, want{str: "null"}},
		{`0.875`, want{hasValue: true, f: 0.875, fOK: true, str: "0.875"}},
		{`-3`, want{hasValue: true, f: -3, fOK: true, str: "-3"}},
		{`1e3`, want{hasValue: true, f: 1000, fOK: true, str: "1e3"}},
		{`0`, want{hasValue: true, f: 0, fOK: true, str: "0"}},
		{`true`, want{hasValue: true, b: true, bOK: true, str: "true"}},
		{`false`, want{hasValue: true, b: false, bOK: true, str: "false"}},
		{`"Paris"`, want{hasValue: true, s: "Paris", sOK: true, str: "Paris"}},
		{`""`, want{hasValue: true, s: "", sOK: true, str: ""}},
		{`"0.5"`, want{hasValue: true, s: "0.5", sOK: true, str: "0.5"}},
		{`"true"`, want{hasValue: true, s: "true", sOK: true, str: "true"}},
		{`"caf\u00e9 \"x\""`, want{hasValue: true, s: `café "x"`, sOK: true, str: `café "x"`}},
		{`{"score": 1, "ok": true}`, want{hasValue: true, str: `{"score":1,"ok":true}`}},
		{`[1, "two", null]`, want{hasValue: true, str: `[1,"two",null]`}},
	} {
		r := Result{Type: "x"}
		if tc.value != "" {
			r.Value = json.RawMessage(tc.value)
		}
		assert.Equal(t, tc.want.hasValue, r.HasValue(), "%s: HasValue", tc.value)
		f, ok := r.Float64()
		assert.Equal(t, tc.want.fOK, ok, "%s: Float64 ok", tc.value)
		assert.Equal(t, tc.want.f, f, "%s: Float64", tc.value)
		b, ok := r.Bool()
		assert.Equal(t, tc.want.bOK, ok, "%s: Bool ok", tc.value)
		assert.Equal(t, tc.want.b, b, "%s: Bool", tc.value)
		s, ok := r.Text()
		assert.Equal(t, tc.want.sOK, ok, "%s: Text ok", tc.value)
		assert.Equal(t, tc.want.s, s, "%s: Text", tc.value)
		assert.Equal(t, tc.want.str, r.String(), "%s: String", tc.value)
		var v any
		err := r.Decode(&v)
		if tc.want.hasValue {
			assert.NoError(t, err, "%s: Decode", tc.value)
		} else {
			assert.True(t, errors.Is(err, ErrNoValue), "%s: Decode of no value: %v", tc.value, err)
		}
	}
}

func TestResultDecode(t *testing.T) {
	r := Result{Type: "object", Value: json.RawMessage(`{"score":0.5,"reasons":["a","b"]}`)}
	var got struct {
		Score   float64  `json:"score"`
		Reasons []string `json:"reasons"`
	}
	require.NoError(t, r.Decode(&got))
	assert.Equal(t, 0.5, got.Score)
	assert.Equal(t, []string{"a", "b"}, got.Reasons)

	var n int
	assert.Error(t, r.Decode(&n), "an object does not decode into an int")
	assert.Error(t, Result{Value: json.RawMessage(`1`)}.Decode(n), "a non-pointer is refused, not a panic")
	assert.NotPanics(t, func() { _ = Result{Value: json.RawMessage(`1`)}.Decode(nil) })
}

func TestResultErrors(t *testing.T) {
	failed := Result{Type: ResultTypeError, Error: &Error{Message: "boom", Stacktrace: "trace"}}
	assert.True(t, failed.Failed())
	assert.Equal(t, "error: boom", failed.String())
	assert.True(t, Result{Type: ResultTypeError}.Failed(), "the error type alone means failure")
	assert.True(t, Result{Type: "text", Error: &Error{Message: "x"}}.Failed())
	assert.False(t, Result{Type: "text", Value: json.RawMessage(`"ok"`)}.Failed())
	withBoth := Result{Type: "text", Value: json.RawMessage(`"partial"`), Error: &Error{Message: "x"}}
	assert.Equal(t, "partial", withBoth.String(), "a value wins over the error for display")
}

// Result keeps every JSON type losslessly, and marshals back as it came.
func TestResultRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{"type":"text","value":"Paris"}`,
		`{"type":"number","value":12345678901234567890123}`,
		`{"type":"number","value":0.1000000000000000055511151231257827}`,
		`{"type":"bool","value":false}`,
		`{"type":"object","value":{"z":1,"a":[null,true]}}`,
		`{"type":"array","value":[]}`,
		`{"type":"text","value":null}`,
		`{"type":"error","value":null,"error":{"message":"boom","stacktrace":"line 1"}}`,
		`{"type":"error","error":{"message":"boom"}}`,
		`{"type":"status"}`,
		`{"type":"brand_new","value":"x"}`,
	} {
		var r Result
		require.NoError(t, json.Unmarshal([]byte(in), &r), in)
		out, err := json.Marshal(r)
		require.NoError(t, err)
		assert.JSONEq(t, in, string(out), "round trip of %s", in)
	}
	var r Result
	require.NoError(t, json.Unmarshal([]byte(`{"type":"number","value":12345678901234567890123}`), &r))
	assert.Equal(t, "12345678901234567890123", string(r.Value), "digits are kept exactly")
	require.NoError(t, json.Unmarshal([]byte(`{"type":"text","value":"x","error":null}`), &r))
	assert.Nil(t, r.Error, "an explicit null error is no error")
}
