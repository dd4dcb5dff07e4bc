package models

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The shapes of today's evaluations (the 2026 API, Agenta v0.103.4 on): a
// run over one application revision, its rows (scenarios), its cells
// (results) and its metrics rows. Absent members mean null: the service
// never sends null in these answers, so optional fields are pointers or
// omitted when empty, and each type marshals back to what it was decoded
// from.

// RunStatus is the status of a 2026 run, scenario or cell.
type RunStatus string

// The run statuses the service defines. A run made by
// CreateSimpleEvaluation answers RunPending on create and reads
// RunRunning from its first read on; RunSuccess, RunErrors, RunFailure and
// RunCancelled are terminal.
const (
	RunPending   RunStatus = "pending"
	RunQueued    RunStatus = "queued"
	RunRunning   RunStatus = "running"
	RunSuccess   RunStatus = "success"
	RunErrors    RunStatus = "errors"
	RunFailure   RunStatus = "failure"
	RunCancelled RunStatus = "cancelled"
)

// Terminal reports a status after which a run no longer changes: success,
// errors (finished, some cells failed), failure (the run could not execute)
// or cancelled. A value the SDK does not know is not terminal.
func (s RunStatus) Terminal() bool {
	switch s {
	case RunSuccess, RunErrors, RunFailure, RunCancelled:
		return true
	}
	return false
}

// Failed reports a run that did not execute: failure, or cancelled (which no
// v0.113 code path sets; counted as failed so that no gate can pass on it).
// A run ending errors finished, with some failed cells: it is not Failed.
func (s RunStatus) Failed() bool { return s == RunFailure || s == RunCancelled }

// ResultTypeMissing is the type of a Result the SDK builds for a value the
// service should have recorded and did not: a 2026 row whose application
// trace cannot be found (the tracing pipeline down), or a test case the run
// never reached. Such a Result carries an Error, so Failed reports true and
// the row counts against whoever it belongs to; it is never an empty value.
const ResultTypeMissing = "missing"

// RunFlags are the 14 booleans of a run, always all sent.
type RunFlags struct {
	IsLive        bool `json:"is_live"`
	IsActive      bool `json:"is_active"` // false once terminal, or after a stop (which stops nothing else)
	IsClosed      bool `json:"is_closed"`
	IsQueue       bool `json:"is_queue"`
	IsCached      bool `json:"is_cached"`
	IsSplit       bool `json:"is_split"` // repeats call the application once each, not once per row
	HasQueries    bool `json:"has_queries"`
	HasTestsets   bool `json:"has_testsets"`
	HasTraces     bool `json:"has_traces"`
	HasTestcases  bool `json:"has_testcases"`
	HasEvaluators bool `json:"has_evaluators"`
	HasCustom     bool `json:"has_custom"`
	HasHuman      bool `json:"has_human"`
	HasAuto       bool `json:"has_auto"`
}

// RunConcurrency is how the service's worker paces a run's rows.
type RunConcurrency struct {
	BatchSize  *int     `json:"batch_size,omitempty"`
	MaxRetries *int     `json:"max_retries,omitempty"`
	RetryDelay *float64 `json:"retry_delay,omitempty"` // seconds
}

// SimpleEvaluationCreate is what CreateSimpleEvaluation asks for: one
// application revision run over one test-set revision and judged by the
// evaluator revisions. The SDK sends every step as {"<revision id>":
// "auto"}: the list form would make every step "custom", which the
// service's worker never runs.
type SimpleEvaluationCreate struct {
	Name        string
	Description string
	// TestsetRevisionID is the test-set revision (not the test set's id).
	TestsetRevisionID string
	// ApplicationRevisionID is the one application revision to run: the
	// service marks a run of two failure. Compare revisions with one run
	// each over the same test-set revision.
	ApplicationRevisionID string
	// EvaluatorRevisionIDs are evaluator revisions (not evaluator ids).
	EvaluatorRevisionIDs []string
	// Repeats runs each test case this many times; 0 means 1. Without
	// Split the application is called once per row and only the
	// evaluators repeat.
	Repeats int
	// Split calls the application once per repeat (flags.is_split).
	Split       bool
	Concurrency *RunConcurrency
	Tags        map[string]any
	Meta        map[string]any
}

// MarshalJSON writes the request as the route wants it:
// {"evaluation":{"name",…,"data":{"testset_steps":{id:"auto"},…}}}.
func (e SimpleEvaluationCreate) MarshalJSON() ([]byte, error) {
	auto := func(ids ...string) map[string]string {
		m := make(map[string]string, len(ids))
		for _, id := range ids {
			m[id] = "auto"
		}
		return m
	}
	repeats := e.Repeats
	if repeats == 0 {
		repeats = 1
	}
	type data struct {
		TestsetSteps     map[string]string `json:"testset_steps"`
		ApplicationSteps map[string]string `json:"application_steps"`
		EvaluatorSteps   map[string]string `json:"evaluator_steps"`
		Repeats          int               `json:"repeats"`
		Concurrency      *RunConcurrency   `json:"concurrency,omitempty"`
	}
	type flags struct {
		IsSplit bool `json:"is_split"`
	}
	type evaluation struct {
		Name        string         `json:"name,omitempty"`
		Description string         `json:"description,omitempty"`
		Flags       *flags         `json:"flags,omitempty"`
		Tags        map[string]any `json:"tags,omitempty"`
		Meta        map[string]any `json:"meta,omitempty"`
		Data        data           `json:"data"`
	}
	ev := evaluation{Name: e.Name, Description: e.Description, Tags: e.Tags, Meta: e.Meta, Data: data{
		TestsetSteps:     auto(e.TestsetRevisionID),
		ApplicationSteps: auto(e.ApplicationRevisionID),
		EvaluatorSteps:   auto(e.EvaluatorRevisionIDs...),
		Repeats:          repeats,
		Concurrency:      e.Concurrency,
	}}
	if e.Split {
		ev.Flags = &flags{IsSplit: true}
	}
	return json.Marshal(struct {
		Evaluation evaluation `json:"evaluation"`
	}{ev})
}

// SimpleEvaluation is a run as the /simple/evaluations routes show it. Its
// ID is the run's id: FetchRun, WaitRun and the queries take it.
type SimpleEvaluation struct {
	ID          string               `json:"id"`
	Name        string               `json:"name,omitempty"`
	Description string               `json:"description,omitempty"`
	Version     string               `json:"version,omitempty"`
	Flags       RunFlags             `json:"flags"`
	Tags        map[string]any       `json:"tags,omitempty"`
	Meta        map[string]any       `json:"meta,omitempty"`
	Data        SimpleEvaluationData `json:"data"`
	CreatedAt   *Timestamp           `json:"created_at,omitempty"`
	UpdatedAt   *Timestamp           `json:"updated_at,omitempty"`
	CreatedByID string               `json:"created_by_id,omitempty"`
	UpdatedByID string               `json:"updated_by_id,omitempty"`
}

// SimpleEvaluationData is a simple evaluation's steps, keyed by revision id,
// each mapped to its origin ("auto", "human" or "custom").
type SimpleEvaluationData struct {
	// Status is "pending" in the create answer and the run's status after.
	Status           RunStatus         `json:"status,omitempty"`
	QuerySteps       map[string]string `json:"query_steps,omitempty"`
	TestsetSteps     map[string]string `json:"testset_steps,omitempty"`
	ApplicationSteps map[string]string `json:"application_steps,omitempty"`
	EvaluatorSteps   map[string]string `json:"evaluator_steps,omitempty"`
	Repeats          *int              `json:"repeats,omitempty"`
	Concurrency      *RunConcurrency   `json:"concurrency,omitempty"`
}

// UnmarshalJSON accepts each step set as the map the service answers or as
// the list of revision ids its schema also allows (origin "custom").
func (d *SimpleEvaluationData) UnmarshalJSON(data []byte) error {
	type wire SimpleEvaluationData
	var w struct {
		wire
		QuerySteps       stepSet `json:"query_steps"`
		TestsetSteps     stepSet `json:"testset_steps"`
		ApplicationSteps stepSet `json:"application_steps"`
		EvaluatorSteps   stepSet `json:"evaluator_steps"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*d = SimpleEvaluationData(w.wire)
	d.QuerySteps, d.TestsetSteps = w.QuerySteps, w.TestsetSteps
	d.ApplicationSteps, d.EvaluatorSteps = w.ApplicationSteps, w.EvaluatorSteps
	return nil
}

// stepSet is a step set as a map of revision id to origin, read from a map
// or from a list of ids (which the service takes as origin "custom").
type stepSet map[string]string

func (s *stepSet) UnmarshalJSON(data []byte) error {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		var ids []string
		if err := json.Unmarshal(t, &ids); err != nil {
			return err
		}
		*s = make(stepSet, len(ids))
		for _, id := range ids {
			(*s)[id] = "custom"
		}
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*s = m
	return nil
}

// EvaluationRun is a run as GET /evaluations/runs/{id} shows it: the
// service's EvaluationRun. Its steps say which step key stands for which
// revision.
type EvaluationRun struct {
	ID          string             `json:"id"`
	Version     string             `json:"version,omitempty"`
	Name        string             `json:"name,omitempty"`
	Description string             `json:"description,omitempty"`
	Status      RunStatus          `json:"status,omitempty"`
	Flags       RunFlags           `json:"flags"`
	Tags        map[string]any     `json:"tags,omitempty"`
	Meta        map[string]any     `json:"meta,omitempty"`
	Data        *EvaluationRunData `json:"data,omitempty"`
	CreatedAt   *Timestamp         `json:"created_at,omitempty"`
	UpdatedAt   *Timestamp         `json:"updated_at,omitempty"`
	CreatedByID string             `json:"created_by_id,omitempty"`
	UpdatedByID string             `json:"updated_by_id,omitempty"`
}

// EvaluationRunData is a run's plan: its steps, repeats and column mappings.
type EvaluationRunData struct {
	Steps       []RunStep       `json:"steps,omitempty"`
	Repeats     *int            `json:"repeats,omitempty"`
	Concurrency *RunConcurrency `json:"concurrency,omitempty"`
	// Mappings lay out the web UI's columns, {column:{kind,name},
	// step:{key,path}}; kept as sent.
	Mappings []json.RawMessage `json:"mappings,omitempty"`
}

// The step types of a run.
const (
	StepInput      = "input"      // the test-set rows
	StepInvocation = "invocation" // the application call
	StepAnnotation = "annotation" // an evaluator
)

// RunStep is one step of a run: its key (the results' step_key), its type
// and origin, and the references of the revision it stands for.
type RunStep struct {
	// Key is "testset-<revision slug>", "application-<revision slug>" or
	// "evaluator-<revision slug>".
	Key    string `json:"key"`
	Type   string `json:"type"`   // StepInput, StepInvocation or StepAnnotation
	Origin string `json:"origin"` // auto, human or custom
	// References names the revision: for an application step
	// "application", "application_variant" and "application_revision", and
	// likewise "testset…" and "evaluator…".
	References map[string]Reference `json:"references,omitempty"`
	Inputs     []RunStepInput       `json:"inputs,omitempty"`
	Schemas    map[string]any       `json:"schemas,omitempty"`
}

// RunStepInput is an input a step takes, by key.
type RunStepInput struct {
	Key string `json:"key"`
}

// Revision returns the id of the revision the step stands for: the
// reference named "<kind>_revision", where kind is the key's prefix.
func (s RunStep) Revision() Reference {
	kind, _, _ := strings.Cut(s.Key, "-")
	return s.References[kind+"_revision"]
}

// Steps returns the run's steps of one type (StepInput, StepInvocation or
// StepAnnotation), in the run's order.
func (r EvaluationRun) Steps(stepType string) []RunStep {
	if r.Data == nil {
		return nil
	}
	var out []RunStep
	for _, s := range r.Data.Steps {
		if s.Type == stepType {
			out = append(out, s)
		}
	}
	return out
}

// RunScenario is one row of a run: the service's EvaluationScenario. It does
// not name its test case; the run's results do.
type RunScenario struct {
	ID          string         `json:"id"`
	RunID       string         `json:"run_id"`
	Status      RunStatus      `json:"status,omitempty"`
	Version     string         `json:"version,omitempty"`
	Interval    *int           `json:"interval,omitempty"`
	Timestamp   *Timestamp     `json:"timestamp,omitempty"`
	Flags       map[string]any `json:"flags,omitempty"`
	Tags        map[string]any `json:"tags,omitempty"`
	Meta        map[string]any `json:"meta,omitempty"`
	CreatedAt   *Timestamp     `json:"created_at,omitempty"` // created_at order is test-set order; id order is not
	UpdatedAt   *Timestamp     `json:"updated_at,omitempty"`
	CreatedByID string         `json:"created_by_id,omitempty"`
	UpdatedByID string         `json:"updated_by_id,omitempty"`
}

// RunResult is one cell of a run, scenario × step × repeat: the service's
// EvaluationResult. The input cell has no trace; the invocation and
// annotation cells name the trace that holds their output.
type RunResult struct {
	ID         string    `json:"id"`
	RunID      string    `json:"run_id"`
	ScenarioID string    `json:"scenario_id"`
	StepKey    string    `json:"step_key"`
	RepeatIdx  int       `json:"repeat_idx"`
	Status     RunStatus `json:"status,omitempty"`
	TestcaseID string    `json:"testcase_id,omitempty"`
	// TraceID is a dashed UUID here and 32 hex digits in traces; compare
	// them with NormalizeTraceID.
	TraceID     string         `json:"trace_id,omitempty"`
	HashID      string         `json:"hash_id,omitempty"`
	Error       *RunError      `json:"error,omitempty"`
	Version     string         `json:"version,omitempty"`
	Interval    *int           `json:"interval,omitempty"`
	Timestamp   *Timestamp     `json:"timestamp,omitempty"`
	Flags       map[string]any `json:"flags,omitempty"`
	Tags        map[string]any `json:"tags,omitempty"`
	Meta        map[string]any `json:"meta,omitempty"`
	CreatedAt   *Timestamp     `json:"created_at,omitempty"`
	UpdatedAt   *Timestamp     `json:"updated_at,omitempty"`
	CreatedByID string         `json:"created_by_id,omitempty"`
	UpdatedByID string         `json:"updated_by_id,omitempty"`
}

// RunError is a failed cell's error: the workflow's status object. The
// service's schema lets it hold any JSON, so it decodes leniently (a
// member of another type than expected is kept as its JSON text) and
// marshals back to what it was decoded from.
type RunError struct {
	Code    int    `json:"code,omitempty"` // 500 when the application raised, 400 for an evaluator's schema errors
	Type    string `json:"type,omitempty"` // a documentation URL naming the kind of error
	Message string `json:"message,omitempty"`
	// Stacktrace is a string or a list of strings (lines), kept as sent;
	// StacktraceText joins it.
	Stacktrace json.RawMessage `json:"stacktrace,omitempty"`

	raw json.RawMessage // as decoded
}

// UnmarshalJSON reads the error object, whatever its members' types.
func (e *RunError) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	text := func(raw json.RawMessage) string {
		var s string
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			return ""
		}
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			return string(raw)
		}
		return b.String()
	}
	*e = RunError{Type: text(m["type"]), Message: text(m["message"]), raw: append(json.RawMessage(nil), data...)}
	var code float64
	if json.Unmarshal(m["code"], &code) == nil && code == float64(int(code)) {
		e.Code = int(code)
	}
	if st := m["stacktrace"]; len(st) > 0 && !bytes.Equal(st, []byte("null")) {
		e.Stacktrace = st
	}
	return nil
}

// MarshalJSON writes the error as it was decoded, or its fields.
func (e RunError) MarshalJSON() ([]byte, error) {
	if e.raw != nil {
		return e.raw, nil
	}
	type wire RunError
	return json.Marshal(wire(e))
}

// StacktraceText returns the stack trace as one string: a list's lines
// joined, a string as it is, "" when there is none.
func (e RunError) StacktraceText() string {
	t := bytes.TrimSpace(e.Stacktrace)
	if len(t) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(t, &s) == nil {
		return s
	}
	var lines []string
	if json.Unmarshal(t, &lines) == nil {
		return strings.Join(lines, "")
	}
	return string(t)
}

// RunMetrics is a metrics row of a run: the service's EvaluationMetrics.
// The global row has no ScenarioID; a variational row, one per scenario,
// has one.
type RunMetrics struct {
	ID         string    `json:"id"`
	RunID      string    `json:"run_id"`
	ScenarioID string    `json:"scenario_id,omitempty"`
	Status     RunStatus `json:"status,omitempty"`
	// Data maps a step key to an attribute path (such as
	// "attributes.ag.data.outputs.success") to its statistics, kept as
	// sent: the service's schema allows any JSON there. Stats decodes it.
	Data        json.RawMessage `json:"data,omitempty"`
	Version     string          `json:"version,omitempty"`
	Interval    *int            `json:"interval,omitempty"`
	Timestamp   *Timestamp      `json:"timestamp,omitempty"`
	Flags       map[string]any  `json:"flags,omitempty"`
	Tags        map[string]any  `json:"tags,omitempty"`
	Meta        map[string]any  `json:"meta,omitempty"`
	CreatedAt   *Timestamp      `json:"created_at,omitempty"`
	UpdatedAt   *Timestamp      `json:"updated_at,omitempty"`
	CreatedByID string          `json:"created_by_id,omitempty"`
	UpdatedByID string          `json:"updated_by_id,omitempty"`
}

// Stats decodes Data: step key → attribute path → statistics. An empty
// or null Data is no statistics.
func (m RunMetrics) Stats() (map[string]map[string]MetricStats, error) {
	if len(bytes.TrimSpace(m.Data)) == 0 || bytes.Equal(bytes.TrimSpace(m.Data), []byte("null")) {
		return nil, nil
	}
	var out map[string]map[string]MetricStats
	if err := json.Unmarshal(m.Data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// MetricStats are the statistics of one attribute path: numeric ones
// (count, sum, mean, min, max, range, percentiles, histogram) or
// categorical ones (freq, uniq), by Type. Metrics count the rows whose
// application call failed, and may lack rows under load: the SDK never
// judges a run by them.
type MetricStats struct {
	// Type is binary, numeric/continuous, numeric/discrete,
	// categorical/single, categorical/multiple, string or json.
	Type  string             `json:"type"`
	Count int                `json:"count"`
	Max   *float64           `json:"max,omitempty"`
	Min   *float64           `json:"min,omitempty"`
	Sum   *float64           `json:"sum,omitempty"`
	Mean  *float64           `json:"mean,omitempty"`
	Range *float64           `json:"range,omitempty"`
	Pcts  map[string]float64 `json:"pcts,omitempty"`
	Iqrs  map[string]float64 `json:"iqrs,omitempty"`
	Pscs  map[string]float64 `json:"pscs,omitempty"`
	Hist  []MetricBin        `json:"hist,omitempty"`
	Freq  []MetricFrequency  `json:"freq,omitempty"`
	Uniq  []json.RawMessage  `json:"uniq,omitempty"`
}

// MetricBin is one bin of a numeric histogram.
type MetricBin struct {
	Bin      int       `json:"bin"`
	Count    int       `json:"count"`
	Interval []float64 `json:"interval,omitempty"`
	Density  float64   `json:"density"`
}

// MetricFrequency is how often one value occurs.
type MetricFrequency struct {
	Value   json.RawMessage `json:"value"`
	Count   int             `json:"count"`
	Density float64         `json:"density"`
}

// RunScenarioQuery selects a run's scenarios. RunID is required: without
// it the service answers every scenario of the project.
type RunScenarioQuery struct {
	RunID    string      `json:"run_id"`
	IDs      []string    `json:"ids,omitempty"`
	Statuses []RunStatus `json:"statuses,omitempty"`
	// PageSize is how many rows each request asks for; 0 means 500.
	PageSize int `json:"-"`
}

// RunResultQuery selects a run's cells. RunID is required: without it the
// service answers every cell of the project.
type RunResultQuery struct {
	RunID       string      `json:"run_id"`
	ScenarioIDs []string    `json:"scenario_ids,omitempty"`
	StepKeys    []string    `json:"step_keys,omitempty"`
	RepeatIdxs  []int       `json:"repeat_idxs,omitempty"`
	Statuses    []RunStatus `json:"statuses,omitempty"`
	// PageSize is how many rows each request asks for; 0 means 500.
	PageSize int `json:"-"`
}

// RunMetricsQuery selects a run's metrics rows. RunID is required.
type RunMetricsQuery struct {
	RunID       string   `json:"run_id"`
	ScenarioIDs []string `json:"scenario_ids,omitempty"`
	// PageSize is how many rows each request asks for; 0 means 500.
	PageSize int `json:"-"`
}

// NormalizeTraceID returns a trace id in the 32 lower-case hex digits the
// traces carry, whether it came dashed (as in results) or not; any other
// string is returned as it is.
func NormalizeTraceID(id string) string {
	if len(id) != 32 && len(id) != 36 {
		return id
	}
	var b [32]byte
	n := 0
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c == '-' && len(id) == 36 && (i == 8 || i == 13 || i == 18 || i == 23):
			continue
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			c += 'a' - 'A'
		default:
			return id
		}
		if n == 32 {
			return id
		}
		b[n] = c
		n++
	}
	if n != 32 {
		return id
	}
	return string(b[:])
}

// RunRow is one row of a 2026 run as StreamRunRows builds it from the
// run's results, test cases and traces: the row in the shape of a 2024
// scenario, so that the same judging code reads both, and what pairs it
// with the same row of another run.
type RunRow struct {
	// Scenario is the row: its inputs and expected answers (from the test
	// case), the application's output with cost and latency (from its
	// trace), and one result per evaluator (from theirs). Its ID is the
	// scenario's, with "#<repeat>" after it for repeats after the first.
	Scenario EvaluationScenario
	// TestcaseID is the test case the row ran; "" for a scenario the
	// service recorded no cell for. Runs over the same test-set revision
	// share test-case ids: pair rows by TestcaseID and RepeatIdx.
	TestcaseID string
	RepeatIdx  int
	// Status is the scenario's status ("success", "errors", …), or "" for
	// a test case the run has no scenario for.
	Status RunStatus
}
