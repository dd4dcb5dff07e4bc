package agenta

// The 2026 envelope and paging against servers that misbehave: answers
// without count, counts that lie, cursors that do not advance, a trace not
// asked for; and the row builder on a run that lost cells and rows.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func answerJSON(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

func TestEnvelopeAnswers(t *testing.T) {
	const run = `{"id":"r1","flags":{},"status":"running"}`
	for _, tc := range []struct {
		body     string
		notFound bool
		decode   string // a *DecodeError saying this
	}{
		{body: `{"count":1,"run":` + run + `}`},
		{body: `{"count":0,"run":` + run + `}`}, // the member is the evidence (as Prism's examples send)
		{body: `{"run":` + run + `}`},
		{body: `{"count":0}`, notFound: true},
		{body: `{}`, decode: `neither "count" nor the object`},
		{body: `{"count":1}`, decode: `"count":1 but holds no object`},
		{body: `{"count":0,"run":null}`, notFound: true},
	} {
		mux, c := setup(t)
		mux.HandleFunc("/evaluations/runs/r1", answerJSON(tc.body))
		got, err := c.FetchRun(context.Background(), "r1")
		switch {
		case tc.notFound:
			var nf *NotFoundError
			require.True(t, errors.As(err, &nf), "%s: got %v", tc.body, err)
			assert.True(t, errors.Is(err, ErrNotFound))
			assert.False(t, errors.Is(err, ErrRouteNotFound))
			assert.Equal(t, "/api/evaluations/runs/r1", nf.Path)
			assert.Contains(t, err.Error(), "no run r1")
			assert.JSONEq(t, `{"count":0}`, string(nf.Body))
		case tc.decode != "":
			var de *DecodeError
			require.True(t, errors.As(err, &de), "%s: got %v", tc.body, err)
			assert.Contains(t, err.Error(), tc.decode)
			assert.NotEmpty(t, de.Body, "the answer is kept")
		default:
			require.NoError(t, err, tc.body)
			assert.Equal(t, "r1", got.ID)
		}
	}
}

func TestCreateAnsweredCountZero(t *testing.T) {
	mux, c := setup(t)
	calls := 0
	mux.HandleFunc("/simple/evaluations/", func(w http.ResponseWriter, r *http.Request) {
		calls++
		answerJSON(`{"count":0}`)(w, r)
	})
	_, err := c.CreateSimpleEvaluation(context.Background(), models.SimpleEvaluationCreate{TestsetRevisionID: "t", ApplicationRevisionID: "a"})
	var nc *NotCreatedError
	require.True(t, errors.As(err, &nc), "got %v", err)
	assert.True(t, errors.Is(err, ErrNotCreated))
	assert.False(t, errors.Is(err, ErrNotFound), "a create that failed is no lookup that found nothing")
	assert.Contains(t, err.Error(), "the server could not create the evaluation")
	assert.Contains(t, err.Error(), "empty test set")
	assert.Equal(t, 1, calls)
}

// pager serves a query route from a list of pages, recording the bodies.
type pager struct {
	mu     sync.Mutex
	pages  []string
	bodies []string
}

func (p *pager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bodies = append(p.bodies, string(body))
	page := `{"count":0,"scenarios":[]}`
	if len(p.bodies) <= len(p.pages) {
		page = p.pages[len(p.bodies)-1]
	}
	answerJSON(page)(w, r)
}

func scenarioPage(ids ...string) string {
	items := make([]string, len(ids))
	for i, id := range ids {
		items[i] = `{"id":"` + id + `","run_id":"r","status":"success"}`
	}
	return fmt.Sprintf(`{"count":%d,"scenarios":[%s]}`, len(ids), strings.Join(items, ","))
}

func TestQueryPagingByIDCursor(t *testing.T) {
	mux, c := setup(t)
	p := &pager{pages: []string{scenarioPage("0001", "0003"), scenarioPage("0004", "0005"), scenarioPage("0006")}}
	mux.Handle("/evaluations/scenarios/query", p)
	var ids []string
	for s, err := range c.QueryScenarios(context.Background(), models.RunScenarioQuery{RunID: "r", PageSize: 2}) {
		require.NoError(t, err)
		ids = append(ids, s.ID)
	}
	assert.Equal(t, []string{"0001", "0003", "0004", "0005", "0006"}, ids)
	require.Len(t, p.bodies, 3, "a short page is the last: no request for an empty one")
	assert.JSONEq(t, `{"scenario":{"run_id":"r"},"windowing":{"limit":2,"order":"ascending"}}`, p.bodies[0])
	assert.JSONEq(t, `{"scenario":{"run_id":"r"},"windowing":{"next":"0003","limit":2,"order":"ascending"}}`, p.bodies[1])
	assert.JSONEq(t, `{"scenario":{"run_id":"r"},"windowing":{"next":"0005","limit":2,"order":"ascending"}}`, p.bodies[2])
}

func TestQueryPagingNeverLoops(t *testing.T) {
	for name, pages := range map[string][]string{
		// A server that ignores the cursor answers the same page again.
		"cursor ignored": {scenarioPage("0001", "0002"), scenarioPage("0001", "0002")},
		"ids go back":    {scenarioPage("0001", "0009"), scenarioPage("0005", "0010")},
		"no id":          {scenarioPage("0001", "")},
	} {
		t.Run(name, func(t *testing.T) {
			mux, c := setup(t)
			p := &pager{pages: pages}
			mux.Handle("/evaluations/scenarios/query", p)
			var err error
			n := 0
			for _, e := range c.QueryScenarios(context.Background(), models.RunScenarioQuery{RunID: "r", PageSize: 2}) {
				if e != nil {
					err = e
					break
				}
				n++
			}
			var de *DecodeError
			require.True(t, errors.As(err, &de), "got %v after %d rows", err, n)
			assert.Contains(t, err.Error(), "could loop")
			assert.LessOrEqual(t, len(p.bodies), 2)
		})
	}
}

func TestQueryCountChecked(t *testing.T) {
	for _, body := range []string{
		`{"count":3,"scenarios":[{"id":"1","run_id":"r"}]}`,
		`{"scenarios":[{"id":"1","run_id":"r"}]}`,
	} {
		mux, c := setup(t)
		mux.HandleFunc("/evaluations/scenarios/query", answerJSON(body))
		var rows int
		var err error
		for _, e := range c.QueryScenarios(context.Background(), models.RunScenarioQuery{RunID: "r"}) {
			if e != nil {
				err = e
				break
			}
			rows++
		}
		assert.Zero(t, rows, "no row of a page that lies is yielded")
		var de *DecodeError
		require.True(t, errors.As(err, &de), "%s: got %v", body, err)
		assert.Contains(t, err.Error(), `"count"`)
	}
}

func TestQueryTestcasesNeverLoops(t *testing.T) {
	mux, c := setup(t)
	page := `{"count":2,"testcases":[{"id":"a","data":{"x":1}},{"id":"b","data":{"x":2}}],"windowing":{"next":"b","limit":2}}`
	requests := 0
	mux.HandleFunc("/testcases/query", func(w http.ResponseWriter, r *http.Request) {
		requests++
		answerJSON(page)(w, r)
	})
	_, err := collectAll(c.QueryTestcases(context.Background(), models.TestcasesQuery{TestcaseIDs: []string{"a", "b"}, PageSize: 2}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "would loop")
	assert.Equal(t, 2, requests)
}

func collectAll[T any](seq func(func(T, error) bool)) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

func TestFetchTracesBatches(t *testing.T) {
	mux, c := setup(t)
	var batches []int
	mux.HandleFunc("/traces/", func(w http.ResponseWriter, r *http.Request) {
		ids := strings.Split(r.URL.Query().Get("trace_ids"), ",")
		batches = append(batches, len(ids))
		var items []string
		for _, id := range ids[:len(ids)-1] { // the last of each batch is unknown
			items = append(items, `{"trace_id":"`+models.NormalizeTraceID(id)+`","spans":{}}`)
		}
		answerJSON(fmt.Sprintf(`{"count":%d,"traces":[%s]}`, len(items), strings.Join(items, ",")))(w, r)
	})
	ids := make([]string, 250)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08x-0000-0000-0000-000000000000", i)
	}
	got, err := collectAll(c.FetchTraces(context.Background(), ids))
	require.NoError(t, err)
	assert.Equal(t, []int{100, 100, 50}, batches)
	assert.Len(t, got, 247)

	mux2, c2 := setup(t)
	mux2.HandleFunc("/traces/", answerJSON(`{"count":1,"traces":[{"trace_id":"ffffffffffffffffffffffffffffffff","spans":{}}]}`))
	_, err = collectAll(c2.FetchTraces(context.Background(), []string{"0123456789abcdef0123456789abcdef"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not asked for")
	_, err = collectAll(c2.FetchTraces(context.Background(), []string{"a,b"}))
	assert.True(t, errors.Is(err, ErrInvalidArgument))
}

// A crafted run: three test cases; scenario s1 ran t1 (its evaluator waits
// on a human), scenario s2 has no cell at all, and t2 and t3 were never
// reached.
func TestRunRowsOfAnIncompleteRun(t *testing.T) {
	mux, c := setup(t)
	const tr = "0123456789abcdef0123456789abcdef"
	mux.HandleFunc("/evaluations/runs/run1", answerJSON(`{"count":1,"run":{"id":"run1","status":"errors","flags":{},"data":{"repeats":1,"steps":[
		{"key":"testset-x","type":"input","origin":"auto","references":{"testset_revision":{"id":"tsr"}}},
		{"key":"application-y","type":"invocation","origin":"auto","references":{"application_revision":{"id":"ar"}}},
		{"key":"evaluator-z","type":"annotation","origin":"human","references":{"evaluator":{"id":"ev"},"evaluator_revision":{"id":"evr"}}}]}}}`))
	mux.HandleFunc("/evaluators/revisions/retrieve", answerJSON(`{"count":1,"evaluator_revision":{"id":"evr","data":{"uri":"agenta:builtin:auto_exact_match:v0","parameters":{"correct_answer_key":"answer"}}}}`))
	var tsBody string
	mux.HandleFunc("/testsets/revisions/retrieve", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		tsBody = string(b)
		answerJSON(`{"count":1,"testset_revision":{"id":"tsr","data":{"testcase_ids":["t1","t2","t3"]}}}`)(w, r)
	})
	mux.HandleFunc("/evaluations/scenarios/query", answerJSON(`{"count":2,"scenarios":[{"id":"s1","run_id":"run1","status":"pending"},{"id":"s2","run_id":"run1","status":"errors"}]}`))
	mux.HandleFunc("/evaluations/results/query", answerJSON(`{"count":3,"results":[
		{"id":"c1","run_id":"run1","scenario_id":"s1","step_key":"testset-x","repeat_idx":0,"status":"success","testcase_id":"t1"},
		{"id":"c2","run_id":"run1","scenario_id":"s1","step_key":"application-y","repeat_idx":0,"status":"success","testcase_id":"t1","trace_id":"01234567-89ab-cdef-0123-456789abcdef"},
		{"id":"c3","run_id":"run1","scenario_id":"s1","step_key":"evaluator-z","repeat_idx":0,"status":"pending","testcase_id":"t1"}]}`))
	mux.HandleFunc("/testcases/query", func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			IDs []string `json:"testcase_ids"`
		}
		_ = json.NewDecoder(r.Body).Decode(&q)
		var items []string
		for _, id := range q.IDs {
			items = append(items, `{"id":"`+id+`","data":{"q":"question `+id+`","answer":"A`+id+`","testcase_dedup_id":"d"}}`)
		}
		answerJSON(fmt.Sprintf(`{"count":%d,"testcases":[%s]}`, len(items), strings.Join(items, ",")))(w, r)
	})
	mux.HandleFunc("/traces/", answerJSON(`{"count":1,"traces":[{"trace_id":"`+tr+`","spans":{"app":{"trace_id":"`+tr+`","span_id":"0123456789abcdef",
		"attributes":{"ag":{"data":{"outputs":{"answer":42}},"metrics":{"duration":{"cumulative":250},"costs":{"cumulative":{"total":0.002}}}}}}}}]}`))

	rows, err := collectAll(c.StreamRunRows(context.Background(), "run1", nil))
	require.NoError(t, err)
	assert.JSONEq(t, `{"testset_revision_ref":{"id":"tsr"},"include_testcase_ids":true,"include_testcases":false}`, tsBody,
		"the rows' ids are read without the rows themselves")
	require.Len(t, rows, 4, "s1, s2, and the two test cases never reached")

	s1 := rows[0]
	assert.Equal(t, "t1", s1.TestcaseID)
	assert.Equal(t, models.RunStatus("pending"), s1.Status)
	q, _ := s1.Scenario.Input("q")
	assert.Equal(t, "question t1", q)
	assert.Equal(t, []models.CorrectAnswer{{Key: "answer", Value: "At1"}}, s1.Scenario.CorrectAnswers)
	out, _ := s1.Scenario.Output()
	assert.Equal(t, "json", out.Result.Type)
	assert.JSONEq(t, `{"answer":42}`, string(out.Result.Value))
	require.NotNil(t, out.Latency)
	assert.InDelta(t, 0.25, *out.Latency, 1e-12)
	require.NotNil(t, out.Cost)
	assert.InDelta(t, 0.002, *out.Cost, 1e-12)
	assert.Empty(t, s1.Scenario.Results, "a verdict waiting on a human is absent, not a value")

	s2 := rows[1]
	assert.Empty(t, s2.TestcaseID)
	msg, failed := s2.Scenario.AppError()
	assert.True(t, failed)
	assert.Contains(t, msg, "no cell for this scenario")

	for i, id := range []string{"t2", "t3"} {
		row := rows[2+i]
		assert.Equal(t, id, row.TestcaseID)
		out, _ := row.Scenario.Output()
		assert.Equal(t, models.ResultTypeMissing, out.Result.Type)
		assert.True(t, row.Scenario.Failed(), "a test case never reached counts against the run")
		q, _ := row.Scenario.Input("q")
		assert.Equal(t, "question "+id, q, "its inputs are read so that it pairs")
	}
}

func TestRunRowsRetryMissingTraces(t *testing.T) {
	mux, c := setup(t)
	const tr = "0123456789abcdef0123456789abcdef"
	mux.HandleFunc("/evaluations/runs/run1", answerJSON(`{"count":1,"run":{"id":"run1","status":"success","flags":{},"data":{"steps":[
		{"key":"testset-x","type":"input","origin":"auto","references":{"testset_revision":{"id":"tsr"}}},
		{"key":"application-y","type":"invocation","origin":"auto"}]}}}`))
	mux.HandleFunc("/testsets/revisions/retrieve", answerJSON(`{"count":1,"testset_revision":{"id":"tsr","data":{"testcase_ids":["t1"]}}}`))
	mux.HandleFunc("/evaluations/scenarios/query", answerJSON(`{"count":1,"scenarios":[{"id":"s1","run_id":"run1","status":"success"}]}`))
	mux.HandleFunc("/evaluations/results/query", answerJSON(`{"count":1,"results":[
		{"id":"c2","run_id":"run1","scenario_id":"s1","step_key":"application-y","repeat_idx":0,"status":"success","testcase_id":"t1","trace_id":"`+tr+`"}]}`))
	mux.HandleFunc("/testcases/query", answerJSON(`{"count":1,"testcases":[{"id":"t1","data":{"q":"x"}}]}`))
	reads := 0
	mux.HandleFunc("/traces/", func(w http.ResponseWriter, r *http.Request) {
		reads++
		if reads == 1 {
			answerJSON(`{"count":0,"traces":[]}`)(w, r) // not ingested yet
			return
		}
		answerJSON(`{"count":1,"traces":[{"trace_id":"`+tr+`","spans":{"app":{"trace_id":"`+tr+`","span_id":"0123456789abcdef","attributes":{"ag":{"data":{"outputs":"late"}}}}}}]}`)(w, r)
	})
	rows, err := collectAll(c.StreamRunRows(context.Background(), "run1", &RunRowsOptions{TraceRetryWait: time.Millisecond}))
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, "late", rows[0].Scenario.OutputText(), "the second read found the trace")
	assert.Equal(t, 2, reads)
}
