package agentatest

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The 2026 worker, as v0.113's lives: after a pick-up delay it mints all of
// a run's scenarios at once (UUIDv7s of one moment, so id order is not row
// order), then, row by row, writes the input cell, calls the application
// (one invocation cell per row, per repeat only when split), runs each
// evaluator per repeat (annotation cells), writes the traces, the row's
// metrics and the scenario's status; at the end the whole run's metrics
// and the run's status. Evaluators still run on a row whose application
// call failed: exact match answers {"success":false}, the others fail
// with "Invalid outputs".

// dispatch26 hands a run to the worker, or queues it while the worker is
// down. Callers hold s.mu.
func (s *Server) dispatch26(run *run26) {
	if s.v26.workerDown || s.manual {
		s.v26.workerDown = true
		s.v26.queue = append(s.v26.queue, run)
		return
	}
	s.start2026(run)
}

// start2026 starts a run's worker. Callers hold s.mu.
func (s *Server) start2026(run *run26) {
	run.dispatched = s.goWork(func() { s.work26(run) })
}

// WaitRuns2026 waits until every 2026 run that a worker has picked up is
// over (success, errors or failure), or ctx ends. Runs waiting for a
// worker (StopWorker) or on custom evaluators never end: it does not wait
// for those.
func (s *Server) WaitRuns2026(ctx context.Context) error {
	s.mu.Lock()
	var waits []chan struct{}
	if s.v26 != nil {
		for _, run := range s.v26.runOrder {
			if run.dispatched && !run.waitsOnHumans() {
				waits = append(waits, run.done)
			}
		}
	}
	s.mu.Unlock()
	return waitDone(ctx, waits, nil)
}

// waitsOnHumans reports a run whose evaluators are all human or custom:
// its cells stay pending, and it never finishes.
func (run *run26) waitsOnHumans() bool {
	for _, o := range run.evOrigins {
		if o == "auto" {
			return false
		}
	}
	return len(run.evOrigins) > 0
}

func (s *Server) work26(run *run26) {
	if !s.hold(nil, s.pickup) {
		return
	}
	s.mu.Lock()
	s.mint26(run)
	n := len(run.scenarios)
	s.mu.Unlock()
	for i := 0; i < n; i++ {
		if !s.hold(nil, s.rowPace) {
			return
		}
		s.runRow26(run, i)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finish26(run)
}

// mint26 creates all of a run's scenarios at once. Callers hold s.mu.
func (s *Server) mint26(run *run26) {
	now := s.now26()
	n := len(run.tsRev.testcaseIDs)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = s.newID()
	}
	// Minted in one moment, UUIDv7s sort in no useful order: give them
	// out in a scrambled one, so id order is not row order.
	slices.SortFunc(ids, func(a, b string) int { return strings.Compare(slug26(a), slug26(b)) })
	const status = "running"
	for i, tcID := range run.tsRev.testcaseIDs {
		created := now.Add(time.Duration(i) * time.Microsecond)
		run.scenarios = append(run.scenarios, &scenario26{id: ids[i], status: status, run: run, index: i,
			testcaseID: tcID, created: created, updated: created})
	}
	run.updated = now
}

// invocation26 is one application call of a row.
type invocation26 struct {
	output   *string // nil when the call failed
	err      error
	millis   float64
	trace    *trace26
	reached  bool
	cost     *float64
	started  time.Time
	finished time.Time
}

// runRow26 runs one row: its cells, traces, metrics and status.
func (s *Server) runRow26(run *run26, i int) {
	s.mu.Lock()
	sc := run.scenarios[i]
	tc := s.v26.testcases[sc.testcaseID]
	app := run.appRev.variant.app
	application := app.application
	var params map[string]any
	if p, ok := run.appRev.data["parameters"].(map[string]any); ok {
		params = jsonClone(p)
	}
	s.mu.Unlock()
	if application == nil {
		application = StandInApplication
	}
	inputs := map[string]string{"testcase_id": sc.testcaseID}
	if tc != nil {
		for _, col := range tc.data {
			inputs[col.name] = columnText(col.value)
		}
	}
	calls := 1
	if run.split {
		calls = run.repeats
	}
	invocations := make([]invocation26, calls)
	for r := range invocations {
		inv := &invocations[r]
		inv.started = s.now26()
		t0 := time.Now()
		out, err := callApplication(application, params, inputs)
		inv.millis = float64(time.Since(t0).Microseconds())/1000 + float64(s.rowPace.Microseconds())/1000
		inv.finished = inv.started.Add(time.Duration(inv.millis * float64(time.Millisecond)))
		inv.reached = !errors.Is(err, ErrUnreachable)
		if err == nil {
			inv.output = &out
			if _, ok := params["model"]; ok {
				cost, _ := usage(params, inputs, out)
				inv.cost = &cost
			}
		}
		inv.err = err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now26()
	for r := 0; r < run.repeats; r++ {
		s.cell26(run, sc, run.inputKey, r, "success", "", nil, now)
	}
	failed := false
	rowMetrics := map[string]*stepValues{}
	if !invocations[0].reached {
		failed = true // no invocation cell, no annotation cell
	} else {
		for r := range invocations {
			inv := &invocations[r]
			inv.trace = s.invocationTrace26(run, sc, tc, params, inv, r)
			status, errObj := "success", object(nil)
			if inv.err != nil {
				status, errObj, failed = "failure", appError26(inv.err), true
			}
			s.cell26(run, sc, run.appKey, r, status, inv.trace.id, errObj, now)
			rowMetrics[run.appKey] = rowMetrics[run.appKey].addCall(inv.trace)
		}
		for e, ev := range run.evRevs {
			key := run.evalKeys[e]
			for r := 0; r < run.repeats; r++ {
				if run.evOrigins[e] != "auto" {
					s.cell26(run, sc, key, r, "pending", "", nil, now)
					continue
				}
				inv := &invocations[0]
				if run.split {
					inv = &invocations[r]
				}
				verdict, fail := evaluate26(ev, inv.output, tc)
				t := s.annotationTrace26(run, sc, tc, ev, inv, verdict, fail, r, e)
				status, errObj := "success", object(nil)
				if fail != nil {
					status, errObj, failed = "failure", fail, true
				}
				s.cell26(run, sc, key, r, status, t.id, errObj, now)
				rowMetrics[key] = rowMetrics[key].addCall(t)
			}
		}
	}
	switch {
	case failed:
		sc.status = "errors"
	case run.waitsOnHumans() || slices.Contains(run.evOrigins, "human") || slices.Contains(run.evOrigins, "custom"):
		sc.status = "pending"
	default:
		sc.status = "success"
	}
	sc.updated = s.now26()
	if len(rowMetrics) > 0 && !s.v26.tracingDown {
		run.metrics = append(run.metrics, &metrics26{id: s.newID(), run: run, scenarioID: sc.id, status: "success",
			data: metricsData26(run, rowMetrics), created: sc.updated, updated: sc.updated})
	}
	run.updated = sc.updated
}

// cell26 writes one cell. Callers hold s.mu.
func (s *Server) cell26(run *run26, sc *scenario26, step string, repeat int, status, traceHex string, errObj object, now time.Time) {
	r := &result26{id: s.newID(), run: run, scenario: sc, stepKey: step, repeat: repeat, status: status,
		testcaseID: sc.testcaseID, err: errObj, created: now, updated: now}
	if traceHex != "" {
		r.traceID = dashed(traceHex)
		r.hashID = hexUUID26("hash:" + traceHex)
	}
	run.results = append(run.results, r)
}

// finish26 writes the run's metrics and final status. Callers hold s.mu.
func (s *Server) finish26(run *run26) {
	status := "success"
	for _, sc := range run.scenarios {
		switch sc.status {
		case "errors":
			status = "errors"
		case "pending", "running":
			if status == "success" {
				status = "running"
			}
		}
	}
	if !s.v26.tracingDown {
		s.refreshGlobal26(run)
	}
	run.status = status
	run.updated = s.now26()
	if status != "running" {
		run.active = false
		close(run.done)
	}
}

// refreshGlobal26 computes the run's global metrics row from its readable
// traces, replacing the old one; nil when there is nothing to compute.
// Callers hold s.mu.
func (s *Server) refreshGlobal26(run *run26) *metrics26 {
	all := map[string]*stepValues{}
	for _, r := range run.results {
		if r.traceID == "" {
			continue
		}
		hex, _ := traceID26(r.traceID)
		t := s.v26.traces[hex]
		if t == nil {
			continue
		}
		all[r.stepKey] = all[r.stepKey].addCall(t)
	}
	if len(all) == 0 {
		return nil
	}
	now := s.now26()
	for _, m := range run.metrics {
		if m.scenarioID == "" {
			m.data, m.updated = metricsData26(run, all), now
			return m
		}
	}
	m := &metrics26{id: s.newID(), run: run, status: "success", data: metricsData26(run, all), created: now, updated: now}
	run.metrics = append(run.metrics, m)
	return m
}

// trace26 is one trace of one span.
type trace26 struct {
	id, spanID, name, traceType string
	start, end, created         time.Time
	failed                      bool
	statusMessage               string
	attributes                  object
	events, links               []any
	references, hashes          []any
	millis                      float64
	verdict                     map[string]any
	outputNames                 []string
}

// store26 makes a trace readable, or holds it back while tracing is down.
// Callers hold s.mu.
func (s *Server) store26(t *trace26) {
	if s.v26.tracingDown {
		s.v26.backlog = append(s.v26.backlog, t)
		return
	}
	s.v26.traces[t.id] = t
}

func traceIDs26(seed string) (traceHex, spanHex string) {
	sum := blake2b([]byte("trace:"+seed), 24)
	return hex.EncodeToString(sum[:16]), hex.EncodeToString(sum[16:])
}

// testcaseInputs26 is the row as the application gets it: its columns and
// testcase_id.
func testcaseInputs26(sc *scenario26, tc *testcase26) object {
	o := object{}
	if tc != nil {
		for _, c := range tc.data {
			o = append(o, field{c.name, c.value})
		}
	}
	return append(o, field{"testcase_id", sc.testcaseID})
}

func traceFlags26(evaluator bool) object {
	return object{{"is_llm", false}, {"stream", false}, {"has_url", true}, {"is_chat", false}, {"is_code", false},
		{"is_hook", false}, {"is_agent", false}, {"is_match", false}, {"is_skill", false}, {"is_custom", false},
		{"is_static", false}, {"has_script", false}, {"is_managed", evaluator}, {"is_snippet", false},
		{"has_handler", false}, {"is_feedback", false}, {"is_evaluator", evaluator}, {"is_application", !evaluator}}
}

// workflowTrace26 is the trace of a row's workflow call: an application's
// invocation, or an evaluator's annotation (kind "evaluator"). Its
// references run from the row's test case to the workflow's revision;
// workflow holds the workflow's artifact, variant and revision as id,
// slug and version. Callers hold s.mu.
func (s *Server) workflowTrace26(run *run26, sc *scenario26, seed, kind string, workflow lineage26,
	data, costs object, failed bool, millis float64) *trace26 {
	id, span := traceIDs26(seed)
	ts, evaluator, traceType := run.tsRev, kind == "evaluator", "invocation"
	if evaluator {
		traceType = "annotation"
	}
	errorsMetric := object{}
	if failed {
		errorsMetric = object{{"cumulative", 1}, {"incremental", 1}}
	}
	kinds := [3]string{kind, kind + "_variant", kind + "_revision"}
	withID := func(id string) object { return object{{"id", id}} }
	refs := object{{"testset", withID(ts.testset.id)}, {"testcase", withID(sc.testcaseID)},
		{kinds[0], object{{"id", workflow[0][0]}, {"slug", workflow[0][1]}}},
		{"testset_variant", withID(ts.testset.variantID)}, {"testset_revision", withID(ts.id)},
		{kinds[1], object{{"id", workflow[1][0]}, {"slug", workflow[1][1]}}},
		{kinds[2], object{{"id", workflow[2][0]}, {"slug", workflow[2][1]}, {"version", workflow[2][2]}}}}
	keyed := func(ref object, key string) object { return append(ref, field{"attributes", object{{"key", key}}}) }
	references := []any{keyed(withID(sc.testcaseID), "testcase"), keyed(withID(ts.testset.id), "testset"),
		keyed(withID(ts.testset.variantID), "testset_variant"), keyed(withID(ts.id), "testset_revision")}
	for i, w := range workflow {
		references = append(references, keyed(ref26(w[0], w[1], w[2]), kinds[i]))
	}
	return &trace26{id: id, spanID: span, traceType: traceType, created: s.now26(), millis: millis, failed: failed,
		attributes: object{{"ag", object{{"data", data}, {"type", object{{"span", "workflow"}, {"trace", traceType}}},
			{"flags", traceFlags26(evaluator)},
			{"metrics", object{{"costs", costs}, {"errors", errorsMetric}, {"tokens", object{}}, {"duration", object{{"cumulative", millis}}}}},
			{"references", refs}}}},
		references: references,
		hashes:     []any{object{{"id", hexUUID26("hash:" + id)}, {"attributes", object{{"key", "indirect"}}}}},
	}
}

// invocationTrace26 writes the trace of an application call. Callers hold
// s.mu.
func (s *Server) invocationTrace26(run *run26, sc *scenario26, tc *testcase26, params map[string]any, inv *invocation26, repeat int) *trace26 {
	app, rev := run.appRev.variant.app, run.appRev
	data := object{{"inputs", object{{"inputs", testcaseInputs26(sc, tc)}, {"parameters", params}}}}
	if inv.output != nil {
		data = append(data, field{"outputs", *inv.output})
	}
	data = append(data, field{"parameters", params})
	costs := object{}
	if inv.cost != nil {
		costs = object{{"cumulative", object{{"total", *inv.cost}}}, {"incremental", object{{"total", *inv.cost}}}}
	}
	t := s.workflowTrace26(run, sc, run.id+sc.id+"app"+strconv.Itoa(repeat), "application",
		rev.lineage(), data, costs, inv.err != nil, inv.millis)
	t.name, t.start, t.end = app.slug, inv.started, inv.finished
	if app.application == nil {
		t.name = "capitals" // the stand-in's function name, as the real kit's traces carry it
	}
	if inv.err != nil {
		message := inv.err.Error()
		t.statusMessage = "ValueError: " + message
		t.events = []any{object{{"name", "exception"}, {"timestamp", naiveTime(inv.finished)}, {"attributes", object{
			{"exception.type", "ValueError"}, {"exception.escaped", "False"}, {"exception.message", message},
			{"exception.stacktrace", strings.Join(appStacktrace26(message), "")}}}}}
	}
	s.store26(t)
	return t
}

// annotationTrace26 writes the trace of an evaluator's verdict. Callers
// hold s.mu.
func (s *Server) annotationTrace26(run *run26, sc *scenario26, tc *testcase26, ev *evRevision26, inv *invocation26,
	verdict map[string]any, fail object, repeat, e int) *trace26 {
	inputs := object{{"inputs", testcaseInputs26(sc, tc)}}
	if inv.output != nil {
		inputs = append(inputs, field{"outputs", *inv.output})
	}
	var params any
	if len(ev.parameters) > 0 {
		params = ev.parameters
		inputs = append(inputs, field{"parameters", params})
	}
	data := object{{"inputs", inputs}}
	var names []string
	if verdict != nil {
		out := object{}
		for _, name := range outputNames26(ev.key) {
			if v, ok := verdict[name]; ok {
				out = append(out, field{name, v})
				names = append(names, name)
			}
		}
		data = append(data, field{"outputs", out})
	}
	if params != nil {
		data = append(data, field{"parameters", params})
	}
	t := s.workflowTrace26(run, sc, run.id+sc.id+"ev"+strconv.Itoa(e)+":"+strconv.Itoa(repeat), "evaluator",
		ev.lineage(), data, object{}, fail != nil, 0.3)
	t.name, t.start, t.end = ev.key+"_v0", inv.finished, inv.finished.Add(300*time.Microsecond)
	t.verdict, t.outputNames = verdict, names
	if inv.trace != nil {
		t.links = []any{object{{"span_id", inv.trace.spanID}, {"trace_id", inv.trace.id}, {"attributes", object{{"key", "invocation"}}}}}
	}
	if fail != nil {
		t.statusMessage = "ValueError: " + fail[2].value.(string)
	}
	s.store26(t)
	return t
}

// spanWire26 is a trace's one span. Callers hold s.mu.
func (s *Server) spanWire26(t *trace26) object {
	o := object{{"created_at", time26(t.created)}, {"created_by_id", s.user.ID}, {"trace_id", t.id}, {"span_id", t.spanID},
		{"trace_type", t.traceType}, {"span_type", "workflow"}, {"span_kind", "SPAN_KIND_SERVER"}, {"span_name", t.name},
		{"start_time", time26(t.start)}, {"end_time", time26(t.end)}}
	if t.failed {
		o = append(o, field{"status_code", "STATUS_CODE_ERROR"}, field{"status_message", t.statusMessage})
	} else {
		o = append(o, field{"status_code", "STATUS_CODE_UNSET"})
	}
	o = append(o, field{"attributes", t.attributes}, field{"references", t.references})
	if t.links != nil {
		o = append(o, field{"links", t.links})
	}
	o = append(o, field{"hashes", t.hashes})
	if t.events != nil {
		o = append(o, field{"events", t.events})
	}
	return o
}

func (s *Server) traceWire26(t *trace26) object {
	return object{{"spans", object{{t.name, s.spanWire26(t)}}}, {"trace_id", t.id}}
}

// appStacktrace26 is the stack trace of a failed application call, as a
// list of lines like the service's.
func appStacktrace26(message string) []string {
	return []string{
		"Traceback (most recent call last):\n",
		"  File \"agentatest/application.py\", line 1, in invoke\n    result = await handler(*args, **kwargs)\n",
		"ValueError: " + message + "\n",
	}
}

// appError26 is a failed invocation cell's error.
func appError26(err error) object {
	lines := appStacktrace26(err.Error())
	stack := make([]any, len(lines))
	for i, l := range lines {
		stack[i] = l
	}
	return object{{"code", 500}, {"type", "https://agenta.ai/docs/errors#v1:sdk:unknown-workflow-invoke-error"},
		{"message", err.Error()}, {"stacktrace", stack}}
}

// evaluate26 runs a built-in evaluator on an output (nil when the call
// failed) and its row, as v0.113's services do: the verdict, or the
// failure cell's error.
func evaluate26(ev *evRevision26, output *string, tc *testcase26) (map[string]any, object) {
	invalidOutputs := object{{"code", 400}, {"type", "https://agenta.ai/docs/misc/errors#v0:schemas:invalid-outputs"},
		{"message", "Invalid outputs:\nExpected '['dict', 'str']'\nGot ('NoneType') 'None'."}}
	answerKey := "correct_answer"
	if k, ok := ev.parameters["correct_answer_key"].(string); ok && k != "" {
		answerKey = k
	}
	expected := func() (string, object) {
		var cols []column
		if tc != nil {
			cols = tc.data
		}
		raw, ok := columnValue(cols, answerKey)
		if !ok {
			return "", object{{"code", 400}, {"type", "https://agenta.ai/docs/misc/errors#v0:schemas:missing-input"},
				{"message", "Missing input:\nAt '" + answerKey + "'"}}
		}
		return columnText(raw), nil
	}
	if output == nil && ev.key != exactMatch26 {
		return nil, invalidOutputs
	}
	switch ev.key {
	case exactMatch26:
		want, fail := expected()
		if fail != nil {
			return nil, fail
		}
		return map[string]any{"success": output != nil && *output == want}, nil
	case levenshtein26:
		want, fail := expected()
		if fail != nil {
			return nil, fail
		}
		longest := max(len([]rune(*output)), len([]rune(want)))
		score := 1.0
		if longest > 0 {
			score = 1 - float64(levenshtein(*output, want))/float64(longest)
		}
		threshold := 0.5
		if t, ok := ev.parameters["threshold"].(json.Number); ok {
			threshold, _ = t.Float64()
		}
		return map[string]any{"score": score, "success": score >= threshold}, nil
	case regexTest26:
		pattern, _ := ev.parameters["regex_pattern"].(string)
		shouldMatch := true
		if v, ok := ev.parameters["regex_should_match"].(bool); ok {
			shouldMatch = v
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, object{{"code", 400}, {"type", "https://agenta.ai/docs/misc/errors#v0:schemas:invalid-parameters"},
				{"message", "Invalid parameters:\nAt 'regex_pattern'"}}
		}
		return map[string]any{"success": re.MatchString(*output) == shouldMatch}, nil
	case startsWith26:
		prefix, _ := ev.parameters["prefix"].(string)
		out := *output
		if v, ok := ev.parameters["case_sensitive"].(bool); ok && !v {
			out, prefix = strings.ToLower(out), strings.ToLower(prefix)
		}
		return map[string]any{"success": strings.HasPrefix(out, prefix)}, nil
	}
	return nil, object{{"code", 500}, {"type", "https://agenta.ai/docs/errors#v1:sdk:unknown-workflow-invoke-error"},
		{"message", "agentatest: no built-in evaluator " + ev.key}}
}

// stepValues are the values of a step's attribute paths, in first-seen
// order, for its metrics.
type stepValues struct {
	paths  []string
	values map[string][]any
}

// addCall adds what a step's call wrote to its trace: its duration, an
// error when it failed, and its outputs.
func (v *stepValues) addCall(t *trace26) *stepValues {
	v = v.add("attributes.ag.metrics.duration.cumulative", t.millis)
	if t.failed {
		v = v.add("attributes.ag.metrics.errors.cumulative", 1.0)
	}
	for _, name := range t.outputNames {
		v = v.add("attributes.ag.data.outputs."+name, t.verdict[name])
	}
	return v
}

func (v *stepValues) add(path string, x any) *stepValues {
	if v == nil {
		v = &stepValues{values: map[string][]any{}}
	}
	if _, ok := v.values[path]; !ok {
		v.paths = append(v.paths, path)
	}
	v.values[path] = append(v.values[path], x)
	return v
}

// metricsData26 is a metrics row's data: step key → path → statistics, the
// steps in the run's order.
func metricsData26(run *run26, steps map[string]*stepValues) object {
	data := object{}
	for _, key := range append([]string{run.appKey}, run.evalKeys...) {
		v := steps[key]
		if v == nil {
			continue
		}
		paths := object{}
		for _, path := range sortedPaths26(v.paths) {
			paths = append(paths, field{path, stats26(v.values[path])})
		}
		data = append(data, field{key, paths})
	}
	return data
}

// sortedPaths26 orders paths as the service writes them: duration, errors,
// then the outputs.
func sortedPaths26(paths []string) []string {
	rank := func(p string) int {
		switch {
		case strings.HasSuffix(p, "duration.cumulative"):
			return 0
		case strings.HasSuffix(p, "errors.cumulative"):
			return 1
		}
		return 2
	}
	out := slices.Clone(paths)
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

// stats26 summarises a path's values: binary for booleans, numeric
// otherwise.
func stats26(values []any) object {
	if len(values) > 0 {
		if _, ok := values[0].(bool); ok {
			t := 0
			for _, v := range values {
				if b, _ := v.(bool); b {
					t++
				}
			}
			f, n := len(values)-t, float64(len(values))
			return object{{"type", "binary"}, {"count", len(values)},
				{"freq", []any{object{{"value", true}, {"count", t}, {"density", round5(float64(t) / n)}},
					object{{"value", false}, {"count", f}, {"density", round5(float64(f) / n)}}}},
				{"uniq", []any{true, false}}}
		}
	}
	xs := make([]float64, 0, len(values))
	for _, v := range values {
		switch x := v.(type) {
		case float64:
			xs = append(xs, x)
		case int:
			xs = append(xs, float64(x))
		}
	}
	return numericStats26(xs)
}

var percentiles26 = []struct {
	key string
	p   float64
}{
	{"p00.05", 0.05}, {"p00.1", 0.1}, {"p00.5", 0.5}, {"p01", 1}, {"p02.5", 2.5}, {"p05", 5}, {"p10", 10},
	{"p12.5", 12.5}, {"p20", 20}, {"p25", 25}, {"p30", 30}, {"p37.5", 37.5}, {"p40", 40}, {"p50", 50},
	{"p60", 60}, {"p62.5", 62.5}, {"p70", 70}, {"p75", 75}, {"p80", 80}, {"p87.5", 87.5}, {"p90", 90},
	{"p95", 95}, {"p97.5", 97.5}, {"p99", 99}, {"p99.5", 99.5}, {"p99.9", 99.9}, {"p99.95", 99.95},
}

// numericStats26 is a numeric path's statistics, as v0.113 computes them:
// numpy's linear percentiles; iqrXX the spread of the central XX%; pscXX
// that spread over the median (keys in the service's order); a histogram
// of ⌈√n⌉ equal bins.
func numericStats26(xs []float64) object {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	n := len(sorted)
	if n == 0 {
		return object{{"type", "numeric/continuous"}, {"count", 0}}
	}
	sum := 0.0
	for _, x := range sorted {
		sum += x
	}
	lo, hi := sorted[0], sorted[n-1]
	pct := func(p float64) float64 {
		h := float64(n-1) * p / 100
		i := int(math.Floor(h))
		if i >= n-1 {
			return sorted[n-1]
		}
		return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
	}
	pcts := object{}
	for _, p := range percentiles26 {
		pcts = append(pcts, field{p.key, pct(p.p)})
	}
	spreads := []struct {
		key    string
		lo, hi float64
	}{{"25", 37.5, 62.5}, {"50", 25, 75}, {"75", 12.5, 87.5}, {"80", 10, 90}, {"90", 5, 95}, {"95", 2.5, 97.5}, {"99", 0.5, 99.5}, {"99.9", 0.05, 99.95}}
	iqrs := object{}
	iqr := map[string]float64{}
	for _, sp := range spreads {
		iqr[sp.key] = pct(sp.hi) - pct(sp.lo)
		iqrs = append(iqrs, field{"iqr" + sp.key, iqr[sp.key]})
	}
	median, p01, p99 := pct(50), pct(1), pct(99)
	// The service leaves the spreads relative to the median out where
	// they mean nothing: the values change sign, or the median is under
	// 1% of either tail (compute_pscs in its tracing utils.py). A run
	// whose first call was slow (a cold start) has none.
	withPscs := p01*p99 >= 0 && math.Abs(median) >= math.Abs(p99)/100 && math.Abs(median) >= math.Abs(p01)/100
	pscs := object{}
	for _, key := range []string{"25", "50", "75", "80", "90", "99", "95", "99.9"} {
		v := 0.0
		if median != 0 {
			v = iqr[key] / median
		}
		pscs = append(pscs, field{"psc" + key, v})
	}
	bins := 1
	if hi > lo {
		bins = int(math.Ceil(math.Sqrt(float64(n))))
	}
	width := (hi - lo) / float64(bins)
	counts := make([]int, bins)
	for _, x := range sorted {
		b := bins - 1
		if width > 0 {
			b = min(int((x-lo)/width), bins-1)
		}
		counts[b]++
	}
	hist := make([]any, bins)
	for b := range counts {
		edge := lo + float64(b)*width
		next := lo + float64(b+1)*width
		if b == bins-1 {
			next = hi
		}
		hist[b] = object{{"bin", b + 1}, {"count", counts[b]}, {"interval", []float64{edge, next}},
			{"density", round5(float64(counts[b]) / float64(n))}}
	}
	out := object{{"type", "numeric/continuous"}, {"count", n}, {"max", hi}, {"min", lo}, {"sum", sum},
		{"mean", sum / float64(n)}, {"range", hi - lo}, {"pcts", pcts}, {"iqrs", iqrs}}
	if withPscs {
		out = append(out, field{"pscs", pscs})
	}
	return append(out, field{"hist", hist})
}

func round5(x float64) float64 { return math.Round(x*1e5) / 1e5 }
