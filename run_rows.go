package agenta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agenta-go/agenta/models"
)

// Reading a whole 2026 run as rows: a run keeps a row's parts apart (the
// test case, the cells, the traces holding the outputs), and this file
// puts them back together, one page of scenarios at a time.

// DefaultTraceRetryWait is how long StreamRunRows waits before it asks
// once more for the traces a page lacks, when RunRowsOptions.TraceRetryWait
// is 0: traces reach the service through an ingestion queue, and a backlog
// clears within seconds.
const DefaultTraceRetryWait = time.Second

// RunRowsOptions tunes StreamRunRows. The zero value, like a nil pointer,
// reads DefaultPageSize scenarios at a time.
type RunRowsOptions struct {
	// PageSize is how many scenarios are read, and turned into rows, at a
	// time: memory holds one page of scenarios with their cells, test
	// cases and traces. 0 means DefaultPageSize.
	PageSize int
	// TraceRetryWait is the pause before the traces a page lacks are asked
	// for a second time; 0 means DefaultTraceRetryWait, a negative value
	// asks once only.
	TraceRetryWait time.Duration
}

// StreamRunScenarios yields every row of a 2026 run as a
// models.EvaluationScenario, the shape FetchEvaluationScenarios gives for
// a 2024 evaluation, so that the same judging code (package evals) reads
// both. It is StreamRunRows without RepeatIdx and Status; the rows keep
// their TestcaseID, by which evals pairs them. See StreamRunRows.
func (c *Client) StreamRunScenarios(ctx context.Context, runID string) iter.Seq2[models.EvaluationScenario, error] {
	return func(yield func(models.EvaluationScenario, error) bool) {
		for row, err := range c.StreamRunRows(ctx, runID, nil) {
			if !yield(row.Scenario, err) || err != nil {
				return
			}
		}
	}
}

// StreamRunRows yields every row of a 2026 run, built from its scenarios,
// results, test cases and traces, one page of scenarios at a time so that
// memory stays flat whatever the run's size (it also keeps the test-set
// revision's row ids, 36 bytes each). Within a page, rows come in test-set
// order. For a run of N rows, E evaluators and the default page size, it
// makes about N/500 × 3 + N(1+E)/100 requests.
//
// Each row holds:
//   - Inputs: the test case's columns, without the service's
//     testcase_dedup_id and the evaluators' expected-answer columns, which
//     are CorrectAnswers (one per distinct correct_answer_key);
//   - Outputs[0]: the application's output from its trace, with the cost
//     and the latency in seconds; an error Result when the call failed or
//     the service recorded no cell for it; a Result of type
//     models.ResultTypeMissing, which carries an Error, when the cell
//     succeeded but its trace cannot be found (the tracing pipeline down):
//     never an empty string;
//   - Results: one per evaluator, keyed by the evaluator's id: the value of
//     its verdict (a verdict of one member, such as {"success":true}, is
//     that member's value; {"score","success"} is the score); the
//     application's error when the call failed or its output is missing,
//     as 2024 servers did; an error when the evaluator's cell failed; none
//     when the evaluator has no cell or trace, or is waiting on a human.
//
// With repeats, a scenario gives one row per repeat, the application's
// output shared by the repeats unless the run was split. A test case of
// the run's test-set revision that no scenario ran is yielded at the end
// as a row whose output is missing, so an incomplete run can never look
// complete. The run need not be finished: rows of a running run are
// whatever is recorded so far.
//
// An error ends the sequence, after the rows before it: a refused
// argument or failed request as the first and only pair. opts may be nil.
func (c *Client) StreamRunRows(ctx context.Context, runID string, opts *RunRowsOptions) iter.Seq2[models.RunRow, error] {
	if err := required("runID", "run_id", runID); err != nil {
		return failed[models.RunRow](err)
	}
	var o RunRowsOptions
	if opts != nil {
		o = *opts
	}
	size, err := pageSize("RunRowsOptions.PageSize", o.PageSize)
	if err != nil {
		return failed[models.RunRow](err)
	}
	if o.TraceRetryWait == 0 {
		o.TraceRetryWait = DefaultTraceRetryWait
	}
	return func(yield func(models.RunRow, error) bool) {
		b, err := c.newRowBuilder(ctx, runID, o.TraceRetryWait)
		if err != nil {
			yield(models.RunRow{}, err)
			return
		}
		// A page holds about size rows, whatever the run's repeats: each
		// scenario gives one row per repeat.
		perPage := max(1, size/b.repeats)
		batch := make([]models.RunScenario, 0, perPage)
		for s, err := range c.QueryScenarios(ctx, models.RunScenarioQuery{RunID: runID, PageSize: size}) {
			if err != nil {
				yield(models.RunRow{}, err)
				return
			}
			batch = append(batch, s)
			if len(batch) == perPage {
				if !b.page(batch, yield) {
					return
				}
				batch = batch[:0]
			}
		}
		if len(batch) > 0 && !b.page(batch, yield) {
			return
		}
		b.unreached(yield)
	}
}

// maxRunRepeats bounds the repeats of a run StreamRunRows reads: each is
// a row per test case.
const maxRunRepeats = 10000

// rowBuilder turns a run's pages of scenarios into rows.
type rowBuilder struct {
	c          *Client
	ctx        context.Context
	runID      string
	input      string // the input step's key
	invocation string // the invocation step's key; "" when the run has none
	evaluators []rowEvaluator
	answerKeys []string // the distinct expected-answer columns, in step order
	repeats    int
	split      bool
	steps      int // how many steps the run has: a scenario has at most steps × repeats cells
	// order is each expected test case's index in the test set, and
	// reached marks the indexes a scenario has named.
	order     map[string]int
	reached   []bool
	expected  []string // the test-set revision's rows, in order
	retryWait time.Duration
}

// rowEvaluator is an annotation step: its key, the id its results carry,
// and the column it compares against.
type rowEvaluator struct {
	step, id, answerKey string
}

// cellKey names a cell of a scenario.
type cellKey struct {
	step   string
	repeat int
}

func (c *Client) newRowBuilder(ctx context.Context, runID string, retryWait time.Duration) (*rowBuilder, error) {
	run, err := c.FetchRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	b := &rowBuilder{c: c, ctx: ctx, runID: runID, repeats: 1, split: run.Flags.IsSplit, retryWait: retryWait}
	if run.Data != nil && run.Data.Repeats != nil && *run.Data.Repeats > 1 {
		if *run.Data.Repeats > maxRunRepeats {
			// Each repeat is a row per test case, missing when the run
			// has no cell for it: a number the server made up must not
			// make rows, or memory, without end.
			return nil, c.envelopeError(&request{method: "GET", path: "/evaluations/runs/" + runID}, run,
				fmt.Errorf("the run says it repeats each test case %d times, more than the %d a run's rows are read for", *run.Data.Repeats, maxRunRepeats))
		}
		b.repeats = *run.Data.Repeats
	}
	if run.Data != nil {
		b.steps = len(run.Data.Steps)
	}
	inputs := run.Steps(models.StepInput)
	if len(inputs) == 0 {
		return nil, c.envelopeError(&request{method: "GET", path: "/evaluations/runs/" + runID}, run,
			errors.New("the run has no input step: nothing says which test cases it runs"))
	}
	b.input = inputs[0].Key
	if inv := run.Steps(models.StepInvocation); len(inv) > 0 {
		b.invocation = inv[0].Key
	}
	for _, step := range run.Steps(models.StepAnnotation) {
		e := rowEvaluator{step: step.Key, id: step.References["evaluator"].ID}
		revision := step.Revision().ID
		if e.id == "" {
			e.id = revision
		}
		if revision != "" {
			rev, err := c.RetrieveEvaluatorRevision(ctx, models.EvaluatorRevisionRetrieve{EvaluatorRevisionRef: &models.Reference{ID: revision}})
			switch {
			case err == nil:
				e.answerKey = rev.CorrectAnswerKey()
			case !errors.Is(err, ErrNotFound):
				return nil, err
			}
		}
		if e.answerKey != "" && !slices.Contains(b.answerKeys, e.answerKey) {
			b.answerKeys = append(b.answerKeys, e.answerKey)
		}
		b.evaluators = append(b.evaluators, e)
	}
	no := false
	yes := true
	ts, err := c.RetrieveTestsetRevision(ctx, models.TestsetRevisionRetrieve{
		TestsetRevisionRef: &models.Reference{ID: inputs[0].Revision().ID}, IncludeTestcaseIDs: &yes, IncludeTestcases: &no})
	if err != nil {
		return nil, err
	}
	if ts.Data != nil {
		b.expected = ts.Data.TestcaseIDs
	}
	b.order = make(map[string]int, len(b.expected))
	b.reached = make([]bool, len(b.expected))
	for i, id := range b.expected {
		if _, dup := b.order[id]; !dup {
			b.order[id] = i
		}
	}
	return b, nil
}

// page reads the cells, test cases and traces of a page of scenarios and
// yields its rows; it reports false when the sequence must end.
func (b *rowBuilder) page(scenarios []models.RunScenario, yield func(models.RunRow, error) bool) bool {
	ids := make([]string, len(scenarios))
	cells := make(map[string][]models.RunResult, len(scenarios))
	for i, s := range scenarios {
		ids[i] = s.ID
		cells[s.ID] = nil
	}
	// A page holds at most a cell per step and repeat of each scenario: a
	// server that answers more (cells of other scenarios, or without end)
	// would make the page grow with the run, or without bound.
	most := len(scenarios) * max(b.steps, 1) * b.repeats
	n := 0
	var caseIDs, traceIDs []string
	seenCase := map[string]bool{}
	for r, err := range b.c.QueryResults(b.ctx, models.RunResultQuery{RunID: b.runID, ScenarioIDs: ids}) {
		if err != nil {
			yield(models.RunRow{}, err)
			return false
		}
		own, asked := cells[r.ScenarioID]
		if n++; !asked || n > most {
			what := fmt.Sprintf("holds more cells than the %d the page's %d scenarios can have (%d steps, %d repeats)", most, len(scenarios), b.steps, b.repeats)
			if !asked {
				what = fmt.Sprintf("holds cell %q of scenario %q, which was not asked for", b.c.text(r.ID, maxMessage), b.c.text(r.ScenarioID, maxMessage))
			}
			yield(models.RunRow{}, b.c.envelopeError(&request{method: http.MethodPost, path: "/evaluations/results/query"}, r,
				fmt.Errorf("the results of run %s %s", b.c.text(b.runID, maxMessage), what)))
			return false
		}
		cells[r.ScenarioID] = append(own, r)
		if r.TestcaseID != "" && !seenCase[r.TestcaseID] {
			seenCase[r.TestcaseID] = true
			caseIDs = append(caseIDs, r.TestcaseID)
		}
		if r.TraceID != "" && r.StepKey != b.input {
			traceIDs = append(traceIDs, r.TraceID)
		}
	}
	cases := make(map[string]*models.Testcase, len(caseIDs))
	if len(caseIDs) > 0 {
		if err := b.testcases(caseIDs, cases); err != nil {
			yield(models.RunRow{}, err)
			return false
		}
	}
	traces, err := b.traces(traceIDs)
	if err != nil {
		yield(models.RunRow{}, err)
		return false
	}

	rows := make([]models.RunRow, 0, len(scenarios)*b.repeats)
	for _, s := range scenarios {
		rows = b.rows(rows, s, cells[s.ID], cases, traces)
	}
	// Test-set order within the page; scenarios without a test case last.
	slices.SortStableFunc(rows, func(x, y models.RunRow) int {
		return b.index(x.TestcaseID) - b.index(y.TestcaseID)
	})
	for _, row := range rows {
		if !yield(row, nil) {
			return false
		}
	}
	return true
}

// testcases reads the test cases ids names into cases. A test case not
// asked for is an error: a server answering others, page after page, would
// otherwise be read without end.
func (b *rowBuilder) testcases(ids []string, cases map[string]*models.Testcase) error {
	for _, id := range ids {
		cases[id] = nil
	}
	for tc, err := range b.c.QueryTestcases(b.ctx, models.TestcasesQuery{TestcaseIDs: ids, PageSize: len(ids) + 1}) {
		if err != nil {
			return err
		}
		if _, asked := cases[tc.ID]; !asked {
			return b.c.envelopeError(&request{method: http.MethodPost, path: "/testcases/query"}, tc,
				fmt.Errorf("the answer holds test case %q, which was not asked for", b.c.text(tc.ID, maxMessage)))
		}
		cases[tc.ID] = &tc
	}
	return nil
}

// index is a test case's place in the test set, or past its end.
func (b *rowBuilder) index(testcaseID string) int {
	if i, ok := b.order[testcaseID]; ok {
		return i
	}
	return len(b.expected)
}

// traces fetches the traces named, keyed by their hex id, and asks once
// more, after retryWait, for those the first answers lacked.
func (b *rowBuilder) traces(ids []string) (map[string]*models.Trace, error) {
	out := make(map[string]*models.Trace, len(ids))
	fetch := func(ids []string) error {
		for t, err := range b.c.FetchTraces(b.ctx, ids) {
			if err != nil {
				return err
			}
			out[models.NormalizeTraceID(t.TraceID)] = &t
		}
		return nil
	}
	if len(ids) == 0 {
		return out, nil
	}
	if err := fetch(ids); err != nil {
		return nil, err
	}
	var missing []string
	for _, id := range ids {
		if out[models.NormalizeTraceID(id)] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 || b.retryWait < 0 {
		return out, nil
	}
	timer := time.NewTimer(b.retryWait)
	defer timer.Stop()
	select {
	case <-b.ctx.Done():
		return nil, b.ctx.Err()
	case <-timer.C:
	}
	return out, fetch(missing)
}

// rows appends the rows of one scenario, one per repeat.
func (b *rowBuilder) rows(rows []models.RunRow, s models.RunScenario, cells []models.RunResult, cases map[string]*models.Testcase, traces map[string]*models.Trace) []models.RunRow {
	byKey := make(map[cellKey]*models.RunResult, len(cells))
	testcaseID := ""
	for i := range cells {
		cell := &cells[i]
		byKey[cellKey{cell.StepKey, cell.RepeatIdx}] = cell
		if testcaseID == "" {
			testcaseID = cell.TestcaseID
		}
	}
	if i, ok := b.order[testcaseID]; ok {
		b.reached[i] = true
	}
	tc := cases[testcaseID]
	for r := 0; r < b.repeats; r++ {
		row := models.RunRow{TestcaseID: testcaseID, RepeatIdx: r, Status: s.Status}
		sc := &row.Scenario
		sc.ID, sc.EvaluationID, sc.TestcaseID = s.ID, b.runID, testcaseID
		if r > 0 {
			sc.ID += "#" + strconv.Itoa(r)
		}
		if tc != nil {
			sc.Inputs, sc.CorrectAnswers = b.inputs(tc.Data)
		}
		var output models.Output
		switch {
		case len(cells) == 0:
			output.Result = errorResult("the server recorded no cell for this scenario (its status is " +
				b.c.text(string(s.Status), maxMessage) + "); the cause is only in the server's log")
		case b.invocation == "":
			output.Result = errorResult("the run has no application step")
		default:
			repeat := 0
			if b.split {
				repeat = r
			}
			output = b.output(byKey[cellKey{b.invocation, repeat}], s, traces)
		}
		sc.Outputs = []models.Output{output}
		sc.Results = make([]models.ScenarioResult, 0, len(b.evaluators))
		for _, e := range b.evaluators {
			if result, ok := b.verdict(output.Result, byKey[cellKey{e.step, r}], traces); ok {
				sc.Results = append(sc.Results, models.ScenarioResult{EvaluatorConfig: e.id, Result: result})
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// inputs splits a test case's columns into the inputs and the expected
// answers.
func (b *rowBuilder) inputs(data models.Columns) ([]models.Input, []models.CorrectAnswer) {
	inputs := make([]models.Input, 0, len(data))
	for _, col := range data {
		if col.Name == models.TestcaseDedupKey || slices.Contains(b.answerKeys, col.Name) {
			continue
		}
		inputs = append(inputs, models.Input{Name: col.Name, Type: "text", Value: col.Value})
	}
	answers := make([]models.CorrectAnswer, 0, len(b.answerKeys))
	for _, key := range b.answerKeys {
		text, _ := data.Text(key)
		answers = append(answers, models.CorrectAnswer{Key: key, Value: text})
	}
	return inputs, answers
}

// output is the application's output for a row from its cell and trace.
func (b *rowBuilder) output(cell *models.RunResult, s models.RunScenario, traces map[string]*models.Trace) models.Output {
	if cell == nil {
		return models.Output{Result: errorResult("the server recorded no result for the application call (the scenario's status is " +
			b.c.text(string(s.Status), maxMessage) + "); the cause is only in the server's log")}
	}
	if cell.Status == models.RunFailure {
		return models.Output{Result: b.cellError(cell, "the application call failed")}
	}
	if cell.Status != models.RunSuccess {
		return models.Output{Result: missingResult("the application call has not finished: its cell is " + b.c.text(string(cell.Status), maxMessage))}
	}
	trace := traces[models.NormalizeTraceID(cell.TraceID)]
	if cell.TraceID == "" || trace == nil {
		return models.Output{Result: missingResult("output missing: trace " + b.c.text(cell.TraceID, maxMessage) +
			" of the application call was not found (the service's tracing pipeline may be down or behind)")}
	}
	root, ok := trace.Root()
	if !ok {
		return models.Output{Result: missingResult("output missing: trace " + b.c.text(cell.TraceID, maxMessage) + " has no root span")}
	}
	var out models.Output
	data := root.Data()
	if data.DurationMillis != nil {
		seconds := *data.DurationMillis / 1000
		out.Latency = &seconds
	}
	out.Cost = data.Cost
	value := data.Outputs
	switch {
	case value != nil:
		out.Result = models.Result{Type: valueType(value, "json"), Value: value}
	default:
		if message, failed := root.Failed(); failed {
			out.Result = errorResult(b.c.text(message, 4*maxMessage))
		} else {
			out.Result = missingResult("output missing: trace " + b.c.text(cell.TraceID, maxMessage) + " of the application call has no outputs")
		}
	}
	return out
}

// verdict is an evaluator's result for a row; ok is false when there is
// none to report.
func (b *rowBuilder) verdict(app models.Result, cell *models.RunResult, traces map[string]*models.Trace) (models.Result, bool) {
	if app.Failed() {
		// 2024 semantics: an evaluator does not judge a failed call.
		return app, true
	}
	if cell == nil {
		return models.Result{}, false
	}
	switch cell.Status {
	case models.RunFailure:
		return b.cellError(cell, "the evaluator failed"), true
	case models.RunSuccess:
	default:
		return models.Result{}, false // pending on a human or custom evaluator, or not done
	}
	trace := traces[models.NormalizeTraceID(cell.TraceID)]
	if trace == nil {
		return models.Result{}, false
	}
	root, ok := trace.Root()
	if !ok {
		return models.Result{}, false
	}
	value, ok := root.Outputs()
	if !ok {
		return models.Result{}, false
	}
	value = verdictValue(value)
	return models.Result{Type: valueType(value, "json"), Value: value}, true
}

// cellError is the error Result of a failed cell.
func (b *rowBuilder) cellError(cell *models.RunResult, fallback string) models.Result {
	if cell.Error == nil || cell.Error.Message == "" {
		return errorResult(fallback)
	}
	r := errorResult(b.c.text(cell.Error.Message, 4*maxMessage))
	r.Error.Stacktrace = b.c.text(cell.Error.StacktraceText(), 16*maxMessage)
	return r
}

// unreached yields a row for each test case of the run's test-set revision
// that no scenario named, its output missing.
func (b *rowBuilder) unreached(yield func(models.RunRow, error) bool) {
	var left []string
	for i, id := range b.expected {
		if !b.reached[i] && b.order[id] == i { // once, even when the test set repeats it
			left = append(left, id)
		}
	}
	for start := 0; start < len(left); start += DefaultPageSize {
		ids := left[start:min(start+DefaultPageSize, len(left))]
		cases := make(map[string]*models.Testcase, len(ids))
		if err := b.testcases(ids, cases); err != nil {
			yield(models.RunRow{}, err)
			return
		}
		for _, id := range ids {
			row := models.RunRow{TestcaseID: id}
			row.Scenario.EvaluationID, row.Scenario.TestcaseID = b.runID, id
			if tc := cases[id]; tc != nil {
				row.Scenario.Inputs, row.Scenario.CorrectAnswers = b.inputs(tc.Data)
			}
			row.Scenario.Outputs = []models.Output{{Result: missingResult("output missing: the run has no scenario for test case " + b.c.text(id, maxMessage))}}
			row.Scenario.Results = []models.ScenarioResult{}
			if !yield(row, nil) {
				return
			}
		}
	}
}

func errorResult(message string) models.Result {
	return models.Result{Type: models.ResultTypeError, Error: &models.Error{Message: message}}
}

func missingResult(message string) models.Result {
	return models.Result{Type: models.ResultTypeMissing, Error: &models.Error{Message: message}}
}

// verdictValue is the value of an evaluator's verdict: the one member of
// an object of one member, the score of {"score","success"}, else the
// verdict as it is.
func verdictValue(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return raw
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(t, &members) != nil {
		return raw
	}
	if len(members) == 1 {
		for _, v := range members {
			return v
		}
	}
	if score, ok := members["score"]; ok && len(members) == 2 {
		if _, ok := members["success"]; ok {
			return score
		}
	}
	return raw
}

// valueType names the Result type of a JSON value: bool, number, text for
// a string, and other for an object or array.
func valueType(raw json.RawMessage, other string) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return other
	}
	switch c := t[0]; {
	case c == 't' || c == 'f':
		return models.ResultTypeBool
	case c == '"':
		return models.ResultTypeText
	case c == '-' || c >= '0' && c <= '9':
		return models.ResultTypeNumber
	case strings.HasPrefix(string(t), "null"):
		return other
	}
	return other
}
