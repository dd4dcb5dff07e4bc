package agenta

// Fixtures for reading a 2026 run: a loopback server that serves a run of
// n rows (one application, one evaluator) the way v0.113 does, page by page
// with its id cursor, from rows encoded once; and the floor, the same
// requests written by hand with net/http and encoding/json.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
)

const (
	run26ID      = "01a215ff-3341-785a-b54e-256ae5528d3d"
	run26Input   = "testset-707727fc295d"
	run26App     = "application-c701227fa04d"
	run26Eval    = "evaluator-2ee240d33f79"
	run26User    = "01a215fd-5774-792d-a0b6-0be7d8bc4de9"
	run26Created = "2026-11-26T03:56:18.151854Z"
)

func run26ScenarioID(i int) string { return fmt.Sprintf("01a215ff-3b6d-7000-8000-%012x", i) }
func run26CellID(i int) string     { return fmt.Sprintf("01a21600-0000-7000-8000-%012x", i) }
func run26CaseID(i int) string     { return fmt.Sprintf("66b61197-585a-53c7-8e6e-%012x", i) }
func run26TraceHex(i int) string   { return fmt.Sprintf("2ce06221541700000000%012x", i) }

// run26Fixture is a run of n rows. Unless lazy, each row's parts are
// encoded once and served from memory (for the benchmarks, so that the
// server costs little); lazy encodes them on each request (for the heap
// test, so that the server holds nothing the client's heap would be
// measured against).
type run26Fixture struct {
	n         int
	lazy      bool
	scenarios [][]byte
	cells     [][]byte // 3 per row, in id order
	cases     map[string][]byte
	traces    map[string][]byte // by hex id
	run, eval []byte
	testset   []byte
	bytes     atomic.Int64 // body bytes served
	requests  atomic.Int64
}

var countries26 = []string{"France", "Germany", "Italy", "Spain", "Japan", "Brazil", "Canada", "Kenya"}

func newRun26Fixture(n int, lazy bool) *run26Fixture {
	f := &run26Fixture{n: n, lazy: lazy}
	f.run = []byte(`{"count":1,"run":{"flags":{"is_live":false,"is_active":false,"is_closed":false,"is_queue":false,"is_cached":false,"is_split":false,"has_queries":false,"has_testsets":true,"has_traces":false,"has_testcases":false,"has_evaluators":true,"has_custom":false,"has_human":false,"has_auto":true},"name":"bench","created_at":"` + run26Created + `","updated_at":"` + run26Created + `","created_by_id":"` + run26User + `","updated_by_id":"` + run26User + `","id":"` + run26ID + `","version":"2025-07-14","status":"success","data":{"steps":[` +
		`{"key":"` + run26Input + `","type":"input","origin":"auto","references":{"testset":{"slug":"bench","id":"01a215fe-9d01-7d27-91dc-e36712617364"},"testset_variant":{"slug":"5ceaf881cbad","id":"01a215fe-9d09-7f40-90b2-50c67436480e"},"testset_revision":{"version":"1","slug":"707727fc295d","id":"01a215fe-9d4d-73fd-9df7-acfa88602a8e"}}},` +
		`{"key":"` + run26App + `","type":"invocation","origin":"auto","references":{"application":{"slug":"bench","id":"01a215fe-9ca6-7255-8b0b-9667db4c596f"},"application_variant":{"slug":"576524b07454","id":"01a215fe-9cad-7610-b74a-77abc71acf75"},"application_revision":{"version":"1","slug":"c701227fa04d","id":"01a215fe-9cc3-77b6-a6cc-4e5201a7a001"}},"inputs":[{"key":"__all_inputs__"}]},` +
		`{"key":"` + run26Eval + `","type":"annotation","origin":"auto","references":{"evaluator":{"slug":"exact","id":"01a215fd-5c47-7195-982c-c283d9a1c8c3"},"evaluator_variant":{"slug":"c13d169b3311","id":"01a215fd-5c4d-7e97-a50d-065678db5c41"},"evaluator_revision":{"version":"1","slug":"2ee240d33f79","id":"01a215fd-5c64-793c-b05f-76e2b91ae586"}},"inputs":[{"key":"__all_invocations__"},{"key":"__all_inputs__"}]}` +
		`],"repeats":1,"mappings":[]}}}`)
	f.eval = []byte(`{"count":1,"evaluator_revision":{"evaluator_id":"01a215fd-5c47-7195-982c-c283d9a1c8c3","version":"1","slug":"2ee240d33f79","id":"01a215fd-5c64-793c-b05f-76e2b91ae586","name":"Exact","data":{"uri":"agenta:builtin:auto_exact_match:v0","url":"http://127.0.0.1:19090/auto_exact_match/v0","schemas":{"parameters":{"type":"object","properties":{"correct_answer_key":{"type":"string","default":"correct_answer"}}},"outputs":{"type":"object","properties":{"success":{"type":"boolean"}}}},"parameters":{"correct_answer_key":"correct_answer"}}}}`)
	var ids bytes.Buffer
	for i := 0; i < n; i++ {
		if i > 0 {
			ids.WriteByte(',')
		}
		ids.WriteString(`"` + run26CaseID(i) + `"`)
	}
	f.testset = []byte(`{"count":1,"testset_revision":{"testset_id":"01a215fe-9d01-7d27-91dc-e36712617364","version":"1","slug":"707727fc295d","id":"01a215fe-9d4d-73fd-9df7-acfa88602a8e","data":{"testcase_ids":[` + ids.String() + `]}}}`)
	if !lazy {
		f.cases, f.traces = make(map[string][]byte, n), make(map[string][]byte, 2*n)
		for i := 0; i < n; i++ {
			f.scenarios = append(f.scenarios, f.scenario(i))
			f.cells = append(f.cells, f.cell(3*i), f.cell(3*i+1), f.cell(3*i+2))
			f.cases[run26CaseID(i)] = f.testcase(i)
			f.traces[run26TraceHex(2*i)] = f.trace(2 * i)
			f.traces[run26TraceHex(2*i+1)] = f.trace(2*i + 1)
		}
	}
	return f
}

func run26Row(i int) (country, capital string) {
	country = countries26[i%len(countries26)] + " " + strconv.Itoa(i)
	return country, "Capital of " + country
}

func (f *run26Fixture) scenario(i int) []byte {
	return []byte(`{"created_at":"` + run26Created + `","updated_at":"` + run26Created + `","created_by_id":"` + run26User + `","updated_by_id":"` + run26User + `","id":"` + run26ScenarioID(i) + `","version":"2025-07-14","status":"success","run_id":"` + run26ID + `"}`)
}

// cell j is row j/3's input (0), invocation (1) or annotation (2) cell.
func (f *run26Fixture) cell(j int) []byte {
	i, k := j/3, j%3
	step, extra := run26Input, ""
	if k > 0 {
		step = run26App
		if k == 2 {
			step = run26Eval
		}
		extra = `"hash_id":"b916d6fc-a5bd-8555-0762-3f93d336e3b6","trace_id":"` + dashedHex(run26TraceHex(2*i+k-1)) + `",`
	}
	return []byte(`{"created_at":"` + run26Created + `","updated_at":"` + run26Created + `","created_by_id":"` + run26User + `","updated_by_id":"` + run26User + `","id":"` + run26CellID(j) + `","version":"2025-07-14",` + extra + `"testcase_id":"` + run26CaseID(i) + `","status":"success","repeat_idx":0,"step_key":"` + step + `","scenario_id":"` + run26ScenarioID(i) + `","run_id":"` + run26ID + `"}`)
}

func (f *run26Fixture) testcase(i int) []byte {
	country, capital := run26Row(i)
	tc := run26CaseID(i)
	return []byte(`{"testset_id":"01a215fe-9d01-7d27-91dc-e36712617364","set_id":"01a215fe-9d01-7d27-91dc-e36712617364","created_at":"` + run26Created + `","created_by_id":"` + run26User + `","id":"` + tc + `","data":{"country":"` + country + `","correct_answer":"` + capital + `","testcase_dedup_id":"02bf8528dd9c"}}`)
}

// trace t is row t/2's application (even) or evaluator (odd) trace.
func (f *run26Fixture) trace(t int) []byte {
	i := t / 2
	country, capital := run26Row(i)
	tc, trace := run26CaseID(i), run26TraceHex(t)
	row := `{"country":"` + country + `","testcase_id":"` + tc + `","correct_answer":"` + capital + `","testcase_dedup_id":"02bf8528dd9c"}`
	params := `{"temperature":0.7,"prompt_template":"What is the capital of {country}?"}`
	name, kind, data := "capitals", "invocation", `{"inputs":{"inputs":`+row+`,"parameters":`+params+`},"outputs":"`+capital+`","parameters":`+params+`}`
	if t%2 == 1 {
		name, kind = "auto_exact_match_v0", "annotation"
		data = `{"inputs":{"inputs":` + row + `,"outputs":"` + capital + `","parameters":{"correct_answer_key":"correct_answer"}},"outputs":{"success":true},"parameters":{"correct_answer_key":"correct_answer"}}`
	}
	flags := `{"is_llm":false,"stream":false,"has_url":true,"is_chat":false,"is_code":false,"is_hook":false,"is_agent":false,"is_match":false,"is_skill":false,"is_custom":false,"is_static":false,"has_script":false,"is_managed":false,"is_snippet":false,"has_handler":false,"is_feedback":false,"is_evaluator":false,"is_application":true}`
	refs := `"references":[{"id":"` + tc + `","attributes":{"key":"testcase"}},{"id":"01a215fe-9d01-7d27-91dc-e36712617364","attributes":{"key":"testset"}},{"id":"01a215fe-9d4d-73fd-9df7-acfa88602a8e","attributes":{"key":"testset_revision"}},{"slug":"bench","id":"01a215fe-9ca6-7255-8b0b-9667db4c596f","attributes":{"key":"application"}},{"version":"1","slug":"c701227fa04d","id":"01a215fe-9cc3-77b6-a6cc-4e5201a7a001","attributes":{"key":"application_revision"}}],"hashes":[{"id":"b916d6fc-a5bd-8555-0762-3f93d336e3b6","attributes":{"key":"indirect"}}]`
	return []byte(`{"spans":{"` + name + `":{"created_at":"` + run26Created + `","created_by_id":"` + run26User + `","trace_id":"` + trace + `","span_id":"e83a8870d467ca3d","trace_type":"` + kind + `","span_type":"workflow","span_kind":"SPAN_KIND_SERVER","span_name":"` + name + `","start_time":"` + run26Created + `","end_time":"` + run26Created + `","status_code":"STATUS_CODE_UNSET","attributes":{"ag":{"data":` + data + `,"type":{"span":"workflow","trace":"` + kind + `"},"flags":` + flags + `,"metrics":{"costs":{"cumulative":{"total":0.00012}},"errors":{},"tokens":{"cumulative":{"total":42}},"duration":{"cumulative":101.956}},"references":{"testset":{"id":"01a215fe-9d01-7d27-91dc-e36712617364"},"testcase":{"id":"` + tc + `"},"application":{"id":"01a215fe-9ca6-7255-8b0b-9667db4c596f","slug":"bench"}}}},` + refs + `}},"trace_id":"` + trace + `"}`)
}

// index reads the number at the end of a fixture id.
func index26(id string) int {
	n, _ := strconv.ParseInt(strings.ReplaceAll(id, "-", "")[20:], 16, 64)
	return int(n)
}

func dashedHex(h string) string {
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// serve answers the run's routes, paging as v0.113 does.
func (f *run26Fixture) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	var out []byte
	path := strings.TrimPrefix(r.URL.Path, "/api")
	switch {
	case path == "/evaluations/runs/"+run26ID:
		out = f.run
	case path == "/evaluators/revisions/retrieve":
		out = f.eval
	case path == "/testsets/revisions/retrieve":
		out = f.testset
	case path == "/evaluations/scenarios/query":
		var q struct {
			Windowing struct {
				Next  string `json:"next"`
				Limit int    `json:"limit"`
			} `json:"windowing"`
		}
		_ = json.NewDecoder(r.Body).Decode(&q)
		start := 0
		if q.Windowing.Next != "" {
			start = index26(q.Windowing.Next) + 1
		}
		var rows [][]byte
		for i := min(start, f.n); i < min(start+q.Windowing.Limit, f.n); i++ {
			rows = append(rows, f.rowOf(f.scenarios, i, f.scenario))
		}
		out = page26("scenarios", rows)
	case path == "/evaluations/results/query":
		var q struct {
			Result struct {
				ScenarioIDs []string `json:"scenario_ids"`
			} `json:"result"`
			Windowing struct {
				Next  string `json:"next"`
				Limit int    `json:"limit"`
			} `json:"windowing"`
		}
		_ = json.NewDecoder(r.Body).Decode(&q)
		// The page's scenarios are a block of rows: their cells are a block too.
		first, last := index26(q.Result.ScenarioIDs[0]), index26(q.Result.ScenarioIDs[len(q.Result.ScenarioIDs)-1])
		lo, hi := 3*first, 3*last+3
		if q.Windowing.Next != "" {
			lo = index26(q.Windowing.Next) + 1
		}
		limit := q.Windowing.Limit
		if limit <= 0 {
			limit = hi - lo
		}
		var rows [][]byte
		for j := min(lo, hi); j < min(lo+limit, hi); j++ {
			rows = append(rows, f.rowOf(f.cells, j, f.cell))
		}
		out = page26("results", rows)
	case path == "/testcases/query":
		var q struct {
			IDs []string `json:"testcase_ids"`
		}
		_ = json.NewDecoder(r.Body).Decode(&q)
		rows := make([][]byte, 0, len(q.IDs))
		for _, id := range q.IDs {
			if f.lazy {
				rows = append(rows, f.testcase(index26(id)))
			} else {
				rows = append(rows, f.cases[id])
			}
		}
		out = page26("testcases", rows)
	case path == "/traces/":
		ids := strings.Split(r.URL.Query().Get("trace_ids"), ",")
		rows := make([][]byte, 0, len(ids))
		for _, id := range ids {
			if f.lazy {
				rows = append(rows, f.trace(index26(id)))
			} else if t, ok := f.traces[models.NormalizeTraceID(id)]; ok {
				rows = append(rows, t)
			}
		}
		out = page26("traces", rows)
	default:
		http.NotFound(w, r)
		return
	}
	f.bytes.Add(int64(len(out)))
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	_, _ = w.Write(out)
}

// rowOf is row i of a fixture list, encoded now when the fixture is lazy.
func (f *run26Fixture) rowOf(list [][]byte, i int, encode func(int) []byte) []byte {
	if f.lazy {
		return encode(i)
	}
	return list[i]
}

func page26(member string, rows [][]byte) []byte {
	size := 32
	for _, r := range rows {
		size += len(r) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `{"count":`...)
	b = strconv.AppendInt(b, int64(len(rows)), 10)
	b = append(b, `,"`...)
	b = append(b, member...)
	b = append(b, `":[`...)
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, "]}"...)
}

func newRun26Server(tb testing.TB, f *run26Fixture) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(srv.Close)
	return srv
}

// baseline26 is the floor for reading a run: the SDK's requests, written
// by hand with net/http and encoding/json into the same models types, and
// the same join of cells, test cases and traces, one page of 500
// scenarios at a time.
type baseline26 struct {
	hc   *http.Client
	base string
}

func newBaseline26(srv *httptest.Server) *baseline26 {
	return &baseline26{base: srv.URL + "/api", hc: &http.Client{Timeout: 60 * time.Second, Transport: newTransport()}}
}

func (bl *baseline26) do(ctx context.Context, method, path string, body any, v any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, bl.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agenta-go/"+Version)
	req.Header.Set("Authorization", testKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := bl.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// readRun reads every row and calls row with its output and verdict.
func (bl *baseline26) readRun(ctx context.Context, runID string, row func(output json.RawMessage, verdict json.RawMessage)) error {
	var run runAnswer
	if err := bl.do(ctx, http.MethodGet, "/evaluations/runs/"+runID, nil, &run); err != nil {
		return err
	}
	var ev evaluatorRevisionAnswer
	if err := bl.do(ctx, http.MethodPost, "/evaluators/revisions/retrieve", map[string]any{"evaluator_revision_ref": map[string]string{"id": "01a215fd-5c64-793c-b05f-76e2b91ae586"}}, &ev); err != nil {
		return err
	}
	var ts testsetRevisionAnswer
	if err := bl.do(ctx, http.MethodPost, "/testsets/revisions/retrieve", map[string]any{"testset_revision_ref": map[string]string{"id": "x"}, "include_testcases": false}, &ts); err != nil {
		return err
	}
	next := ""
	for {
		var page scenariosPage
		w := map[string]any{"limit": DefaultPageSize, "order": "ascending"}
		if next != "" {
			w["next"] = next
		}
		if err := bl.do(ctx, http.MethodPost, "/evaluations/scenarios/query", map[string]any{"scenario": map[string]string{"run_id": runID}, "windowing": w}, &page); err != nil {
			return err
		}
		if len(page.Scenarios) == 0 {
			return nil
		}
		ids := make([]string, len(page.Scenarios))
		for i, s := range page.Scenarios {
			ids[i] = s.ID
		}
		cells := map[string][]models.RunResult{}
		var caseIDs, traceIDs []string
		cursor := ""
		for {
			var rp resultsPage
			w := map[string]any{"limit": DefaultPageSize, "order": "ascending"}
			if cursor != "" {
				w["next"] = cursor
			}
			if err := bl.do(ctx, http.MethodPost, "/evaluations/results/query", map[string]any{"result": map[string]any{"run_id": runID, "scenario_ids": ids}, "windowing": w}, &rp); err != nil {
				return err
			}
			for _, c := range rp.Results {
				cells[c.ScenarioID] = append(cells[c.ScenarioID], c)
				if c.StepKey == run26Input {
					caseIDs = append(caseIDs, c.TestcaseID)
				} else if c.TraceID != "" {
					traceIDs = append(traceIDs, c.TraceID)
				}
			}
			if len(rp.Results) < DefaultPageSize {
				break
			}
			cursor = rp.Results[len(rp.Results)-1].ID
		}
		var tp testcasesPage
		if err := bl.do(ctx, http.MethodPost, "/testcases/query", map[string]any{"testcase_ids": caseIDs, "windowing": map[string]any{"limit": len(caseIDs) + 1}}, &tp); err != nil {
			return err
		}
		cases := make(map[string]*models.Testcase, len(tp.Testcases))
		for i := range tp.Testcases {
			cases[tp.Testcases[i].ID] = &tp.Testcases[i]
		}
		traces := make(map[string]*models.Trace, len(traceIDs))
		for start := 0; start < len(traceIDs); start += TracesPerRequest {
			var trp tracesPage
			batch := traceIDs[start:min(start+TracesPerRequest, len(traceIDs))]
			if err := bl.do(ctx, http.MethodGet, "/traces/?trace_ids="+strings.Join(batch, ","), nil, &trp); err != nil {
				return err
			}
			for i := range trp.Traces {
				traces[trp.Traces[i].TraceID] = &trp.Traces[i]
			}
		}
		for _, s := range page.Scenarios {
			var output, verdict json.RawMessage
			for _, c := range cells[s.ID] {
				t := traces[models.NormalizeTraceID(c.TraceID)]
				if t == nil {
					continue
				}
				root, _ := t.Root()
				out, _ := root.Outputs()
				if c.StepKey == run26App {
					output = out
				} else {
					verdict = out
				}
			}
			_ = cases
			row(output, verdict)
		}
		if len(page.Scenarios) < DefaultPageSize {
			return nil
		}
		next = page.Scenarios[len(page.Scenarios)-1].ID
	}
}
