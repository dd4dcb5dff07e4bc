package evals_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
)

// togetherService is a scriptedService whose waits end only once every
// run's wait has begun, so that waits in turn never end (but at ctx's
// end), and whose wait of a run named in failing fails. It counts the
// streams open at once.
type togetherService struct {
	*scriptedService
	failing   map[string]error
	begun     sync.WaitGroup
	mu        sync.Mutex
	open, max int
}

func (s *togetherService) WaitEvaluation(ctx context.Context, id string, opts string) (*models.Evaluation, error) {
	s.begun.Done()
	waited := make(chan struct{})
	go func() { s.begun.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := s.failing[id]; err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scriptedService.WaitEvaluation(ctx, id, opts)
}

func (s *togetherService) StreamEvaluationScenarios(ctx context.Context, id string) iter.Seq2[models.EvaluationScenario, error] {
	return func(yield func(models.EvaluationScenario, error) bool) {
		s.mu.Lock()
		s.open++
		s.max = max(s.max, s.open)
		s.mu.Unlock()
		defer func() { s.mu.Lock(); s.open--; s.mu.Unlock() }()
		for sc, err := range s.scriptedService.StreamEvaluationScenarios(ctx, id) {
			if !yield(sc, err) {
				return
			}
		}
	}
}

// Concurrent follows the runs together, reads one at a time, and a run that
// failed leaves the others their rows: the error names it alone.
func TestEvaluateWithConcurrentKeepsGoing(t *testing.T) {
	// Waits in turn would end only here, each run failing.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	three := models.NewEvaluation{AppID: "app", VariantIDs: []string{"a", "b", "c"}, EvaluatorConfigIDs: []string{"e"}, TestsetID: "t"}
	svc := &togetherService{scriptedService: scripted(3, nil), failing: map[string]error{"ev-b": errors.New("run failed")}}
	svc.created = append(svc.created, models.Evaluation{ID: "ev-c", VariantIDs: []string{"c"}})
	svc.begun.Add(3)
	var mu sync.Mutex
	rows := map[int]int{}
	runs, err := evals.EvaluateWith(ctx, svc, three, evals.EvaluateOptions[string]{
		Concurrent: true,
		Scenarios: func(run int, _ models.Evaluation, seq iter.Seq2[models.EvaluationScenario, error]) error {
			for _, err := range seq {
				if err != nil {
					return err
				}
				mu.Lock()
				rows[run]++
				mu.Unlock()
			}
			return nil
		},
	})
	var runErr *evals.RunError
	if !errors.As(err, &runErr) || runErr.Run != 1 || runErr.EvaluationID != "ev-b" || runErr.Step != evals.StepWait {
		t.Fatalf("EvaluateWith = %v, want a *RunError of run 1 (ev-b) in its wait", err)
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 1 {
		t.Errorf("EvaluateWith = %v, want one *RunError, for the one run that failed", err)
	}
	if len(runs) != 3 || rows[0] != 3 || rows[2] != 3 || rows[1] != 0 {
		t.Errorf("%d runs, rows read per run %v; want 3 runs, 3 rows of runs 0 and 2, none of the failed run 1", len(runs), rows)
	}
	if svc.max != 1 {
		t.Errorf("%d streams open at once, want 1: one run is read at a time", svc.max)
	}
}

// Without Concurrent the runs are waited for in turn, and the first failure
// ends the call: unchanged for Evaluate's callers.
func TestEvaluateWithInTurnStopsAtTheFirstFailure(t *testing.T) {
	svc := scripted(2, errors.New("cut"))
	runs, err := evals.EvaluateWith(context.Background(), svc, request, evals.EvaluateOptions[string]{})
	var runErr *evals.RunError
	if !errors.As(err, &runErr) || runErr.Run != 0 || runErr.Step != evals.StepScenarios {
		t.Fatalf("EvaluateWith = %v, want a *RunError of run 0 reading its scenarios", err)
	}
	if !slices.Equal(svc.waits, []string{"ev-a:"}) || len(runs[1].Scenarios) != 0 {
		t.Errorf("waits %v, want only ev-a's: the first failure ends the call", svc.waits)
	}
}
