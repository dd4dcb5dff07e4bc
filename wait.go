package agenta

import (
	"context"
	"net/http"
	"time"

	"github.com/agenta-go/agenta/models"
)

// DefaultWaitInterval is the pause between status reads of WaitEvaluation
// when WaitOptions.Interval is 0: the service's own web page polls every 2 s.
const DefaultWaitInterval = 2 * time.Second

// WaitOptions tunes WaitEvaluation. The zero value, like a nil pointer,
// polls every 2 s and reports nothing. Whatever the options, the wait rides
// out transient failures (no answer, 408, 429, 5xx, an answer cut short)
// until ctx's deadline, with capped exponential backoff and jitter, and
// ends at once on a permanent error (another 4xx, an unknown evaluation):
// see WaitEvaluation. OnRetry reports each failure it rides out.
type WaitOptions struct {
	// Interval between status reads; 0 means the service's own web page's 2 s.
	Interval time.Duration
	// OnStatus, if set, is called with the first status read and again
	// each time the status value changes, on the waiting goroutine, for
	// example to print a progress line. It must not block for long: the
	// next read waits for it.
	OnStatus func(status models.Result)
	// OnRetry, if set, is called after each failed read that the wait
	// rides out (see WaitEvaluation), before it pauses and reads again, on
	// the waiting goroutine, for example to print a line saying that the
	// server is in trouble. A failure that leaves no time for another read
	// before the deadline is not reported here but in the *WaitError's
	// LastError. It must not block for long.
	OnRetry func(retry WaitRetry)
	// NoWorkerAfter applies on a 2026 server only (see WaitRunOptions): a
	// run that stays unfinished without a scenario for this long ends the
	// wait with a *NoWorkerError (ErrNoWorker); 0 means
	// DefaultNoWorkerAfter, a negative value never gives up.
	NoWorkerAfter time.Duration
}

// WaitRetry is a read of WaitEvaluation that failed and will be retried, as
// WaitOptions.OnRetry sees it.
type WaitRetry struct {
	// Err is the read's error, after the Client's own retries
	// (WithMaxRetries): an *APIError (such as a 503), a *DecodeError of an
	// answer cut short, or a transport failure (ErrNoResponse,
	// ErrAttemptTimeout).
	Err error
	// Failures counts the reads that failed in a row, this one included.
	Failures int
	// Wait is the pause before the next read.
	Wait time.Duration
}

// waiter is the state of one WaitEvaluation.
type waiter struct {
	c        *Client
	ctx      context.Context
	id       string
	interval time.Duration
	onStatus func(models.Result)
	onRetry  func(WaitRetry)

	last     models.EvaluationStatus // the last status read
	seen     bool                    // a status read has succeeded
	since    time.Time               // the first read that saw last
	read     time.Time               // the last read that succeeded
	failures int                     // reads failed in a row
	lastErr  error                   // the last of those failures
	final    bool                    // the next read is the last before the deadline
	timer    *time.Timer
}

// retryRead runs read until it succeeds, retrying transient failures (see
// transientWaitFailure) until the wait's context ends.
func retryRead[T any](w *waiter, read func(context.Context, string) (*T, error)) (*T, error) {
	for {
		v, err := read(w.ctx, w.id)
		if err == nil {
			w.read, w.failures, w.lastErr = time.Now(), 0, nil
			return v, nil
		}
		if w.ctx.Err() != nil {
			return nil, w.ended()
		}
		if !transientWaitFailure(err, w.seen) {
			return nil, err
		}
		w.failures++
		w.lastErr = err
		pause := waitPause(w.c.waitMin, w.c.waitMax, w.interval, w.failures)
		after, last := w.plan(pause)
		if after >= 0 && w.onRetry != nil {
			w.onRetry(WaitRetry{Err: err, Failures: w.failures, Wait: after})
		}
		if err := w.sleep(after, last); err != nil {
			return nil, err
		}
	}
}

// plan returns the pause before the next read: pause, or less so that a
// last read ends before the deadline (see planRead); after < 0 when no
// read follows.
func (w *waiter) plan(pause time.Duration) (after time.Duration, last bool) {
	if w.final {
		return -1, true
	}
	deadline, ok := w.ctx.Deadline()
	if !ok {
		return pause, false
	}
	return planRead(pause, time.Until(deadline))
}

// pause waits the pause planned for pause before the next read.
func (w *waiter) pause(pause time.Duration) error {
	return w.sleep(w.plan(pause))
}

// sleep waits after before the next read, then returns nil; last marks it
// the last read before the deadline. With after < 0 it waits for the
// context. It returns the context's end as a *WaitError.
func (w *waiter) sleep(after time.Duration, last bool) error {
	w.final = w.final || last
	if after < 0 {
		<-w.ctx.Done()
		return w.ended()
	}
	if w.timer == nil {
		w.timer = time.NewTimer(after)
	} else {
		w.timer.Reset(after)
	}
	select {
	case <-w.ctx.Done():
		return w.ended()
	case <-w.timer.C:
		return nil
	}
}

func (w *waiter) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// ended is the error of a wait that its context ended.
func (w *waiter) ended() error {
	now := time.Now()
	e := &WaitError{EvaluationID: w.id, LastError: w.lastErr, Err: w.ctx.Err()}
	if w.seen {
		// The status is the server's text: a value the SDK does not know
		// may echo a credential.
		e.Status = models.EvaluationStatus(w.c.text(string(w.last), maxMessage))
		e.Held, e.LastRead = now.Sub(w.since), now.Sub(w.read)
	}
	return e
}

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
