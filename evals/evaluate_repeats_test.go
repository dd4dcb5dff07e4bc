package evals_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On a mid-2024 server, each variant's K evaluations are read as one run
// of K repeats: its rows are theirs, one after the other.
func TestEvaluateRepeats2024(t *testing.T) {
	srv, demo, client := demoClient(t, agentatest.WithEvaluationPace(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := demoRequest(demo, demo.VerboseVariantID, demo.VariantID)
	req.Repeats = 3
	var created []models.Evaluation
	waited := map[int]int{}
	runs, err := evals.EvaluateWith(ctx, client, req, evals.EvaluateOptions[*agenta.WaitOptions]{
		Wait:    func(int, models.Evaluation) *agenta.WaitOptions { return fastWait },
		Created: func(c []models.Evaluation) { created = c },
		Waited:  func(run int, _ *models.Evaluation, _ error) { waited[run]++ },
	})
	require.NoError(t, err)
	require.Len(t, srv.RequestsFor(agentatest.OpCreateEvaluation), 3, "one create per repeat")
	require.Len(t, created, 6)
	assert.Equal(t, map[int]int{0: 3, 1: 3}, waited, "each repeat's evaluation waited for")
	for i, variant := range req.VariantIDs {
		run := runs[i]
		assert.Equal(t, 3, run.Repeats)
		require.Len(t, run.RepeatEvaluations, 2)
		ids := []string{run.Evaluation.ID, run.RepeatEvaluations[0].ID, run.RepeatEvaluations[1].ID}
		for r, id := range ids {
			assert.Equal(t, created[r*2+i].ID, id, "repeat %d of variant %d", r, i)
		}
		for _, ev := range append([]models.Evaluation{run.Evaluation}, run.RepeatEvaluations...) {
			assert.Equal(t, variant, ev.VariantIDs[0])
			assert.Equal(t, models.EvaluationFinished, ev.State(), "as waited for")
		}
		require.Len(t, run.Scenarios, 3*8, "the demo's 8 rows, 3 times")
		var from []string
		for _, s := range run.Scenarios {
			if len(from) == 0 || from[len(from)-1] != s.EvaluationID {
				from = append(from, s.EvaluationID)
			}
		}
		assert.Equal(t, ids, from, "the scenarios of each repeat in turn")
	}
}

// On a 2026 server, the run's repeats are its rows: one run per variant.
func TestEvaluateRepeats2026(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey("k"),
		agentatest.WithEvaluationPace(time.Millisecond))
	demo := agentatest.SeedDemo2026(srv)
	client, err := agenta.NewClient(srv.URL(), agenta.WithAPIKey("k"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runs, err := evals.Evaluate(ctx, client, models.NewEvaluation{AppID: demo.ApplicationID, VariantIDs: []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.EvaluatorID}, TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit(), Repeats: 3}, fastWait)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, 3, runs[0].Repeats)
	assert.Empty(t, runs[0].RepeatEvaluations)
	require.Len(t, runs[0].Scenarios, 15, "5 cases × 3 repeats")
	perCase := map[string]int{}
	for _, s := range runs[0].Scenarios {
		perCase[s.TestcaseID]++
	}
	assert.Equal(t, []int{3, 3, 3, 3, 3}, slices.Collect(func(yield func(int) bool) {
		for _, n := range perCase {
			yield(n)
		}
	}))
}

// Giving up covers every repeat: each evaluation of each variant not seen
// to end is stopped, or listed as possibly running.
func TestEvaluateRepeatsWhenTheContextEnds(t *testing.T) {
	_, demo, client := demoClient(t, agentatest.WithManualEvaluations())
	req := demoRequest(demo, demo.VariantID, demo.VerboseVariantID)
	req.Repeats = 2
	for _, svc := range []evals.Service[*agenta.WaitOptions]{client, &stoppingClient{Client: client}} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		runs, err := evals.Evaluate(ctx, svc, req, fastWait)
		cancel()
		var runErr *evals.RunError
		require.ErrorAs(t, err, &runErr)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		ids := []string{runs[0].Evaluation.ID, runs[0].RepeatEvaluations[0].ID, runs[1].Evaluation.ID, runs[1].RepeatEvaluations[0].ID}
		if stopper, ok := svc.(*stoppingClient); ok {
			assert.Equal(t, ids, runErr.Stopped)
			assert.Equal(t, ids, stopper.stopped)
			assert.Empty(t, runErr.Unfinished)
		} else {
			assert.Equal(t, ids, runErr.Unfinished, "all four may still be running on a server that cannot stop them")
		}
	}
}

// partialService creates some evaluations and then fails, as a create of
// repeats does when a later repeat is refused.
type partialService struct {
	scriptedService
	stopped []string
}

func (s *partialService) CreateEvaluation(context.Context, models.NewEvaluation) ([]models.Evaluation, error) {
	return s.created, errors.New("repeat 2 of 2 was not created")
}

func (s *partialService) StopEvaluation(_ context.Context, id string) error {
	s.stopped = append(s.stopped, id)
	return nil
}

// A create that fails after creating some stops them where it can, and
// says so.
func TestEvaluateStopsWhatAFailedCreateMade(t *testing.T) {
	svc := &partialService{scriptedService: scriptedService{created: []models.Evaluation{{ID: "ev-1"}, {ID: "ev-2"}}}}
	runs, err := evals.Evaluate(context.Background(), svc, request, "")
	require.Error(t, err)
	assert.Nil(t, runs)
	assert.Equal(t, []string{"ev-1", "ev-2"}, svc.stopped)
	assert.ErrorContains(t, err, "repeat 2 of 2 was not created; asked the service to stop evaluations ev-1, ev-2")
}
