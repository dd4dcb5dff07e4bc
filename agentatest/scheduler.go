package agentatest

import (
	"context"
	"fmt"
	"time"

	"github.com/agenta-go/agenta/models"
)

// The scheduler decides when an evaluation's rows run: before create
// answers, in the background at a pace, or when the test advances them.

// claimRow reserves the next row of a run; it reports false when none is
// left. Callers hold s.mu.
func (run *evaluationRun) claimRow() (int, bool) {
	if run.status != models.EvaluationStarted || run.claimed >= len(run.rows) {
		return 0, false
	}
	run.claimed++
	return run.claimed - 1, true
}

// completeRow stores a computed scenario and finishes the run after its
// last row. Callers hold s.mu.
func (s *Server) completeRow(run *evaluationRun, i int, sc *scenarioRecord) {
	sc.id = s.newID()
	run.slots[i] = sc
	run.completed++
	run.updated = s.clock()
	if run.completed == len(run.rows) {
		s.finish(run)
	}
}

// start runs or schedules a new run according to the Server's mode.
// Callers hold s.mu; in synchronous mode it releases it while computing.
func (s *Server) start(run *evaluationRun) {
	if run.status != models.EvaluationStarted {
		return
	}
	if run.failure != "" || len(run.rows) == 0 {
		s.finish(run)
		return
	}
	switch s.mode {
	case runSync:
		run.claimed = len(run.rows)
		computed := make([]*scenarioRecord, len(run.rows))
		func() {
			s.mu.Unlock()
			defer s.mu.Lock() // even if a row panics, so the caller's unlock holds
			for i := range run.rows {
				computed[i] = run.runRow(i)
			}
		}()
		for i, sc := range computed {
			s.completeRow(run, i, sc)
		}
	case runPaced:
		s.runners.Add(1)
		go s.pace1(run)
	}
}

// pace1 fills in a run's scenarios in the background, one per pace.
func (s *Server) pace1(run *evaluationRun) {
	defer s.runners.Done()
	t := time.NewTimer(s.pace)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
		}
		s.mu.Lock()
		i, ok := run.claimRow()
		s.mu.Unlock()
		if !ok {
			return
		}
		sc := run.runRow(i)
		s.mu.Lock()
		s.completeRow(run, i, sc)
		s.mu.Unlock()
		t.Reset(s.pace)
	}
}

// AdvanceEvaluations fills in up to n pending scenarios, oldest evaluation
// first, and returns how many it filled. It is how a test drives
// evaluations under WithManualEvaluations; in the other modes it finishes
// rows not yet run.
func (s *Server) AdvanceEvaluations(n int) int {
	ran := 0
	for ran < n {
		s.mu.Lock()
		var run *evaluationRun
		var i int
		for _, id := range s.evalOrder {
			r := s.evaluations[id]
			if idx, ok := r.claimRow(); ok {
				run, i = r, idx
				break
			}
		}
		s.mu.Unlock()
		if run == nil {
			break
		}
		sc := run.runRow(i)
		s.mu.Lock()
		s.completeRow(run, i, sc)
		s.mu.Unlock()
		ran++
	}
	return ran
}

// WaitEvaluations blocks until every evaluation created so far has
// finished, or ctx ends. Under WithEvaluationPace it waits for the
// background runs; under WithManualEvaluations only AdvanceEvaluations
// makes progress.
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
			return fmt.Errorf("agentatest: server closed")
		}
	}
	return nil
}
