package agenta

// An adversarial review after issues 8 and 12: answers and transports the
// hostile suite did not try. Each test failed before its fix.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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
