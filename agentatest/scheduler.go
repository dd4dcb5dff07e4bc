package agentatest

import (
	"context"
	"errors"
	"time"

	"github.com/agenta-go/agenta/models"
)

// The scheduler is the fake's stand-in for the service's worker: it decides
// when a run starts and when each of its rows' app calls happens. By
// default a background worker picks a run up defaultPickup after create
// and spends defaultRowPace on each row; WithEvaluationPace changes both.
// Like the service's worker it calls the app in batches of
// rate_limit.batch_size rows, delay_between_batches seconds apart (real
// seconds: with the web UI's 10 and 5, a 25-row test set takes over ten).
// Under WithManualEvaluations nothing runs until the test calls
// AdvanceEvaluations, which pauses for nothing.

// The default pace. The pickup delay keeps the contract's "scenarios are []
// right after create" true on a loaded machine (the first scenarios appear
// no sooner than defaultPickup plus every row's pace after create), while
// the demo's eight rows still finish in about 140 ms.
const (
	defaultPickup  = 100 * time.Millisecond
	defaultRowPace = 5 * time.Millisecond
)

// schedule hands a new run to the worker. Callers hold s.mu.
func (s *Server) schedule(run *evaluationRun) {
	if s.manual {
		return
	}
	select {
	case <-s.closing:
		return // a closed Server starts nothing
	default:
	}
	s.runners.Add(1)
	go s.work(run)
}

// work is the background worker of one run.
func (s *Server) work(run *evaluationRun) {
	defer s.runners.Done()
	t := time.NewTimer(s.pickup)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
		}
		i, ok := s.step(run)
		if !ok {
			return
		}
		t.Reset(s.rowPace + run.pauseAfter(i))
	}
}

// step starts the run if it has not started and makes its next row's app
// call. It reports the row and whether it made one.
func (s *Server) step(run *evaluationRun) (int, bool) {
	s.mu.Lock()
	i, ok := s.claimRow(run)
	s.mu.Unlock()
	if ok {
		s.completeRow(run, i, run.runRow(i))
	}
	return i, ok
}

// pauseAfter is the worker's pause after row i: delay_between_batches when
// the row ends a batch of batch_size rows and more rows follow, else none.
// A batch_size below 1 makes one batch.
func (run *evaluationRun) pauseAfter(i int) time.Duration {
	if run.batchSize < 1 || (i+1)%run.batchSize != 0 || i+1 >= len(run.rows) {
		return 0
	}
	return run.batchDelay
}

// completeRow keeps a row's outcome, out of sight, and after the last row
// writes the scenarios, aggregates and finishes the run.
func (s *Server) completeRow(run *evaluationRun, i int, sc *scenarioRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run.computed[i] = sc
	run.completed++
	run.updated = s.clock()
	if run.completed == len(run.rows) {
		s.finish(run)
	}
}

// claimRow starts a run that has not started and reserves its next row; it
// reports false when no row is left. A run without rows finishes at once.
// Callers hold s.mu.
func (s *Server) claimRow(run *evaluationRun) (int, bool) {
	if run.finished() {
		return 0, false
	}
	if run.status == models.EvaluationInitialized {
		run.status = models.EvaluationStarted
		run.updated = s.clock()
	}
	if len(run.rows) == 0 {
		s.finish(run)
		return 0, false
	}
	if run.claimed >= len(run.rows) {
		return 0, false
	}
	run.claimed++
	return run.claimed - 1, true
}

// AdvanceEvaluations makes up to n rows' app calls, oldest evaluation
// first, and returns how many it made. A run starts (STARTED) at its first
// row and finishes (its scenarios written all at once, aggregated, its
// final status set) in the call that makes its last row's app call; a run
// without rows finishes when it is reached. It is how a test drives
// evaluations under WithManualEvaluations, one step at a time; in the
// other modes it runs rows ahead of the background worker.
func (s *Server) AdvanceEvaluations(n int) int {
	ran := 0
	for ran < n {
		s.mu.Lock()
		var run *evaluationRun
		i, ok := 0, false
		for _, id := range s.evalOrder {
			if i, ok = s.claimRow(s.evaluations[id]); ok {
				run = s.evaluations[id]
				break
			}
		}
		s.mu.Unlock()
		if !ok {
			break
		}
		s.completeRow(run, i, run.runRow(i))
		ran++
	}
	return ran
}

// WaitEvaluations blocks until every evaluation created so far has reached
// its final status, or ctx ends. It is how a test makes a run finish
// deterministically in the background modes; under WithManualEvaluations
// only AdvanceEvaluations makes progress, so it returns when ctx ends.
func (s *Server) WaitEvaluations(ctx context.Context) error {
	s.mu.Lock()
	var pending []chan struct{}
	for _, run := range s.evaluations {
		pending = append(pending, run.done)
	}
	s.mu.Unlock()
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing:
			return errServerClosed
		}
	}
	return nil
}

var errServerClosed = errors.New("agentatest: server closed")
