package agenta

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trailingAnswers are complete JSON answers, by the kind of value they are.
var trailingAnswers = map[string]string{
	"list":   `[{"id":"s-1","evaluation_id":"e-1","inputs":[],"outputs":[],"results":[]}]`,
	"single": `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default","base_id":"b-1","revision":1}`,
}

// Data after a complete JSON answer is an error in every decoder, the
// streaming one and the fallback ones included: the status, where the
// data starts, and an excerpt of it, scrubbed.
func TestTrailingDataIsAnError(t *testing.T) {
	ops := []hostileOp{hostileGetVariant, hostileAddVariant, hostileCreateEvaluation, hostileFetchScenarios,
		hostileListHuman, hostileStream, {"FetchEvaluationStatus", "single", func(ctx context.Context, c *Client) error {
			_, err := c.FetchEvaluationStatus(ctx, "e-1")
			return err
		}}}
	answers := func(op hostileOp) []string {
		switch op.name {
		case "FetchEvaluationStatus":
			return []string{`{"status":{"type":"status","value":"EVALUATION_STARTED"}}`}
		case "CreateEvaluation", "ListHumanEvaluations":
			// Also an element the fast path leaves to encoding/json, and
			// null: the fallback decoders check the end too.
			return []string{`[{"id":"e-1"}]`, `[{"id":"e-1","extra":{"deep":[1,2,{"x":null}]}}]`, `null`}
		case "FetchEvaluationScenarios", "StreamEvaluationScenarios":
			// A case-variant key takes the element to encoding/json.
			return []string{trailingAnswers["list"], `[{"ID":"s-1","inputs":[{"name":"n","type":"t","value":"\ud83d\ude00"}]}]`, `null`}
		}
		return []string{trailingAnswers["single"]}
	}
	tails := []string{"[]", "<html><body>Bad Gateway</body></html>", `{"detail":"x"}`, " \n\tx", "null", "[" + hostileKey + "]"}
	current := new(atomic.Pointer[trailingCase])
	c := hostileClient(t, trailingServer(t, current), WithMaxRetries(0))
	for _, op := range ops {
		for _, answer := range answers(op) {
			for _, tail := range tails {
				for _, split := range []bool{false, true} {
					body := answer + tail
					answer := answer
					current.Store(&trailingCase{answer, tail, split})
					err := op.run(context.Background(), c)
					name := op.name + " " + strings.TrimSpace(body)
					if !errors.Is(err, ErrTrailingData) {
						t.Errorf("%s (split %v): err = %v, want ErrTrailingData", name, split, err)
						continue
					}
					var de *DecodeError
					if !errors.As(err, &de) {
						t.Fatalf("%s: %T, want a *DecodeError", name, err)
					}
					at := int64(len(answer) + len(tail) - len(strings.TrimLeft(tail, " \n\t")))
					if de.StatusCode != 200 || de.Offset != at {
						t.Errorf("%s: status %d at byte %d, want 200 at byte %d", name, de.StatusCode, de.Offset, at)
					}
					if want := strings.TrimLeft(tail, " \n\t"); !strings.HasPrefix(want, "["+hostileKey) && string(de.Body) != want {
						t.Errorf("%s: Body %q, want the trailing data %q", name, de.Body, want)
					}
					hostileCheckError(t, err)
					for e := error(de); e != nil; e = errors.Unwrap(e) {
						if strings.Contains(e.Error(), hostileKey) || strings.Contains(string(de.Body), hostileKey) {
							t.Errorf("%s: the excerpt holds the key: %q", name, e.Error())
						}
					}
					if !strings.Contains(err.Error(), "byte") || len(err.Error()) > 400 {
						t.Errorf("%s: %q, want the position and a short excerpt", name, err)
					}
				}
			}
		}
	}
}

// Whitespace after the answer is no data: the call succeeds, and the
// stream yields every element and no error.
func TestTrailingWhitespaceIsFine(t *testing.T) {
	current := new(atomic.Pointer[trailingCase])
	c := hostileClient(t, trailingServer(t, current))
	for _, split := range []bool{false, true} {
		current.Store(&trailingCase{trailingAnswers["list"], " \r\n\t \n", split})
		scenarios, err := c.FetchEvaluationScenarios(context.Background(), "e-1")
		if err != nil || len(scenarios) != 1 {
			t.Errorf("FetchEvaluationScenarios: %d scenarios, %v; want 1 and no error", len(scenarios), err)
		}
		n := 0
		for _, err := range c.StreamEvaluationScenarios(context.Background(), "e-1") {
			if err != nil {
				t.Errorf("stream: %v", err)
			}
			n++
		}
		if n != 1 {
			t.Errorf("stream yielded %d values, want 1", n)
		}
	}
}

// A stream yields the elements before the trailing data, then the error:
// the caller may have used them, and learns the answer was not clean.
func TestTrailingDataEndsTheStream(t *testing.T) {
	current := new(atomic.Pointer[trailingCase])
	current.Store(&trailingCase{`[{"id":"s-1"},{"id":"s-2"}]`, `[]`, true})
	c := hostileClient(t, trailingServer(t, current))
	var ids []string
	var last error
	for s, err := range c.StreamEvaluationScenarios(context.Background(), "e-1") {
		if err != nil {
			last = err
			continue
		}
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "s-1,s-2" || !errors.Is(last, ErrTrailingData) {
		t.Errorf("got %v then %v, want s-1, s-2, then ErrTrailingData", ids, last)
	}
	scenarios, err := c.FetchEvaluationScenarios(context.Background(), "e-1")
	if scenarios != nil || !errors.Is(err, ErrTrailingData) {
		t.Errorf("Fetch: %v, %v; want no list and ErrTrailingData", scenarios, err)
	}
}

// trailingCase is what trailingServer answers: a JSON answer, then tail,
// in one write, or in two with a flush between them (split).
type trailingCase struct {
	answer, tail string
	split        bool
}

// trailingServer answers every request 200 with the current case.
func trailingServer(t *testing.T, current *atomic.Pointer[trailingCase]) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		tc := current.Load()
		w.Header().Set("Content-Type", "application/json")
		if !tc.split {
			io.WriteString(w, tc.answer+tc.tail)
			return
		}
		io.WriteString(w, tc.answer)
		w.(http.Flusher).Flush()
		io.WriteString(w, tc.tail)
	}))
	t.Cleanup(s.Close)
	return s.URL + "/api"
}

// Item 1: a 101 then silence must not hang the call past its timeout or
// its context's deadline.
func TestHostileSwitchingProtocols(t *testing.T) {

	base, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
		// Then silence: the connection stays open until the test ends.
	})
	const attempt = 300 * time.Millisecond
	cases := []struct {
		name    string
		opts    []Option
		ctxWait time.Duration
		bound   time.Duration
	}{
		{"attempt timeout, no retries", []Option{WithTimeout(attempt), WithMaxRetries(0)}, time.Minute, 3 * attempt},
		{"attempt timeout, retries", []Option{WithTimeout(attempt)}, time.Minute, 3 * 4 * attempt},
		{"context deadline", []Option{WithTimeout(0)}, attempt, 3 * attempt},
		{"both", []Option{WithTimeout(time.Second)}, 2 * attempt, 3 * 2 * attempt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, base, tc.opts...)
			for _, op := range []hostileOp{hostileGetVariant, hostileAddVariant, hostileStream} {
				ctx, cancel := context.WithTimeout(context.Background(), tc.ctxWait)
				took, err := hostileElapsed(ctx, c, op)
				cancel()
				if err == nil {
					t.Errorf("%s: a 101 answer succeeded, want an error", op.name)
				}
				if took > tc.bound {
					t.Errorf("%s: returned after %s, want within %s (err: %v)", op.name, took, tc.bound, err)
				}
				var apiErr *APIError
				if errors.As(err, &apiErr) && apiErr.StatusCode != http.StatusSwitchingProtocols {
					t.Errorf("%s: *APIError status %d, want 101", op.name, apiErr.StatusCode)
				}
				hostileCheckError(t, err)
			}
		})
	}
}

// hostileHoldBack answers with the whole value, then holds back the end of
// the body: the terminating chunk (after plain or gzip-encoded JSON), the
// last byte of a Content-Length, or the trailer of a gzip stream. The connection stays open until the
// test ends.
func hostileHoldBack(t *testing.T, framing string) string {
	t.Helper()
	answer := func(path string) string {
		switch {
		case strings.HasSuffix(path, "/evaluation_scenarios"):
			return `[{"id":"s-1","evaluation_id":"e-1","inputs":[],"outputs":[],"is_pinned":false,"note":"","results":[]}]`
		case strings.HasSuffix(path, "/evaluations"):
			return `[{"id":"e-1","app_id":"a-1","variant_ids":["v-1"],"status":{"type":"status","value":"EVALUATION_STARTED","error":null},` +
				`"aggregated_results":[],"created_at":"2024-06-26T12:22:31.775000+00:00","updated_at":"2024-06-26T12:22:31.775000+00:00"}]`
		case strings.HasSuffix(path, "/human-evaluations"):
			return `[{"id":"h-1","app_id":"a-1","evaluation_type":"human_a_b_testing","status":"EVALUATION_FINISHED",` +
				`"created_at":"2024-06-26T12:22:31.775000","updated_at":"2024-06-26T12:22:31.775000"}]`
		}
		return `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default","base_id":"b-1","revision":1}`
	}
	base, _ := hostileTCP(t, func(conn net.Conn, req *http.Request) {
		body := answer(req.URL.Path)
		head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		switch framing {
		case "chunked":
			io.WriteString(conn, head+"Transfer-Encoding: chunked\r\n\r\n"+
				strconv.FormatInt(int64(len(body)), 16)+"\r\n"+body+"\r\n")
			// The terminating "0\r\n\r\n" never comes.
		case "gzip":
			// A whole gzip stream in one chunk; the terminating chunk
			// never comes.
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			io.WriteString(zw, body)
			zw.Close()
			io.WriteString(conn, head+"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"+
				strconv.FormatInt(int64(b.Len()), 16)+"\r\n"+b.String()+"\r\n")
		case "gzip trailer":
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			io.WriteString(zw, body)
			zw.Close()
			zipped := b.Bytes()
			// Everything but the 8-byte trailer (CRC-32 and size).
			io.WriteString(conn, head+"Content-Encoding: gzip\r\nContent-Length: "+strconv.Itoa(len(zipped))+"\r\n\r\n")
			conn.Write(zipped[:len(zipped)-8])
		case "content-length":
			io.WriteString(conn, head+"Content-Length: "+strconv.Itoa(len(body)+1)+"\r\n\r\n"+body)
			// The final "\n" never comes.
		}
	})
	return base
}

// Item 3: a complete answer whose body never ends returns at once: the
// call does not wait for the end, and a stream loop ends.
func TestHostileHeldBackEnd(t *testing.T) {

	const wait = 6 * time.Second // the context's deadline; the attempt has none
	const bound = 2 * time.Second
	ops := []hostileOp{hostileGetVariant, hostileAddVariant, hostileCreateEvaluation,
		hostileFetchScenarios, hostileListHuman, hostileStream}
	for _, framing := range []string{"chunked", "content-length", "gzip", "gzip trailer"} {
		t.Run(framing, func(t *testing.T) {
			c := hostileClient(t, hostileHoldBack(t, framing), WithTimeout(0))
			for _, op := range ops {
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				took, err := hostileElapsed(ctx, c, op)
				cancel()
				if err != nil {
					t.Errorf("%s: %v, want the complete answer", op.name, err)
				}
				if took > bound {
					t.Errorf("%s: returned after %s, want within %s: a complete answer must not wait for the body to end", op.name, took, bound)
				}
			}
		})
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
func TestHeldBackEndWrappedTransport(t *testing.T) {
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
func TestReadsEndWithContextIgnoringTransport(t *testing.T) {
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
func TestHostileAnswersLeaveNoGoroutine(t *testing.T) {
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
func TestSilentTransportEndsAtDeadline(t *testing.T) {
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

func TestNilContextAndClientAreRefused(t *testing.T) {
	c := gockClient(t)
	var nilCtx context.Context
	_, err := c.GetVariant(nilCtx, "v")
	requireArgumentError(t, err, "ctx")
	_, err = c.CreateEvaluation(nilCtx, validNewEvaluation())
	requireArgumentError(t, err, "ctx")

	var nilClient *Client
	_, err = nilClient.GetVariant(context.Background(), "v")
	requireArgumentError(t, err, "Client")
	_, err = (&Client{}).ListHumanEvaluations(context.Background(), "app")
	requireArgumentError(t, err, "Client")
	assert.NotPanics(t, func() { _ = fmt.Sprintf("%v %+v", nilClient, Client{}) })
	assertNothingUnmatched(t)
}

// Query values are encoded: a value with & or = stays one value.
func TestQueryValuesAreEncoded(t *testing.T) {
	for _, tc := range []struct {
		name, path, query string
		call              func(c *Client) error
		want              url.Values
	}{
		{"variant by env", "/api/apps/get_variant_by_env", "app_id=a%26environment%3Dstaging&environment=prod+%2F+eu",
			func(c *Client) error {
				_, err := c.GetVariantByEnvironment(context.Background(), "a&environment=staging", "prod / eu")
				return err
			}, url.Values{"app_id": {"a&environment=staging"}, "environment": {"prod / eu"}}},
		{"human evaluations", "/api/human-evaluations", "app_id=x%26app_id%3Dy%23z",
			func(c *Client) error {
				_, err := c.ListHumanEvaluations(context.Background(), "x&app_id=y#z")
				return err
			}, url.Values{"app_id": {"x&app_id=y#z"}}},
		{"span type", "/api/observability/spans/sp-1/", "type=generation%26debug%3D1",
			func(c *Client) error {
				_, err := c.GetSpan(context.Background(), "sp-1", &GetSpanOptions{Type: "generation&debug=1"})
				return err
			}, url.Values{"type": {"generation&debug=1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t)
			e := expect("GET", tc.path, tc.query)
			e.replyJSON(200, okBody(map[bool]string{true: "ListHumanEvaluations"}[strings.Contains(tc.path, "human")]))

			require.NoError(t, tc.call(c))

			got, err := url.ParseQuery(e.only(t).Query)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "the server reads exactly these values")
			assertAllSent(t)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		op         operation
	}{
		{"HTML on 200", "<html><body>login</body></html>", operations()[4]},
		{"null object", "null", operations()[5]},
		{"truncated object", `{"variant_id":"v"`, operations()[2]},
		{"object instead of array", `{"detail":"x"}`, operations()[0]},
		{"truncated array", `[{"id":"h1"},`, operations()[6]},
		{"wrong type", `[{"id":42}]`, operations()[1]},
		{"bad timestamp", `{"id":"s","created_at":"yesterday"}`, operations()[5]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t)
			expect(tc.op.method, tc.op.path, tc.op.query).replyJSON(200, tc.body)

			err := tc.op.call(context.Background(), c)

			require.Error(t, err)
			var derr *DecodeError
			require.True(t, errors.As(err, &derr), "expected *DecodeError, got %T: %v", err, err)
			assert.Equal(t, 200, derr.StatusCode)
			assert.Equal(t, tc.op.method, derr.Method)
			assert.Equal(t, tc.op.path, derr.Path)
			assert.NotNil(t, errors.Unwrap(err), "the cause is wrapped")
			var apiErr *APIError
			assert.False(t, errors.As(err, &apiErr), "a 2xx answer is not an APIError")
			assertAllSent(t) // decoding failures are not retried
		})
	}
	t.Run("null list is empty", func(t *testing.T) {
		c := gockClient(t)
		expect("GET", "/api/human-evaluations", "app_id=a").replyJSON(200, "null")
		got, err := c.ListHumanEvaluations(context.Background(), "a")
		require.NoError(t, err)
		assert.Empty(t, got)
		assertAllSent(t)
	})
	t.Run("empty list is not nil", func(t *testing.T) {
		c := gockClient(t)
		expect("GET", "/api/human-evaluations", "app_id=a").replyJSON(200, "[]")
		got, err := c.ListHumanEvaluations(context.Background(), "a")
		require.NoError(t, err)
		assert.NotNil(t, got)
		assert.Len(t, got, 0)
		assertAllSent(t)
	})
}

// The Client writes nothing anywhere unless given a logger: not to
// slog.Default, not to the standard logger.
func TestLoggingSilentByDefault(t *testing.T) {
	var slogBuf, stdBuf bytes.Buffer
	prevSlog := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&slogBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	prevOut, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(&stdBuf)
	t.Cleanup(func() {
		slog.SetDefault(prevSlog)
		log.SetOutput(prevOut)
		log.SetFlags(prevFlags)
	})
	c := gockClient(t)
	expect("GET", "/api/variants/v", "").times(2).replyJSON(503, `{"detail":"busy"}`)
	expect("GET", "/api/variants/v", "").replyJSON(200, `{}`)
	expect("POST", "/api/evaluations", "").replyJSON(500, `{"detail":"boom"}`)

	_, err := c.GetVariant(context.Background(), "v")
	require.NoError(t, err)
	_, err = c.CreateEvaluation(context.Background(), validNewEvaluation())
	require.Error(t, err)

	assert.Empty(t, slogBuf.String(), "nothing logged to slog.Default")
	assert.Empty(t, stdBuf.String(), "nothing logged to the standard logger")
	assertAllSent(t)
}

// With a logger, one line per attempt: method, path, status, attempt and the
// planned wait; never query values, headers, bodies or credentials.
func TestLoggingOneLinePerAttempt(t *testing.T) {
	rec, logger := newLogRecorder()
	c := gockClient(t, WithLogger(logger), WithHeader("Cookie", "session=COOKIESECRET"))
	path := "/api/apps/get_variant_by_env"
	query := "app_id=app-QUERYVALUE&environment=production"
	expect("GET", path, query).replyJSON(503, `{"detail":"BODYTEXT busy"}`).SetHeader("Retry-After", "0")
	expect("GET", path, query).times(1).ReplyError(errors.New("connection reset by peer"))
	expect("GET", path, query).replyJSON(200, `{"variant_id":"RESPONSEBODY"}`)

	_, err := c.GetVariantByEnvironment(context.Background(), "app-QUERYVALUE", "production")
	require.NoError(t, err)
	assertAllSent(t)

	lines := rec.lines()
	require.Len(t, lines, 3, "one line per attempt")
	for i, l := range lines {
		assert.Equal(t, "GET", l["method"], "line %d", i)
		assert.Equal(t, path, l["path"], "line %d", i)
		assert.Equal(t, int64(i+1), l["attempt"], "line %d", i)
	}
	assert.Equal(t, int64(503), lines[0]["status"])
	assert.Equal(t, time.Duration(0), lines[0]["wait"])
	assert.Equal(t, slog.LevelWarn, lines[0]["level"])
	assert.NotContains(t, lines[1], "status", "a transport error has no status")
	assert.Contains(t, lines[1]["error"], "connection reset by peer")
	assert.Contains(t, lines[1], "wait")
	assert.Equal(t, int64(200), lines[2]["status"])
	assert.NotContains(t, lines[2], "wait", "no wait after the last attempt")
	assert.Equal(t, slog.LevelInfo, lines[2]["level"])

	text := rec.text()
	for _, leak := range []string{"QUERYVALUE", "app_id", "BODYTEXT", "RESPONSEBODY", "COOKIESECRET", "Authorization", "User-Agent", "Cookie", "agenta.test"} {
		assert.NotContains(t, text, leak, "log output must not contain %q", leak)
	}
	assertNoSecret(t, "log output", text)
}

// Secrets never reach logs at any level, even when the server echoes them.
func TestLoggingNeverShowsSecrets(t *testing.T) {
	rec, logger := newLogRecorder()
	c := gockClient(t, WithLogger(logger))
	echo := `{"detail":"bad key ` + testProviderKey + ` for ` + testKey + `"}`
	expect("POST", "/api/evaluations", "").replyJSON(429, echo)
	expect("POST", "/api/evaluations", "").replyJSON(400, echo)

	_, err := c.CreateEvaluation(context.Background(), validNewEvaluation())

	require.Error(t, err)
	assert.Len(t, rec.lines(), 2)
	assertNoSecret(t, "log output", rec.text())
	assertNoSecret(t, "error string", err.Error())
	assertAllSent(t)
}

// A stalled attempt ends at the per-attempt timeout with an error that says
// so, and the context error stays visible.
func TestPerAttemptTimeoutEndsStalledCall(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := NewClient(srv.URL+"/api", WithTimeout(20*time.Millisecond), WithMaxRetries(0))
	require.NoError(t, err)

	_, err = c.GetVariant(context.Background(), "v")

	require.Error(t, err)
	var netErr net.Error
	isTimeout := errors.As(err, &netErr) && netErr.Timeout()
	assert.True(t, isTimeout || errors.Is(err, context.DeadlineExceeded), "expected a timeout error, got %T: %v", err, err)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	c, err = NewClient(srv.URL+"/api", WithMaxRetries(0))
	require.NoError(t, err)
	_, err = c.GetVariant(ctx, "v")
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "expected context.DeadlineExceeded, got %v", err)
}
