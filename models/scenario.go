package models

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// DefaultCorrectAnswerKey is the usual test-set column of the expected
// answer, the one the web UI's evaluator configs name in
// settings_values.correct_answer_key and the one ExpectedAnswer looks for
// first. The service itself has no default: an evaluator config without
// correct_answer_key makes every row's result the error "No correct answer
// keys provided.".
const DefaultCorrectAnswerKey = "correct_answer"

// Text returns the input's value as text: a JSON string without its quotes
// and escapes, any other JSON value in its compact form, and "" for null or
// no value.
func (in Input) Text() string {
	return rawText(in.Value)
}

// Input returns the text of the input named name, and whether the scenario
// has such an input.
func (s EvaluationScenario) Input(name string) (string, bool) {
	for _, in := range s.Inputs {
		if in.Name == name {
			return in.Text(), true
		}
	}
	return "", false
}

// InputsText renders the inputs as "name=value" pairs in the server's
// order, separated by ", ": a short label for the row in logs and reports.
func (s EvaluationScenario) InputsText() string {
	var b strings.Builder
	for i, in := range s.Inputs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(in.Name)
		b.WriteByte('=')
		b.WriteString(in.Text())
	}
	return b.String()
}

// Output returns the application's output for the row: the first of
// Outputs, which is the only one the service writes. It reports false when
// the row has none.
func (s EvaluationScenario) Output() (Output, bool) {
	if len(s.Outputs) == 0 {
		return Output{}, false
	}
	return s.Outputs[0], true
}

// OutputText returns the application's answer as text: the text of a
// string output, the compact JSON of any other value, and "" when the row
// has no output or the application call failed (see Failed).
func (s EvaluationScenario) OutputText() string {
	out, ok := s.Output()
	if !ok || out.Result.Failed() {
		return ""
	}
	return rawText(out.Result.Value)
}

// Failed reports whether the application call of this row failed: its
// output is an error Result. The service then copies that error into every
// evaluator result of the row, so none of them judges the answer.
func (s EvaluationScenario) Failed() bool {
	out, ok := s.Output()
	return ok && out.Result.Failed()
}

// AppError returns the message of the failed application call, and false
// when the call did not fail.
func (s EvaluationScenario) AppError() (string, bool) {
	if !s.Failed() {
		return "", false
	}
	out, _ := s.Output()
	if out.Result.Error != nil {
		return out.Result.Error.Message, true
	}
	return rawText(out.Result.Value), true
}

// Cost returns what the application call cost, when the service measured it.
func (s EvaluationScenario) Cost() (float64, bool) {
	out, ok := s.Output()
	if !ok || out.Cost == nil {
		return 0, false
	}
	return *out.Cost, true
}

// Latency returns how long the application call took, in seconds, when the
// service measured it.
func (s EvaluationScenario) Latency() (float64, bool) {
	out, ok := s.Output()
	if !ok || out.Latency == nil {
		return 0, false
	}
	return *out.Latency, true
}

// ExpectedAnswer returns the row's expected answer whichever field the
// server used: CorrectAnswer on older servers; on newer ones the entry of
// CorrectAnswers for the "correct_answer" column, else the first non-empty
// entry. It returns "" when the row has none.
func (s EvaluationScenario) ExpectedAnswer() string {
	if s.CorrectAnswer != "" {
		return s.CorrectAnswer
	}
	if v, ok := s.ExpectedAnswerFor(DefaultCorrectAnswerKey); ok && v != "" {
		return v
	}
	for _, a := range s.CorrectAnswers {
		if a.Value != "" {
			return a.Value
		}
	}
	return ""
}

// ExpectedAnswerFor returns the expected answer from the test-set column
// key, the one an evaluator config names in its correct_answer_key setting
// ("" looks up DefaultCorrectAnswerKey). The service sends "" for a column
// the test set lacks, and no entry at all on a row whose app call failed.
// Older servers send a single answer, taken as that of every column.
func (s EvaluationScenario) ExpectedAnswerFor(key string) (string, bool) {
	if key == "" {
		key = DefaultCorrectAnswerKey
	}
	for _, a := range s.CorrectAnswers {
		if a.Key == key {
			return a.Value, true
		}
	}
	if len(s.CorrectAnswers) == 0 && s.CorrectAnswer != "" {
		return s.CorrectAnswer, true
	}
	return "", false
}

// Result returns the result of the evaluator config with the given id, and
// whether the row has one.
func (s EvaluationScenario) Result(evaluatorConfigID string) (Result, bool) {
	for _, r := range s.Results {
		if r.EvaluatorConfig == evaluatorConfigID {
			return r.Result, true
		}
	}
	return Result{}, false
}

// rawText renders a raw JSON value as text: strings unquoted, other values
// compacted, null and nothing as "".
func rawText(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return ""
	}
	if v[0] == '"' {
		if len(v) >= 2 && v[len(v)-1] == '"' {
			inner := v[1 : len(v)-1]
			if bytes.IndexByte(inner, '\\') < 0 && bytes.IndexByte(inner, '"') < 0 && noControl(inner) && utf8.Valid(inner) {
				return string(inner) // the common case: nothing to unescape
			}
		}
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			return s
		}
		return string(v)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return string(v)
	}
	return buf.String()
}

func noControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return false
		}
	}
	return true
}
