package agenta_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
) // WaitEvaluation against agentatest, which runs evaluations in the
// background as the mid-2024 service does: the lifecycle end to end, a run
// that fails, and a run no worker picks up.

func fakeClient(t *testing.T, opts ...agentatest.Option) (*agenta.Client, *agentatest.Server, agentatest.Demo) {
	t.Helper()
	srv := agentatest.NewServer(opts...)
	t.Cleanup(srv.Close)
	demo := agentatest.SeedDemo(srv)
	return clientFor(t, srv), srv, demo
}

func fakeCreate(t *testing.T, c *agenta.Client, demo agentatest.Demo, testsetID string) string {
	t.Helper()
	created, err := c.CreateEvaluation(context.Background(), models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID}, TestsetID: testsetID,
		RateLimit: models.DefaultRateLimit(),
	})
	require.NoError(t, err)
	require.Len(t, created, 1)
	assert.Equal(t, models.EvaluationInitialized, created[0].State(), "create answers INITIALIZED")
	return created[0].ID
}

func TestWaitEvaluationOnTheFake(t *testing.T) {
	c, srv, demo := fakeClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := fakeCreate(t, c, demo, demo.TestsetID)
	srv.ResetRequests()

	var seen []models.EvaluationStatus
	ev, err := c.WaitEvaluation(ctx, id, &agenta.WaitOptions{
		Interval: 5 * time.Millisecond,
		OnStatus: func(r models.Result) { seen = append(seen, r.EvaluationStatus()) },
	})

	require.NoError(t, err)
	assert.Equal(t, models.EvaluationFinished, ev.State())
	assert.NotEmpty(t, ev.AggregatedResults, "the evaluation comes with its aggregates")
	require.NotEmpty(t, seen)
	assert.Equal(t, models.EvaluationStatus(models.EvaluationFinished), seen[len(seen)-1], "the last status seen")
	order := map[models.EvaluationStatus]int{models.EvaluationInitialized: 0, models.EvaluationStarted: 1, models.EvaluationFinished: 2}
	for i := 1; i < len(seen); i++ {
		assert.Less(t, order[seen[i-1]], order[seen[i]], "statuses in order: %v", seen)
	}
	assert.Empty(t, srv.RequestsFor(agentatest.OpFetchEvaluationScenarios), "the wait reads no scenario list")
	assert.Len(t, srv.RequestsFor(agentatest.OpFetchEvaluation), 1, "one evaluation read")

	scenarios, err := c.FetchEvaluationScenarios(ctx, id)
	require.NoError(t, err)
	assert.Len(t, scenarios, demo.TestsetRows, "every row has its scenario once the wait returns")
}

// A test set whose columns do not match the app's inputs is accepted, then
// the run fails and never gets scenarios.
func TestWaitEvaluationOnTheFakeFailedRun(t *testing.T) {
	c, srv, demo := fakeClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mismatched := srv.AddTestset(agentatest.Testset{AppID: demo.AppID, Name: "cities",
		Rows: []map[string]string{{"city": "Paris", "correct_answer": "France"}}})
	id := fakeCreate(t, c, demo, mismatched)

	ev, err := c.WaitEvaluation(ctx, id, &agenta.WaitOptions{Interval: 5 * time.Millisecond})

	require.Error(t, err)
	assert.True(t, errors.Is(err, agenta.ErrEvaluationFailed), "expected ErrEvaluationFailed, got %v", err)
	var failed *agenta.EvaluationFailedError
	require.True(t, errors.As(err, &failed), "expected *EvaluationFailedError, got %T", err)
	assert.Equal(t, "Evaluation Failed", failed.Message)
	require.NotNil(t, ev, "the failed evaluation comes with the error")
	assert.True(t, ev.Failed())
	scenarios, err := c.FetchEvaluationScenarios(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, scenarios, "a failed run has no scenarios")
}

// With no worker, a run stays INITIALIZED: the wait ends with its context
// and says so; once the run is advanced, the wait returns it.
func TestWaitEvaluationOnTheFakeWithoutWorker(t *testing.T) {
	c, srv, demo := fakeClient(t, agentatest.WithManualEvaluations())
	id := fakeCreate(t, c, demo, demo.TestsetID)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()

	_, err := c.WaitEvaluation(ctx, id, &agenta.WaitOptions{Interval: 10 * time.Millisecond})

	require.True(t, errors.Is(err, context.DeadlineExceeded), "expected a deadline error, got %v", err)
	var waitErr *agenta.WaitError
	require.True(t, errors.As(err, &waitErr), "expected *WaitError, got %T", err)
	assert.Equal(t, models.EvaluationStatus(models.EvaluationInitialized), waitErr.Status)
	assert.Contains(t, err.Error(), "no worker may be running")

	srv.AdvanceEvaluations(1 << 20)
	ev, err := c.WaitEvaluation(context.Background(), id, nil)
	require.NoError(t, err)
	assert.True(t, ev.Terminal(), "after AdvanceEvaluations the run is over: %s", ev.State())
}

// max_retries 0 would never call the app: the SDK refuses it, and the
// service never sees the request.
func TestCreateEvaluationZeroAttemptsNeverSent(t *testing.T) {
	c, srv, demo := fakeClient(t)
	rl := models.DefaultRateLimit()
	rl.MaxRetries = 0

	_, err := c.CreateEvaluation(context.Background(), models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID}, TestsetID: demo.TestsetID, RateLimit: rl,
	})

	var argErr *agenta.ArgumentError
	require.True(t, errors.As(err, &argErr), "expected *ArgumentError, got %T %v", err, err)
	assert.Equal(t, "rate_limit.max_retries", argErr.Field)
	assert.Empty(t, srv.RequestsFor(agentatest.OpCreateEvaluation), "nothing sent")
}

func TestWaitRunNoWorker2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	srv.StopWorker()
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond, NoWorkerAfter: 200 * time.Millisecond})
	require.True(t, errors.Is(err, agenta.ErrNoWorker), "got %v", err)
	var nw *agenta.NoWorkerError
	require.True(t, errors.As(err, &nw))
	assert.Equal(t, created.ID, nw.RunID)
	assert.GreaterOrEqual(t, nw.Waited, 200*time.Millisecond)
	assert.Contains(t, err.Error(), "no worker is consuming the evaluation queue")
	require.NotNil(t, run)
	assert.Equal(t, models.RunRunning, run.Status)
	assert.True(t, run.Flags.IsActive)

	// A bounded wait without the detector ends with the context, naming the status.
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	_, err = c.WaitRun(short, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond, NoWorkerAfter: -1})
	var werr *agenta.WaitError
	require.True(t, errors.As(err, &werr), "got %v", err)
	assert.Equal(t, "running", string(werr.Status))
	assert.True(t, errors.Is(err, context.DeadlineExceeded))

	srv.StartWorker()
	run, err = c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond, NoWorkerAfter: 200 * time.Millisecond})
	require.NoError(t, err, "the queued run runs once a worker starts")
	assert.Equal(t, models.RunSuccess, run.Status)
}

func TestWaitRunRidesOutTrouble2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	srv.InjectFault(agentatest.OpFetchRun, 6, agentatest.Fault{Status: 503})
	var retries []agenta.WaitRetry
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 10 * time.Millisecond,
		OnRetry: func(r agenta.WaitRetry) { retries = append(retries, r) }})
	require.NoError(t, err)
	assert.Equal(t, models.RunSuccess, run.Status)
	assert.NotEmpty(t, retries, "the 503s were ridden out and reported")

	_, err = c.WaitRun(ctx, "0190b606-0000-7000-8000-000000000000", nil)
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "an unknown run ends the wait at once: %v", err)
}
