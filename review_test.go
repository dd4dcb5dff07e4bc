package agenta

// An adversarial review after issues 8 and 12: answers and transports the
// hostile suite did not try. Each test failed before its fix.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A run whose status echoes the key, in any encoding, and that never ends:
// the *WaitError names the status, scrubbed.
func TestReviewWaitErrorScrubsStatus(t *testing.T) {
	for _, echo := range []string{hostileKey, hostileEscapeAll(hostileKey)} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"status":{"type":"status","value":"RUNNING `+echo+`","error":null}}`)
		}))
		c := hostileClient(t, s.URL+"/api")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := c.WaitEvaluation(ctx, "e-1", &WaitOptions{Interval: 20 * time.Millisecond})
		cancel()
		s.Close()
		var waitErr *WaitError
		if !errors.As(err, &waitErr) {
			t.Fatalf("got %v, want a *WaitError", err)
		}
		if strings.Contains(string(waitErr.Status), hostileKey) {
			t.Errorf("WaitError.Status holds the API key: %q", waitErr.Status)
		}
		hostileCheckError(t, err)
	}
}

// wrappedTransport is a RoundTripper that is not an *http.Transport, such
// as a tracing wrapper: the SDK cannot see its settings.
type wrappedTransport struct{ next http.RoundTripper }

func (w wrappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return w.next.RoundTrip(r)
}

// Item 3 of issue 12 with a caller's RoundTripper that is not an
// *http.Transport: a complete gzip answer whose trailer or end is held back
// still returns at once.
func TestReviewHeldBackEndWrappedTransport(t *testing.T) {
	const wait = 6 * time.Second
	const bound = 2 * time.Second
	for _, framing := range []string{"gzip", "gzip trailer"} {
		t.Run(framing, func(t *testing.T) {
			inner := &http.Transport{}
			t.Cleanup(inner.CloseIdleConnections)
			c := hostileClient(t, hostileHoldBack(t, framing), WithTimeout(0),
				WithHTTPClient(&http.Client{Transport: wrappedTransport{inner}}))
			for _, op := range []hostileOp{hostileGetVariant, hostileListHuman, hostileStream} {
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				took, err := hostileElapsed(ctx, c, op)
				cancel()
				if err != nil {
					t.Errorf("%s: %v, want the complete answer", op.name, err)
				}
				if took > bound {
					t.Errorf("%s: returned after %s, want within %s", op.name, took, bound)
				}
			}
		})
	}
}

// stallTransport answers every request with status and a body that sends
// prefix (inside a '[' for a list) and then nothing, and that ignores the
// request's context, as a hand-written RoundTripper may: only Close ends a
// read.
type stallTransport struct {
	status int
	prefix string
}

func (s stallTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	prefix := s.prefix
	if s.status == http.StatusOK && !strings.Contains(r.URL.Path, "/variants/") {
		prefix = "[" + prefix
	}
	go func() {
		io.WriteString(pw, prefix)
		// Then nothing; the reader's Close ends the pipe.
	}()
	return &http.Response{
		StatusCode: s.status, Status: http.StatusText(s.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: pr, Request: r,
	}, nil
}

// Every read the SDK does ends at the attempt's timeout or the context's
// deadline, even with a RoundTripper whose bodies ignore the context.
func TestReviewReadsEndWithContextIgnoringTransport(t *testing.T) {
	const limit = 300 * time.Millisecond
	cases := []struct {
		name    string
		rt      stallTransport
		opts    []Option
		ctxWait time.Duration
		want    error // a sentinel the error matches
	}{
		{"2xx, attempt timeout", stallTransport{200, `{"app_id":"a-1",`}, []Option{WithTimeout(limit), WithMaxRetries(0)}, time.Minute, ErrAttemptTimeout},
		{"2xx, context", stallTransport{200, `{"app_id":"a-1",`}, []Option{WithTimeout(0)}, limit, context.DeadlineExceeded},
		{"error body, attempt timeout", stallTransport{500, `{"detail":"`}, []Option{WithTimeout(limit), WithMaxRetries(0)}, time.Minute, ErrServer},
		{"error body, context", stallTransport{500, `{"detail":"`}, []Option{WithTimeout(0)}, limit, ErrServer},
		{"retried 503 body, context", stallTransport{503, `{"detail":"`}, []Option{WithTimeout(0)}, limit, context.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, "http://127.0.0.1:9/api", append(tc.opts, WithHTTPClient(&http.Client{Transport: tc.rt}))...)
			for _, op := range []hostileOp{hostileGetVariant, hostileListHuman, hostileStream} {
				ctx, cancel := context.WithTimeout(context.Background(), tc.ctxWait)
				done := make(chan error, 1)
				start := time.Now()
				go func() { _, err := hostileElapsed(ctx, c, op); done <- err }()
				select {
				case err := <-done:
					if !errors.Is(err, tc.want) {
						t.Errorf("%s: got %v, want an error matching %v", op.name, err, tc.want)
					}
					hostileCheckError(t, err)
				case <-time.After(10 * limit):
					t.Errorf("%s: still running after %s, want an end near %s", op.name, time.Since(start), limit)
				}
				cancel()
			}
		})
	}
}

// No hostile answer leaves a goroutine of the SDK behind once the call has
// returned, its server is gone and the idle connections are closed: not
// the drain of a complete answer whose end was held back, not a gzip
// reader, not a stream stopped early or cut by its context, not a 101.
func TestReviewHostileAnswersLeaveNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("calls", func(t *testing.T) {
		ops := []hostileOp{hostileGetVariant, hostileAddVariant, hostileListHuman, hostileStream}
		run := func(c *Client, ctxWait time.Duration) {
			for _, op := range ops {
				ctx, cancel := context.WithTimeout(context.Background(), ctxWait)
				_ = op.run(ctx, c)
				cancel()
			}
		}
		for _, framing := range []string{"chunked", "content-length", "gzip", "gzip trailer"} {
			inner := &http.Transport{}
			run(hostileClient(t, hostileHoldBack(t, framing), WithTimeout(0)), time.Minute)
			run(hostileClient(t, hostileHoldBack(t, framing), WithTimeout(0),
				WithHTTPClient(&http.Client{Transport: wrappedTransport{inner}})), time.Minute)
			t.Cleanup(inner.CloseIdleConnections)
		}
		switching, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) {
			io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
		})
		run(hostileClient(t, switching, WithTimeout(0)), 50*time.Millisecond)
		run(hostileClient(t, "http://127.0.0.1:9/api", WithTimeout(0),
			WithHTTPClient(&http.Client{Transport: stallTransport{200, `{"app_id":"a-1",`}})), 50*time.Millisecond)

		// A stream stopped after its first row, and one its context cuts.
		rows := `[{"id":"s-1","evaluation_id":"e-1"},{"id":"s-2","evaluation_id":"e-1"},`
		stalled, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) {
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"+
				strconv.FormatInt(int64(len(rows)), 16)+"\r\n"+rows+"\r\n")
		})
		c := hostileClient(t, stalled, WithTimeout(0))
		for range c.StreamEvaluationScenarios(context.Background(), "e-1") {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		for _, err := range c.StreamEvaluationScenarios(ctx, "e-1") {
			if err != nil {
				break
			}
		}
		cancel()
	})
	// Connections and drains end asynchronously (a drain within drainWait):
	// give them time, then compare, with a margin for the runtime's own.
	const margin = 2
	deadline := time.Now().Add(3*drainWait + 2*time.Second)
	for runtime.NumGoroutine() > before+margin && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+margin {
		buf := make([]byte, 1<<20)
		t.Errorf("expected at most %d goroutines, got %d:\n%s", before+margin, n, buf[:runtime.Stack(buf, true)])
	}
}
