package agentatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// object is a JSON object whose keys keep the order the service's Pydantic
// models declare them in, with explicit nulls where a value is nil.
type object []field

type field struct {
	key   string
	value any
}

// MarshalJSON writes the fields in order, without escaping HTML characters,
// as Python's json module does.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := encodeValue(&buf, f.key); err != nil {
			return nil, err
		}
		buf.WriteByte(':')
		if err := encodeValue(&buf, f.value); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.key, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func encodeValue(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

// writeJSON answers with a JSON document.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := encodeValue(&buf, v); err != nil {
		// Only a bad seed (say, a channel in a parameters map) gets here.
		status = http.StatusInternalServerError
		buf.Reset()
		_ = encodeValue(&buf, object{{"detail", "agentatest: cannot encode the answer: " + err.Error()}})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", fmt.Sprint(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeDetail answers {"detail": message}, the service's shape for every
// error other than a validation error.
func writeDetail(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, object{{"detail", message}})
}

// naiveTime formats t as the service writes timestamps read back from
// storage: UTC without a zone, with microseconds unless they are zero, as
// Python's datetime.isoformat does.
func naiveTime(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// zonedTime formats t as the service writes freshly created objects: like
// naiveTime, followed by +00:00.
func zonedTime(t time.Time) string {
	return naiveTime(t) + "+00:00"
}

// result is the service's Result: {"type", "value", "error"}, all three
// always present.
type result struct {
	Type  string
	Value any
	Err   *resultError
}

type resultError struct {
	Message    string
	Stacktrace *string
}

func (r result) wire() object {
	var e any
	if r.Err != nil {
		var st any
		if r.Err.Stacktrace != nil {
			st = *r.Err.Stacktrace
		}
		e = object{{"message", r.Err.Message}, {"stacktrace", st}}
	}
	return object{{"type", r.Type}, {"value", r.Value}, {"error", e}}
}

func (r result) failed() bool { return r.Type == "error" || r.Err != nil }

func errorResult(message string, stacktrace string) result {
	e := &resultError{Message: message}
	if stacktrace != "" {
		e.Stacktrace = &stacktrace
	}
	return result{Type: "error", Err: e}
}

// nullable returns nil for an empty string, so that it is sent as null.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullableMap returns nil for a nil map, so that it is sent as null.
func nullableMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}
