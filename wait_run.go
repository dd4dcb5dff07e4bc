package agenta

import (
	"context"
	"net/http"
	"time"

	"github.com/agenta-go/agenta/models"
)

// DefaultNoWorkerAfter is how long WaitRun lets a run stay running without
// a single scenario before it reports that no worker is consuming the
// queue, when WaitRunOptions.NoWorkerAfter is 0. On a live v0.113 server
// the scenarios of a run appear 0.3 to 3 s after create.
const DefaultNoWorkerAfter = 2 * time.Minute

// WaitRunOptions tunes WaitRun. The zero value, like a nil pointer, reads
// the run every 2 s and reports a run without scenarios after
// DefaultNoWorkerAfter.
type WaitRunOptions struct {
	// Interval between reads; 0 means DefaultWaitInterval.
	Interval time.Duration
	// NoWorkerAfter is how long the wait lets the run stay unfinished
	// without any scenario before it returns a *NoWorkerError (ErrNoWorker);
	// 0 means DefaultNoWorkerAfter, and a negative value never gives up
	// (ctx alone bounds the wait).
	NoWorkerAfter time.Duration
	// OnStatus, if set, is called with the run at the first read and each
	// time its status changes, on the waiting goroutine.
	OnStatus func(run models.EvaluationRun)
	// OnRetry, if set, is called after each failed read the wait rides
	// out, as WaitOptions.OnRetry is.
	OnRetry func(retry WaitRetry)
}

// WaitRun waits until a 2026 run is over and returns it as last read: with
// status success (every row done), errors (done, some cells failed: no
// error), failure (the run could not execute) or cancelled. failure and
// cancelled also return an *EvaluationFailedError, which matches
// ErrEvaluationFailed.
//
// Each tick reads the run (about 2 kB) and, until the run has a scenario,
// asks for one scenario (about 0.4 kB). A run that stays unfinished with no
// scenario for longer than opts.NoWorkerAfter (measured from the wait's
// first read) returns the run and a *NoWorkerError (ErrNoWorker): no
// worker is consuming the evaluation queue, or it is busy with other
// runs. The service has no timeout of its own: such a run stays queued,
// and a worker that starts later runs it.
//
// A stopped run (StopSimpleEvaluation) is no reason to end the wait: on
// v0.113 it keeps running to the end. A run waiting on human or custom
// evaluators stays running for ever: bound the wait with ctx, whose end
// is a *WaitError naming the last status seen. Server trouble is ridden
// out as by WaitEvaluation, until ctx ends; an unknown run (the service's
// {"count":0}) ends the wait at once, unless the run had been read before,
// since the service answers its own internal errors that way too. opts
// may be nil.
func (c *Client) WaitRun(ctx context.Context, runID string, opts *WaitRunOptions) (*models.EvaluationRun, error) {
	if _, err := segment("runID", "run_id", runID); err != nil {
		return nil, err
	}
	w := &waiter{c: c, ctx: ctx, id: runID, interval: DefaultWaitInterval}
	noWorker := DefaultNoWorkerAfter
	var onStatus func(models.EvaluationRun)
	if opts != nil {
		if opts.Interval < 0 {
			return nil, invalid("WaitRunOptions.Interval", "must not be negative, got %v", opts.Interval)
		}
		if opts.Interval > 0 {
			w.interval = opts.Interval
		}
		if opts.NoWorkerAfter != 0 {
			noWorker = opts.NoWorkerAfter
		}
		onStatus, w.onRetry = opts.OnStatus, opts.OnRetry
	}
	if ctx == nil {
		return nil, invalid("ctx", "is nil")
	}
	defer w.stop()

	started := time.Now()
	scenarios := false
	for {
		run, err := retryRead(w, c.FetchRun)
		if err != nil {
			return nil, err
		}
		value := models.EvaluationStatus(run.Status)
		if !w.seen || value != w.last {
			w.last, w.since, w.seen = value, w.read, true
			if onStatus != nil {
				onStatus(*run)
			}
		}
		if run.Status.Terminal() {
			if run.Status.Failed() {
				return run, &EvaluationFailedError{EvaluationID: runID, Status: value,
					Message: "the run could not execute (the service says no more; its log has the cause)"}
			}
			return run, nil
		}
		if !scenarios {
			found, err := retryRead(w, c.anyScenario)
			if err != nil {
				return nil, err
			}
			scenarios = *found
			if waited := time.Since(started); !scenarios && noWorker > 0 && waited >= noWorker {
				return run, &NoWorkerError{RunID: runID, Status: models.RunStatus(c.text(string(run.Status), maxMessage)), Waited: waited}
			}
		}
		if err := w.pause(w.interval); err != nil {
			return nil, err
		}
	}
}

// anyScenario reports whether a run has a scenario yet: one page of one
// scenario.
func (c *Client) anyScenario(ctx context.Context, runID string) (*bool, error) {
	r := &request{operation: "QueryScenarios", method: http.MethodPost, path: "/evaluations/scenarios/query",
		body: scenariosQueryBody{models.RunScenarioQuery{RunID: runID}, windowing{Limit: 1, Order: "ascending"}}, read: true}
	a, err := getOne[scenariosPage](ctx, c, r)
	if err != nil {
		return nil, err
	}
	if err := c.checkCount(r, a, a.Count, len(a.Scenarios)); err != nil {
		return nil, err
	}
	found := len(a.Scenarios) > 0
	return &found, nil
}
