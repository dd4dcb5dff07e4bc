package agenta_test

// Downloads are bounded by progress, not by a wall clock: an answer that
// keeps arriving outlasts the per-attempt timeout, one that stalls ends on
// the idle timeout, and each failure names what expired or broke. The
// answers come from agentatest's body faults (Trickle, StallAfter,
// CutAfter).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// progressFake is a fake with one finished evaluation, and its scenarios
// as read without faults.
func progressFake(t *testing.T) (*agentatest.Server, string, []models.EvaluationScenario) {
	t.Helper()
	c, srv, demo := fakeClient(t)
	id := fakeCreate(t, c, demo, demo.TestsetID)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, srv.WaitEvaluations(ctx))
	want, err := c.FetchEvaluationScenarios(ctx, id)
	require.NoError(t, err)
	require.Len(t, want, demo.TestsetRows)
	return srv, id, want
}

// readAll reads an evaluation's scenarios whole, or streamed.
var readAll = map[string]func(context.Context, *agenta.Client, string) ([]models.EvaluationScenario, error){
	"fetch": func(ctx context.Context, c *agenta.Client, id string) ([]models.EvaluationScenario, error) {
		return c.FetchEvaluationScenarios(ctx, id)
	},
	"stream": func(ctx context.Context, c *agenta.Client, id string) ([]models.EvaluationScenario, error) {
		var out []models.EvaluationScenario
		for s, err := range c.StreamEvaluationScenarios(ctx, id) {
			if err != nil {
				return out, err
			}
			out = append(out, s)
		}
		return out, nil
	},
}

// An answer that takes several per-attempt timeouts to arrive, but keeps
// arriving, is read whole.
func TestSlowAnswerOutlastsThePerAttemptTimeout(t *testing.T) {
	srv, id, want := progressFake(t)
	const timeout, piece, pause = 100 * time.Millisecond, 400, 25 * time.Millisecond
	for name, read := range readAll {
		t.Run(name, func(t *testing.T) {
			srv.InjectFault(agentatest.OpFetchEvaluationScenarios, 1, agentatest.Fault{Trickle: pause, TrickleBytes: piece})
			// The idle timeout is set apart from the per-attempt one: a
			// loaded machine (CI's -race run) can hold a 25ms pause past
			// 100ms, and that is the idle timeout's test, not this one.
			c := clientFor(t, srv, agenta.WithTimeout(timeout), agenta.WithIdleTimeout(10*time.Second), agenta.WithMaxRetries(0))

			got, err := read(context.Background(), c, id)

			require.NoError(t, err, "an answer that keeps arriving is never cut off")
			assert.Equal(t, want, got)
			reads := srv.RequestsFor(agentatest.OpFetchEvaluationScenarios)
			last := reads[len(reads)-1]
			require.True(t, last.Fault, "the answer trickled")
			// The pauses alone outlast the per-attempt timeout: the
			// server's sleeps make that so, whatever the machine's load.
			resp, err := http.Get(srv.URL() + "/evaluations/" + id + "/evaluation_scenarios")
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			pauses := (len(body) - 1) / piece
			require.Greater(t, time.Duration(pauses)*pause, 2*timeout, "the test's answer is too short to prove anything")
		})
	}
}

// An answer that stops arriving ends on the idle timeout, with an error
// that says so and how much had arrived: not the caller's deadline, not
// "no answer".
func TestStalledAnswerEndsOnTheIdleTimeout(t *testing.T) {
	srv, id, _ := progressFake(t)
	for _, tc := range []struct {
		name string
		opts []agenta.Option
	}{
		{"the per-attempt timeout's duration by default", []agenta.Option{agenta.WithTimeout(100 * time.Millisecond)}},
		{"WithIdleTimeout, without a per-attempt timeout", []agenta.Option{agenta.WithTimeout(0), agenta.WithIdleTimeout(100 * time.Millisecond)}},
	} {
		for name, read := range readAll {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				srv.InjectFault(agentatest.OpFetchEvaluationScenarios, 1, agentatest.Fault{StallAfter: 1500})
				c := clientFor(t, srv, tc.opts...)
				before := len(srv.RequestsFor(agentatest.OpFetchEvaluationScenarios))
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()

				_, err := read(ctx, c, id)

				t.Logf("error: %v", err)
				require.Error(t, err)
				assert.True(t, errors.Is(err, agenta.ErrIdleTimeout), "expected ErrIdleTimeout, got %v", err)
				assert.True(t, errors.Is(err, agenta.ErrAttemptTimeout), "ErrIdleTimeout is a case of ErrAttemptTimeout")
				for _, other := range []error{agenta.ErrNoResponse, agenta.ErrAnswerCut, context.DeadlineExceeded} {
					assert.False(t, errors.Is(err, other), "%v also matches %v", err, other)
				}
				var decodeErr *agenta.DecodeError
				assert.True(t, errors.As(err, &decodeErr), "a failure while reading the answer is a *DecodeError, got %T", err)
				assert.Contains(t, err.Error(), "stalled after 1500 bytes")
				assert.Contains(t, err.Error(), "idle timeout")
				assert.NoError(t, ctx.Err(), "the caller's context did not end")
				assert.Len(t, srv.RequestsFor(agentatest.OpFetchEvaluationScenarios), before+1, "an answer that began is not retried")
			})
		}
	}
}

// With no idle timeout, a stalled answer is left to the caller's context.
func TestIdleTimeoutZeroLeavesTheBodyToTheContext(t *testing.T) {
	srv, id, _ := progressFake(t)
	srv.InjectFault(agentatest.OpFetchEvaluationScenarios, 1, agentatest.Fault{StallAfter: 1500})
	c := clientFor(t, srv, agenta.WithTimeout(50*time.Millisecond), agenta.WithIdleTimeout(0))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()

	_, err := c.FetchEvaluationScenarios(ctx, id)

	assert.True(t, errors.Is(err, context.DeadlineExceeded), "expected the caller's deadline, got %v", err)
	assert.False(t, errors.Is(err, agenta.ErrAttemptTimeout), "%v matches ErrAttemptTimeout", err)
	assert.Contains(t, err.Error(), "the caller's context ended")
}

// A row that takes the caller longer than the idle timeout is not a stall:
// only the time a read waits on the network counts.
func TestIdleTimeoutIgnoresTheCallersTime(t *testing.T) {
	srv, id, want := progressFake(t)
	// The timeout leaves a loaded machine (the race detector, CI) room to
	// send the headers; the caller's work on a row is twice as long.
	const timeout = 500 * time.Millisecond
	c := clientFor(t, srv, agenta.WithTimeout(timeout), agenta.WithMaxRetries(0))
	n := 0
	for s, err := range c.StreamEvaluationScenarios(context.Background(), id) {
		require.NoError(t, err, "after %d rows", n)
		assert.Equal(t, want[n].ID, s.ID)
		n++
		if n <= 3 {
			time.Sleep(2 * timeout) // the caller's work on the row
		}
	}
	assert.Equal(t, len(want), n)
}

// An answer cut short says so and how much had arrived; it is not "no
// answer from the server".
func TestCutAnswerIsNotNoResponse(t *testing.T) {
	srv, id, _ := progressFake(t)
	for name, read := range readAll {
		t.Run(name, func(t *testing.T) {
			srv.InjectFault(agentatest.OpFetchEvaluationScenarios, 1, agentatest.Fault{CutAfter: 3000})
			c := clientFor(t, srv)

			_, err := read(context.Background(), c, id)

			t.Logf("error: %v", err)
			assert.True(t, errors.Is(err, agenta.ErrAnswerCut), "expected ErrAnswerCut, got %v", err)
			assert.False(t, errors.Is(err, agenta.ErrNoResponse), "%v matches ErrNoResponse", err)
			assert.False(t, errors.Is(err, agenta.ErrAttemptTimeout), "%v matches ErrAttemptTimeout", err)
			assert.Contains(t, err.Error(), "the answer was cut short after 3000 bytes")
			assert.NotContains(t, err.Error(), "no answer")
		})
	}
}

// The per-attempt timeout bounds the wait for the headers, and says so.
func TestPerAttemptTimeoutNamesTheHeaders(t *testing.T) {
	srv, id, _ := progressFake(t)
	srv.InjectFault(agentatest.OpFetchEvaluationScenarios, 1, agentatest.Fault{Stall: agentatest.StallForever})
	c := clientFor(t, srv, agenta.WithTimeout(50*time.Millisecond), agenta.WithMaxRetries(0))

	_, err := c.FetchEvaluationScenarios(context.Background(), id)

	t.Logf("error: %v", err)
	assert.True(t, errors.Is(err, agenta.ErrAttemptTimeout), "expected ErrAttemptTimeout, got %v", err)
	assert.False(t, errors.Is(err, agenta.ErrIdleTimeout), "%v matches ErrIdleTimeout: no body had begun", err)
	assert.True(t, strings.Contains(err.Error(), "WithTimeout, 50ms") && strings.Contains(err.Error(), "headers"),
		"the message names the limit and what it bounded: %v", err)
}
