package agenta_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func createRun(t *testing.T, c *agenta.Client, e models.SimpleEvaluationCreate) *models.SimpleEvaluation {
	t.Helper()
	run, err := c.CreateSimpleEvaluation(ctx26(t), e)
	require.NoError(t, err)
	return run
}

func TestRunLifecycle2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	created := createRun(t, c, models.SimpleEvaluationCreate{Name: "basic", TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	assert.Equal(t, models.RunPending, created.Data.Status, "create answers pending")
	assert.False(t, created.Flags.IsActive)
	assert.Equal(t, map[string]string{demo.EvaluatorRevisionID: "auto"}, created.Data.EvaluatorSteps)
	body := string(srv.RequestsFor(agentatest.OpCreateSimpleEvaluation)[0].Body)
	assert.Contains(t, body, `"evaluator_steps":{"`+demo.EvaluatorRevisionID+`":"auto"}`, "steps are sent as maps with origin auto")
	assert.NotContains(t, body, `"status"`, "no data.status: the server's worker runs it")

	first, err := c.FetchRun(ctx, created.ID)
	require.NoError(t, err)
	assert.Equal(t, models.RunRunning, first.Status, "the first read says running")

	var statuses []models.RunStatus
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond,
		OnStatus: func(r models.EvaluationRun) { statuses = append(statuses, r.Status) }})
	require.NoError(t, err)
	assert.Equal(t, models.RunSuccess, run.Status)
	assert.False(t, run.Flags.IsActive)
	assert.Equal(t, models.RunSuccess, statuses[len(statuses)-1])
	require.Len(t, run.Steps(models.StepAnnotation), 1)
	assert.Equal(t, demo.EvaluatorRevisionID, run.Steps(models.StepAnnotation)[0].Revision().ID)

	scenarios := collect(t, c.QueryScenarios(ctx, models.RunScenarioQuery{RunID: run.ID, PageSize: 2}))
	assert.Len(t, scenarios, 5)
	for i := 1; i < len(scenarios); i++ {
		assert.Less(t, scenarios[i-1].ID, scenarios[i].ID, "ascending id order across pages")
	}
	results := collect(t, c.QueryResults(ctx, models.RunResultQuery{RunID: run.ID, PageSize: 4}))
	assert.Len(t, results, 15, "5 rows × (input, invocation, evaluator)")
	byStep := map[string]int{}
	for _, r := range results {
		byStep[strings.SplitN(r.StepKey, "-", 2)[0]]++
		if strings.HasPrefix(r.StepKey, "testset-") {
			assert.Empty(t, r.TraceID, "the input cell has no trace")
		} else {
			assert.NotEmpty(t, r.TraceID)
		}
		assert.NotEmpty(t, r.TestcaseID)
	}
	assert.Equal(t, map[string]int{"testset": 5, "application": 5, "evaluator": 5}, byStep)
	only := collect(t, c.QueryResults(ctx, models.RunResultQuery{RunID: run.ID, ScenarioIDs: []string{scenarios[0].ID, scenarios[1].ID}}))
	assert.Len(t, only, 6)
	metrics := collect(t, c.QueryMetrics(ctx, models.RunMetricsQuery{RunID: run.ID, PageSize: 4}))
	assert.Len(t, metrics, 6, "one row per scenario and the global one")
	var global *models.RunMetrics
	for i := range metrics {
		if metrics[i].ScenarioID == "" {
			global = &metrics[i]
		}
	}
	require.NotNil(t, global)
	stats, err := global.Stats()
	require.NoError(t, err)
	success := stats[run.Steps(models.StepAnnotation)[0].Key]["attributes.ag.data.outputs.success"]
	assert.Equal(t, "binary", success.Type)
	assert.Equal(t, 5, success.Count)
	refreshed, err := c.RefreshMetrics(ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, refreshed, 1)
	assert.Equal(t, global.ID, refreshed[0].ID, "refresh replaces the global row")
	none, err := c.RefreshMetrics(ctx, "0190b606-0000-7000-8000-000000000000")
	require.NoError(t, err)
	assert.Empty(t, none)

	stopped, err := c.StopSimpleEvaluation(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, models.RunSuccess, stopped.Data.Status, "stop keeps a finished run's status")
	again, err := c.FetchSimpleEvaluation(ctx, run.ID)
	require.NoError(t, err)
	assert.False(t, again.Flags.IsActive)
	_, err = c.StopSimpleEvaluation(ctx, "0190b606-0000-7000-8000-000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	_, err = c.FetchRun(ctx, "0190b606-0000-7000-8000-000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))

	// Traces: one, several at once, and a span.
	var traceIDs []string
	for _, r := range results {
		if r.TraceID != "" {
			traceIDs = append(traceIDs, r.TraceID)
		}
	}
	trace, err := c.FetchTrace(ctx, traceIDs[0])
	require.NoError(t, err)
	root, ok := trace.Root()
	require.True(t, ok)
	_, err = c.FetchTrace(ctx, models.NormalizeTraceID(traceIDs[0]))
	require.NoError(t, err, "32 hex digits work too")
	span, err := c.FetchSpan(ctx, trace.TraceID, root.SpanID)
	require.NoError(t, err)
	assert.Equal(t, root.SpanName, span.SpanName)
	_, err = c.FetchSpan(ctx, trace.TraceID, "0000000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	_, err = c.FetchTrace(ctx, "not-a-trace")
	assert.True(t, errors.Is(err, agenta.ErrBadRequest))
	_, err = c.FetchTrace(ctx, "0123456789abcdef0123456789abcdef")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	asked := append(slices.Clone(traceIDs), "0123456789abcdef0123456789abcdef")
	traces := collect(t, c.FetchTraces(ctx, asked))
	assert.Len(t, traces, len(traceIDs), "the unknown trace is left out")
}

func TestRunRefusedArguments2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	ok := models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID, ApplicationRevisionID: demo.RevisionID,
		EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}}
	for name, tc := range map[string]struct {
		mutate func(*models.SimpleEvaluationCreate)
		arg    string
	}{
		"no test set": {func(e *models.SimpleEvaluationCreate) { e.TestsetRevisionID = "" }, "SimpleEvaluationCreate.TestsetRevisionID"},
		"no app":      {func(e *models.SimpleEvaluationCreate) { e.ApplicationRevisionID = " " }, "SimpleEvaluationCreate.ApplicationRevisionID"},
		"duplicate":   {func(e *models.SimpleEvaluationCreate) { e.EvaluatorRevisionIDs = []string{"a", "a"} }, "SimpleEvaluationCreate.EvaluatorRevisionIDs[1]"},
		"repeats":     {func(e *models.SimpleEvaluationCreate) { e.Repeats = -1 }, "SimpleEvaluationCreate.Repeats"},
		"batch": {func(e *models.SimpleEvaluationCreate) {
			zero := 0
			e.Concurrency = &models.RunConcurrency{BatchSize: &zero}
		}, "SimpleEvaluationCreate.Concurrency.BatchSize"},
		"empty evaluator": {func(e *models.SimpleEvaluationCreate) { e.EvaluatorRevisionIDs = []string{""} }, "SimpleEvaluationCreate.EvaluatorRevisionIDs[0]"},
	} {
		e := ok
		tc.mutate(&e)
		_, err := c.CreateSimpleEvaluation(ctx, e)
		requireArg(t, err, tc.arg)
		_ = name
	}
	for _, seq := range []error{
		first(c.QueryScenarios(ctx, models.RunScenarioQuery{})),
		first(c.QueryResults(ctx, models.RunResultQuery{RunID: "r", PageSize: -1})),
		first(c.QueryMetrics(ctx, models.RunMetricsQuery{})),
		first(c.FetchTraces(ctx, nil)),
		first(c.StreamRunRows(ctx, "", nil)),
	} {
		assert.True(t, errors.Is(seq, agenta.ErrInvalidArgument), "got %v", seq)
	}
	assert.Empty(t, srv.RequestsFor(agentatest.OpCreateSimpleEvaluation), "nothing was sent")

	// Ids of the wrong kind: the service's {"count":0}, a *NotCreatedError.
	for name, e := range map[string]models.SimpleEvaluationCreate{
		"test set id":      {TestsetRevisionID: demo.TestsetID, ApplicationRevisionID: demo.RevisionID},
		"variant id":       {TestsetRevisionID: demo.TestsetRevisionID, ApplicationRevisionID: demo.VariantID},
		"evaluator id":     {TestsetRevisionID: demo.TestsetRevisionID, ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorID}},
		"unknown revision": {TestsetRevisionID: demo.TestsetRevisionID, ApplicationRevisionID: "0190b606-0000-7000-8000-000000000000"},
	} {
		_, err := c.CreateSimpleEvaluation(ctx, e)
		assert.True(t, errors.Is(err, agenta.ErrNotCreated), "%s: %v", name, err)
		assert.Contains(t, err.Error(), "could not create the evaluation", name)
	}
	// A create is never sent twice.
	srv.InjectFault(agentatest.OpCreateSimpleEvaluation, 1, agentatest.Fault{Status: 502})
	before := len(srv.RequestsFor(agentatest.OpCreateSimpleEvaluation))
	_, err := c.CreateSimpleEvaluation(ctx, ok)
	assert.True(t, errors.Is(err, agenta.ErrServer))
	assert.Len(t, srv.RequestsFor(agentatest.OpCreateSimpleEvaluation), before+1)
}

func TestRunRowsFailingRows2026(t *testing.T) {
	c, _, demo := fake26(t)
	ctx := ctx26(t)
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.ErrTestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond})
	require.NoError(t, err, "a run with failed rows ends errors, which is no error")
	assert.Equal(t, models.RunErrors, run.Status)

	rows := collect(t, c.StreamRunRows(ctx, run.ID, &agenta.RunRowsOptions{PageSize: 2}))
	require.Len(t, rows, 5)
	byCountry := map[string]models.RunRow{}
	for _, row := range rows {
		country, _ := row.Scenario.Input("country")
		byCountry[country] = row
		assert.NotEmpty(t, row.TestcaseID)
		assert.Equal(t, run.ID, row.Scenario.EvaluationID)
		_, hasDedup := row.Scenario.Input(models.TestcaseDedupKey)
		assert.False(t, hasDedup, "the dedup column is no input")
		_, hasAnswer := row.Scenario.Input("correct_answer")
		assert.False(t, hasAnswer, "the expected answer is no input")
	}
	assert.Equal(t, "Paris", byCountry["France"].Scenario.OutputText())
	assert.Equal(t, "Paris", byCountry["France"].Scenario.ExpectedAnswer())
	v, _ := byCountry["France"].Scenario.Results[0].Result.Bool()
	assert.True(t, v)
	assert.Equal(t, demo.EvaluatorID, byCountry["France"].Scenario.Results[0].EvaluatorConfig, "results are keyed by the evaluator's id")
	italy, _ := byCountry["Italy"].Scenario.Results[0].Result.Bool()
	assert.False(t, italy, "Rome is not Naples")
	for _, name := range []string{"ERRland", "ERRor2"} {
		row := byCountry[name]
		assert.True(t, row.Scenario.Failed(), name)
		msg, _ := row.Scenario.AppError()
		assert.Equal(t, "stand-in app error for "+name, msg)
		assert.True(t, row.Scenario.Results[0].Result.Failed(), "an evaluator does not judge a failed call")
		assert.Equal(t, models.RunErrors, row.Status)
	}
	latency, ok := byCountry["France"].Scenario.Latency()
	assert.True(t, ok)
	assert.Greater(t, latency, 0.0)
	_, hasCost := byCountry["France"].Scenario.Cost()
	assert.False(t, hasCost, "the stand-in app reports no cost")

	plain := collect(t, c.StreamRunScenarios(ctx, run.ID))
	assert.Len(t, plain, 5)
}

func TestRunRowsRepeats2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	for _, split := range []bool{false, true} {
		created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID, Repeats: 3, Split: split,
			ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
		_, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond})
		require.NoError(t, err)
		results := collect(t, c.QueryResults(ctx, models.RunResultQuery{RunID: created.ID}))
		apps := 5
		if split {
			apps = 15
		}
		assert.Len(t, results, 15+apps+15, "split=%v: input and evaluator cells ×3, the application ×%d", split, apps/5)
		rows := collect(t, c.StreamRunRows(ctx, created.ID, nil))
		require.Len(t, rows, 15)
		repeats := map[string][]int{}
		for _, row := range rows {
			repeats[row.TestcaseID] = append(repeats[row.TestcaseID], row.RepeatIdx)
			assert.Equal(t, row.RepeatIdx > 0, strings.Contains(row.Scenario.ID, "#"), row.Scenario.ID)
			assert.Len(t, row.Scenario.Results, 1)
		}
		for _, r := range repeats {
			assert.Equal(t, []int{0, 1, 2}, r)
		}
	}
	assert.Contains(t, string(srv.RequestsFor(agentatest.OpCreateSimpleEvaluation)[1].Body), `"is_split":true`)
}

func TestRunRowsTracingDown2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	srv.StopTracing()
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, models.RunSuccess, run.Status, "the run succeeds while its traces are missing")
	assert.Empty(t, collect(t, c.QueryMetrics(ctx, models.RunMetricsQuery{RunID: run.ID})), "and has no metrics")

	rows := collect(t, c.StreamRunRows(ctx, run.ID, &agenta.RunRowsOptions{TraceRetryWait: -1}))
	require.Len(t, rows, 5)
	for _, row := range rows {
		out, ok := row.Scenario.Output()
		require.True(t, ok)
		assert.Equal(t, models.ResultTypeMissing, out.Result.Type, "a missing trace is a missing output")
		assert.True(t, out.Result.Failed(), "it counts against the row")
		assert.Contains(t, out.Result.Error.Message, "output missing")
		assert.Empty(t, row.Scenario.OutputText(), "and never reads as an answer")
		require.Len(t, row.Scenario.Results, 1)
		assert.True(t, row.Scenario.Results[0].Result.Failed())
	}

	srv.StartTracing()
	rows = collect(t, c.StreamRunRows(ctx, run.ID, nil))
	for _, row := range rows {
		assert.False(t, row.Scenario.Failed(), "the backlog was ingested: %s", row.Scenario.InputsText())
	}
	refreshed, err := c.RefreshMetrics(ctx, run.ID)
	require.NoError(t, err)
	assert.Len(t, refreshed, 1, "refresh writes the global row once traces are in")
}

func TestRunRowsUnreachableApplication2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	app := srv.AddApplication2026(agentatest.Application2026{Slug: "down", URL: "http://127.0.0.1:1",
		Application: func(map[string]any, map[string]string) (string, error) { return "", agentatest.ErrUnreachable }})
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: app.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, models.RunErrors, run.Status)
	results := collect(t, c.QueryResults(ctx, models.RunResultQuery{RunID: run.ID}))
	assert.Len(t, results, 5, "input cells only")
	for _, row := range collect(t, c.StreamRunRows(ctx, run.ID, nil)) {
		msg, failed := row.Scenario.AppError()
		assert.True(t, failed)
		assert.Contains(t, msg, "recorded no result for the application call")
	}
}
