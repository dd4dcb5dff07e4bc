package models

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// Trace is a 2026 trace: its spans as a tree, each span keyed by its name
// under its parent. FetchTrace and FetchTraces return it.
type Trace struct {
	// TraceID is 32 hex digits (results name it as a dashed UUID; compare
	// with NormalizeTraceID).
	TraceID string               `json:"trace_id,omitempty"`
	Spans   map[string]SpanNodes `json:"spans,omitempty"`
}

// SpanNodes are the spans under one name: one span, or several siblings
// that share the name, which the service sends as a list.
type SpanNodes struct {
	Nodes []TraceSpan
	// List records that the server sent a list rather than one object, so
	// that the value marshals back as it came.
	List bool
}

// UnmarshalJSON accepts one span object or a list of them.
func (n *SpanNodes) UnmarshalJSON(data []byte) error {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && t[0] == '[' {
		n.List = true
		return json.Unmarshal(t, &n.Nodes)
	}
	var s TraceSpan
	if err := json.Unmarshal(t, &s); err != nil {
		return err
	}
	n.Nodes, n.List = []TraceSpan{s}, false
	return nil
}

// MarshalJSON writes a list, or the one span, as it came.
func (n SpanNodes) MarshalJSON() ([]byte, error) {
	if n.List || len(n.Nodes) != 1 {
		if n.Nodes == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(n.Nodes)
	}
	return json.Marshal(n.Nodes[0])
}

// TraceSpan is one span of a 2026 trace: the service's Span, OpenTelemetry's
// fields with Agenta's attributes, and its children in Spans.
type TraceSpan struct {
	TraceID       string    `json:"trace_id"`
	SpanID        string    `json:"span_id"` // 16 hex digits
	ParentID      string    `json:"parent_id,omitempty"`
	TraceType     string    `json:"trace_type,omitempty"` // invocation, annotation or unknown
	SpanType      string    `json:"span_type,omitempty"`
	SpanKind      string    `json:"span_kind,omitempty"`
	SpanName      string    `json:"span_name,omitempty"`
	StartTime     *SpanTime `json:"start_time,omitempty"`
	EndTime       *SpanTime `json:"end_time,omitempty"`
	StatusCode    string    `json:"status_code,omitempty"` // STATUS_CODE_UNSET, STATUS_CODE_OK or STATUS_CODE_ERROR
	StatusMessage string    `json:"status_message,omitempty"`
	// Attributes hold "ag": data (inputs, outputs, parameters), metrics
	// (duration in ms, costs, tokens, errors), references, …; read them
	// with Outputs, DurationMillis and Cost.
	Attributes json.RawMessage `json:"attributes,omitempty"`
	References json.RawMessage `json:"references,omitempty"`
	Links      json.RawMessage `json:"links,omitempty"`
	Hashes     json.RawMessage `json:"hashes,omitempty"`
	Exception  json.RawMessage `json:"exception,omitempty"`
	// Events are OpenTelemetry events, such as an exception's; their
	// timestamps carry no zone.
	Events      json.RawMessage      `json:"events,omitempty"`
	SessionID   string               `json:"session_id,omitempty"`
	UserID      string               `json:"user_id,omitempty"`
	AgentID     string               `json:"agent_id,omitempty"`
	CreatedAt   *Timestamp           `json:"created_at,omitempty"`
	UpdatedAt   *Timestamp           `json:"updated_at,omitempty"`
	CreatedByID string               `json:"created_by_id,omitempty"`
	UpdatedByID string               `json:"updated_by_id,omitempty"`
	Spans       map[string]SpanNodes `json:"spans,omitempty"`
}

// SpanTime is a span's start or end: a timestamp string, or an integer,
// which the service's schema allows too (its unit is not documented), kept
// as sent.
type SpanTime struct {
	Time    time.Time
	Integer *int64
}

// UnmarshalJSON accepts a timestamp string or an integer.
func (t *SpanTime) UnmarshalJSON(data []byte) error {
	d := bytes.TrimSpace(data)
	if len(d) > 0 && d[0] != '"' && !bytes.Equal(d, []byte("null")) {
		n, err := strconv.ParseInt(string(d), 10, 64)
		if err != nil {
			return err
		}
		t.Integer, t.Time = &n, time.Time{}
		return nil
	}
	var ts Timestamp
	if err := ts.UnmarshalJSON(d); err != nil {
		return err
	}
	t.Time, t.Integer = ts.Time, nil
	return nil
}

// MarshalJSON writes the integer or the time as it came.
func (t SpanTime) MarshalJSON() ([]byte, error) {
	if t.Integer != nil {
		return []byte(strconv.FormatInt(*t.Integer, 10)), nil
	}
	return t.Time.MarshalJSON()
}

// Root returns the trace's top span: the one without a parent, or the only
// top-level one.
func (t Trace) Root() (*TraceSpan, bool) {
	var only *TraceSpan
	n := 0
	for _, nodes := range t.Spans {
		for i := range nodes.Nodes {
			s := &nodes.Nodes[i]
			if s.ParentID == "" {
				return s, true
			}
			only = s
			n++
		}
	}
	return only, n == 1
}

// SpanData is what the SDK reads of a span's attributes, parsed in one
// pass: the outputs, the duration and the cost.
type SpanData struct {
	// Outputs is attributes.ag.data.outputs: the application's answer, or
	// an evaluator's verdict such as {"success":true}; nil when the span
	// has none, as when the call failed.
	Outputs json.RawMessage
	// DurationMillis is attributes.ag.metrics.duration.cumulative, in ms.
	DurationMillis *float64
	// Cost is attributes.ag.metrics.costs.cumulative.total; nil when the
	// span has none, as when costs is the empty object the service sends
	// for an application that reports none.
	Cost *float64
}

// Data reads the span's outputs, duration and cost from its attributes,
// in one pass.
func (s TraceSpan) Data() SpanData {
	var a struct {
		AG struct {
			Data struct {
				Outputs json.RawMessage `json:"outputs"`
			} `json:"data"`
			Metrics struct {
				Duration struct {
					Cumulative *float64 `json:"cumulative"`
				} `json:"duration"`
				Costs struct {
					Cumulative struct {
						Total *float64 `json:"total"`
					} `json:"cumulative"`
				} `json:"costs"`
			} `json:"metrics"`
		} `json:"ag"`
	}
	if len(s.Attributes) == 0 || json.Unmarshal(s.Attributes, &a) != nil {
		return SpanData{}
	}
	d := SpanData{DurationMillis: a.AG.Metrics.Duration.Cumulative, Cost: a.AG.Metrics.Costs.Cumulative.Total}
	if len(a.AG.Data.Outputs) > 0 && !bytes.Equal(a.AG.Data.Outputs, []byte("null")) {
		d.Outputs = a.AG.Data.Outputs
	}
	return d
}

// Outputs returns attributes.ag.data.outputs (see SpanData.Outputs). It
// reports false when the span has none, as when the call failed.
func (s TraceSpan) Outputs() (json.RawMessage, bool) {
	d := s.Data()
	return d.Outputs, d.Outputs != nil
}

// DurationMillis returns attributes.ag.metrics.duration.cumulative, in
// milliseconds.
func (s TraceSpan) DurationMillis() (float64, bool) {
	d := s.Data()
	if d.DurationMillis == nil {
		return 0, false
	}
	return *d.DurationMillis, true
}

// Cost returns attributes.ag.metrics.costs.cumulative.total. It reports
// false when the span has no cost, as when costs is the empty object the
// service sends for an application that reports none.
func (s TraceSpan) Cost() (float64, bool) {
	d := s.Data()
	if d.Cost == nil {
		return 0, false
	}
	return *d.Cost, true
}

// Failed reports a span whose status is STATUS_CODE_ERROR, with its status
// message, such as "ValueError: stand-in app error for ERRor2".
func (s TraceSpan) Failed() (message string, failed bool) {
	return s.StatusMessage, s.StatusCode == "STATUS_CODE_ERROR"
}
