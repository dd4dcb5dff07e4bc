package agentatest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The 2026 evaluation routes: create, read and stop a simple evaluation,
// read its run, and query its scenarios, results and metrics; and the
// trace reads.

// run26 is one 2026 evaluation run.
type run26 struct {
	id, name, description string
	created, updated      time.Time
	status                string
	active, closed, split bool
	// origins of each step set, by revision id, as the create answer and
	// the simple evaluation show them.
	testsetSteps, appSteps, evaluatorSteps [][2]string
	repeats                                int
	concurrency                            map[string]any
	tags                                   map[string]any
	hasCustom, hasHuman, hasAuto           bool
	noDispatch                             bool // data.status was sent: the caller runs the loop

	tsRev      *tsRevision26
	appRev     *revision26   // the one the worker runs
	appRevs    []*revision26 // every application step (two make a failure)
	evRevs     []*evRevision26
	evOrigins  []string
	inputKey   string
	appKey     string
	evalKeys   []string
	scenarios  []*scenario26
	results    []*result26
	metrics    []*metrics26
	dispatched bool
	done       chan struct{}
}

type scenario26 struct {
	id, status       string
	run              *run26
	index            int // the row in the test set
	testcaseID       string
	created, updated time.Time
}

type result26 struct {
	id                 string
	run                *run26
	scenario           *scenario26
	stepKey            string
	repeat             int
	status, testcaseID string
	traceID, hashID    string // traceID dashed
	err                object
	created, updated   time.Time
}

type metrics26 struct {
	id               string
	run              *run26
	scenarioID       string
	status           string
	data             object
	created, updated time.Time
}

func (s *Server) handleCreateSimpleEvaluation(c *call) answer {
	var in struct {
		Evaluation struct {
			Name        string `body:"name"`
			Description string `body:"description"`
			Flags       struct {
				IsSplit bool `body:"is_split"`
			} `body:"flags"`
			Tags body26 `body:"tags"`
			Data *struct {
				TestsetSteps     steps26 `body:"testset_steps"`
				ApplicationSteps steps26 `body:"application_steps"`
				EvaluatorSteps   steps26 `body:"evaluator_steps"`
				QuerySteps       steps26 `body:"query_steps"`
				Repeats          *int    `body:"repeats"`
				Status           string  `body:"status"`
				Concurrency      body26  `body:"concurrency"`
			} `body:"data"`
		} `body:"evaluation,required"`
	}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	spec, data := in.Evaluation, in.Evaluation.Data
	name, description, flags, tags := spec.Name, spec.Description, spec.Flags, spec.Tags
	steps := map[string][][2]string{}
	var status string
	var concurrency body26
	repeats := 1
	if data != nil {
		steps["testset_steps"], steps["application_steps"] = data.TestsetSteps, data.ApplicationSteps
		steps["evaluator_steps"], steps["query_steps"] = data.EvaluatorSteps, data.QuerySteps
		status, concurrency = data.Status, data.Concurrency
		if data.Repeats != nil && *data.Repeats >= 1 {
			repeats = *data.Repeats
		}
	}
	orderSteps26(c.body, steps)
	s.mu.Lock()
	defer s.mu.Unlock()
	v26 := s.v26
	if data == nil || len(steps["testset_steps"]) != 1 || len(steps["application_steps"]) == 0 {
		return count0()
	}
	ts := v26.tsRevisions[steps["testset_steps"][0][0]]
	if ts == nil || len(ts.testcaseIDs) == 0 {
		return count0()
	}
	var apps []*revision26
	for _, st := range steps["application_steps"] {
		rev := v26.revisions[st[0]]
		if rev == nil {
			return count0()
		}
		apps = append(apps, rev)
	}
	run := &run26{id: s.newID(), name: name, description: description, status: "pending", repeats: repeats,
		split: flags.IsSplit, testsetSteps: steps["testset_steps"], appSteps: steps["application_steps"],
		evaluatorSteps: steps["evaluator_steps"], tsRev: ts, appRev: apps[0], appRevs: apps, noDispatch: status != "",
		concurrency: concurrency, tags: tags, done: make(chan struct{})}
	for _, st := range steps["evaluator_steps"] {
		ev := v26.evRevisions[st[0]]
		if ev == nil {
			return count0()
		}
		run.evRevs = append(run.evRevs, ev)
		run.evOrigins = append(run.evOrigins, st[1])
	}
	for _, set := range [][][2]string{run.testsetSteps, run.appSteps, run.evaluatorSteps} {
		for _, st := range set {
			switch st[1] {
			case "custom":
				run.hasCustom = true
			case "human":
				run.hasHuman = true
			default:
				run.hasAuto = true
			}
		}
	}
	run.inputKey = "testset-" + ts.slug
	run.appKey = "application-" + run.appRev.slug
	for _, ev := range run.evRevs {
		run.evalKeys = append(run.evalKeys, "evaluator-"+ev.slug)
	}
	now := s.now26()
	run.created, run.updated = now, now
	v26.runs[run.id] = run
	v26.runOrder = append(v26.runOrder, run)
	if len(apps) > 1 {
		// An unsupported shape: created, then marked failure and closed
		// before create answers.
		run.status, run.closed = "failure", true
		close(run.done)
		return envelope1("evaluation", s.simpleEvaluationWire26(run, true))
	}
	created := s.simpleEvaluationWire26(run, false)
	if !run.noDispatch {
		run.status, run.active = "running", true
		s.dispatch26(run)
	} else {
		run.status = status
	}
	return envelope1("evaluation", created)
}

// steps26 is a step set: a list of revision ids (origin custom) or a map
// of revision id to origin, each as [id, origin].
type steps26 [][2]string

func (st *steps26) read26(v any, loc []any, fails *[]fail26) { *st = stepSet26(v, loc, fails) }

// stepSet26 reads a step set, refusing what v0.113 refuses.
func stepSet26(v any, loc []any, fails *[]fail26) [][2]string {
	const dictArm = "dict[uuid,literal['custom','human','auto']]"
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([][2]string, 0, len(x))
		for _, id := range uuidItems26(x, at(loc, "list[uuid]"), fails) {
			out = append(out, [2]string{id, "custom"})
		}
		return out
	case map[string]any:
		var out [][2]string
		var mine []fail26
		for key, origin := range x {
			id, f := uuid26(key, at(loc, dictArm, key, "[key]"))
			if f != nil {
				mine = append(mine, *f)
			}
			o, _ := origin.(string)
			if o != "custom" && o != "human" && o != "auto" {
				mine = append(mine, fail26{typ: "literal_error", msg: "Input should be 'custom', 'human' or 'auto'",
					loc: at(loc, dictArm, key), input: origin, ctx: object{{"expected", "'custom', 'human' or 'auto'"}}})
			}
			out = append(out, [2]string{id, o})
		}
		if len(mine) > 0 {
			*fails = append(*fails, fail26{typ: "list_type", msg: "Input should be a valid list", loc: at(loc, "list[uuid]"), input: v})
			*fails = append(*fails, mine...)
			return nil
		}
		slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
		return out
	}
	*fails = append(*fails, fail26{typ: "list_type", msg: "Input should be a valid list", loc: at(loc, "list[uuid]"), input: v},
		fail26{typ: "dict_type", msg: "Input should be a valid dictionary", loc: at(loc, dictArm), input: v})
	return nil
}

// orderSteps26 puts each map-form step set in the order the request gave
// it, as the service (a Python dict) keeps it.
func orderSteps26(body []byte, steps map[string][][2]string) {
	var doc struct {
		Evaluation struct {
			Data map[string]json.RawMessage `json:"data"`
		} `json:"evaluation"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return
	}
	for set, list := range steps {
		raw := doc.Evaluation.Data[set]
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		cols, err := orderedColumns(raw)
		if err != nil {
			continue
		}
		rank := map[string]int{}
		for i, c := range cols {
			if id, f := uuid26(c.name, nil); f == nil {
				rank[id] = i
			}
		}
		slices.SortStableFunc(list, func(a, b [2]string) int { return rank[a[0]] - rank[b[0]] })
	}
}

// runFlags26 are a run's 14 flags.
func runFlags26(run *run26) object {
	return object{
		{"is_live", false}, {"is_active", run.active}, {"is_closed", run.closed}, {"is_queue", false},
		{"is_cached", false}, {"is_split", run.split}, {"has_queries", false}, {"has_testsets", true},
		{"has_traces", false}, {"has_testcases", false}, {"has_evaluators", len(run.evRevs) > 0},
		{"has_custom", run.hasCustom}, {"has_human", run.hasHuman}, {"has_auto", run.hasAuto},
	}
}

func stepMap26(steps [][2]string) object {
	o := object{}
	for _, st := range steps {
		o = append(o, field{st[0], st[1]})
	}
	return o
}

// runHead26 is what both shapes of a run open with: its flags, then its
// tags, name and description where it has them.
func runHead26(run *run26) object {
	o := object{{"flags", runFlags26(run)}}
	if run.tags != nil {
		o = append(o, field{"tags", run.tags})
	}
	if run.name != "" {
		o = append(o, field{"name", run.name})
	}
	if run.description != "" {
		o = append(o, field{"description", run.description})
	}
	return o
}

// simpleEvaluationWire26 is a run as the /simple/evaluations routes show
// it; fresh is the create answer, without updated_at. Callers hold s.mu.
func (s *Server) simpleEvaluationWire26(run *run26, updated bool) object {
	o := runHead26(run)
	o = append(o, field{"created_at", time26(run.created)})
	if updated {
		o = append(o, field{"updated_at", time26(run.updated)})
	}
	o = append(o, field{"created_by_id", s.user.ID})
	if updated {
		o = append(o, field{"updated_by_id", s.user.ID})
	}
	data := object{{"status", run.status}, {"query_steps", object{}},
		{"testset_steps", stepMap26(run.testsetSteps)}, {"application_steps", stepMap26(run.appSteps)},
		{"evaluator_steps", stepMap26(run.evaluatorSteps)}, {"repeats", run.repeats}}
	if run.concurrency != nil {
		data = append(data, field{"concurrency", run.concurrency})
	}
	return append(o, field{"id", run.id}, field{"data", data})
}

// runWire26 is a run as GET /evaluations/runs/{id} shows it. Callers hold
// s.mu.
func (s *Server) runWire26(run *run26) object {
	o := append(append(runHead26(run), s.rowHead26(run.created, run.updated, run.id)...), field{"status", run.status})
	ts := run.tsRev
	origin := func(steps [][2]string, i int) string {
		if i < len(steps) {
			return steps[i][1]
		}
		return "auto"
	}
	steps := []any{object{{"key", run.inputKey}, {"type", "input"}, {"origin", origin(run.testsetSteps, 0)},
		{"references", ts.lineage().references("testset")}}}
	for i, app := range run.appRevs {
		steps = append(steps, object{{"key", "application-" + app.slug}, {"type", "invocation"}, {"origin", origin(run.appSteps, i)},
			{"references", app.lineage().references("application")}, {"inputs", []any{object{{"key", "__all_inputs__"}}}}})
	}
	for i, ev := range run.evRevs {
		steps = append(steps, object{{"key", run.evalKeys[i]}, {"type", "annotation"}, {"origin", run.evOrigins[i]},
			{"references", ev.lineage().references("evaluator")},
			{"inputs", []any{object{{"key", "__all_invocations__"}}, object{{"key", "__all_inputs__"}}}}})
	}
	var mappings []any
	if len(ts.testcaseIDs) > 0 {
		if tc := s.v26.testcases[ts.testcaseIDs[0]]; tc != nil {
			for _, col := range tc.data {
				mappings = append(mappings, object{{"column", object{{"kind", "testset"}, {"name", col.name}}},
					{"step", object{{"key", run.inputKey}, {"path", "data." + col.name}}}})
			}
		}
	}
	for _, app := range run.appRevs {
		mappings = append(mappings, object{{"column", object{{"kind", "invocation"}, {"name", "outputs"}}},
			{"step", object{{"key", "application-" + app.slug}, {"path", "attributes.ag.data.outputs"}}}})
	}
	for i, ev := range run.evRevs {
		for _, name := range outputNames26(ev.key) {
			mappings = append(mappings, object{{"column", object{{"kind", "annotation"}, {"name", name}}},
				{"step", object{{"key", run.evalKeys[i]}, {"path", "attributes.ag.data.outputs." + name}}}})
		}
	}
	data := object{{"steps", steps}, {"repeats", run.repeats}}
	if run.concurrency != nil {
		data = append(data, field{"concurrency", run.concurrency})
	}
	data = append(data, field{"mappings", mappings})
	return append(o, field{"data", data})
}

func (s *Server) handleFetchSimpleEvaluation(c *call) answer {
	return fetch26(s, c, "evaluation_id", func() map[string]*run26 { return s.v26.runs },
		"evaluation", func(run *run26) object { return s.simpleEvaluationWire26(run, true) })
}

// handleStopSimpleEvaluation marks a run inactive, and nothing more: as on
// v0.113, the worker goes on and the run ends success or errors.
func (s *Server) handleStopSimpleEvaluation(c *call) answer {
	return fetch26(s, c, "evaluation_id", func() map[string]*run26 { return s.v26.runs },
		"evaluation", func(run *run26) object {
			run.active, run.updated = false, s.now26()
			return s.simpleEvaluationWire26(run, true)
		})
}

// handleQueryRuns serves POST /evaluations/runs/query as v0.113 does for
// the filters the SDK sends: {"run": {"tags": {...}, "name": "..."}}, the
// runs whose tags contain those given (JSONB containment) and whose name
// contains name, case aside (ILIKE), newest first.
func (s *Server) handleQueryRuns(c *call) answer {
	var in struct {
		Run struct {
			Tags body26 `body:"tags"`
			Name string `body:"name"`
		} `body:"run"`
	}
	if refused, ok := decode26(c, false, &in); !ok {
		return refused
	}
	tags, name := in.Run.Tags, in.Run.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	var found []*run26
	for _, run := range s.v26.runs {
		if containsTags26(run.tags, tags) && strings.Contains(strings.ToLower(run.name), strings.ToLower(name)) {
			found = append(found, run)
		}
	}
	slices.SortFunc(found, func(a, b *run26) int { return b.created.Compare(a.created) })
	items := make([]any, len(found))
	for i, run := range found {
		items[i] = s.runWire26(run)
	}
	return envelopeList("runs", items)
}

// containsTags26 reports whether have holds every key of want with an
// equal value.
func containsTags26(have, want map[string]any) bool {
	for k, v := range want {
		got, ok := have[k]
		if !ok || fmt.Sprint(got) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func (s *Server) handleFetchRun(c *call) answer {
	return fetch26(s, c, "run_id", func() map[string]*run26 { return s.v26.runs }, "run", s.runWire26)
}

// rowQuery26 is a scenarios, results or metrics query as the handlers read
// it: its filters and windowing.
type rowQuery26 struct {
	filtered                 bool // the member is present and not empty
	runIDs, ids, scenarioIDs []string
	stepKeys, statuses       []string
	repeats                  []int
	windowed                 bool
	next                     string
	limit                    int
	descending               bool
}

// readRowQuery26 reads {member: {...}, windowing: {...}}. defaultDescending
// is the default order with windowing (metrics: descending).
func readRowQuery26(c *call, member string, defaultDescending bool) (rowQuery26, answer, bool) {
	b, refused, ok := readBody26(c, false)
	if !ok {
		return rowQuery26{}, refused, false
	}
	var fails []fail26
	var f struct {
		RunID       string      `body:"run_id,uuid"`
		RunIDs      []string    `body:"run_ids"`
		IDs         []string    `body:"ids"`
		ScenarioID  string      `body:"scenario_id,uuid"`
		ScenarioIDs uuidsIfList `body:"scenario_ids"`
		StepKey     string      `body:"step_key"`
		StepKeys    anyStrings  `body:"step_keys"`
		Status      string      `body:"status"`
		Statuses    anyStrings  `body:"statuses"`
		RepeatIdx   *int        `body:"repeat_idx"`
		RepeatIdxs  anyInts     `body:"repeat_idxs"`
	}
	if o := b.object(member, []any{"body"}, &fails); o != nil {
		o.decode(&f, []any{"body", member}, &fails)
	}
	var w struct {
		Windowing *struct {
			Next  string `body:"next,uuid"`
			Limit *int   `body:"limit"`
			Order string `body:"order"`
		} `body:"windowing"`
	}
	b.decode(&w, []any{"body"}, &fails)
	if len(fails) > 0 {
		return rowQuery26{}, refusal26(fails), false
	}
	one := func(s string) []string {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	q := rowQuery26{ids: f.IDs}
	q.runIDs = append(one(f.RunID), f.RunIDs...)
	q.scenarioIDs = append(one(f.ScenarioID), f.ScenarioIDs...)
	q.stepKeys = append(one(f.StepKey), f.StepKeys...)
	q.statuses = append(one(f.Status), f.Statuses...)
	if f.RepeatIdx != nil {
		q.repeats = append(q.repeats, *f.RepeatIdx)
	}
	q.repeats = append(q.repeats, f.RepeatIdxs...)
	q.filtered = len(q.runIDs)+len(q.ids)+len(q.scenarioIDs)+len(q.stepKeys)+len(q.statuses)+len(q.repeats) > 0
	if w.Windowing != nil {
		q.windowed, q.next, q.limit = true, w.Windowing.Next, -1
		if w.Windowing.Limit != nil {
			q.limit = max(*w.Windowing.Limit, 1)
		}
		order := w.Windowing.Order
		q.descending = order == "descending" || defaultDescending && order != "ascending"
	}
	return q, answer{}, true
}

// uuidsIfList is a list of UUIDs, checked only when it is a list: the
// fake, like the SDK, ignores a member of another type.
type uuidsIfList []string

func (u *uuidsIfList) read26(v any, loc []any, fails *[]fail26) {
	if items, isList := v.([]any); isList {
		*u = uuidItems26(items, loc, fails)
	}
}

// anyStrings keeps the strings of a list and passes over the rest.
type anyStrings []string

func (l *anyStrings) read26(v any, _ []any, _ *[]fail26) {
	list, _ := v.([]any)
	for _, item := range list {
		if s, ok := item.(string); ok {
			*l = append(*l, s)
		}
	}
}

// anyInts keeps the integers of a list and passes over the rest.
type anyInts []int

func (l *anyInts) read26(v any, _ []any, _ *[]fail26) {
	list, _ := v.([]any)
	for _, item := range list {
		if n, bad := integer26(item, nil); bad == nil {
			*l = append(*l, *n)
		}
	}
}

// window applies a query's windowing to rows with their ids: id order,
// the cursor, the limit; without windowing, an order the caller must not
// rely on (v0.113 defines none).
func window26[T any](rows []T, id func(T) string, q rowQuery26) []T {
	if !q.windowed {
		// No defined order: interleave from both ends, so that code relying
		// on an order sees it break.
		out := make([]T, 0, len(rows))
		for i, j := 0, len(rows)-1; i <= j; i, j = i+1, j-1 {
			out = append(out, rows[j])
			if i != j {
				out = append(out, rows[i])
			}
		}
		return out
	}
	slices.SortFunc(rows, func(a, b T) int {
		c := cmp.Compare(id(a), id(b))
		if q.descending {
			return -c
		}
		return c
	})
	if q.next != "" {
		kept := rows[:0]
		for _, r := range rows {
			if !q.descending && id(r) > q.next || q.descending && id(r) < q.next {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	if q.limit > 0 && len(rows) > q.limit {
		rows = rows[:q.limit]
	}
	return rows
}

// runsOf are the runs a query reads: those named, or every run of the
// project when none is (as on v0.113).
func (s *Server) runsOf(q rowQuery26) []*run26 {
	if len(q.runIDs) == 0 {
		return s.v26.runOrder
	}
	var out []*run26
	for _, id := range q.runIDs {
		if run := s.v26.runs[id]; run != nil {
			out = append(out, run)
		}
	}
	return out
}

// in26 says whether a filter admits v: a missing filter admits all.
func in26[T comparable](filter []T, v T) bool {
	return filter == nil || slices.Contains(filter, v)
}

// queryRows26 answers a query of a run's rows: read the query, keep the
// rows of the runs it reads that its filters admit, window them and send
// them under key.
func queryRows26[T any](s *Server, c *call, member, key string, descending bool,
	rowsOf func(*run26) []T, keep func(rowQuery26, T) bool, id func(T) string, wire func(T) object,
) answer {
	q, refused, ok := readRowQuery26(c, member, descending)
	if !ok {
		return refused
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var rows []T
	for _, run := range s.runsOf(q) {
		for _, r := range rowsOf(run) {
			if keep(q, r) {
				rows = append(rows, r)
			}
		}
	}
	rows = window26(rows, id, q)
	items := make([]any, len(rows))
	for i, r := range rows {
		items[i] = wire(r)
	}
	return envelopeList(key, items)
}

func (s *Server) handleQueryScenarios(c *call) answer {
	return queryRows26(s, c, "scenario", "scenarios", false,
		func(run *run26) []*scenario26 { return run.scenarios },
		func(q rowQuery26, sc *scenario26) bool { return in26(q.ids, sc.id) && in26(q.statuses, sc.status) },
		func(sc *scenario26) string { return sc.id }, s.scenarioWire26)
}

func (s *Server) handleQueryResults(c *call) answer {
	return queryRows26(s, c, "result", "results", false,
		func(run *run26) []*result26 { return run.results },
		func(q rowQuery26, r *result26) bool {
			return in26(q.ids, r.id) && in26(q.scenarioIDs, r.scenario.id) && in26(q.stepKeys, r.stepKey) &&
				in26(q.statuses, r.status) && in26(q.repeats, r.repeat)
		},
		func(r *result26) string { return r.id }, s.resultWire26)
}

func (s *Server) handleQueryMetrics(c *call) answer {
	return queryRows26(s, c, "metrics", "metrics", true,
		func(run *run26) []*metrics26 { return run.metrics },
		func(q rowQuery26, m *metrics26) bool {
			return in26(q.ids, m.id) && in26(q.scenarioIDs, m.scenarioID) && in26(q.statuses, m.status)
		},
		func(m *metrics26) string { return m.id }, s.metricsWire26)
}

// handleRefreshMetrics computes a run's global metrics row again, from the
// traces it can read; none when it can read none.
func (s *Server) handleRefreshMetrics(c *call) answer {
	q, refused, ok := readRowQuery26(c, "metrics", true)
	if !ok {
		return refused
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var items []any
	for _, run := range s.runsOf(q) {
		if len(q.runIDs) == 0 {
			break // v0.113 refreshes a run it is told
		}
		if m := s.refreshGlobal26(run); m != nil {
			items = append(items, s.metricsWire26(m))
		}
	}
	return envelopeList("metrics", items)
}

// rowHead26 opens a run or one of its rows as v0.113 writes them: when and
// by whom it was created and updated, its id and its model's version.
func (s *Server) rowHead26(created, updated time.Time, id string) object {
	return object{{"created_at", time26(created)}, {"updated_at", time26(updated)},
		{"created_by_id", s.user.ID}, {"updated_by_id", s.user.ID}, {"id", id}, {"version", "2025-07-14"}}
}

func (s *Server) scenarioWire26(sc *scenario26) object {
	return append(s.rowHead26(sc.created, sc.updated, sc.id), field{"status", sc.status}, field{"run_id", sc.run.id})
}

func (s *Server) resultWire26(r *result26) object {
	o := s.rowHead26(r.created, r.updated, r.id)
	if r.hashID != "" {
		o = append(o, field{"hash_id", r.hashID})
	}
	if r.traceID != "" {
		o = append(o, field{"trace_id", r.traceID})
	}
	if r.testcaseID != "" {
		o = append(o, field{"testcase_id", r.testcaseID})
	}
	if r.err != nil {
		o = append(o, field{"error", r.err})
	}
	return append(o, field{"status", r.status}, field{"repeat_idx", r.repeat},
		field{"step_key", r.stepKey}, field{"scenario_id", r.scenario.id}, field{"run_id", r.run.id})
}

func (s *Server) metricsWire26(m *metrics26) object {
	o := append(s.rowHead26(m.created, m.updated, m.id), field{"status", m.status}, field{"data", m.data})
	if m.scenarioID != "" {
		o = append(o, field{"scenario_id", m.scenarioID})
	}
	return append(o, field{"run_id", m.run.id})
}

func (s *Server) handleFetchTrace(c *call) answer {
	hex, ok := traceID26(c.id)
	if !ok {
		return detailAnswer(http.StatusBadRequest, "Invalid trace_id.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.v26.traces[hex]
	if t == nil {
		return count0()
	}
	return envelope1("trace", s.traceWire26(t))
}

// handleFetchTraces is GET /traces/?trace_ids=a,b (or trace_id=a&trace_id=b):
// the traces known, unknown ones left out.
func (s *Server) handleFetchTraces(c *call) answer {
	var hexes []string
	q := c.r.URL.Query()
	for _, v := range append(q["trace_ids"], q["trace_id"]...) {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id == "" {
				continue
			}
			hex, ok := traceID26(id)
			if !ok {
				return detailAnswer(http.StatusBadRequest, "Invalid trace_id.")
			}
			hexes = append(hexes, hex)
		}
	}
	if len(hexes) == 0 {
		return detailAnswer(http.StatusBadRequest, "At least one trace_id query parameter is required.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var items []any
	seen := map[string]bool{}
	for _, hex := range hexes {
		if t := s.v26.traces[hex]; t != nil && !seen[hex] {
			seen[hex] = true
			items = append(items, s.traceWire26(t))
		}
	}
	return envelopeList("traces", items)
}

func (s *Server) handleFetchSpan(c *call) answer {
	traceID, spanID, _ := strings.Cut(c.id, "/")
	hex, ok := traceID26(traceID)
	if !ok || !isHex(spanID, 16) {
		return detailAnswer(http.StatusBadRequest, "")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.v26.traces[hex]
	if t == nil || t.spanID != strings.ToLower(spanID) {
		return count0()
	}
	return envelope1("span", s.spanWire26(t))
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range strings.ToLower(s) {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
