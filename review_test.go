package agenta

// An adversarial review after issues 8 and 12: answers and transports the
// hostile suite did not try. Each test failed before its fix.

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
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

// silentTransport never answers and ignores the request's context and its
// Cancel channel, as a hand-written RoundTripper may; it returns only when
// release is closed.
type silentTransport struct{ release chan struct{} }

func (s silentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	<-s.release
	return nil, errors.New("released")
}

// A RoundTripper that never answers ends the call at the attempt's timeout
// or the context's deadline, as a server that never answers does.
func TestReviewSilentTransportEndsAtDeadline(t *testing.T) {
	const limit = 300 * time.Millisecond
	cases := []struct {
		name    string
		opts    []Option
		ctxWait time.Duration
		want    error
	}{
		{"attempt timeout", []Option{WithTimeout(limit), WithMaxRetries(0)}, time.Minute, ErrAttemptTimeout},
		{"context", []Option{WithTimeout(0)}, limit, context.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := silentTransport{make(chan struct{})}
			t.Cleanup(func() { close(rt.release) })
			c := hostileClient(t, "http://127.0.0.1:9/api", append(tc.opts, WithHTTPClient(&http.Client{Transport: rt}))...)
			for _, op := range []hostileOp{hostileGetVariant, hostileAddVariant, hostileStream} {
				ctx, cancel := context.WithTimeout(context.Background(), tc.ctxWait)
				done := make(chan error, 1)
				go func() { _, err := hostileElapsed(ctx, c, op); done <- err }()
				select {
				case err := <-done:
					if !errors.Is(err, tc.want) {
						t.Errorf("%s: got %v, want an error matching %v", op.name, err, tc.want)
					}
					hostileCheckError(t, err)
				case <-time.After(10 * limit):
					t.Errorf("%s: still running after %s, want an end near %s", op.name, 10*limit, limit)
				}
				cancel()
			}
		})
	}
}

// A careless user turns a limit off with math.MaxInt64: every answer still
// decodes, and no limit overflows into refusing everything.
func TestReviewHugeResponseLimits(t *testing.T) {
	variant := `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default"}`
	rows := `[{"id":"h-1","app_id":"a-1"},{"id":"h-2","app_id":"a-1"}]`
	scenarios := `[{"id":"s-1","evaluation_id":"e-1"},{"id":"s-2","evaluation_id":"e-1"}]`
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/evaluation_scenarios"):
			io.WriteString(w, scenarios)
		case strings.HasSuffix(r.URL.Path, "/human-evaluations"):
			io.WriteString(w, rows)
		default:
			io.WriteString(w, variant)
		}
	}))
	t.Cleanup(s.Close)
	for _, limits := range []ResponseLimits{
		{Single: math.MaxInt64},
		{List: math.MaxInt64},
		{Element: math.MaxInt64},
		{Single: math.MaxInt64, List: math.MaxInt64, Element: math.MaxInt64},
		{List: math.MaxInt64 - 1, Element: math.MaxInt64 - 1},
	} {
		c := hostileClient(t, s.URL+"/api", WithResponseLimits(limits))
		for _, op := range []hostileOp{hostileGetVariant, hostileListHuman, hostileFetchScenarios, hostileStream} {
			if err := op.run(context.Background(), c); err != nil {
				t.Errorf("%+v, %s: %v, want the answer", limits, op.name, err)
			}
		}
	}
}

// A message the SDK cuts before it can scrub it (a detail, a 422 msg, a
// timestamp, a status) never keeps the first characters of a key that
// the cut split: the key is echoed with one character \u-escaped, so the
// scrub of the raw body misses it, and lands on the cut.
func TestReviewCutNeverSplitsAKey(t *testing.T) {
	mixed := `\u00` + strconv.FormatInt(int64(hostileKey[0]), 16) + hostileKey[1:]
	prefix := hostileKey[:8]
	cases := []struct {
		name   string
		op     hostileOp
		status int
		body   string
	}{
		{"404 detail", hostileGetVariant, 404,
			`{"detail":"` + strings.Repeat("x", maxMessage-10) + mixed + `"}`},
		{"500 message", hostileGetVariant, 500,
			`{"message":"` + strings.Repeat("x", maxMessage-10) + mixed + `"}`},
		{"422 msg", hostileAddVariant, 422,
			`{"detail":[{"loc":["body","parameters"],"msg":"` + strings.Repeat("x", 4*maxMessage-30) + mixed + `","type":"value_error"}]}`},
		{"created_at", hostileListHuman, 200,
			`[{"id":"h-1","created_at":"2024-06-26T12:22:31` + strings.Repeat("9", 30) + mixed + `"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, hostileServe(t, tc.status, nil, tc.body), WithMaxRetries(0))
			err := tc.op.run(context.Background(), c)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tc.op.name)
			}
			if strings.Contains(err.Error(), prefix) {
				t.Errorf("err.Error() holds the key's first 8 characters %q: %q", prefix, err.Error())
			}
			var apiErr *APIError
			if errors.As(err, &apiErr) && strings.Contains(apiErr.Message, prefix) {
				t.Errorf("APIError.Message holds the key's first 8 characters: %q", apiErr.Message)
			}
		})
	}
}

// A create meets a redirect and a retry together: the server that does
// the work receives the body once, whatever the order.
func TestReviewCreateRedirectAndRetry(t *testing.T) {
	const created = `{"app_id":"a-1","variant_id":"v-2","variant_name":"bot.precise","base_id":"b-1","revision":1}`
	cases := []struct {
		name    string
		origin  func(n int64, w http.ResponseWriter) // the n-th request to the operation's path
		target  func(w http.ResponseWriter)          // every request to where the 307 points
		wantErr bool
	}{
		{"429 then 307", func(n int64, w http.ResponseWriter) {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.Header().Set("Location", "/api/v2/variants/from-base")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, func(w http.ResponseWriter) { io.WriteString(w, created) }, false},
		{"307 then 503", func(_ int64, w http.ResponseWriter) {
			w.Header().Set("Location", "/api/v2/variants/from-base")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, true},
		{"307 then a dropped connection", func(_ int64, w http.ResponseWriter) {
			w.Header().Set("Location", "/api/v2/variants/from-base")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, func(w http.ResponseWriter) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var origin, target atomic.Int64
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if r.URL.Path == "/api/variants/from-base" {
					tc.origin(origin.Add(1), w)
					return
				}
				target.Add(1)
				tc.target(w)
			}))
			t.Cleanup(s.Close)
			c := hostileClient(t, s.URL+"/api")
			err := hostileAddVariant.run(context.Background(), c)
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if n := target.Load(); n != 1 {
				t.Errorf("the redirect's target received the create %d times, want once", n)
			}
			hostileCheckError(t, err)
		})
	}
}

// Content-Encoding variants the SDK did not ask for, or layered: only one
// gzip layer named exactly "gzip" (in any case) is inflated, and whatever
// the rest holds, the call ends quickly, the heap stays near the limit and
// the error is bounded.
func TestReviewContentEncodingVariants(t *testing.T) {
	bomb := hostileGzip(`{"app_id":"`, 'a', 64, `"}`)
	gzipOf := func(data []byte) []byte {
		var b strings.Builder
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		return []byte(b.String())
	}
	cases := []struct {
		name     string
		encoding string
		body     []byte
		want     error // nil: any error
	}{
		{"GZIP", "GZIP", bomb, ErrAnswerTooLarge},
		{"x-gzip", "x-gzip", bomb, nil},
		{"gzip, gzip", "gzip, gzip", gzipOf(bomb), nil},
		{"gzip inside gzip", "gzip", gzipOf(bomb), nil},
		{"deflate", "deflate", bomb, nil},
		{"br", "br", bomb, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", tc.encoding)
				w.Write(tc.body)
			}))
			t.Cleanup(s.Close)
			c := hostileClient(t, s.URL+"/api", WithResponseLimits(ResponseLimits{Single: 4 << 20}))
			var err error
			grew := hostilePeakHeap(func() { err = hostileGetVariant.run(context.Background(), c) })
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want an error matching %v", err, tc.want)
			}
			if grew > 32<<20 {
				t.Errorf("the heap grew by %d MiB for a 4 MiB limit, want at most 32 MiB", grew>>20)
			}
			hostileCheckError(t, err)
		})
	}
}

// reviewChain returns err and every error it wraps.
func reviewChain(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, reviewChain(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, reviewChain(e)...)
		}
	}
	return out
}

// No error in the chain a call returns holds the key: a caller that logs
// errors.Unwrap(err), or an *models.TimestampError found with errors.As,
// sees only scrubbed text, as err.Error() does.
func TestReviewErrorChainHoldsNoKey(t *testing.T) {
	cases := []struct {
		name string
		op   hostileOp
		body string
	}{
		{"key in created_at", hostileListHuman, `[{"id":"h-1","created_at":"` + hostileKey + `"}]`},
		{"key in created_at, escaped", hostileListHuman, `[{"id":"h-1","created_at":"` + hostileEscapeAll(hostileKey) + `"}]`},
		{"key in a status array", hostileOp{"FetchEvaluationStatus", "single", func(ctx context.Context, c *Client) error {
			_, err := c.FetchEvaluationStatus(ctx, "e-1")
			return err
		}}, `{"status":["` + hostileKey + `"]}`},
		{"bad Location header", hostileGetVariant, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := hostileServe(t, 200, nil, tc.body)
			if tc.body == "" {
				base = hostileServe(t, 302, http.Header{"Location": {"http://[::1%" + hostileKey + "/"}}, "")
			}
			c := hostileClient(t, base, WithMaxRetries(0))
			err := tc.op.run(context.Background(), c)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tc.op.name)
			}
			for _, e := range reviewChain(err) {
				if strings.Contains(e.Error(), hostileKey) {
					t.Errorf("%T in the chain holds the key: %.300q", e, e.Error())
				}
			}
		})
	}
}

// Every field of a 422's details is scrubbed and bounded, Type included:
// printing verr.Details with %#v shows no key.
func TestReviewValidationDetailsScrubbed(t *testing.T) {
	body := `{"detail":[{"loc":["body","` + hostileKey + `"],"msg":"m ` + hostileKey + `","type":"` +
		hostileEscapeAll(hostileKey) + strings.Repeat("t", 1<<16) + `","input":"` + hostileKey + `"}]}`
	c := hostileClient(t, hostileServe(t, 422, nil, body), WithMaxRetries(0))
	err := hostileAddVariant.run(context.Background(), c)
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Details) != 1 {
		t.Fatalf("got %v, want a *ValidationError with one detail", err)
	}
	if printed := fmt.Sprintf("%#v", verr.Details); strings.Contains(printed, hostileKey) || len(printed) > hostileMaxError {
		t.Errorf("the details, printed, hold the key or are %d bytes (want at most %d): %.300q", len(printed), hostileMaxError, printed)
	}
}

// GETs are still retried, with the Client's own transport and through a
// wrapping RoundTripper: a 503 then 200, and a dropped connection then 200.
func TestReviewGETRetriesThroughAnyTransport(t *testing.T) {
	const variant = `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default","base_id":"b-1","revision":1}`
	failures := map[string]func(w http.ResponseWriter){
		"503": func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) },
		"dropped connection": func(w http.ResponseWriter) {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
		},
	}
	for name, fail := range failures {
		for _, wrapped := range []bool{false, true} {
			t.Run(name+"/wrapped="+strconv.FormatBool(wrapped), func(t *testing.T) {
				var requests atomic.Int64
				s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if requests.Add(1) == 1 {
						fail(w)
						return
					}
					io.WriteString(w, variant)
				}))
				t.Cleanup(s.Close)
				opts := []Option{WithTimeout(5 * time.Second)}
				if wrapped {
					inner := &http.Transport{}
					t.Cleanup(inner.CloseIdleConnections)
					opts = append(opts, WithHTTPClient(&http.Client{Transport: wrappedTransport{inner}}))
				}
				c := hostileClient(t, s.URL+"/api", opts...)
				if err := hostileGetVariant.run(context.Background(), c); err != nil {
					t.Fatalf("GetVariant after a %s: %v, want the variant", name, err)
				}
				if n := requests.Load(); n != 2 {
					t.Errorf("the server saw %d requests, want 2", n)
				}
			})
		}
	}
}

// A server that sends megabytes of headers (a huge Location) costs about
// the Client's header limit, not net/http's default of 10 MiB several
// times over.
func TestReviewHugeHeadersBounded(t *testing.T) {
	huge := strings.Repeat("y", 8<<20)
	base, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) {
		// In pieces: a concatenation would count 8 MiB against the client.
		io.WriteString(conn, "HTTP/1.1 307 Temporary Redirect\r\nLocation: /api/")
		io.WriteString(conn, huge)
		io.WriteString(conn, "\r\nContent-Length: 0\r\n\r\n")
	})
	for _, op := range []hostileOp{hostileGetVariant, hostileAddVariant} {
		c := hostileClient(t, base, WithMaxRetries(0))
		var err error
		grew := hostilePeakHeap(func() { err = op.run(context.Background(), c) })
		if err == nil {
			t.Fatalf("%s succeeded, want an error", op.name)
		}
		if grew > 16<<20 {
			t.Errorf("%s: the heap grew by %d MiB for 8 MiB of headers, want at most 16 MiB", op.name, grew>>20)
		}
		hostileCheckError(t, err)
	}
}

// Gzip answers at the edges read as net/http with compress/gzip would read
// them: an empty body with Content-Length 0 and an empty member are an
// empty answer (a decoding error, at once), trailing garbage after a
// complete value does not undo it, and members concatenated are one answer.
func TestReviewGzipEdges(t *testing.T) {
	gzipOf := func(data string) string {
		var b strings.Builder
		zw := gzip.NewWriter(&b)
		io.WriteString(zw, data)
		zw.Close()
		return b.String()
	}
	const variant = `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default"}`
	cases := []struct {
		name    string
		body    string
		wantErr bool
	}{
		{"Content-Length 0", "", true},
		{"an empty member", gzipOf(""), true},
		{"trailing garbage", gzipOf(variant) + "garbage!!", false},
		{"two members", gzipOf(variant[:20]) + gzipOf(variant[20:]), false},
		{"an empty member after", gzipOf(variant) + gzipOf(""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				w.Header().Set("Content-Length", strconv.Itoa(len(tc.body)))
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(s.Close)
			c := hostileClient(t, s.URL+"/api", WithMaxRetries(0))
			v, err := c.GetVariant(context.Background(), "v-1")
			if tc.wantErr {
				var decodeErr *DecodeError
				if !errors.As(err, &decodeErr) {
					t.Fatalf("got %v, want a *DecodeError", err)
				}
				return
			}
			if err != nil || v.VariantName != "bot.default" {
				t.Fatalf("got %+v, %v; want the variant bot.default", v, err)
			}
		})
	}
}

// Text full of "…" (which marks where a cut may have split a secret) costs
// the scrub time in proportion to the part of it kept, not to what the
// server sent: a created_at and a Location of many "…".
func TestReviewScrubWorkBounded(t *testing.T) {
	dots := strings.Repeat("…", 300_000) // 900 KB
	cases := []struct {
		name   string
		op     hostileOp
		status int
		header http.Header
		body   string
	}{
		{"created_at", hostileListHuman, 200, nil, `[{"id":"h-1","created_at":"` + dots + `"}]`},
		{"bad Location", hostileGetVariant, 302, http.Header{"Location": {"http://[::1%" + dots}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, hostileServe(t, tc.status, tc.header, tc.body), WithMaxRetries(0))
			took, err := hostileElapsed(context.Background(), c, tc.op)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tc.op.name)
			}
			if took > 10*time.Second {
				t.Errorf("%s returned after %s, want well within 10s", tc.op.name, took)
			}
			hostileCheckError(t, err)
		})
	}
}

// A redirect to a "scheme" that is the key (keys are letters, digits and a
// dot, which a scheme may hold) is refused without naming it: net/http
// lowercases a scheme, so the scrub would not recognise it.
func TestReviewRedirectSchemeNotQuoted(t *testing.T) {
	c := hostileClient(t, hostileServe(t, 302, http.Header{"Location": {hostileKey + ":x"}}, ""), WithMaxRetries(0))
	err := hostileGetVariant.run(context.Background(), c)
	if err == nil {
		t.Fatal("GetVariant succeeded, want an error")
	}
	lower := strings.ToLower(hostileKey)
	for _, e := range reviewChain(err) {
		if strings.Contains(strings.ToLower(e.Error()), lower) {
			t.Errorf("%T in the chain holds the key, lowercased: %.300q", e, e.Error())
		}
	}
}
