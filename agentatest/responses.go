package agentatest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Every answer the Server writes is built here: the service's JSON shapes,
// with keys in its models' order and explicit nulls, and its timestamps.

// evaluationWire renders an evaluation: the same on create, on its read
// and in a list. Callers hold s.mu.
func (s *Server) evaluationWire(run *evaluationRun) object {
	aggregated := []any{}
	for _, a := range run.aggregated {
		aggregated = append(aggregated, object{{"evaluator_config", s.evaluatorWire(a.evaluator)}, {"result", a.result.wire()}})
	}
	costs := make([]any, len(run.costs))
	for i, r := range run.costs {
		if r != nil {
			costs[i] = r.wire()
		}
	}
	return object{
		{"id", run.id},
		{"app_id", run.appID},
		{"user_id", s.user.ID},
		{"user_username", s.user.Username},
		{"variant_ids", []string{run.variantID}},
		{"variant_names", []string{run.variantName}},
		{"variant_revision_ids", []string{run.revisionID}},
		{"revisions", []string{revisionString(run.revision)}},
		{"testset_id", nullable(run.testsetID)},
		{"testset_name", nullable(run.testsetName)},
		{"status", s.statusResult(run).wire()},
		{"aggregated_results", aggregated},
		{"average_cost", costs[0]},
		{"total_cost", costs[1]},
		{"average_latency", costs[2]},
		{"created_at", s.evaluationTime(run.created)},
		{"updated_at", s.evaluationTime(run.created)},
	}
}

// createdEvaluationWire renders an evaluation as create answers it: as
// evaluationWire does, except that older servers wrote the timestamps of a
// fresh object with a +00:00 zone and those read back from storage
// without one. Callers hold s.mu.
func (s *Server) createdEvaluationWire(run *evaluationRun) object {
	o := s.evaluationWire(run)
	if s.older {
		o.set("created_at", naiveTime(run.created)+"+00:00")
		o.set("updated_at", naiveTime(run.created)+"+00:00")
	}
	return o
}

// statusResult is a run's status as the service stores it: a Result of
// type status, carrying the error of a failed run. Callers hold s.mu.
func (s *Server) statusResult(run *evaluationRun) result {
	return result{Type: "status", Value: run.status, Err: run.statusError}
}

// scenarioWire renders a scenario: correct_answers and no correct_answer
// or evaluation field, or under WithOlderServer the reverse. Callers hold
// s.mu.
func (s *Server) scenarioWire(run *evaluationRun, sc *scenarioRecord) object {
	inputs := make([]any, len(run.inputs))
	for i, name := range run.inputs {
		inputs[i] = object{{"name", name}, {"type", "text"}, {"value", sc.inputs[i]}}
	}
	var cost, latency any
	if sc.cost != nil {
		cost = pythonFloatValue(*sc.cost)
	}
	if sc.latency != nil {
		latency = pythonFloatValue(*sc.latency)
	}
	results := make([]any, len(sc.results))
	for i, r := range sc.results {
		results[i] = object{{"evaluator_config", run.evaluators[i].id}, {"result", r.wire()}}
	}
	o := object{
		{"id", sc.id},
		{"evaluation_id", run.id},
		{"inputs", inputs},
		{"outputs", []any{object{{"result", sc.output.wire()}, {"cost", cost}, {"latency", latency}}}},
	}
	if s.older {
		var answer any
		if len(sc.answers) > 0 {
			answer = sc.answers[0].value
		}
		o = append(o, field{"evaluation", nil}, field{"correct_answer", answer})
	} else {
		answers := make([]any, len(sc.answers))
		for i, a := range sc.answers {
			answers[i] = object{{"key", a.key}, {"value", a.value}}
		}
		o = append(o, field{"correct_answers", answers})
	}
	return append(o,
		field{"is_pinned", false},
		field{"note", ""},
		field{"results", results},
	)
}

// variantWire is an AppVariantResponse. A self-hosted server's model has no
// previous_variant_name, organization_id or workspace_id, so they are
// absent unless the app belongs to an organization, as on the cloud, which
// sends all three. Callers hold s.mu.
func (s *Server) variantWire(v *variantRecord) object {
	app := s.apps[v.appID]
	base := s.bases[v.baseID]
	o := object{
		{"app_id", v.appID},
		{"app_name", app.Name},
		{"variant_id", v.id},
		{"variant_name", base.Name + "." + v.configName},
		{"parameters", jsonb(nullableMap(v.parameters))},
	}
	cloud := app.OrganizationID != "" || app.WorkspaceID != ""
	if cloud {
		o = append(o, field{"previous_variant_name", nullable(v.previousVariantName)})
	}
	o = append(o,
		field{"user_id", v.userID},
		field{"base_name", base.Name},
		field{"base_id", base.ID},
		field{"config_name", v.configName},
		field{"uri", nullable(base.URI)},
		field{"revision", v.revision},
	)
	if cloud {
		o = append(o,
			field{"organization_id", nullable(app.OrganizationID)},
			field{"workspace_id", nullable(app.WorkspaceID)})
	}
	return o
}

func (s *Server) evaluatorWire(e *evaluatorRecord) object {
	return object{
		{"id", e.id},
		{"name", e.name},
		{"evaluator_key", e.key},
		{"settings_values", jsonb(nullableMap(e.settings))},
		{"created_at", s.pythonTime(e.created)},
		{"updated_at", s.pythonTime(e.updated)},
	}
}

func (s *Server) humanEvaluationWire(h *humanEvaluationRecord) object {
	return object{
		{"id", h.ID},
		{"app_id", h.AppID},
		{"user_id", h.UserID},
		{"user_username", h.UserUsername},
		{"evaluation_type", h.EvaluationType},
		{"variant_ids", h.VariantIDs},
		{"variant_names", h.VariantNames},
		{"variants_revision_ids", h.VariantsRevisionIDs},
		{"revisions", h.Revisions},
		{"testset_id", h.TestsetID},
		{"testset_name", h.TestsetName},
		{"status", h.Status},
		{"created_at", s.pythonTime(h.CreatedAt.Time)},
		{"updated_at", s.pythonTime(h.UpdatedAt.Time)},
	}
}

// spanWire renders a span with its descendants. The span asked for carries
// its config (the SpanDetail shape); its children, plain Spans, do not.
// Callers hold s.mu.
func (s *Server) spanWire(rec *spanRecord, detail bool, depth int) object {
	sp := rec.span
	variant := object{
		{"variant_id", nullable(sp.Variant.VariantID)},
		{"variant_name", nullable(sp.Variant.VariantName)},
		{"revision", nullableInt(sp.Variant.Revision)},
	}
	if sp.Variant.Environment != "" {
		variant = append(variant, field{"environment", sp.Variant.Environment})
	}
	var children any
	if len(rec.children) > 0 && depth < maxSpanDepth {
		list := make([]any, 0, len(rec.children))
		for _, id := range rec.children {
			if c, ok := s.spans[id]; ok {
				list = append(list, s.spanWire(c, false, depth+1))
			}
		}
		children = list
	}
	metadata := sp.Metadata
	if metadata == nil {
		metadata = map[string]any{}
	}
	content := sp.Content
	if content == nil {
		content = map[string]any{}
	}
	o := object{
		{"id", sp.ID},
		{"name", sp.Name},
		{"parent_span_id", nullable(sp.ParentSpanID)},
		{"created_at", naiveTime(sp.CreatedAt.Time)},
		{"variant", variant},
		{"environment", nullable(sp.Environment)},
		{"spankind", string(sp.SpanKind)},
		{"status", string(sp.Status)},
		{"metadata", metadata},
		{"trace_id", nullable(sp.TraceID)},
		{"user_id", sp.UserID},
		{"content", content},
		{"children", children},
	}
	if detail {
		o = append(o, field{"config", nullableMap(sp.Config)})
	}
	return o
}

// maxSpanDepth guards against a seeded cycle of spans.
const maxSpanDepth = 256

func nullableInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func (e validationError) wire(v pydanticVersion) object {
	if v == pydanticV1 {
		o := object{{"loc", e.Loc}, {"msg", e.Msg}, {"type", e.Type}}
		if e.Ctx != nil {
			o = append(o, field{"ctx", e.Ctx})
		}
		return o
	}
	o := object{{"type", e.Type}, {"loc", e.Loc}, {"msg", e.Msg}, {"input", e.Input}}
	if e.Ctx != nil {
		o = append(o, field{"ctx", e.Ctx})
	}
	if e.Type == "json_invalid" {
		// FastAPI builds this item itself, without Pydantic's link.
		return o
	}
	return append(o, field{"url", pydanticV2Docs + e.Type})
}

// validationBody is a 422 answer's body.
func validationBody(v pydanticVersion, errs []validationError) object {
	items := make([]any, len(errs))
	for i, e := range errs {
		items[i] = e.wire(v)
	}
	return object{{"detail", items}}
}

// object is a JSON object whose keys keep the order the service's Pydantic
// models declare them in, with explicit nulls where a value is nil.
type object []field

type field struct {
	key   string
	value any
}

// set replaces the value of the field named key.
func (o object) set(key string, value any) {
	for i := range o {
		if o[i].key == key {
			o[i].value = value
		}
	}
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

// answer is a whole response, built before any byte of it is written.
type answer struct {
	status int
	header http.Header // extra headers; may be nil
	body   []byte      // JSON, or nil for no body
}

// jsonAnswer encodes v as the answer's body.
func jsonAnswer(status int, v any) answer {
	var buf bytes.Buffer
	var unsupported *json.UnsupportedValueError
	if err := encodeValue(&buf, v); errors.As(err, &unsupported) {
		// NaN or an infinity, say a 422 echoing the input NaN, which
		// Python's json module read from the body: Starlette renders JSON
		// with allow_nan=False, fails, and its error middleware answers a
		// plain-text 500.
		return answer{status: http.StatusInternalServerError,
			header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
			body:   []byte("Internal Server Error")}
	} else if err != nil {
		// Only a bad seed (say, a channel in a parameters map) gets here.
		status = http.StatusInternalServerError
		buf.Reset()
		_ = encodeValue(&buf, object{{"detail", "agentatest: cannot encode the answer: " + err.Error()}})
	}
	return answer{status: status, body: buf.Bytes()}
}

// detailAnswer answers {"detail": message}, the service's shape for every
// error other than a validation error.
func detailAnswer(status int, message string) answer {
	return jsonAnswer(status, object{{"detail", message}})
}

// write sends the answer.
func (a answer) write(w http.ResponseWriter) {
	h := w.Header()
	for name, values := range a.header {
		h[name] = values
	}
	if a.body != nil && h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	if len(a.body) > 0 {
		_, _ = w.Write(a.body)
	}
}

// naiveTime formats t as older servers wrote every timestamp: UTC without
// a zone, with microseconds unless they are zero, as Python's
// datetime.isoformat does.
func naiveTime(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// evaluationTime formats an Evaluation's timestamps as Pydantic 2 writes
// them, "2024-07-15T10:52:51.123456Z", or naive under WithOlderServer.
func (s *Server) evaluationTime(t time.Time) string {
	if s.older {
		return naiveTime(t)
	}
	return naiveTime(t) + "Z"
}

// pythonTime formats the timestamps of human evaluations and evaluator
// configs as the service writes them, with Python's str(datetime):
// "2024-07-15 10:52:51.123456+00:00", with a space and no fraction when it
// is zero; or naive under WithOlderServer.
func (s *Server) pythonTime(t time.Time) string {
	if s.older {
		return naiveTime(t)
	}
	return strings.Replace(naiveTime(t), "T", " ", 1) + "+00:00"
}

// result is the service's Result: {"type", "value", "error"}, all three
// always present.
type result struct {
	Type  string
	Value any
	Err   *resultError
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

// jsonb renders a JSON-like value as PostgreSQL's jsonb type gives it back:
// the keys of every object ordered by length, then bytewise. The service
// keeps variant parameters, evaluator settings and statuses in jsonb
// columns, and answers them in that order wherever it passes the stored
// value through rather than a model: parameters {"temperature",
// "prompt_template"}, a status read {"type", "error", "value"}.
func jsonb(v any) any {
	switch t := v.(type) {
	case map[string]any:
		o := make(object, 0, len(t))
		for k, x := range t {
			o = append(o, field{k, x})
		}
		return jsonb(o)
	case object:
		o := make(object, len(t))
		for i, f := range t {
			o[i] = field{f.key, jsonb(f.value)}
		}
		slices.SortStableFunc(o, func(a, b field) int {
			return cmp.Or(cmp.Compare(len(a.key), len(b.key)), strings.Compare(a.key, b.key))
		})
		return o
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = jsonb(x)
		}
		return out
	}
	return v
}

// pythonFloats marks the numbers of a decoded request body as Python read
// them: a float (float64, as plain leaves it) as a Python float, so that a
// copy through JSON stores 1.0 as a float, not as the integer 1, and an
// integer (json.Number) as Python writes it back. The service stores what
// Python read, and answers it back so. (Seeded parameters keep the text
// the test gave them.)
func pythonFloats(m map[string]any) map[string]any {
	var mark func(any) any
	mark = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, x := range t {
				out[k] = mark(x)
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, x := range t {
				out[i] = mark(x)
			}
			return out
		case float64:
			if !math.IsNaN(t) && !math.IsInf(t, 0) {
				return pythonFloatValue(t + 0) // jsonb's numeric has no -0
			}
		case json.Number:
			return json.Number(pythonNumber(t)) // an integer: -0 is 0
		}
		return v
	}
	if m == nil {
		return nil
	}
	return mark(m).(map[string]any)
}

// pythonFloatValue is a number the service computes as a Python float,
// such as an average or a cost, which Python's json module writes with a
// fraction or an exponent: 1.0, not 1; 1e-05, not 0.00001.
type pythonFloatValue float64

// MarshalJSON writes the float as Python's repr does.
func (f pythonFloatValue) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return nil, &json.UnsupportedValueError{Str: pythonFloat(float64(f))}
	}
	return []byte(pythonFloat(float64(f))), nil
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
