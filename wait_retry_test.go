package agenta_test

// WaitEvaluation through server trouble, against agentatest's fault
// windows: the wait rides out what passes (503s, a restart, a 500, a read
// that times out) until its deadline, and ends at once on what another read
// would only repeat. The windows are scaled down from the seconds;
// under WithManualEvaluations the run finishes exactly when a test says.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// troubled is a fake without a worker, an evaluation created on it, and a
// client with short retry waits.
type troubled struct {
	srv *agentatest.Server
	c   *agenta.Client
	id  string

	mu      sync.Mutex
	retries []agenta.WaitRetry
	seen    []models.EvaluationStatus
}

func newTroubled(t *testing.T, opts ...agenta.Option) *troubled {
	t.Helper()
	srv := agentatest.NewTestServer(t, agentatest.WithManualEvaluations())
	demo := agentatest.SeedDemo(srv)
	c := clientFor(t, srv, append([]agenta.Option{agenta.WithRetryWait(time.Millisecond, 10*time.Millisecond)}, opts...)...)
	return &troubled{srv: srv, c: c, id: fakeCreate(t, c, demo, demo.TestsetID)}
}

// finish runs every row of the evaluation: its next status read says
// FINISHED.
func (tr *troubled) finish() { tr.srv.AdvanceEvaluations(1 << 20) }

// wait waits for the evaluation within timeout, recording what the hooks
// see; firstStatus, if set, runs once, after the first status read.
func (tr *troubled) wait(timeout, interval time.Duration, firstStatus func()) (*models.Evaluation, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return tr.c.WaitEvaluation(ctx, tr.id, &agenta.WaitOptions{
		Interval: interval,
		OnStatus: func(r models.Result) {
			tr.mu.Lock()
			tr.seen = append(tr.seen, r.EvaluationStatus())
			first := len(tr.seen) == 1
			tr.mu.Unlock()
			if first && firstStatus != nil {
				firstStatus()
			}
		},
		OnRetry: func(r agenta.WaitRetry) {
			tr.mu.Lock()
			tr.retries = append(tr.retries, r)
			tr.mu.Unlock()
		},
	})
}

// statusReads counts the status reads the server answered with status code.
func (tr *troubled) statusReads(code int) int {
	n := 0
	for _, r := range tr.srv.RequestsFor(agentatest.OpFetchEvaluationStatus) {
		if r.Status == code {
			n++
		}
	}
	return n
}

// requireRetries checks that the hook saw each failure in a row, counted,
// with a pause, and that each failure matches want.
func (tr *troubled) requireRetries(t *testing.T, want error) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	require.NotEmpty(t, tr.retries, "OnRetry was never called")
	for i, r := range tr.retries {
		assert.Equal(t, i+1, r.Failures, "retry %d: failures in a row", i)
		assert.Greater(t, r.Wait, time.Duration(0), "retry %d: a pause before the next read", i)
		assert.True(t, errors.Is(r.Err, want), "retry %d: expected an error matching %v, got %v", i, want, r.Err)
	}
}

// The 8 s of 503s with a 2 m deadline, scaled down: every status
// read fails for a second, many times more than one read's own retries,
// and the wait returns the finished run once the window ends.
func TestWaitThroughA503Window(t *testing.T) {
	tr := newTroubled(t)
	tr.finish()
	tr.srv.InjectFaultFor(agentatest.OpFetchEvaluationStatus, time.Second, agentatest.Fault{
		Status: 503, Body: "<html><title>503 Service Temporarily Unavailable</title></html>"})

	ev, err := tr.wait(2*time.Minute, 5*time.Millisecond, nil)

	require.NoError(t, err)
	assert.Equal(t, models.EvaluationFinished, ev.State())
	tr.requireRetries(t, agenta.ErrServer)
	var apiErr *agenta.APIError
	require.True(t, errors.As(tr.retries[0].Err, &apiErr), "expected the 503 as an *APIError, got %v", tr.retries[0].Err)
	assert.Equal(t, 503, apiErr.StatusCode)
	assert.Greater(t, tr.statusReads(503), 1+agenta.DefaultMaxRetries, "more 503s than one read's retries ride out")
	assert.Equal(t, 1, tr.statusReads(200), "one status read once the window ended")
}

// A server restart (connection refused for a while) in the middle of a
// wait.
func TestWaitThroughARestart(t *testing.T) {
	tr := newTroubled(t)

	ev, err := tr.wait(2*time.Minute, 5*time.Millisecond, func() {
		tr.finish()
		tr.srv.Restart(500 * time.Millisecond)
	})

	require.NoError(t, err)
	assert.Equal(t, models.EvaluationFinished, ev.State())
	assert.Equal(t, []models.EvaluationStatus{models.EvaluationInitialized, models.EvaluationFinished}, tr.seen)
	t.Logf("first retry: %v", tr.retries[0].Err)
	tr.requireRetries(t, agenta.ErrNoResponse)
}

// A single 500 in the middle of a wait is a server in trouble, not the end.
func TestWaitThroughASingle500(t *testing.T) {
	tr := newTroubled(t)

	ev, err := tr.wait(2*time.Minute, 5*time.Millisecond, func() {
		tr.srv.InjectFault(agentatest.OpFetchEvaluationStatus, 1, agentatest.Fault{
			Status: 500, Body: `{"detail":"(psycopg.OperationalError) server closed the connection unexpectedly"}`})
		tr.finish()
	})

	require.NoError(t, err)
	assert.Equal(t, models.EvaluationFinished, ev.State())
	tr.requireRetries(t, agenta.ErrServer)
	assert.Len(t, tr.retries, 1, "one failed read")
	assert.Equal(t, 1, tr.statusReads(500))
}

// A status read that times out is retried by the wait, past the Client's
// own retries.
func TestWaitThroughAReadTimeout(t *testing.T) {
	tr := newTroubled(t, agenta.WithTimeout(100*time.Millisecond), agenta.WithMaxRetries(0))

	ev, err := tr.wait(2*time.Minute, 5*time.Millisecond, func() {
		tr.srv.InjectFault(agentatest.OpFetchEvaluationStatus, 1, agentatest.Fault{Stall: agentatest.StallForever})
		tr.finish()
	})

	require.NoError(t, err)
	assert.Equal(t, models.EvaluationFinished, ev.State())
	tr.requireRetries(t, agenta.ErrAttemptTimeout)
	assert.Len(t, tr.retries, 1)
}

// The final evaluation read is ridden out like the status reads.
func TestWaitThroughTroubleOnTheFinalRead(t *testing.T) {
	tr := newTroubled(t, agenta.WithMaxRetries(0))
	tr.finish()
	tr.srv.InjectFault(agentatest.OpFetchEvaluation, 2, agentatest.Fault{Status: 502})

	ev, err := tr.wait(2*time.Minute, 5*time.Millisecond, nil)

	require.NoError(t, err)
	assert.Equal(t, models.EvaluationFinished, ev.State())
	tr.requireRetries(t, agenta.ErrServer)
	assert.Len(t, tr.retries, 2)
}

// What another read would only repeat ends the wait at once, whatever its
// deadline, without a retry.
func TestWaitEndsAtOnceOnPermanentErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		id      string // "" for the evaluation created
		fault   *agentatest.Fault
		after   bool // the fault comes after a first status read
		want    error
		reads   int
		notWant error
	}{
		{name: "404, no such route", fault: &agentatest.Fault{Status: 404}, want: agenta.ErrRouteNotFound, reads: 1},
		{name: "404 after a status", fault: &agentatest.Fault{Status: 404}, after: true, want: agenta.ErrNotFound, reads: 2},
		{name: "unknown evaluation", id: "0190b5a2-1234-7abc-8def-0123456789ab", want: agenta.ErrNotFound, reads: 1},
		{name: "malformed id", id: "nope", want: agenta.ErrServer, reads: 1, notWant: agenta.ErrNotFound},
		{name: "a 500 before any status", fault: &agentatest.Fault{Status: 500}, want: agenta.ErrServer, reads: 1},
		{name: "401 after a status", fault: &agentatest.Fault{Status: 401}, after: true, want: agenta.ErrUnauthorized, reads: 2},
		{name: "not JSON", fault: &agentatest.Fault{Status: 200, Body: "<html>maintenance</html>"}, after: true, reads: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTroubled(t)
			if tc.id != "" {
				tr.id = tc.id
			}
			inject := func() {
				if tc.fault != nil {
					tr.srv.InjectFault(agentatest.OpFetchEvaluationStatus, agentatest.Always, *tc.fault)
				}
			}
			var first func()
			if tc.after {
				first = inject
			} else {
				inject()
			}

			ev, err := tr.wait(2*time.Minute, 5*time.Millisecond, first)

			assert.Nil(t, ev)
			require.Error(t, err)
			if tc.want != nil {
				assert.True(t, errors.Is(err, tc.want), "expected %v, got %v", tc.want, err)
			} else {
				var decodeErr *agenta.DecodeError
				assert.True(t, errors.As(err, &decodeErr), "expected a *DecodeError, got %T %v", err, err)
			}
			if tc.notWant != nil {
				assert.False(t, errors.Is(err, tc.notWant), "%v also matches %v", err, tc.notWant)
			}
			var waitErr *agenta.WaitError
			assert.False(t, errors.As(err, &waitErr), "the error as it is, not a *WaitError: %v", err)
			assert.Empty(t, tr.retries, "no retry")
			assert.Len(t, tr.srv.RequestsFor(agentatest.OpFetchEvaluationStatus), tc.reads, "status reads")
		})
	}
}

// A wait whose deadline comes during server trouble says what was last
// seen, when, and what the failing reads said.
func TestWaitDeadlineDuringTrouble(t *testing.T) {
	tr := newTroubled(t)

	_, err := tr.wait(300*time.Millisecond, 5*time.Millisecond, func() {
		tr.srv.InjectFault(agentatest.OpFetchEvaluationStatus, agentatest.Always, agentatest.Fault{Status: 503})
	})

	t.Logf("error: %v", err)
	var waitErr *agenta.WaitError
	require.True(t, errors.As(err, &waitErr), "expected *WaitError, got %T %v", err, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "expected the context's error, got %v", err)
	assert.Equal(t, models.EvaluationStatus(models.EvaluationInitialized), waitErr.Status)
	assert.LessOrEqual(t, waitErr.LastRead, waitErr.Held, "the last read came after the first")
	var apiErr *agenta.APIError
	require.True(t, errors.As(waitErr.LastError, &apiErr), "LastError keeps the failing read's answer, got %v", waitErr.LastError)
	assert.Equal(t, 503, apiErr.StatusCode)
	assert.False(t, errors.Is(err, agenta.ErrServer), "the wait's error is the deadline, the 503 is in LastError")
	assert.Contains(t, err.Error(), "last read")
	assert.Contains(t, err.Error(), "the last read failed")
	assert.Contains(t, err.Error(), "503 Service Unavailable")
	tr.requireRetries(t, agenta.ErrServer)
}

// The issue's --interval 1h --timeout 20s, scaled down: a run that
// finishes after the first read is seen by one last read before the
// deadline, not reported as INITIALIZED after sleeping through it.
func TestWaitReadsOnceMoreBeforeItsDeadline(t *testing.T) {
	tr := newTroubled(t)

	// The last read is kept a tenth of the wait before the deadline: 4 s
	// leaves it 400 ms, which a loaded -race run needs (1 s and 2 s
	// failed there now and then).
	ev, err := tr.wait(4*time.Second, time.Hour, tr.finish)

	require.NoError(t, err, "the last read before the deadline sees the finished run")
	assert.Equal(t, models.EvaluationFinished, ev.State())
	assert.Len(t, tr.srv.RequestsFor(agentatest.OpFetchEvaluationStatus), 2, "the first read and the last before the deadline")
}

// A run still not over at that last read: the error says when the status
// was last read.
func TestWaitDeadlineSaysWhenTheStatusWasLastRead(t *testing.T) {
	tr := newTroubled(t)

	_, err := tr.wait(4*time.Second, time.Hour, nil) // see TestWaitReadsOnceMoreBeforeItsDeadline

	t.Logf("error: %v", err)
	var waitErr *agenta.WaitError
	require.True(t, errors.As(err, &waitErr), "expected *WaitError, got %T %v", err, err)
	assert.Len(t, tr.srv.RequestsFor(agentatest.OpFetchEvaluationStatus), 2, "the first read and the last before the deadline")
	assert.Less(t, waitErr.LastRead, waitErr.Held, "the status was read again after it was first seen")
	assert.Nil(t, waitErr.LastError, "the last read succeeded")
	assert.Contains(t, err.Error(), "status EVALUATION_INITIALIZED for ")
	assert.Contains(t, err.Error(), ", last read ")
	assert.NotContains(t, err.Error(), "failed")
}
