package agenta

// Contract tests of the 2026 operations: the SDK against a Prism mock of
// ../shared/contract-2026/openapi-slice.json, as contract_test.go does for
// the 2024 document. Prism validates every request against the slice (a
// request that breaks it is a 422 with sl-violations) and answers from its
// schemas: the examples in static mode, random valid answers with -d.
//
// Two operations are not in the slice and so not here: FetchTraces (GET
// /traces/?trace_ids=) and DeployApplicationRevision; v0.113 serves both,
// and they are tested against the fake and the real server.
//
// In dynamic mode an answer is random within its schema, so an envelope
// whose count disagrees with its list, or whose member is absent, is
// possible: the SDK must then return the documented error (a *DecodeError
// or *NotFoundError), never a wrong value. Every value it does return must
// be faithful to the answer.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/require"
)

const (
	contract2026Document      = "../shared/contract-2026/openapi-slice.json"
	contract2026DefaultRounds = 40
)

func TestContract2026Static(t *testing.T) {
	p := startPrismFor(t, contract2026Document, false)
	rec, client := contractClient(t, p)
	runContract2026Round(t, client, rec, false)
	contract2026CheckDetector(t, p)
	logContractCounts(t, "2026 static (examples)", rec)
}

func TestContract2026Dynamic(t *testing.T) {
	rounds := contract2026DefaultRounds
	if v := os.Getenv("AGENTA_CONTRACT_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.False(t, err != nil || n < 1, "AGENTA_CONTRACT_ROUNDS=%q: want a positive integer", v)
		rounds = n
	}
	p := startPrismFor(t, contract2026Document, true)
	rec, client := contractClient(t, p)
	for i := 0; i < rounds && !t.Failed(); i++ {
		runContract2026Round(t, client, rec, true)
	}
	logContractCounts(t, fmt.Sprintf("2026 dynamic (-d, %d rounds)", rounds), rec)
}

// runContract2026Round calls every 2026 operation of the slice once, with
// their optional fields set.
func runContract2026Round(t *testing.T, c *Client, rec *contractRecorder, dynamic bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const (
		id1 = "01a215fe-9cc3-77b6-a6cc-4e5201a7a001"
		id2 = "01a215fe-9cad-7610-b74a-77abc71acf75"
		id3 = "01a215fd-5c64-793c-b05f-76e2b91ae586"
		tr  = "2ce062215417ab977a73a6c69f13bf1e"
	)
	one := func(op string, v any, err error) {
		t.Helper()
		if contract2026PrismFailed(err) {
			// json-schema-faker crashes on some of the slice's schemas
			// in dynamic mode: prism's own 500, no answer to check.
			rec.countOp(op + "(prism failed)")
			return
		}
		if contract2026Documented(err) {
			// Prism's answers may break the envelope's rules (its static
			// examples say "count":0 beside one row): the SDK refuses them
			// with the documented error. The rows must still decode.
			if !dynamic {
				contract2026CheckRowsDecode(t, rec, op)
			}
			err, v = nil, nil
		}
		if contractCheckCall(t, rec, op, err) && v != nil {
			contract2026Faithful(t, rec, op, v)
		}
	}
	rev, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{
		ApplicationVariantRef: &models.Reference{ID: id2}, ApplicationRevisionRef: &models.Reference{Version: "2"}})
	one("RetrieveApplicationRevision", member(rev), err)
	rev, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{
		EnvironmentRef: &models.Reference{Slug: "production"}, Key: "capitals.revision"})
	one("RetrieveApplicationRevision(env)", member(rev), err)
	rev, err = c.FetchApplicationRevision(ctx, id1)
	one("FetchApplicationRevision", member(rev), err)
	variant, err := c.FetchApplicationVariant(ctx, id2)
	one("FetchApplicationVariant", memberNamed("application_variant", variant), err)
	variant, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: id2},
		ApplicationRevisionRef: &models.Reference{ID: id1},
		ApplicationVariant:     models.NewApplicationVariant{Slug: "capitals-cold", Name: "cold", Description: "colder"}})
	one("ForkApplicationVariant", memberNamed("application_variant", variant), err)
	rev, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: id2, Message: "m",
		Data: &models.ApplicationRevisionData{URL: "http://127.0.0.1:19080", Parameters: map[string]any{"temperature": 0.2}}})
	one("CommitApplicationRevision(data)", member(rev), err)
	rev, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: id2, BaseRevisionID: id1,
		Delta: &models.RevisionDelta{Set: map[string]any{"parameters": map[string]any{"temperature": 0.9}}, Remove: []string{"parameters.extra"}}})
	one("CommitApplicationRevision(delta)", member(rev), err)

	yes := true
	ts, err := c.RetrieveTestsetRevision(ctx, models.TestsetRevisionRetrieve{TestsetRef: &models.Reference{Slug: "capitals"},
		IncludeTestcaseIDs: &yes, IncludeTestcases: &yes})
	one("RetrieveTestsetRevision", memberNamed("testset_revision", ts), err)
	ev, err := c.RetrieveEvaluatorRevision(ctx, models.EvaluatorRevisionRetrieve{EvaluatorRef: &models.Reference{Slug: "exact-capital"}})
	one("RetrieveEvaluatorRevision", memberNamed("evaluator_revision", ev), err)
	tc, err := c.FetchTestcase(ctx, id3)
	one("FetchTestcase", memberNamed("testcase", tc), err)
	cases, err := contractDrain(c.QueryTestcases(ctx, models.TestcasesQuery{TestcaseIDs: []string{id1, id3}, PageSize: 1000}))
	one("QueryTestcases", rowsNamed("testcases", cases), err)

	two := 2
	delay := 1.5
	sim, err := c.CreateSimpleEvaluation(ctx, models.SimpleEvaluationCreate{Name: "nightly", Description: "d",
		TestsetRevisionID: id1, ApplicationRevisionID: id2, EvaluatorRevisionIDs: []string{id3}, Repeats: 3, Split: true,
		Concurrency: &models.RunConcurrency{BatchSize: &two, MaxRetries: &two, RetryDelay: &delay},
		Tags:        map[string]any{"team": "qa"}, Meta: map[string]any{"ci": map[string]any{"job": 7}}})
	one("CreateSimpleEvaluation", memberNamed("evaluation", sim), err)
	if err == nil && !dynamic {
		body := rec.lastRequestBody()
		for _, want := range []string{`"evaluator_steps":{"` + id3 + `":"auto"}`, `"flags":{"is_split":true}`, `"repeats":3`} {
			if !contains(body, want) {
				t.Errorf("CreateSimpleEvaluation: request lacks %s: %s", want, body)
			}
		}
	}
	sim, err = c.FetchSimpleEvaluation(ctx, id1)
	one("FetchSimpleEvaluation", memberNamed("evaluation", sim), err)
	sim, err = c.StopSimpleEvaluation(ctx, id1)
	one("StopSimpleEvaluation", memberNamed("evaluation", sim), err)
	run, err := c.FetchRun(ctx, id1)
	one("FetchRun", memberNamed("run", run), err)

	scenarios, err := contractDrain(c.QueryScenarios(ctx, models.RunScenarioQuery{RunID: id1, IDs: []string{id2}, Statuses: []models.RunStatus{models.RunSuccess}, PageSize: 1000}))
	one("QueryScenarios", rowsNamed("scenarios", scenarios), err)
	results, err := contractDrain(c.QueryResults(ctx, models.RunResultQuery{RunID: id1, ScenarioIDs: []string{id2}, StepKeys: []string{"application-x"},
		RepeatIdxs: []int{0}, Statuses: []models.RunStatus{models.RunFailure}, PageSize: 1000}))
	one("QueryResults", rowsNamed("results", results), err)
	metrics, err := contractDrain(c.QueryMetrics(ctx, models.RunMetricsQuery{RunID: id1, ScenarioIDs: []string{id2}, PageSize: 1000}))
	one("QueryMetrics", rowsNamed("metrics", metrics), err)
	refreshed, err := c.RefreshMetrics(ctx, id1)
	one("RefreshMetrics", rowsNamed("metrics", refreshed), err)

	trace, err := c.FetchTrace(ctx, tr)
	one("FetchTrace", memberNamed("trace", trace), err)
	span, err := c.FetchSpan(ctx, tr, "e83a8870d467ca3d")
	one("FetchSpan", memberNamed("span", span), err)
}

// contract2026CheckDetector proves the test can fail: a query whose run_id
// is no UUID must come back as a 422 with a request violation.
func contract2026CheckDetector(t *testing.T, p *prismServer) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.baseURL+"/evaluations/scenarios/query",
		strings.NewReader(`{"scenario":{"run_id":"not-a-uuid"}}`))
	req.Header.Set("Authorization", testKey)
	req.Header.Set("Content-Type", "application/json")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err, "violation detector")
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if req, _ := contractViolations(resp.Header.Get("sl-violations")); resp.StatusCode != http.StatusUnprocessableEntity || len(req) == 0 {
		t.Fatalf("a run_id that is no UUID: got %d with violations %q; want 422 with a request violation, or the contract test proves nothing",
			resp.StatusCode, resp.Header.Get("sl-violations"))
	}
}

// contract2026PrismFailed reports prism's own failure to make an answer.
func contract2026PrismFailed(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusInternalServerError &&
		strings.Contains(string(apiErr.Body), "stoplight.io/prism/errors")
}

// contract2026Documented reports the errors the SDK documents for answers
// that break the envelope's rules, which Prism's random answers can do.
func contract2026Documented(err error) bool {
	var de *DecodeError
	var nf *NotFoundError
	var nc *NotCreatedError
	if errors.As(err, &nf) || errors.As(err, &nc) {
		return true
	}
	if !errors.As(err, &de) {
		return false
	}
	for _, s := range []string{`"count"`, "could loop", "would loop"} {
		if contains(de.Error(), s) {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && stringIndex(s, sub) >= 0
}

func stringIndex(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// member wraps an application revision as its envelope holds it, so that
// contractCheckFaithful compares it with the whole answer.
func member(rev *models.ApplicationRevision) any { return memberNamed("application_revision", rev) }

func memberNamed[T any](name string, v *T) any {
	if v == nil {
		return nil
	}
	return map[string]any{name: v}
}

func rowsNamed[T any](name string, rows []T) any {
	if rows == nil {
		rows = []T{}
	}
	return map[string]any{name: rows}
}

func contractDrain[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// contract2026Faithful is contractCheckFaithful, after reading the step
// sets of the answer as the SDK does: the list form of a step set is the
// map of each revision id to origin "custom", as the service reads it.
func contract2026Faithful(t *testing.T, rec *contractRecorder, op string, v any) {
	t.Helper()
	ex := rec.last()
	var doc map[string]any
	if err := contractDecodeNumbers(ex.responseBody, &doc); err == nil {
		if ev, ok := doc["evaluation"].(map[string]any); ok {
			if data, ok := ev["data"].(map[string]any); ok {
				for _, set := range []string{"query_steps", "testset_steps", "application_steps", "evaluator_steps"} {
					if list, ok := data[set].([]any); ok {
						m := map[string]any{}
						for _, id := range list {
							m[fmt.Sprint(id)] = "custom"
						}
						data[set] = m
					}
				}
				normalised, _ := json.Marshal(doc)
				saved := ex.responseBody
				ex.responseBody = normalised
				defer func() { ex.responseBody = saved }()
			}
		}
	}
	contractCheckFaithful(t, rec, op, v)
}

// contract2026CheckRowsDecode decodes the rows of a list answer the SDK
// refused for its count, and checks them faithful to the answer.
func contract2026CheckRowsDecode(t *testing.T, rec *contractRecorder, op string) {
	t.Helper()
	var page map[string]json.RawMessage
	if json.Unmarshal(rec.last().responseBody, &page) != nil {
		return
	}
	for name, decode := range map[string]func([]byte) (any, error){
		"testcases": decodeRows[models.Testcase], "scenarios": decodeRows[models.RunScenario],
		"results": decodeRows[models.RunResult], "metrics": decodeRows[models.RunMetrics],
	} {
		if raw, ok := page[name]; ok {
			rows, err := decode(raw)
			if err != nil {
				t.Errorf("%s: the rows of the answer do not decode: %v", op, err)
				return
			}
			contractCheckFaithful(t, rec, op, map[string]any{name: rows, "count": page["count"]})
		}
	}
}

func decodeRows[T any](raw []byte) (any, error) {
	var rows []T
	err := json.Unmarshal(raw, &rows)
	return rows, err
}
