package agentatest

import (
	"context"
	"time"

	"github.com/agenta-go/agenta/models"
)

// The scheduler is the fake's stand-in for the service's worker: it decides
// when a run starts and when each of its steps happens. A run of n rows
// takes 2n steps, as on the service: n app calls, then n scenario writes,
// one row each, in row order; the first step sets EVALUATION_STARTED and
// the last write aggregates and sets the final status. By default a
// background worker picks a run up defaultPickup after create and spends
// defaultRowPace on each step; WithEvaluationPace changes both. Like the
// service's worker it calls the app in batches of rate_limit.batch_size
// rows, delay_between_batches seconds apart (real seconds: with the web
// UI's 10 and 5, a 25-row test set takes over ten). Under
// WithManualEvaluations nothing runs until the test calls
// AdvanceEvaluations, which pauses for nothing.

// The default pace. The pickup delay keeps the contract's "scenarios are []
// right after create" true on a loaded machine (the first scenario appears
// no sooner than defaultPickup plus every row's call after create), while
// the demo's eight rows still finish in about 180 ms.
const (
	defaultPickup  = 100 * time.Millisecond
	defaultRowPace = 5 * time.Millisecond
)

// schedule hands a new run to the worker. Callers hold s.mu.
func (s *Server) schedule(run *evaluationRun) {
	if !s.manual {
		s.goWork(func() { s.work(run) })
	}
}

// goWork runs work in the background, unless the Server has closed (a
// closed Server starts nothing), and reports whether it did. Close waits
// for it.
func (s *Server) goWork(work func()) bool {
	select {
	case <-s.closing:
		return false
	default:
	}
	s.runners.Add(1)
	go func() {
		defer s.runners.Done()
		work()
	}()
	return true
}

// work is the background worker of one run.
func (s *Server) work(run *evaluationRun) {
	for wait := s.pickup; s.hold(nil, wait); {
		pause, progress := s.step(run)
		if progress == runOver {
			return
		}
		// A step that found another caller's app call in flight
		// (AdvanceEvaluations running ahead) waits one pace and looks again.
		wait = s.rowPace + pause
	}
}

// stepProgress is what a step found to do.
type stepProgress int

const (
	stepMade stepProgress = iota // it made an app call or a write
	stepBusy                     // an app call is in flight; look again later
	runOver                      // the run has its final status
)

// step makes the run's next step, if it has one now, and returns the pause
// the worker makes after it: delay_between_batches after the call that
// ends a batch.
func (s *Server) step(run *evaluationRun) (time.Duration, stepProgress) {
	s.mu.Lock()
	row, call, progress := s.nextStep(run)
	s.mu.Unlock()
	if !call {
		return 0, progress
	}
	s.call(run, row)
	return run.pauseAfter(row), stepMade
}

// call makes the app call of a row that nextStep reserved, without the
// lock, and keeps its outcome for the row's write.
func (s *Server) call(run *evaluationRun, row int) {
	sc := run.runRow(row)
	s.mu.Lock()
	defer s.mu.Unlock()
	run.computed[row] = sc
	run.completed++
}

// nextStep starts the run if it has not started and takes its next step:
// it reserves the next row's app call, which the caller makes without the
// lock (call true), or once every call is done it writes the next
// scenario. Callers hold s.mu.
func (s *Server) nextStep(run *evaluationRun) (row int, call bool, progress stepProgress) {
	if run.finished() {
		return 0, false, runOver
	}
	starting := run.status == models.EvaluationInitialized
	if starting {
		run.status = models.EvaluationStarted
	}
	switch {
	case run.breakage != "":
		// It starts, then breaks at its next step, before any app call.
		if !starting {
			s.fail(run, run.breakage)
		}
		return 0, false, stepMade
	case len(run.rows) == 0:
		s.finish(run)
		return 0, false, runOver
	case run.claimed < len(run.rows):
		run.claimed++
		return run.claimed - 1, true, stepMade
	case run.completed < len(run.rows):
		return 0, false, stepBusy
	}
	s.writeScenario(run)
	return 0, false, stepMade
}

// pauseAfter is the worker's pause after row i's app call:
// delay_between_batches when the row ends a batch of batch_size rows and
// more rows follow, else none. A batch_size below 1 makes one batch.
func (run *evaluationRun) pauseAfter(i int) time.Duration {
	if run.batchSize < 1 || (i+1)%run.batchSize != 0 || i+1 >= len(run.rows) {
		return 0
	}
	return run.batchDelay
}

// AdvanceEvaluations makes up to n steps of the worker, oldest evaluation
// first, and returns how many it made. A run of r rows takes 2r steps, as
// the service's worker does: first the r rows' app calls (the first sets
// EVALUATION_STARTED), then the r scenario writes, one row each in row
// order, so that the scenario list grows while the run is STARTED; the
// last write aggregates and sets the final status. A run without rows
// finishes when it is reached, and one that breaks does so at the step
// where the service's worker would: at its second step, before any app
// call, for an evaluator config that does not exist; at the write of the
// first row that lacks an input. It is how a test drives evaluations under WithManualEvaluations,
// one step at a time; in the other modes it runs steps ahead of the
// background worker.
func (s *Server) AdvanceEvaluations(n int) int {
	ran := 0
	for ran < n {
		s.mu.Lock()
		var run *evaluationRun
		row, call, made := 0, false, false
		for _, id := range s.evalOrder {
			var progress stepProgress
			row, call, progress = s.nextStep(s.evaluations[id])
			if progress == stepMade {
				run, made = s.evaluations[id], true
				break
			}
		}
		s.mu.Unlock()
		if !made {
			break
		}
		if call {
			s.call(run, row)
		}
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
	return waitDone(ctx, pending, s.closing)
}

// waitDone waits until every channel of pending is closed, or ctx ends, or
// closing (nil: never) closes.
func waitDone(ctx context.Context, pending []chan struct{}, closing <-chan struct{}) error {
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		case <-closing:
			return errServerClosed
		}
	}
	return nil
}
