package agenta

import (
	"context"
	"github.com/agenta-go/agenta/internal/text"
	"iter"
	"net/http"
	"strconv"

	"github.com/agenta-go/agenta/models"
)

// The evaluation operations of the 2026 API: a simple evaluation is a run
// of one application revision over a test-set revision, judged by
// evaluator revisions; its rows are scenarios, its cells results, and its
// metrics rows summarise them. The evaluation's id is the run's id.

// CreateSimpleEvaluation starts a run and returns it as created, with
// Data.Status "pending": the service's worker picks it up, and its first
// read (FetchRun) already says running. Follow it with WaitRun.
//
// Every id is a revision id: of a test set (RetrieveTestsetRevision), of
// one application (RetrieveApplicationRevision) and of each evaluator
// (RetrieveEvaluatorRevision). The service answers a wrong or unknown id,
// an empty test set and a test set with empty rows alike, with {"count":0}:
// a *NotCreatedError (ErrNotCreated). Each step is sent with origin "auto",
// the only one the service's worker runs.
//
// Creating is not idempotent: it is retried only on 429 or when the
// connection failed before anything was sent, so a run is never started
// twice by the SDK. After another failure once the request was sent, the
// run may exist.
func (c *Client) CreateSimpleEvaluation(ctx context.Context, e models.SimpleEvaluationCreate) (*models.SimpleEvaluation, error) {
	if err := checkSimpleEvaluation(e); err != nil {
		return nil, err
	}
	a, err := created[simpleEvaluationAnswer](ctx, c, &request{operation: "CreateSimpleEvaluation",
		method: http.MethodPost, path: "/simple/evaluations/", body: e},
		"the evaluation", "an id that is not a revision id of its kind (a test set's, variant's or evaluator's own id instead of its revision's), an unknown id, an empty test set, or a test set with empty rows")
	if err != nil {
		return nil, err
	}
	return a.Evaluation, nil
}

func checkSimpleEvaluation(e models.SimpleEvaluationCreate) error {
	if err := required("SimpleEvaluationCreate.TestsetRevisionID", "data.testset_steps", e.TestsetRevisionID); err != nil {
		return err
	}
	if err := required("SimpleEvaluationCreate.ApplicationRevisionID", "data.application_steps", e.ApplicationRevisionID); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, id := range e.EvaluatorRevisionIDs {
		name := "SimpleEvaluationCreate.EvaluatorRevisionIDs[" + strconv.Itoa(i) + "]"
		if err := required(name, "data.evaluator_steps", id); err != nil {
			return err
		}
		if seen[id] {
			return invalidField(name, "data.evaluator_steps", "repeats %q: each evaluator revision runs once per row", text.Clip(id, maxMessage))
		}
		seen[id] = true
	}
	if e.Repeats < 0 {
		return invalidField("SimpleEvaluationCreate.Repeats", "data.repeats", "must not be negative, got %d", e.Repeats)
	}
	if cc := e.Concurrency; cc != nil {
		if cc.BatchSize != nil && *cc.BatchSize < 1 {
			return invalidField("SimpleEvaluationCreate.Concurrency.BatchSize", "data.concurrency.batch_size", "must be at least 1, got %d", *cc.BatchSize)
		}
		if cc.MaxRetries != nil && *cc.MaxRetries < 0 {
			return invalidField("SimpleEvaluationCreate.Concurrency.MaxRetries", "data.concurrency.max_retries", "must not be negative, got %d", *cc.MaxRetries)
		}
		if cc.RetryDelay != nil && !(*cc.RetryDelay >= 0) {
			return invalidField("SimpleEvaluationCreate.Concurrency.RetryDelay", "data.concurrency.retry_delay", "must be a number of seconds, not negative, got %v", *cc.RetryDelay)
		}
	}
	return nil
}

// FetchSimpleEvaluation reads a simple evaluation, the run as the
// /simple/evaluations routes show it; an unknown id is a *NotFoundError
// (ErrNotFound).
func (c *Client) FetchSimpleEvaluation(ctx context.Context, evaluationID string) (*models.SimpleEvaluation, error) {
	id, err := segment("evaluationID", "evaluation_id", evaluationID)
	if err != nil {
		return nil, err
	}
	a, err := lookup[simpleEvaluationAnswer](ctx, c, &request{operation: "FetchSimpleEvaluation",
		method: http.MethodGet, path: "/simple/evaluations/" + id}, "evaluation "+evaluationID)
	if err != nil {
		return nil, err
	}
	return a.Evaluation, nil
}

// StopSimpleEvaluation marks a run inactive (Flags.IsActive false) and
// returns it. On v0.113 that is all it does: a run already executing goes
// on to the end and finishes success or errors, and its status is never
// cancelled. An unknown id is a *NotFoundError (ErrNotFound).
func (c *Client) StopSimpleEvaluation(ctx context.Context, evaluationID string) (*models.SimpleEvaluation, error) {
	id, err := segment("evaluationID", "evaluation_id", evaluationID)
	if err != nil {
		return nil, err
	}
	// A stop is a write, retried as a create is (only when nothing was
	// sent): an attempt whose answer was lost may have stopped the run,
	// and a later server may refuse a second stop of a closed run.
	a, err := lookup[simpleEvaluationAnswer](ctx, c, &request{operation: "StopSimpleEvaluation",
		method: http.MethodPost, path: "/simple/evaluations/" + id + "/stop"}, "evaluation "+evaluationID)
	if err != nil {
		return nil, err
	}
	return a.Evaluation, nil
}

// FetchRun reads a run with its status, flags and steps; an unknown id is
// a *NotFoundError (ErrNotFound). The read is about 2 kB.
func (c *Client) FetchRun(ctx context.Context, runID string) (*models.EvaluationRun, error) {
	id, err := segment("runID", "run_id", runID)
	if err != nil {
		return nil, err
	}
	a, err := lookup[runAnswer](ctx, c, &request{operation: "FetchRun",
		method: http.MethodGet, path: "/evaluations/runs/" + id}, "run "+runID)
	if err != nil {
		return nil, err
	}
	return a.Run, nil
}

// QueryScenarios yields a run's scenarios (its rows) in id order, one page
// of q.PageSize at a time, so memory stays flat whatever the run's size.
// Id order is not test-set order: pair rows by their results' TestcaseID.
// q.RunID is required (without it the service answers every scenario of
// the project). A refused query or a failed request ends the sequence with
// its error; a page whose count is not its length, or whose ids do not
// follow the last page's, is a *DecodeError, never a shorter list.
func (c *Client) QueryScenarios(ctx context.Context, q models.RunScenarioQuery) iter.Seq2[models.RunScenario, error] {
	limit, err := checkRunQuery("RunScenarioQuery", q.RunID, q.PageSize)
	if err != nil {
		return failed[models.RunScenario](err)
	}
	return idPages[models.RunScenario, scenariosPage](ctx, c, limit, func(w windowing) *request {
		return &request{operation: "QueryScenarios", method: http.MethodPost, path: "/evaluations/scenarios/query",
			body: scenariosQueryBody{q, w}, read: true}
	}, func(s *models.RunScenario) string { return s.ID })
}

// QueryResults yields a run's cells (scenario × step × repeat) in id order,
// paged as QueryScenarios pages. q.RunID is required.
func (c *Client) QueryResults(ctx context.Context, q models.RunResultQuery) iter.Seq2[models.RunResult, error] {
	limit, err := checkRunQuery("RunResultQuery", q.RunID, q.PageSize)
	if err != nil {
		return failed[models.RunResult](err)
	}
	return idPages[models.RunResult, resultsPage](ctx, c, limit, func(w windowing) *request {
		return &request{operation: "QueryResults", method: http.MethodPost, path: "/evaluations/results/query",
			body: resultsQueryBody{q, w}, read: true}
	}, func(r *models.RunResult) string { return r.ID })
}

// QueryMetrics yields a run's metrics rows (one per scenario and one for
// the whole run) in id order, paged as QueryScenarios pages. q.RunID is
// required. The metrics count rows whose application call failed and can
// lack rows under load: judge a run by its rows (StreamRunScenarios).
func (c *Client) QueryMetrics(ctx context.Context, q models.RunMetricsQuery) iter.Seq2[models.RunMetrics, error] {
	limit, err := checkRunQuery("RunMetricsQuery", q.RunID, q.PageSize)
	if err != nil {
		return failed[models.RunMetrics](err)
	}
	return idPages[models.RunMetrics, metricsPage](ctx, c, limit, func(w windowing) *request {
		return &request{operation: "QueryMetrics", method: http.MethodPost, path: "/evaluations/metrics/query",
			body: metricsQueryBody{q, w}, read: true}
	}, func(m *models.RunMetrics) string { return m.ID })
}

// RefreshMetrics makes the service compute a run's whole-run metrics row
// again, and returns the rows it wrote: none when there was nothing to
// compute (an unknown run, or traces not ingested yet).
func (c *Client) RefreshMetrics(ctx context.Context, runID string) ([]models.RunMetrics, error) {
	if err := required("runID", "run_id", runID); err != nil {
		return nil, err
	}
	// Refreshing again computes the same row: it may be retried.
	r := &request{operation: "RefreshMetrics", method: http.MethodPost, path: "/evaluations/metrics/refresh",
		body: metricsRefreshBody{Metrics: runRef{RunID: runID}}, read: true}
	a, err := getOne[metricsPage](ctx, c, r)
	if err != nil {
		return nil, err
	}
	if err := c.checkCount(r, a, a.Count, len(a.Metrics)); err != nil {
		return nil, err
	}
	if a.Metrics == nil {
		a.Metrics = []models.RunMetrics{}
	}
	return a.Metrics, nil
}

// checkRunQuery checks a query's run id and page size.
func checkRunQuery(query, runID string, size int) (int, error) {
	if err := required(query+".RunID", "run_id", runID); err != nil {
		return 0, err
	}
	return pageSize(query+".PageSize", size)
}

type simpleEvaluationAnswer struct {
	Count      *int                     `json:"count,omitempty"`
	Evaluation *models.SimpleEvaluation `json:"evaluation,omitempty"`
}

func (a *simpleEvaluationAnswer) member() (*int, bool) { return a.Count, a.Evaluation != nil }

type runAnswer struct {
	Count *int                  `json:"count,omitempty"`
	Run   *models.EvaluationRun `json:"run,omitempty"`
}

func (a *runAnswer) member() (*int, bool) { return a.Count, a.Run != nil }

type scenariosQueryBody struct {
	Scenario  models.RunScenarioQuery `json:"scenario"`
	Windowing windowing               `json:"windowing"`
}

type resultsQueryBody struct {
	Result    models.RunResultQuery `json:"result"`
	Windowing windowing             `json:"windowing"`
}

type metricsQueryBody struct {
	Metrics   models.RunMetricsQuery `json:"metrics"`
	Windowing windowing              `json:"windowing"`
}

type runRef struct {
	RunID string `json:"run_id"`
}

type metricsRefreshBody struct {
	Metrics runRef `json:"metrics"`
}

type scenariosPage struct {
	Count     *int                 `json:"count,omitempty"`
	Scenarios []models.RunScenario `json:"scenarios"`
}

func (p *scenariosPage) rows() (*int, []models.RunScenario) { return p.Count, p.Scenarios }

type resultsPage struct {
	Count   *int               `json:"count,omitempty"`
	Results []models.RunResult `json:"results"`
}

func (p *resultsPage) rows() (*int, []models.RunResult) { return p.Count, p.Results }

type metricsPage struct {
	Count   *int                `json:"count,omitempty"`
	Metrics []models.RunMetrics `json:"metrics"`
}

func (p *metricsPage) rows() (*int, []models.RunMetrics) { return p.Count, p.Metrics }
