package evals

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/agenta-go/agenta/models"
)

// Service is what Evaluate needs of the evaluation service: to create an
// evaluation, wait for each run, and stream each run's scenarios.
// *agenta.Client satisfies Service[*agenta.WaitOptions]; W is the type of
// the wait's options, a type parameter so that evals imports no HTTP code
// and a test can pass a fake of its own, with options of any type.
type Service[W any] interface {
	CreateEvaluation(ctx context.Context, ev models.NewEvaluation) ([]models.Evaluation, error)
	WaitEvaluation(ctx context.Context, evaluationID string, opts W) (*models.Evaluation, error)
	StreamEvaluationScenarios(ctx context.Context, evaluationID string) iter.Seq2[models.EvaluationScenario, error]
}

// generationDetector is a Service that finds out which API its server
// speaks before it creates, such as *agenta.Client (see its
// DetectGeneration): its evaluation methods then work on a mid-2024 server
// and on a 2026 one alike, where each variant becomes a run of its own.
type generationDetector interface {
	DetectGeneration(ctx context.Context) error
}

// Stopper is a Service that can stop a run it started. Evaluate stops, with
// it, the runs it gives up on. *agenta.Client is one: on a 2026 server it
// stops the run (POST /simple/evaluations/{id}/stop), and on a mid-2024
// one, which has no such route, its StopEvaluation returns an error
// matching errors.ErrUnsupported, and the runs are listed as unfinished.
type Stopper interface {
	StopEvaluation(ctx context.Context, evaluationID string) error
}

// EvaluateOptions tunes EvaluateWith. The zero value waits with the zero W
// (nil for *agenta.WaitOptions: the client's defaults) and keeps every
// scenario.
type EvaluateOptions[W any] struct {
	// Wait, if set, returns the options of one run's wait, given the run's
	// index in the request's VariantIDs and its evaluation as created: to
	// show each run's progress apart, for example.
	Wait func(run int, created models.Evaluation) W
	// Created, if set, is called once with the evaluations as created, in
	// the order of the request's VariantIDs, before any wait. With
	// repeats on a server without them (mid-2024), each variant has one
	// evaluation per repeat, and they come repeat after repeat: element
	// r*len(VariantIDs)+i is repeat r of variant i.
	Created func(created []models.Evaluation)
	// Waited, if set, is called when a run's wait ends, with what
	// WaitEvaluation returned (the evaluation may be nil on error): once
	// per evaluation of the run, so once per repeat on a mid-2024 server.
	// Wait is likewise called once per evaluation waited for.
	Waited func(run int, finished *models.Evaluation, err error)
	// Scenarios, if set, takes each finished run's scenarios as they stream
	// from the service, in place of EvaluateWith keeping them: the runs
	// returned then have no Scenarios, and memory stays flat however many
	// rows there are (feed an Accumulator or a Comparer). It must range
	// over scenarios to read them; an error it returns, or one the stream
	// yielded, ends EvaluateWith with a *RunError naming the run.
	Scenarios func(run int, finished models.Evaluation, scenarios iter.Seq2[models.EvaluationScenario, error]) error
	// Concurrent, if set, follows every run at once: each run's wait goes
	// on while another's does, and each run is read as soon as its wait
	// ends, one run at a time (a consumer then holds one run's rows, and a
	// large cell once, not once per run). A run that fails ends only
	// itself: the others are still waited for and read, and EvaluateWith
	// returns every run with an error joining one *RunError per failed
	// run, in the order of the runs (errors.As finds the first, and
	// Unwrap() []error gives them all). Each *RunError stops, or lists as
	// unfinished, only its own run's evaluations not seen to end. Wait and
	// Waited may then be called from several goroutines at once, each for
	// a run of its own; Scenarios is called for one run at a time.
	Concurrent bool
	// Gates, if set, are the gates the runs will be judged by: they are
	// resolved (ResolveGates) against the evaluators the preflight reads,
	// before anything is created, so that a gate naming an evaluator the
	// evaluation lacks, or a mistyped measure, costs no run. The error is
	// then the *GateError (ErrInvalidGate). Check still judges the runs.
	Gates []Gate
}

// stopTimeout bounds each StopEvaluation call made after ctx ended.
const stopTimeout = 10 * time.Second

// Evaluate runs an evaluation to the end in one call: it creates it (one
// run per variant of req.VariantIDs), waits for each run with
// svc.WaitEvaluation and opts (for *agenta.Client, *agenta.WaitOptions:
// the status interval and the OnStatus progress callback; nil for the
// defaults), reads each finished run's scenarios by streaming, and returns
// the runs in the order of req.VariantIDs, ready for NewReport:
//
//	runs, err := evals.Evaluate(ctx, client, req, nil)
//	if err != nil { ... }
//	report := evals.NewReport(runs[0], runs[1]) // production first
//
// A failure to create is returned as the service's error, with no runs;
// the service may still have started the runs of the variants before the
// one it refused (see agenta.Client.CreateEvaluation). A failure after
// that is a *RunError naming the run, returned with the runs as far as
// they got (a failed run's Evaluation carries the service's reason, which
// NewReport shows): errors.Is(err, agenta.ErrEvaluationFailed) tells a run
// that failed on the service, errors.Is(err, context.DeadlineExceeded) a
// wait that ctx ended. Evaluate then stops the runs it started and did not
// see end, where svc can (a Stopper, as *agenta.Client is on a 2026
// server); RunError.Unfinished lists the runs that may still be running
// there, as on a mid-2024 server, which has no route to stop one. Bound
// the whole call with ctx.
//
// A Service that can detect its server's API generation, as
// *agenta.Client does (DetectGeneration), does so first, with one read: a
// script that calls Evaluate runs unchanged against a mid-2024 server and
// a 2026 one (Agenta v0.96 and later), where each variant becomes a run of
// its own, its rows paired with the baseline's by test case. A Service
// that has a preflight, as *agenta.Client does (Preflight), runs it next:
// a wrong id or a missing column ends Evaluate before anything is created,
// with its error (for *agenta.Client, a *agenta.PreflightError).
func Evaluate[W any](ctx context.Context, svc Service[W], req models.NewEvaluation, opts W) ([]Run, error) {
	return EvaluateWith(ctx, svc, req, EvaluateOptions[W]{
		Wait: func(int, models.Evaluation) W { return opts },
	})
}

// EvaluateWith is Evaluate with hooks: per-run wait options, callbacks when
// the runs are created and when each wait ends, and a consumer of each
// run's scenarios as they stream, for runs too large to hold. Runs are
// waited for and read in the order of req.VariantIDs, each run's scenarios
// read as soon as its wait ends, while the service goes on with the others;
// with opts.Concurrent, they are followed all at once, and a failed run
// does not end the others.
//
// With req.Repeats K above 1, each variant's Run holds every repeat's
// rows, and Run.Repeats is K: on a 2026 server the rows of its run, which
// ran each test case K times; on a mid-2024 server, which has no repeats,
// the scenarios of the variant's K evaluations (Run.Evaluation, then
// Run.RepeatEvaluations), each waited for and read in turn. A failure
// stops, or lists as unfinished, every evaluation of every repeat not
// seen to end. A create that fails after creating some (a later variant's
// run, a later repeat) stops those where svc can, and its error says
// which may still be running.
func EvaluateWith[W any](ctx context.Context, svc Service[W], req models.NewEvaluation, opts EvaluateOptions[W]) ([]Run, error) {
	if ctx == nil {
		return nil, errors.New("evals: Evaluate: ctx is nil")
	}
	if svc == nil {
		return nil, errors.New("evals: Evaluate: the service is nil")
	}
	if d, ok := any(svc).(generationDetector); ok {
		// On failure the service goes on as before, and the create says
		// what is wrong; but provider keys go to no server whose API is
		// not known: a 2026 one takes none, and would get them in a 2024
		// request.
		if err := d.DetectGeneration(ctx); err != nil && req.LMProvidersKeys.Len() > 0 {
			return nil, fmt.Errorf("evals: Evaluate: provider keys are sent only once the server's API is known: %w", err)
		}
	}
	if err := preflight(ctx, svc, req, opts.Gates); err != nil {
		return nil, err
	}
	created, err := svc.CreateEvaluation(ctx, req)
	if err != nil {
		if len(created) > 0 {
			// Some were created, and run: stop them where svc can.
			return nil, stopCreated(ctx, svc, created, err)
		}
		return nil, err
	}
	groups, err := GroupByVariant(created, req.VariantIDs, max(req.Repeats, 1))
	if err != nil {
		return nil, err
	}
	runs := make([]Run, len(groups))
	for i, group := range groups {
		runs[i].Evaluation = group[0]
		if len(group) > 1 {
			runs[i].RepeatEvaluations = group[1:]
		}
		if req.Repeats > 1 {
			runs[i].Repeats = req.Repeats
		}
	}
	if opts.Created != nil {
		all := make([]models.Evaluation, 0, len(created))
		for r := range len(groups[0]) {
			for _, group := range groups {
				all = append(all, group[r])
			}
		}
		opts.Created(all)
	}
	if opts.Concurrent {
		return runs, followAll(ctx, svc, runs, opts)
	}
	for i := range runs {
		if id, from, err := waitRun(ctx, svc, &runs[i], i, opts); err != nil {
			return runs, giveUp(ctx, svc, runs, i, id, pendingAfter(runs, i, from), StepWait, err)
		}
		if id, err := readScenarios(ctx, svc, &runs[i], i, opts.Scenarios); err != nil {
			return runs, giveUp(ctx, svc, runs, i, id, pendingAfter(runs, i+1, 0), StepScenarios, err)
		}
	}
	return runs, nil
}

// followAll follows every run at once, for EvaluateOptions.Concurrent:
// the runs are waited for together and read one at a time, and a failed
// run gives up on its own evaluations only.
func followAll[W any](ctx context.Context, svc Service[W], runs []Run, opts EvaluateOptions[W]) error {
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	// A row may hold a cell of up to 16 MiB, which the decoder holds while
	// it reads it: reading every run at once held that once per run.
	var reading sync.Mutex
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if id, from, err := waitRun(ctx, svc, &runs[i], i, opts); err != nil {
				errs[i] = giveUp(ctx, svc, runs, i, id, pendingAfter(runs[i:i+1], 0, from), StepWait, err)
				return
			}
			reading.Lock()
			id, err := readScenarios(ctx, svc, &runs[i], i, opts.Scenarios)
			reading.Unlock()
			if err != nil {
				errs[i] = giveUp(ctx, svc, runs, i, id, nil, StepScenarios, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitRun waits for each of run i's evaluations in turn. On failure it
// returns the evaluation whose wait failed and the index of the first of
// the run's evaluations not seen to end.
func waitRun[W any](ctx context.Context, svc Service[W], run *Run, i int, opts EvaluateOptions[W]) (id string, from int, err error) {
	for j := range run.evaluationCount() {
		ev := run.evaluation(j)
		var waitOpts W
		if opts.Wait != nil {
			waitOpts = opts.Wait(i, *ev)
		}
		finished, err := svc.WaitEvaluation(ctx, ev.ID, waitOpts)
		ended := finished != nil && finished.Status.EvaluationStatus().Terminal()
		if finished != nil {
			*ev = *finished
		}
		if opts.Waited != nil {
			opts.Waited(i, finished, err)
		}
		if err != nil {
			if ended {
				return ev.ID, j + 1, err
			}
			return ev.ID, j, err
		}
	}
	return "", 0, nil
}

// pendingAfter lists the evaluations from run i's j-th on, then every one
// of the runs after it: those not seen to end.
func pendingAfter(runs []Run, i, j int) []string {
	var ids []string
	for ; i < len(runs); i, j = i+1, 0 {
		for ; j < runs[i].evaluationCount(); j++ {
			ids = append(ids, runs[i].evaluation(j).ID)
		}
	}
	return ids
}

// stopCreated is the error of a create that failed after it had created
// some evaluations (a later variant's or a later repeat's): they are
// stopped where svc can, and the error says which may still be running.
func stopCreated[W any](ctx context.Context, svc Service[W], created []models.Evaluation, err error) error {
	ids := make([]string, len(created))
	for i, ev := range created {
		ids[i] = ev.ID
	}
	stopped, unfinished, stopErr := stopAll(ctx, svc, ids)
	var b strings.Builder
	if len(stopped) > 0 {
		fmt.Fprintf(&b, "; asked the service to stop %s", idList(stopped))
	}
	if len(unfinished) > 0 {
		fmt.Fprintf(&b, "; %s may still be running on the service", idList(unfinished))
	}
	if stopErr != nil {
		fmt.Fprintf(&b, " (%s)", oneLine(stopErr.Error()))
	}
	return fmt.Errorf("%w%s", err, b.String())
}

// readScenarios streams a finished run's scenarios into run, or hands them
// to consume. On failure it returns the evaluation being read: the run's,
// or the repeat's on a server without repeats.
func readScenarios[W any](ctx context.Context, svc Service[W], run *Run, i int, consume func(int, models.Evaluation, iter.Seq2[models.EvaluationScenario, error]) error) (string, error) {
	reading := run.Evaluation.ID
	stream := repeatedScenarios(ctx, svc, run, &reading)
	if consume == nil {
		for s, err := range stream {
			if err != nil {
				run.Scenarios = nil // an answer cut short is no shorter list
				return reading, err
			}
			run.Scenarios = append(run.Scenarios, s)
		}
		return "", nil
	}
	// The stream's error counts even when the consumer drops it.
	var streamErr error
	watched := func(yield func(models.EvaluationScenario, error) bool) {
		for s, err := range stream {
			if err != nil && streamErr == nil {
				streamErr = err
			}
			if !yield(s, err) {
				return
			}
		}
	}
	if err := consume(i, run.Evaluation, watched); err != nil {
		return reading, err
	}
	if streamErr != nil {
		return reading, streamErr
	}
	return "", nil
}

// evaluationCount is the number of the run's evaluations: one, and one
// per repeat after the first on a server without repeats.
func (r *Run) evaluationCount() int { return 1 + len(r.RepeatEvaluations) }

// evaluation returns the run's j-th evaluation: Evaluation, then
// RepeatEvaluations.
func (r *Run) evaluation(j int) *models.Evaluation {
	if j == 0 {
		return &r.Evaluation
	}
	return &r.RepeatEvaluations[j-1]
}

// repeatedScenarios streams the scenarios of each of a run's evaluations
// in turn: its repeats, on a server without repeats of its own, read as
// one run. An error ends the sequence. reading is set to the evaluation
// being read.
func repeatedScenarios[W any](ctx context.Context, svc Service[W], run *Run, reading *string) iter.Seq2[models.EvaluationScenario, error] {
	if len(run.RepeatEvaluations) == 0 {
		return svc.StreamEvaluationScenarios(ctx, run.Evaluation.ID)
	}
	return func(yield func(models.EvaluationScenario, error) bool) {
		for j := range run.evaluationCount() {
			*reading = run.evaluation(j).ID
			for s, err := range svc.StreamEvaluationScenarios(ctx, run.evaluation(j).ID) {
				if !yield(s, err) || err != nil {
					return
				}
			}
		}
	}
}

// giveUp builds the error of run i, whose evaluation id failed, after
// stopping, where svc can, the evaluations pending, which Evaluate started
// and did not see end.
func giveUp[W any](ctx context.Context, svc Service[W], runs []Run, i int, id string, pending []string, step string, err error) error {
	e := &RunError{Run: i, Runs: len(runs), EvaluationID: id, Variant: runs[i].Variant(), Step: step, Err: err}
	e.Stopped, e.Unfinished, e.StopErr = stopAll(ctx, svc, pending)
	return e
}

// stopAll stops each evaluation of ids where svc can, and returns those
// stopped, those that may still be running, and the failures to stop.
func stopAll[W any](ctx context.Context, svc Service[W], ids []string) (stopped, unfinished []string, stopErr error) {
	stopper, canStop := svc.(Stopper)
	for _, id := range ids {
		if canStop {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
			err := stopper.StopEvaluation(stopCtx, id)
			cancel()
			switch {
			case err == nil:
				stopped = append(stopped, id)
				continue
			case errors.Is(err, errors.ErrUnsupported):
				// The server cannot stop any run: say so once.
				canStop = false
				stopErr = err
			default:
				stopErr = errors.Join(stopErr, fmt.Errorf("stop evaluation %s: %w", bound(id, 80), err))
			}
		}
		unfinished = append(unfinished, id)
	}
	return stopped, unfinished, stopErr
}

// The steps of a run that a RunError names.
const (
	StepWait      = "wait"               // waiting for the run to end
	StepScenarios = "read the scenarios" // reading (or consuming) its scenarios
)

// GroupByVariant groups the evaluations a create returned by variant, in
// the order of variantIDs: one per variant when the service ran the
// repeats itself (a 2026 server) or there are none, else each variant's
// repeats evaluations in repeat order, read from the layout
// agenta.Client.CreateEvaluation returns on a mid-2024 server (repeat
// after repeat). Within a repeat, an evaluation that names no variant
// keeps the service's order. A count that fits neither is an error.
func GroupByVariant(created []models.Evaluation, variantIDs []string, repeats int) ([][]models.Evaluation, error) {
	if repeats < 2 || len(created) != repeats*len(variantIDs) {
		ordered, err := byVariant(created, variantIDs)
		if err != nil {
			return nil, err
		}
		groups := make([][]models.Evaluation, len(ordered))
		for i, ev := range ordered {
			groups[i] = []models.Evaluation{ev}
		}
		return groups, nil
	}
	groups := make([][]models.Evaluation, len(variantIDs))
	for r := range repeats {
		ordered, err := byVariant(created[r*len(variantIDs):(r+1)*len(variantIDs)], variantIDs)
		if err != nil {
			return nil, err
		}
		for i, ev := range ordered {
			groups[i] = append(groups[i], ev)
		}
	}
	return groups, nil
}

// byVariant orders the created evaluations as the variants were given; an
// evaluation that names no variant keeps the service's order.
func byVariant(created []models.Evaluation, variantIDs []string) ([]models.Evaluation, error) {
	if len(created) != len(variantIDs) {
		ids := make([]string, len(created))
		for i, ev := range created {
			ids[i] = bound(ev.ID, 80)
		}
		return nil, fmt.Errorf("evals: the service created %d evaluations for %d variants: %s", len(created), len(variantIDs), bound(strings.Join(ids, ", "), 400))
	}
	out := make([]models.Evaluation, len(variantIDs))
	used := make([]bool, len(created))
	for i, id := range variantIDs {
		for j, ev := range created {
			if !used[j] && len(ev.VariantIDs) > 0 && ev.VariantIDs[0] == id {
				out[i], used[j] = ev, true
				break
			}
		}
	}
	for i := range out {
		if out[i].ID != "" {
			continue
		}
		for j := range created {
			if !used[j] {
				out[i], used[j] = created[j], true
				break
			}
		}
	}
	return out, nil
}
