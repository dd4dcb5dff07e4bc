package agenta_test

// The 2024 operations on a 2026 server (evaluations2026.go,
// variants.go): what they send, what they return, and that a Client
// that does not know its server's generation sends exactly what it always
// did.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newEvaluation26 is the 2024 request for the 2026 demo: n runs of its
// variant.
func newEvaluation26(demo agentatest.Demo2026, n int) models.NewEvaluation {
	variants := make([]string, n)
	for i := range variants {
		variants[i] = demo.VariantID
	}
	return models.NewEvaluation{AppID: demo.ApplicationID, VariantIDs: variants, TestsetID: demo.TestsetID,
		EvaluatorConfigIDs: []string{demo.EvaluatorID}, RateLimit: models.DefaultRateLimit()}
}

func TestEvaluationOn2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	require.NoError(t, c.DetectGeneration(ctx))

	created, err := c.CreateEvaluation(ctx, newEvaluation26(demo, 2))
	require.NoError(t, err)
	require.Len(t, created, 2, "a run per variant")
	assert.Len(t, srv.RequestsFor(agentatest.OpCreateSimpleEvaluation), 2, "each run created once")
	assert.NotEqual(t, created[0].ID, created[1].ID)
	for _, ev := range created {
		assert.Equal(t, demo.ApplicationID, ev.AppID)
		assert.Equal(t, []string{demo.VariantID}, ev.VariantIDs)
		assert.Equal(t, []string{demo.RevisionID}, ev.VariantRevisionIDs)
		assert.Equal(t, []string{"1"}, ev.Revisions)
		require.Len(t, ev.VariantNames, 1)
		assert.True(t, strings.HasPrefix(ev.VariantNames[0], "capitals."), "named <app slug>.<variant slug>: %q", ev.VariantNames[0])
		assert.Equal(t, demo.TestsetID, ev.TestsetID)
		assert.Equal(t, "capitals", ev.TestsetName)
		assert.Equal(t, models.EvaluationStatus(models.EvaluationInitialized), ev.Status.EvaluationStatus())
	}

	// The rate limit becomes the run's concurrency: retries, not attempts.
	run, err := c.FetchRun(ctx, created[0].ID)
	require.NoError(t, err)
	require.NotNil(t, run.Data.Concurrency)
	assert.Equal(t, 10, *run.Data.Concurrency.BatchSize)
	assert.Equal(t, 2, *run.Data.Concurrency.MaxRetries, "3 attempts are 2 retries")
	assert.Equal(t, 3.0, *run.Data.Concurrency.RetryDelay)

	var statuses []models.EvaluationStatus
	ev, err := c.WaitEvaluation(ctx, created[0].ID, &agenta.WaitOptions{Interval: 5 * time.Millisecond,
		OnStatus: func(s models.Result) { statuses = append(statuses, s.EvaluationStatus()) }})
	require.NoError(t, err)
	assert.Equal(t, models.EvaluationStatus(models.EvaluationFinished), ev.Status.EvaluationStatus())
	assert.Equal(t, models.EvaluationStatus(models.EvaluationFinished), statuses[len(statuses)-1], "statuses seen: %v", statuses)
	require.Len(t, ev.AggregatedResults, 1)
	config := ev.AggregatedResults[0].EvaluatorConfig
	assert.Equal(t, demo.EvaluatorID, config.ID)
	assert.Equal(t, "Exact capital", config.Name)
	assert.Equal(t, "exact-capital", config.Slug)
	assert.Equal(t, "auto_exact_match", config.EvaluatorKey)
	assert.Equal(t, "agenta:builtin:auto_exact_match:v0", config.URI)
	mean, ok := ev.AggregatedResults[0].Result.Float64()
	assert.True(t, ok && mean == 1, "every capital is right: %+v", ev.AggregatedResults[0].Result)
	require.NotNil(t, ev.AverageLatency)
	assert.Equal(t, models.ResultTypeLatency, ev.AverageLatency.Type)
	require.NotNil(t, ev.AverageCost)
	assert.True(t, ev.AverageCost.Failed(), "the stand-in app reports no cost: %+v", ev.AverageCost)

	status, err := c.FetchEvaluationStatus(ctx, created[0].ID)
	require.NoError(t, err)
	assert.Equal(t, models.EvaluationStatus(models.EvaluationFinished), status.EvaluationStatus())

	scenarios, err := c.FetchEvaluationScenarios(ctx, created[0].ID)
	require.NoError(t, err)
	require.Len(t, scenarios, 5)
	for i, s := range scenarios {
		assert.Equal(t, demo.TestcaseIDs[i], s.TestcaseID, "rows name their test case, in test-set order")
		assert.Equal(t, created[0].ID, s.EvaluationID)
	}
	streamed := collect(t, c.StreamEvaluationScenarios(ctx, created[0].ID))
	assert.Equal(t, scenarios, streamed)
}

// A Client that does not know its server's generation sends the 2024
// requests, as it always did: no probe, and a 2026 server's 404 with a
// word on what to do.
func TestEvaluationOn2026UnknownGeneration(t *testing.T) {
	c, srv, demo := fake26(t)
	_, err := c.CreateEvaluation(ctx26(t), newEvaluation26(demo, 1))
	require.Error(t, err)
	assert.True(t, errors.Is(err, agenta.ErrRouteNotFound), "%v", err)
	for _, r := range srv.Requests() {
		assert.NotContains(t, r.Path, "/evaluations/runs/", "no probe: %s", r.Path)
	}
	assert.Contains(t, err.Error(), "AGENTA_API_GENERATION")
}

// evals.Evaluate, given a Client that does not know its server, detects
// it: the same call runs on either generation.
func TestEvaluateOnEitherGeneration(t *testing.T) {
	t.Run("2026", func(t *testing.T) {
		c, _, demo := fake26(t)
		runs, err := evals.Evaluate(ctx26(t), c, newEvaluation26(demo, 2), &agenta.WaitOptions{Interval: 5 * time.Millisecond})
		require.NoError(t, err)
		require.Len(t, runs, 2)
		report := evals.NewReport(runs[0], runs[1])
		require.NoError(t, report.Check(gate26(t, "Exact capital >= 0.9"), gate26(t, "exact-capital >= 0.9"),
			gate26(t, "worse(Exact capital) <= 0")))
		assert.Equal(t, 5, report.Comparison.PairedByTestcase, "rows paired by test case")
		assert.Equal(t, "their test case", report.Comparison.Pairing())
	})
	t.Run("2024", func(t *testing.T) {
		srv := agentatest.NewTestServer(t)
		demo := agentatest.SeedDemo(srv)
		c := clientFor(t, srv)
		runs, err := evals.Evaluate(ctx26(t), c, models.NewEvaluation{AppID: demo.AppID, VariantIDs: demo.VariantIDs(),
			EvaluatorConfigIDs: []string{demo.ExactMatchID}, TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit()},
			&agenta.WaitOptions{Interval: 5 * time.Millisecond})
		require.NoError(t, err)
		require.Len(t, runs, 2)
		g, err := c.Generation(ctx26(t))
		require.NoError(t, err)
		assert.Equal(t, agenta.Generation2024, g)
	})
}

// The ids a 2024 request names resolve on a 2026 server to the latest
// revisions, or are taken as revision ids; what is none of them, or of
// another application, is refused before any run is created.
func TestCreateEvaluationResolves2026(t *testing.T) {
	c, srv, demo := fake26(t, agentatest.WithGeneration(agentatest.Generation2026))
	ctx := ctx26(t)
	c2026 := clientFor(t, srv, agenta.WithAPIKey(fake26Key), agenta.WithGeneration(agenta.Generation2026))
	_ = c

	byRevision := models.NewEvaluation{AppID: "capitals", VariantIDs: []string{demo.RevisionID}, TestsetID: demo.TestsetRevisionID,
		EvaluatorConfigIDs: []string{demo.EvaluatorRevisionID}, RateLimit: models.DefaultRateLimit()}
	created, err := c2026.CreateEvaluation(ctx, byRevision)
	require.NoError(t, err, "revision ids, and the application's slug")
	require.Len(t, created, 1)
	assert.Equal(t, []string{demo.RevisionID}, created[0].VariantRevisionIDs)

	other := srv.AddApplication2026(agentatest.Application2026{Slug: "other"})
	const unknown = "01a215fe-0000-7000-8000-000000000000"
	before := len(srv.RequestsFor(agentatest.OpCreateSimpleEvaluation))
	for _, tc := range []struct {
		name string
		edit func(*models.NewEvaluation)
		want error
		text string
	}{
		{"unknown variant", func(e *models.NewEvaluation) { e.VariantIDs = []string{unknown} }, agenta.ErrNotFound, "NewEvaluation.VariantIDs[0]"},
		{"unknown test set", func(e *models.NewEvaluation) { e.TestsetID = unknown }, agenta.ErrNotFound, "NewEvaluation.TestsetID"},
		{"unknown evaluator", func(e *models.NewEvaluation) { e.EvaluatorConfigIDs = []string{demo.EvaluatorID, unknown} }, agenta.ErrNotFound, "NewEvaluation.EvaluatorConfigIDs[1]"},
		{"another app's variant", func(e *models.NewEvaluation) { e.VariantIDs = []string{demo.VariantID, other.VariantID} }, agenta.ErrInvalidArgument, "not of NewEvaluation.AppID"},
		{"provider keys", func(e *models.NewEvaluation) {
			e.LMProvidersKeys = models.NewProviderKeys(map[string]string{models.OpenAIAPIKey: "sk-secret-1234567890"})
		}, agenta.ErrInvalidArgument, "vault"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := newEvaluation26(demo, 1)
			tc.edit(&ev)
			created, err := c2026.CreateEvaluation(ctx, ev)
			assert.Nil(t, created)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.want), "want %v, got %v", tc.want, err)
			assert.Contains(t, err.Error(), tc.text)
			assert.NotContains(t, err.Error(), "sk-secret")
		})
	}
	assert.Equal(t, before, len(srv.RequestsFor(agentatest.OpCreateSimpleEvaluation)), "nothing created")
}

// A run after the first that cannot be created: the runs before it are
// returned with the error, which names them.
func TestCreateEvaluationPartly2026(t *testing.T) {
	_, srv, demo := fake26(t)
	c := clientFor(t, srv, agenta.WithAPIKey(fake26Key), agenta.WithGeneration(agenta.Generation2026))
	srv.InjectFault(agentatest.OpCreateSimpleEvaluation, 1, agentatest.Fault{Status: 200, Body: `{"count":1,"evaluation":{"id":"01a215fe-0000-7000-8000-0000000000aa","flags":{},"data":{"status":"pending"}}}`})
	srv.InjectFault(agentatest.OpCreateSimpleEvaluation, 1, agentatest.Fault{Status: 200, Body: `{"count":0}`})
	created, err := c.CreateEvaluation(ctx26(t), newEvaluation26(demo, 3))
	require.Error(t, err)
	assert.True(t, errors.Is(err, agenta.ErrNotCreated), "%v", err)
	require.Len(t, created, 1)
	assert.Equal(t, "01a215fe-0000-7000-8000-0000000000aa", created[0].ID)
	assert.Contains(t, err.Error(), "01a215fe-0000-7000-8000-0000000000aa")
	assert.Contains(t, err.Error(), "(2 of 3)")
	assert.Len(t, srv.RequestsFor(agentatest.OpCreateSimpleEvaluation), 2, "no create after the refused one, none sent twice")
}

// The wait on a 2026 run: no worker, and a run that could not execute.
func TestWaitEvaluation2026(t *testing.T) {
	t.Run("no worker", func(t *testing.T) {
		_, srv, demo := fake26(t)
		c := clientFor(t, srv, agenta.WithAPIKey(fake26Key), agenta.WithGeneration(agenta.Generation2026))
		srv.StopWorker()
		created, err := c.CreateEvaluation(ctx26(t), newEvaluation26(demo, 1))
		require.NoError(t, err)
		ev, err := c.WaitEvaluation(ctx26(t), created[0].ID, &agenta.WaitOptions{Interval: 5 * time.Millisecond, NoWorkerAfter: 50 * time.Millisecond})
		assert.Nil(t, ev)
		require.Error(t, err)
		assert.True(t, errors.Is(err, agenta.ErrNoWorker), "%v", err)
		assert.Contains(t, err.Error(), "no worker is consuming the evaluation queue")
	})
	t.Run("failure", func(t *testing.T) {
		_, srv, demo := fake26(t)
		c := clientFor(t, srv, agenta.WithAPIKey(fake26Key), agenta.WithGeneration(agenta.Generation2026))
		// Two applications in one run: the service marks it failure.
		second := srv.AddApplication2026(agentatest.Application2026{Slug: "second"})
		body := `{"evaluation":{"name":"two","data":{"testset_steps":{"` + demo.TestsetRevisionID + `":"auto"},` +
			`"application_steps":{"` + demo.RevisionID + `":"auto","` + second.RevisionID + `":"auto"},` +
			`"evaluator_steps":{"` + demo.EvaluatorRevisionID + `":"auto"}}}}`
		req, err := http.NewRequest(http.MethodPost, srv.URL()+"/simple/evaluations/", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "ApiKey "+fake26Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var answer struct {
			Evaluation struct{ ID string } `json:"evaluation"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer))
		require.NotEmpty(t, answer.Evaluation.ID)

		ev, err := c.WaitEvaluation(ctx26(t), answer.Evaluation.ID, &agenta.WaitOptions{Interval: 5 * time.Millisecond})
		require.Error(t, err)
		assert.True(t, errors.Is(err, agenta.ErrEvaluationFailed), "%v", err)
		var failed *agenta.EvaluationFailedError
		require.True(t, errors.As(err, &failed))
		assert.Equal(t, models.EvaluationStatus(models.EvaluationFailed), failed.Status)
		require.NotNil(t, ev)
		assert.Equal(t, models.EvaluationStatus(models.EvaluationFailed), ev.Status.EvaluationStatus())
		report := evals.NewReport(evals.Run{}, evals.Run{Evaluation: *ev})
		require.Error(t, report.Check(gate26(t, "Exact capital >= 0")), "a failed run fails every gate")
	})
}

// A run that ends success while its traces are missing: the outputs are
// missing, never empty, and the verdict rules count them against the
// candidate.
func TestTracingDownFailsGates2026(t *testing.T) {
	_, srv, demo := fake26(t)
	c := clientFor(t, srv, agenta.WithAPIKey(fake26Key))
	srv.StopTracing()
	runs, err := evals.Evaluate(ctx26(t), c, newEvaluation26(demo, 1), &agenta.WaitOptions{Interval: 5 * time.Millisecond})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, models.EvaluationStatus(models.EvaluationFinished), runs[0].Evaluation.Status.EvaluationStatus(), "the run ended success")
	require.Len(t, runs[0].Scenarios, 5)
	for _, s := range runs[0].Scenarios {
		out, ok := s.Output()
		require.True(t, ok)
		assert.Equal(t, models.ResultTypeMissing, out.Result.Type)
		msg, failed := s.AppError()
		assert.True(t, failed)
		assert.Contains(t, msg, "output missing")
	}
	report := evals.NewReport(evals.Run{}, runs[0])
	err = report.Check(gate26(t, "Exact capital >= 0.5"), gate26(t, "app_errors <= 0"))
	require.Error(t, err, "gates fail on missing evidence")
	assert.True(t, errors.Is(err, evals.ErrGateFailed))
}

// The variant operations on a 2026 server, as agenta variant and the CI
// recipe use them.
func TestVariants2026(t *testing.T) {
	_, srv, demo := fake26(t)
	c := clientFor(t, srv, agenta.WithAPIKey(fake26Key), agenta.WithGeneration(agenta.Generation2026))
	ctx := ctx26(t)

	v, err := c.GetVariant(ctx, demo.VariantID)
	require.NoError(t, err)
	assert.Equal(t, demo.VariantID, v.VariantID)
	assert.Equal(t, demo.ApplicationID, v.AppID)
	assert.Equal(t, "capitals", v.AppName)
	assert.Equal(t, demo.ApplicationID, v.BaseID, "an application is its own base")
	assert.Equal(t, 1, v.Revision)
	assert.Equal(t, 0.7, v.Parameters["temperature"])

	_, err = c.GetVariantByEnvironment(ctx, demo.ApplicationID, models.EnvironmentProduction)
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "nothing deployed yet: %v", err)
	srv.Deploy2026(demo.RevisionID, models.EnvironmentProduction)
	prod, err := c.GetVariantByEnvironment(ctx, demo.ApplicationID, models.EnvironmentProduction)
	require.NoError(t, err)
	assert.Equal(t, demo.VariantID, prod.VariantID)

	for name, base := range map[string]string{"from the application": demo.ApplicationID, "from a variant": demo.VariantID} {
		slug := "pr-" + strings.ReplaceAll(name, " ", "-")
		fork, err := c.AddVariantFromBase(ctx, models.AddVariantFromBase{BaseID: base, NewVariantName: slug, NewConfigName: slug,
			Parameters: map[string]any{"temperature": 0}})
		require.NoError(t, err, name)
		assert.Equal(t, "capitals."+slug, fork.VariantName)
		assert.Len(t, fork.Parameters, 1, "exactly the parameters given: %v", fork.Parameters)
		assert.Equal(t, "0", fmt.Sprint(fork.Parameters["temperature"]))
		assert.Equal(t, "http://127.0.0.1:19080", fork.URI, "the base's URL kept")
		again, err := c.GetVariant(ctx, fork.VariantID)
		require.NoError(t, err)
		assert.Equal(t, fork.Revision, again.Revision)
	}
	_, err = c.AddVariantFromBase(ctx, models.AddVariantFromBase{BaseID: "01a215fe-0000-7000-8000-000000000000", NewVariantName: "x", NewConfigName: "x"})
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "%v", err)
	assert.Contains(t, err.Error(), "BaseID")
}

// gate26 parses a gate the test knows to be well formed.
func gate26(t *testing.T, spec string) evals.Gate {
	t.Helper()
	g, err := evals.ParseGate(spec)
	require.NoError(t, err)
	return g
}

// evals.Evaluate stops the runs it gives up on where the server can: a
// 2026 server is asked to stop each (issue 26), a mid-2024 one says it
// cannot, once.
func TestEvaluateStopsRunsOnCancel(t *testing.T) {
	c, srv, demo := fake26(t, agentatest.WithManualEvaluations())
	ctx, cancel := context.WithCancel(ctx26(t))
	req := models.NewEvaluation{AppID: demo.ApplicationID, VariantIDs: []string{demo.VariantID, demo.VariantID},
		TestsetID: demo.TestsetID, EvaluatorConfigIDs: []string{demo.EvaluatorID}, RateLimit: models.DefaultRateLimit()}
	runs, err := evals.EvaluateWith(ctx, c, req, evals.EvaluateOptions[*agenta.WaitOptions]{
		Created: func([]models.Evaluation) { cancel() },
	})
	var runErr *evals.RunError
	require.ErrorAs(t, err, &runErr)
	require.Len(t, runs, 2)
	assert.Equal(t, []string{runs[0].Evaluation.ID, runs[1].Evaluation.ID}, runErr.Stopped)
	assert.Empty(t, runErr.Unfinished)
	assert.Len(t, srv.RequestsFor(agentatest.OpStopSimpleEvaluation), 2)
	assert.Contains(t, err.Error(), "asked the service to stop evaluations")

	srv24 := agentatest.NewTestServer(t, agentatest.WithManualEvaluations())
	d := agentatest.SeedDemo(srv24)
	c24 := clientFor(t, srv24)
	ctx, cancel = context.WithCancel(ctx26(t))
	_, err = evals.EvaluateWith(ctx, c24, models.NewEvaluation{AppID: d.AppID, VariantIDs: []string{d.VariantID, d.VerboseVariantID},
		TestsetID: d.TestsetID, EvaluatorConfigIDs: d.EvaluatorConfigIDs(), RateLimit: models.DefaultRateLimit()},
		evals.EvaluateOptions[*agenta.WaitOptions]{Created: func([]models.Evaluation) { cancel() }})
	require.ErrorAs(t, err, &runErr)
	assert.Len(t, runErr.Unfinished, 2)
	assert.Empty(t, runErr.Stopped)
	assert.ErrorIs(t, runErr.StopErr, agenta.ErrCannotStop)
	assert.Equal(t, 1, strings.Count(err.Error(), "no route to stop"), err.Error())
}

// Issue 26: a 401 from a 2026 server to a client that did not know its
// API named the 2024 route it was sent to, and nothing more; it now says
// why that route was sent and what to do.
func TestUnauthorizedNamesTheRouteSent2026(t *testing.T) {
	_, srv, demo := fake26(t)
	c := clientFor(t, srv, agenta.WithAPIKey("ApiKey wrong"))
	_, err := c.CreateEvaluation(ctx26(t), models.NewEvaluation{AppID: demo.ApplicationID, VariantIDs: []string{demo.VariantID},
		TestsetID: demo.TestsetID, EvaluatorConfigIDs: []string{demo.EvaluatorID}, RateLimit: models.DefaultRateLimit()})
	require.ErrorIs(t, err, agenta.ErrUnauthorized)
	assert.Contains(t, err.Error(), "POST /api/evaluations: 401 Unauthorized")
	assert.Contains(t, err.Error(), "the request above is the mid-2024 one, sent because the client did not know the server's API")

	// Told the generation, the route named is the 2026 one, without the note.
	c = clientFor(t, srv, agenta.WithAPIKey("ApiKey wrong"), agenta.WithGeneration(agenta.Generation2026))
	_, err = c.CreateEvaluation(ctx26(t), models.NewEvaluation{AppID: demo.ApplicationID, VariantIDs: []string{demo.VariantID},
		TestsetID: demo.TestsetID, EvaluatorConfigIDs: []string{demo.EvaluatorID}, RateLimit: models.DefaultRateLimit()})
	require.ErrorIs(t, err, agenta.ErrUnauthorized)
	assert.NotContains(t, err.Error(), "POST /api/evaluations:")
	assert.NotContains(t, err.Error(), "mid-2024 one")
}
