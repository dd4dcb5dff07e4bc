package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agenta-go/agenta/internal/text"
)

// Result is the service's universal value holder: an evaluator's verdict, a
// model's output, a cost, a latency or an evaluation's status.
//
// Value keeps the JSON exactly as the server sent it, whatever its type; use
// the accessors to read it. A nil Value means the field was absent, and the
// JSON literal null means it was sent as null.
type Result struct {
	// Type names the kind of value, e.g. "text", "number", "bool", "status",
	// "error", "cost" or "latency". Unknown kinds are kept as they come.
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value,omitempty"`
	Error *Error          `json:"error,omitempty"`
}

// Error is the failure an evaluator or an application run reports in a Result.
type Error struct {
	Message    string `json:"message"`
	Stacktrace string `json:"stacktrace,omitempty"`
}

// Result types the service is known to send.
const (
	ResultTypeStatus  = "status"
	ResultTypeText    = "text"
	ResultTypeBool    = "bool"
	ResultTypeNumber  = "number"
	ResultTypeError   = "error"
	ResultTypeCost    = "cost"
	ResultTypeLatency = "latency"
)

// ErrNoValue is returned by Result.Decode when the result carries no value.
var ErrNoValue = errors.New("models: result has no value")

// HasValue reports whether the result carries a value other than null.
func (r Result) HasValue() bool {
	v := bytes.TrimSpace(r.Value)
	return len(v) > 0 && !bytes.Equal(v, []byte("null"))
}

// Failed reports whether the result is an error rather than a value.
func (r Result) Failed() bool {
	return r.Error != nil || r.Type == ResultTypeError
}

// Float64 returns the value as a number. It reports false when the value is
// not a JSON number (a numeric string such as "0.5" is not converted).
func (r Result) Float64() (float64, bool) {
	v := bytes.TrimSpace(r.Value)
	if len(v) == 0 || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// Bool returns the value as a boolean. It reports false when the value is
// not a JSON true or false.
func (r Result) Bool() (value, ok bool) {
	switch string(bytes.TrimSpace(r.Value)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Text returns the value as a string. It reports false when the value is not
// a JSON string.
func (r Result) Text() (string, bool) {
	v := bytes.TrimSpace(r.Value)
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// Decode unmarshals the value into v, which must be a pointer. It returns
// ErrNoValue when the value is absent or null.
func (r Result) Decode(v any) error {
	if !r.HasValue() {
		return ErrNoValue
	}
	return json.Unmarshal(r.Value, v)
}

// String renders the value compactly for display: the text of a string, the
// JSON of anything else, or the error message of a failed result.
func (r Result) String() string {
	if r.Error != nil && !r.HasValue() {
		return "error: " + r.Error.Message
	}
	if s, ok := r.Text(); ok {
		return s
	}
	if !r.HasValue() {
		return "null"
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, r.Value); err != nil {
		return string(r.Value)
	}
	return buf.String()
}

// Cause returns the last line of the stack trace, which names the Python
// exception that ended the run, such as "KeyError: 'country'": the service
// says only "Evaluation Failed" in Message. It returns "" when the trace is
// empty or "None", as the service writes it for errors it raised itself.
// The line is cut to 300 characters (text.Clip).
func (e Error) Cause() string {
	trace := strings.TrimRight(e.Stacktrace, " \t\r\n")
	line := strings.TrimSpace(trace[strings.LastIndexByte(trace, '\n')+1:])
	if line == "None" || line == "null" {
		return ""
	}
	return text.Clip(line, 300)
}

// keyErrorInput matches the cause of a run whose test set lacks a column
// the app takes as input: the worker reads data_point[name] for each input.
var keyErrorInput = regexp.MustCompile(`^KeyError: '([^'\n]{1,200})'$`)

// Hint says what to do about a recognised cause, such as "the test set has
// no column 'country', which the app takes as input"; it returns "" for a
// cause it does not recognise.
func (e Error) Hint() string {
	cause := e.Cause()
	if m := keyErrorInput.FindStringSubmatch(cause); m != nil && strings.Contains(e.Stacktrace, "in evaluate") {
		return fmt.Sprintf("the test set has no column '%s', which the app takes as input: rename the column, or change the app's inputs", m[1])
	}
	if strings.HasPrefix(cause, "AttributeError: 'NoneType' object has no attribute 'settings_values'") {
		return "an evaluator config id does not exist: check the evaluator configs of the evaluation"
	}
	return ""
}
