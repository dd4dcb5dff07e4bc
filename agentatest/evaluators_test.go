package agentatest

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestEvaluators(t *testing.T) {
	row := map[string]string{"country": "Brazil", "correct_answer": "Brasília", "alt": "Rio", "empty": ""}
	byKey := map[string]any{"correct_answer_key": "alt"}
	for _, tc := range []struct {
		name     string
		key      string
		settings map[string]any
		output   string
		typ      string
		value    any
		errMsg   string
	}{
		{"exact match", "auto_exact_match", map[string]any{}, "Brasília", "bool", true, ""},
		{"exact match without correct_answer_key", "auto_exact_match", nil, "Brasília", "error", nil, "No correct answer keys provided."},
		{"levenshtein without correct_answer_key", "auto_levenshtein_distance", nil, "Brasília", "error", nil, "No correct answer keys provided."},
		{"exact match is exact", "auto_exact_match", map[string]any{}, "brasília", "bool", false, ""},
		{"exact match on another column", "auto_exact_match", byKey, "Rio", "bool", true, ""},
		{"exact match on a missing column", "auto_exact_match", map[string]any{"correct_answer_key": "nope"}, "x", "error", nil,
			"Correct answer column 'nope' not found in the test set."},
		{"contains", "auto_contains", map[string]any{"substring": "capital"}, "The capital is Brasília", "bool", true, ""},
		{"contains is case sensitive by default", "auto_contains", map[string]any{"substring": "CAPITAL"}, "the capital", "bool", false, ""},
		{"contains folds case on request", "auto_contains", map[string]any{"substring": "CAPITAL", "case_sensitive": false}, "the capital", "bool", true, ""},
		{"contains any", "auto_contains_any", map[string]any{"substrings": "Rio, Brasília"}, "It is Brasília", "bool", true, ""},
		{"contains all", "auto_contains_all", map[string]any{"substrings": "Rio, Brasília"}, "It is Brasília", "bool", false, ""},
		{"starts with", "auto_starts_with", map[string]any{"prefix": "The"}, "The capital", "bool", true, ""},
		{"starts with folds case", "auto_starts_with", map[string]any{"prefix": "the", "case_sensitive": false}, "The capital", "bool", true, ""},
		{"ends with", "auto_ends_with", map[string]any{"suffix": "."}, "Brasília", "bool", false, ""},
		{"regex ignores case", "auto_regex_test", map[string]any{"regex_pattern": "^bras", "regex_should_match": true}, "Brasília", "bool", true, ""},
		{"regex should not match", "auto_regex_test", map[string]any{"regex_pattern": "[.!?]", "regex_should_match": false}, "Brasília.", "bool", false, ""},
		{"regex without settings", "auto_regex_test", nil, "x", "error", nil, "Error during Auto Regex evaluation"},
		{"regex that does not compile", "auto_regex_test", map[string]any{"regex_pattern": "(", "regex_should_match": true}, "x", "error", nil, "Error during Auto Regex evaluation"},
		{"levenshtein counts characters", "auto_levenshtein_distance", map[string]any{}, "Brasilia", "number", 1, ""},
		{"levenshtein distance", "auto_levenshtein_distance", map[string]any{}, "São Paulo", "number", 9, ""},
		{"levenshtein threshold is a verdict", "auto_levenshtein_distance", map[string]any{"threshold": 2.0}, "Brasilia", "bool", true, ""},
		{"levenshtein on an empty answer fails", "auto_levenshtein_distance", map[string]any{"correct_answer_key": "empty"}, "x", "error", nil,
			"Error during Levenshtein threshold evaluation"},
		{"similarity", "auto_similarity_match", map[string]any{"similarity_threshold": 0.4, "correct_answer_key": "alt"}, "Rio today", "bool", true, ""},
		{"contains json", "auto_contains_json", nil, `answer: {"city": "Brasília"}`, "bool", true, ""},
		{"contains no json", "auto_contains_json", nil, `answer: {city}`, "bool", false, ""},
		{"field match", "field_match_test", map[string]any{"json_field": "city"}, `{"city": "Brasília", "n": 1}`, "bool", true, ""},
		{"field match on another value", "field_match_test", map[string]any{"json_field": "city"}, `{"city": "Rio"}`, "bool", false, ""},
		{"field match without the field", "field_match_test", map[string]any{"json_field": "town"}, `{"city": "Brasília"}`, "bool", false, ""},
		{"field match on an output that is not JSON", "field_match_test", map[string]any{"json_field": "city"}, `Brasília`, "bool", false, ""},
		{"field match without correct_answer_key", "field_match_test", nil, `{"city": "Brasília"}`, "error", nil, "No correct answer keys provided."},
		{"an evaluator the fake cannot run", "auto_ai_critique", nil, "x", "error", nil, "Error during auto_ai_critique evaluation"},
		{"an unknown evaluator", "auto_magic", nil, "x", "error", nil, "Evaluation method 'auto_magic' not found."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settings := map[string]any{"correct_answer_key": "correct_answer"}
			for k, v := range tc.settings {
				settings[k] = v
			}
			if tc.settings == nil {
				settings = map[string]any{}
			}
			r := evaluate(tc.key, settings, tc.output, row)
			assert.Equal(t, tc.typ, r.Type)
			assert.Equal(t, tc.value, r.Value)
			if tc.errMsg != "" {
				if assert.NotNil(t, r.Err) {
					assert.Equal(t, tc.errMsg, r.Err.Message)
				}
			} else {
				assert.Nil(t, r.Err)
			}
		})
	}
}

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"Türkiye", "Turkiye", 1},
	} {
		assert.Equal(t, tc.want, levenshtein(tc.a, tc.b), "%q %q", tc.a, tc.b)
	}
}

func TestTemplateApplication(t *testing.T) {
	out, err := TemplateApplication(map[string]any{"prompt_user": "Capital of {country}? {unknown}"}, map[string]string{"country": "Peru"})
	assert.NoError(t, err)
	assert.Equal(t, "Capital of Peru? {unknown}", out)

	out, _ = TemplateApplication(nil, map[string]string{"b": "2", "a": "1"})
	assert.Equal(t, "1 2", out, "without a template: the inputs in name order")
}

func TestInputNames(t *testing.T) {
	rows := []map[string]string{{"q": "x", "z": "y", "correct_answer": "a"}}
	assert.Equal(t, []string{"country", "lang"}, inputNames(map[string]any{
		"inputs": []any{map[string]any{"name": "country"}, "lang"}}, rows, []string{"correct_answer"}))
	assert.Equal(t, []string{"tone", "q"}, inputNames(map[string]any{
		"prompt_system": "Be {tone}.", "prompt_user": "{q} {q}"}, rows, []string{"correct_answer"}))
	assert.Equal(t, []string{"q", "z"}, inputNames(map[string]any{"model": "m"}, rows, []string{"correct_answer"}))
}

func TestUsageIsDeterministicAndDependsOnTheModel(t *testing.T) {
	in := map[string]string{"country": "Peru"}
	p := map[string]any{"model": "gpt-4o", "prompt_user": "Capital of {country}?"}
	c1, l1 := usage(p, in, "Lima")
	c2, l2 := usage(p, in, "Lima")
	assert.Equal(t, c1, c2)
	assert.Equal(t, l1, l2)
	cheap, _ := usage(map[string]any{"model": "gpt-4o-mini", "prompt_user": "Capital of {country}?"}, in, "Lima")
	assert.Less(t, cheap, c1)
}

func TestCallApplicationRecoversPanics(t *testing.T) {
	_, err := callApplication(func(map[string]any, map[string]string) (string, error) { panic("boom") }, nil, nil)
	assert.EqualError(t, err, "application panicked: boom")
	_, err = callApplication(func(map[string]any, map[string]string) (string, error) { return "", errors.New("down") }, nil, nil)
	assert.EqualError(t, err, "down")
}

func TestTimestamps(t *testing.T) {
	at := time.Date(2024, 6, 26, 12, 22, 31, 775000999, time.FixedZone("", 7200))
	assert.Equal(t, "2024-06-26T10:22:31.775000", naiveTime(at))
	mid2024, older := &Server{}, &Server{older: true}
	assert.Equal(t, "2024-06-26T10:22:31.775000Z", mid2024.evaluationTime(at))
	assert.Equal(t, "2024-06-26 10:22:31.775000+00:00", mid2024.pythonTime(at))
	assert.Equal(t, "2024-06-26 10:22:31+00:00", mid2024.pythonTime(at.Truncate(time.Second)), "Python writes no zero fraction")
	assert.Equal(t, "2024-06-26T10:22:31.775000", older.evaluationTime(at))
	assert.Equal(t, "2024-06-26T10:22:31.775000", older.pythonTime(at))
	assert.Equal(t, "2024-06-26T10:22:31", naiveTime(at.Truncate(time.Second)))
}

func TestPythonNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"5": "5", "-0": "0", "1.5": "1.5", "5.0": "5.0", "1e5": "100000.0", "1e16": "1e+16",
		"0.0001": "0.0001", "0.00001": "1e-05", "-2.5E-7": "-2.5e-07", "123456789012345678": "123456789012345678",
		"1e400": "inf",
	} {
		assert.Equal(t, want, pythonNumber(json.Number(in)), in)
	}
}

func TestPythonConstantsLeaveStringsAlone(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"NaN"}`, `{"a":"NaN"}`},
		{`{"a":"x\"NaN\\","b":NaN}`, `{"a":"x\"NaN\\","b":"\u0000py:NaN"}`},
		{`[Infinity,-Infinity,"Infinity"]`, `["\u0000py:Infinity","\u0000py:-Infinity","Infinity"]`},
		{`{"NaN":1}`, `{"NaN":1}`},
	} {
		assert.Equal(t, tc.want, string(pythonConstants([]byte(tc.in))), tc.in)
	}
	v, err := decodeOrdered(pythonConstants([]byte(`[NaN, -Infinity, "NaN"]`)))
	assert.NoError(t, err)
	list := v.([]any)
	f, ok := list[0].(pyFloat)
	assert.True(t, ok && math.IsNaN(float64(f)), "NaN reads as a float NaN, got %#v", list[0])
	assert.Equal(t, pyFloat(math.Inf(-1)), list[1])
	assert.Equal(t, "NaN", list[2], "a string stays a string")
}
