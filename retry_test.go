package agenta

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fakeResponse(status int, retryAfter string) *http.Response {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody}
}

// urlErr wraps err as http.Client.Do does.
func urlErr(err error) error {
	return &url.Error{Op: "Post", URL: "https://agenta.test/api/evaluations", Err: err}
}

var (
	errDial     = urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	errProxy    = urlErr(&net.OpError{Op: "proxyconnect", Net: "tcp", Err: syscall.ECONNREFUSED})
	errDNS      = urlErr(&net.DNSError{Err: "no such host", Name: "agenta.test", IsNotFound: true})
	errRead     = urlErr(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	errEOF      = urlErr(io.EOF)
	errTimeout  = urlErr(context.DeadlineExceeded)
	errCert     = urlErr(x509.UnknownAuthorityError{})
	errRedirect = urlErr(errTooManyRedirects)
	errScheme   = urlErr(&redirectRefused{errors.New(`unsupported protocol scheme "ftp"`)})
)

// shouldRetry is the whole retry policy; this table is its specification.
func TestShouldRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		idempotent, sent bool
		status           int // 0: a transport error
		err              error
		want             bool
	}{
		// GET retries transport errors, 429, 502, 503 and 504.
		{"GET 429", true, true, 429, nil, true},
		{"GET 502", true, true, 502, nil, true},
		{"GET 503", true, true, 503, nil, true},
		{"GET 504", true, true, 504, nil, true},
		{"GET dial error", true, false, 0, errDial, true},
		{"GET reset after sending", true, true, 0, errRead, true},
		{"GET EOF", true, true, 0, errEOF, true},
		{"GET attempt timeout", true, true, 0, errTimeout, true},
		// ... but never 500 or another 4xx, nor a permanent transport error.
		{"GET 500", true, true, 500, nil, false},
		{"GET 501", true, true, 501, nil, false},
		{"GET 400", true, true, 400, nil, false},
		{"GET 401", true, true, 401, nil, false},
		{"GET 403", true, true, 403, nil, false},
		{"GET 404", true, true, 404, nil, false},
		{"GET 409", true, true, 409, nil, false},
		{"GET 422", true, true, 422, nil, false},
		{"GET 200", true, true, 200, nil, false},
		{"GET untrusted certificate", true, true, 0, errCert, false},
		{"GET redirect loop", true, true, 0, errRedirect, false},
		{"GET redirect refused by the caller's policy", true, true, 0, urlErr(&redirectRefused{errors.New("no redirects")}), false},
		{"GET bad scheme", true, false, 0, errScheme, false},
		// POST retries only 429 and failures before anything was sent.
		{"POST 429", false, true, 429, nil, true},
		{"POST dial error, nothing sent", false, false, 0, errDial, true},
		{"POST proxy connect error, nothing sent", false, false, 0, errProxy, true},
		{"POST DNS error, nothing sent", false, false, 0, errDNS, true},
		{"POST dial error after headers were written", false, true, 0, errDial, false},
		{"POST reset before anything was written", false, false, 0, errRead, false},
		{"POST reset after sending", false, true, 0, errRead, false},
		{"POST EOF", false, true, 0, errEOF, false},
		{"POST attempt timeout", false, true, 0, errTimeout, false},
		{"POST 500", false, true, 500, nil, false},
		{"POST 502", false, true, 502, nil, false},
		{"POST 503", false, true, 503, nil, false},
		{"POST 504", false, true, 504, nil, false},
		{"POST 400", false, true, 400, nil, false},
		{"POST 422", false, true, 422, nil, false},
		{"POST 200", false, true, 200, nil, false},
	} {
		var resp *http.Response
		if tc.status != 0 {
			resp = fakeResponse(tc.status, "")
		}
		got := shouldRetry(tc.idempotent, tc.sent, resp, tc.err)
		assert.Equal(t, tc.want, got, "%s: expected retry=%v, got %v", tc.name, tc.want, got)
	}
}

func TestBackoffRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 6, 26, 12, 0, 0, 0, time.UTC)
	const min, max = 100 * time.Millisecond, 5 * time.Second
	for _, tc := range []struct {
		name       string
		retryAfter string
		want       time.Duration // -1: no usable Retry-After, exponential backoff
	}{
		{"seconds", "3", 3 * time.Second},
		{"seconds with spaces", " 2 ", 2 * time.Second},
		{"zero: no pause or jitter would send every client back at once", "0", -1},
		{"beyond max", "30", max},
		{"huge", "86400000", max},
		{"larger than int64", "99999999999999999999999", max},
		{"below int64", "-99999999999999999999999", -1},
		{"HTTP date", now.Add(4 * time.Second).Format(http.TimeFormat), 4 * time.Second},
		{"HTTP date far ahead", now.Add(1000 * time.Hour).Format(http.TimeFormat), max},
		{"HTTP date in the past", now.Add(-time.Hour).Format(http.TimeFormat), -1},
		{"RFC 850 date", now.Add(time.Second).Format("Monday, 02-Jan-06 15:04:05 GMT"), time.Second},
		{"negative", "-5", -1},
		{"fraction", "1.5", -1},
		{"garbage", "soon", -1},
		{"empty", "", -1},
	} {
		got := backoff(min, max, 0, fakeResponse(503, tc.retryAfter), now)
		if tc.want >= 0 {
			assert.Equal(t, tc.want, got, "%s: Retry-After %q", tc.name, tc.retryAfter)
			continue
		}
		// The first exponential wait lies in [min, 2·min].
		assert.True(t, got >= min && got <= 2*min, "%s: Retry-After %q: expected a wait in [%s, %s], got %s", tc.name, tc.retryAfter, min, 2*min, got)
	}
}

func TestBackoffExponential(t *testing.T) {
	t.Parallel()
	const min, max = 100 * time.Millisecond, 2 * time.Second
	for _, tc := range []struct {
		attempt    int
		lo, hi     time.Duration
		withAnswer bool
	}{
		{0, 100 * time.Millisecond, 200 * time.Millisecond, false},
		{1, 200 * time.Millisecond, 400 * time.Millisecond, true},
		{2, 400 * time.Millisecond, 800 * time.Millisecond, false},
		{3, 800 * time.Millisecond, 1600 * time.Millisecond, true},
		{4, time.Second, 2 * time.Second, false}, // capped at max, jitter kept
		{60, time.Second, 2 * time.Second, false},
		{100, time.Second, 2 * time.Second, true},
	} {
		seen := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			var resp *http.Response
			if tc.withAnswer {
				resp = fakeResponse(502, "")
			}
			got := backoff(min, max, tc.attempt, resp, time.Now())
			require.True(t, got >= tc.lo && got <= tc.hi, "attempt %d: expected a wait in [%s, %s], got %s", tc.attempt, tc.lo, tc.hi, got)
			seen[got] = true
		}
		assert.Greater(t, len(seen), 1, "attempt %d: expected jitter, got always the same wait", tc.attempt)
	}
}

func TestBackoffEdges(t *testing.T) {
	t.Parallel()
	assert.Equal(t, time.Duration(0), backoff(0, time.Millisecond, 5, nil, time.Now()), "min 0 waits 0")
	assert.Equal(t, time.Second, backoff(time.Second, time.Second, 3, nil, time.Now()), "min == max")
	assert.Equal(t, time.Second, backoff(time.Second, time.Millisecond, 0, nil, time.Now()), "max below min is raised to min")
	huge := time.Duration(math.MaxInt64)
	for attempt := 0; attempt < 100; attempt += 7 {
		got := backoff(huge/3, huge, attempt, nil, time.Now())
		assert.True(t, got >= huge/3 && got <= huge, "attempt %d: no overflow, got %s", attempt, got)
	}
	assert.Equal(t, 2*time.Second, backoff(0, 5*time.Second, 0, fakeResponse(429, "2"), time.Now()), "Retry-After applies even when min is 0")
	assert.Equal(t, 3*time.Second, backoff(3*time.Second, 5*time.Second, 0, fakeResponse(429, "1"), time.Now()), "Retry-After below min waits min")
	for _, v := range []string{"0", "Mon, 01 Jan 2001 00:00:00 GMT"} {
		seen := map[time.Duration]bool{}
		for i := 0; i < 50; i++ {
			got := backoff(time.Second, 5*time.Second, 0, fakeResponse(503, v), time.Now())
			require.True(t, got >= time.Second && got <= 2*time.Second, "Retry-After %q: expected the first exponential wait, in [1s, 2s], got %s", v, got)
			seen[got] = true
		}
		assert.Greater(t, len(seen), 1, "Retry-After %q: expected jitter, got always the same wait", v)
	}
}

func TestRetryAfterParse(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 6, 26, 12, 0, 0, 0, time.UTC)
	got, ok := retryAfter("86401000", now)
	assert.True(t, ok)
	assert.Equal(t, 24*time.Hour, got, "seconds are bounded before they can overflow")
	_, ok = retryAfter("Wed, 26 Jun 2024 12:00:05 XYZ", now)
	assert.False(t, ok)
}

// faultyTransport fails the first len(faults) attempts with the given
// errors, after pretending to write the request when written is set, and
// passes the rest on.
type faultyTransport struct {
	next    http.RoundTripper
	faults  []error
	written bool
	calls   atomic.Int32
}

func (f *faultyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	n := int(f.calls.Add(1))
	if n <= len(f.faults) {
		if f.written {
			if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.WroteHeaders != nil {
				trace.WroteHeaders()
			}
		}
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
			req.Body.Close()
		}
		return nil, f.faults[n-1]
	}
	return f.next.RoundTrip(req)
}

func attempts(rec *logRecorder) []int64 {
	var out []int64
	for _, l := range rec.lines() {
		out = append(out, l["attempt"].(int64))
	}
	return out
}

func TestGETRetriesTransientAnswers(t *testing.T) {
	for _, status := range []int{429, 502, 503, 504} {
		for _, op := range operations() {
			if op.method != "GET" {
				continue
			}
			t.Run(fmt.Sprintf("%d/%s", status, op.name), func(t *testing.T) {
				rec, logger := newLogRecorder()
				c := gockClient(t, WithLogger(logger))
				expect(op.method, op.path, op.query).times(2).replyJSON(status, `{"detail":"try again"}`)
				expect(op.method, op.path, op.query).replyJSON(200, okBody(op.name))

				require.NoError(t, op.call(context.Background(), c))
				assertAllSent(t)
				assert.Equal(t, []int64{1, 2, 3}, attempts(rec), "attempts logged")
			})
		}
	}
}

// okBody is a minimal valid 200 body for an operation.
func okBody(name string) string {
	switch name {
	case "FetchEvaluationScenarios", "CreateEvaluation", "ListHumanEvaluations":
		return `[]`
	case "FetchEvaluationStatus":
		return `{"status":{"type":"status","value":"EVALUATION_STARTED","error":null}}`
	}
	return `{"id":"x"}`
}

func TestGETRetriesTransportErrors(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/variants/v", "").times(3).ReplyError(errors.New("connection reset by peer"))
	expect("GET", "/api/variants/v", "").replyJSON(200, `{"variant_id":"v"}`)

	v, err := c.GetVariant(context.Background(), "v")

	require.NoError(t, err)
	assert.Equal(t, "v", v.VariantID)
	assertAllSent(t)
}

func TestNoRetryOnDeterministicAnswers(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409, 422, 500, 501} {
		for _, op := range operations() {
			t.Run(fmt.Sprintf("%d/%s", status, op.name), func(t *testing.T) {
				c := gockClient(t)
				expect(op.method, op.path, op.query).replyJSON(status, `{"detail":"no"}`) // once only

				err := op.call(context.Background(), c)

				requireAPIError(t, err, status, op.method, op.path)
				assertAllSent(t) // a second attempt would be an unmatched request
			})
		}
	}
}

func TestPOSTRetries429Only(t *testing.T) {
	for _, op := range operations() {
		if op.method != "POST" {
			continue
		}
		t.Run("429/"+op.name, func(t *testing.T) {
			c := gockClient(t)
			e := expect(op.method, op.path, op.query)
			e.replyJSON(429, `{"detail":"slow down"}`).SetHeader("Retry-After", "0")
			ok := expect(op.method, op.path, op.query)
			ok.replyJSON(200, okBody(op.name))

			require.NoError(t, op.call(context.Background(), c))
			assertAllSent(t)
			// The retried request carries the whole body again.
			assert.Equal(t, string(e.only(t).Body), string(ok.only(t).Body))
			assert.NotEmpty(t, ok.only(t).Body)
		})
		for _, status := range []int{500, 502, 503, 504} {
			t.Run(fmt.Sprintf("%d/%s", status, op.name), func(t *testing.T) {
				c := gockClient(t)
				expect(op.method, op.path, op.query).replyJSON(status, `{"detail":"maybe created"}`)

				err := op.call(context.Background(), c)

				requireAPIError(t, err, status, op.method, op.path)
				assertAllSent(t) // not repeated: the evaluation may have started
			})
		}
		t.Run("transport error/"+op.name, func(t *testing.T) {
			c := gockClient(t)
			cause := errors.New("connection reset by peer")
			expect(op.method, op.path, op.query).ReplyError(cause)

			err := op.call(context.Background(), c)

			require.Error(t, err)
			assert.True(t, errors.Is(err, cause), "expected the cause wrapped, got %v", err)
			assertAllSent(t)
		})
	}
}

func TestPOSTRetriesOnlyWhenNothingWasSent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   error
		written bool
		retried bool
	}{
		{"dial refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, false, true},
		{"DNS failure", &net.DNSError{Err: "server misbehaving", Name: gockHost, IsTemporary: true}, false, true},
		{"dial error reported after headers were written", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true, false},
		{"reset after writing", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true, false},
		{"EOF after writing", io.ErrUnexpectedEOF, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ft *faultyTransport
			c := gockClientVia(t, func(next http.RoundTripper) http.RoundTripper {
				ft = &faultyTransport{next: next, faults: []error{tc.fault}, written: tc.written}
				return ft
			})
			if tc.retried {
				expect("POST", "/api/evaluations", "").replyJSON(200, `[{"id":"ev-1"}]`)
			}

			evs, err := c.CreateEvaluation(context.Background(), validNewEvaluation())

			if tc.retried {
				require.NoError(t, err)
				assert.Equal(t, "ev-1", evs[0].ID)
				assert.Equal(t, int32(2), ft.calls.Load(), "attempts")
			} else {
				require.Error(t, err)
				assert.True(t, errors.Is(err, tc.fault), "expected the cause wrapped, got %v", err)
				assert.Equal(t, int32(1), ft.calls.Load(), "a create that may have been received is never repeated")
			}
			assertAllSent(t)
		})
	}
}

// A real connection refused on loopback is a dial failure: even a create is
// retried, and the last error keeps its cause.
func TestPOSTRetriesRealDialFailure(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	rec, logger := newLogRecorder()
	c := newTestClient(t, "http://"+addr+"/api", WithMaxRetries(2), WithLogger(logger))

	_, err = c.AddVariantFromBase(context.Background(), validAddVariant())

	require.Error(t, err)
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "expected ECONNREFUSED wrapped, got %v", err)
	var opErr *net.OpError
	assert.True(t, errors.As(err, &opErr), "expected a *net.OpError, got %T", err)
	assert.Equal(t, []int64{1, 2, 3}, attempts(rec), "attempts logged")
	assert.Contains(t, err.Error(), "after 3 attempts")
}

func TestRetriesExhaustedReturnLastAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []Option
		op       operation
		status   int
		attempts int
		sentinel error
	}{
		{"GET 503, default retries", nil, operations()[4], 503, 4, ErrServer},
		{"GET 429, 1 retry", []Option{WithMaxRetries(1)}, operations()[2], 429, 2, ErrRateLimited},
		{"GET 502, no retries", []Option{WithMaxRetries(0)}, operations()[6], 502, 1, ErrServer},
		{"POST 429, default retries", nil, operations()[1], 429, 4, ErrRateLimited},
		{"POST 429, no retries", []Option{WithMaxRetries(0)}, operations()[3], 429, 1, ErrRateLimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, logger := newLogRecorder()
			c := gockClient(t, append(tc.opts, WithLogger(logger))...)
			body := `{"detail":"still busy"}`
			expect(tc.op.method, tc.op.path, tc.op.query).times(tc.attempts).replyJSON(tc.status, body)

			err := tc.op.call(context.Background(), c)

			apiErr := requireAPIError(t, err, tc.status, tc.op.method, tc.op.path)
			assert.Equal(t, "still busy", apiErr.Message)
			assert.Equal(t, body, string(apiErr.Body))
			assert.True(t, errors.Is(err, tc.sentinel))
			assert.NotContains(t, err.Error(), "giving up")
			assert.Len(t, rec.lines(), tc.attempts, "attempts logged")
			assertAllSent(t)
		})
	}
}

func TestRetriesExhaustedOnTransportErrors(t *testing.T) {
	c := gockClient(t, WithMaxRetries(2))
	cause := errors.New("connection reset by peer")
	expect("GET", "/api/variants/v", "").times(3).ReplyError(cause)

	_, err := c.GetVariant(context.Background(), "v")

	require.Error(t, err)
	assert.True(t, errors.Is(err, cause), "expected the cause wrapped, got %v", err)
	assert.Contains(t, err.Error(), "after 3 attempts")
	assert.NotContains(t, err.Error(), "giving up")
	assertAllSent(t)
}

// The wait planned for a retry honours Retry-After up to the maximum wait.
func TestRetryAfterIsBoundedByMaxWait(t *testing.T) {
	for _, tc := range []struct {
		retryAfter string
		want       time.Duration
	}{
		{"0", 0},
		{"86400", 3 * time.Millisecond},
		{time.Now().Add(48 * time.Hour).UTC().Format(http.TimeFormat), 3 * time.Millisecond},
	} {
		t.Run(tc.retryAfter, func(t *testing.T) {
			rec, logger := newLogRecorder()
			c := gockClient(t, WithRetryWait(0, 3*time.Millisecond), WithLogger(logger))
			expect("GET", "/api/variants/v", "").replyJSON(429, `{"detail":"slow"}`).SetHeader("Retry-After", tc.retryAfter)
			expect("GET", "/api/variants/v", "").replyJSON(200, `{}`)

			// Should the bound fail, the deadline turns a long wait into an
			// error instead of a hung test.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := c.GetVariant(ctx, "v")

			require.NoError(t, err)
			lines := rec.lines()
			require.Len(t, lines, 2)
			assert.Equal(t, tc.want, lines[0]["wait"], "planned wait")
			assertAllSent(t)
		})
	}
}

// Cancelling the context ends the wait between attempts at once, and the
// error keeps both the cancellation and the last answer.
func TestContextCancelEndsRetryWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, logger := newLogRecorder()
	rec.onWait = cancel // cancel once the SDK has decided to wait
	c := gockClient(t, WithRetryWait(time.Hour, time.Hour), WithLogger(logger))
	expect("GET", "/api/human-evaluations", "app_id=app-1").replyJSON(503, `{"detail":"restarting"}`)

	_, err := c.ListHumanEvaluations(ctx, "app-1")

	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "expected context.Canceled, got %v", err)
	apiErr := requireAPIError(t, err, 503, "GET", "/api/human-evaluations")
	assert.Equal(t, "restarting", apiErr.Message)
	assertAllSent(t)
}

// A wait that would outlast the context's deadline is not started: the last
// answer comes back instead of a deadline error.
func TestRetryWaitBeyondDeadlineReturnsLastAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := gockClient(t, WithRetryWait(time.Hour, time.Hour))
	expect("GET", "/api/variants/v", "").replyJSON(502, `<html><title>502 Bad Gateway</title></html>`)

	_, err := c.GetVariant(ctx, "v")

	apiErr := requireAPIError(t, err, 502, "GET", "/api/variants/v")
	assert.Equal(t, "502 Bad Gateway", apiErr.Message)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "expected the answer, not a deadline error: %v", err)
	assertAllSent(t)
}

func TestEndedContextSendsNothing(t *testing.T) {
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			c := gockClient(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()

			err := op.call(ctx, c)

			require.Error(t, err)
			assert.True(t, errors.Is(err, context.Canceled), "expected context.Canceled, got %v", err)
			var apiErr *APIError
			assert.False(t, errors.As(err, &apiErr))
			assertNothingUnmatched(t)
		})
	}
	c := gockClient(t)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := c.GetVariant(ctx, "v")
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "expected context.DeadlineExceeded, got %v", err)
	assertNothingUnmatched(t)
}

// When an earlier attempt had an answer and a later one fails to connect,
// the answer is kept: errors.As finds it.
func TestLastAnswerKeptAfterTransportFailure(t *testing.T) {
	calls := 0
	c := gockClientVia(t, func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			if calls == 1 {
				return next.RoundTrip(r)
			}
			return nil, io.ErrUnexpectedEOF
		})
	}, WithMaxRetries(1))
	expect("GET", "/api/variants/v", "").replyJSON(503, `{"detail":"maintenance"}`)

	_, err := c.GetVariant(context.Background(), "v")

	require.Error(t, err)
	assert.True(t, errors.Is(err, io.ErrUnexpectedEOF), "the last failure: %v", err)
	apiErr := requireAPIError(t, err, 503, "GET", "/api/variants/v")
	assert.Equal(t, "maintenance", apiErr.Message)
	assert.True(t, errors.Is(err, ErrServer))
	assert.Equal(t, 2, calls)
}

// transientWaitFailure is WaitEvaluation's whole retry policy; this table
// is its specification.
func TestTransientWaitFailure(t *testing.T) {
	t.Parallel()
	answer := func(status int, message string) error {
		return &APIError{StatusCode: status, Method: "GET", Path: "/api/evaluations/e/status", Message: message, Operation: "FetchEvaluationStatus"}
	}
	transport := func(sentinel, cause error) error {
		return fmt.Errorf("agenta: GET /api/evaluations/e/status: %w", &failure{text: "x", errs: []error{sentinel, cause}})
	}
	read := func(sentinel, cause error) error {
		return &DecodeError{StatusCode: 200, Err: &failure{text: "x", errs: []error{sentinel, cause}}}
	}
	refused := transport(ErrNoResponse, errDial)
	for _, tc := range []struct {
		name string
		err  error
		seen bool // a status was read before
		want bool
	}{
		// A server in trouble: ridden out.
		{"503", answer(503, "Service Unavailable"), true, true},
		{"503 before any status", answer(503, ""), false, true},
		{"502 from a proxy", answer(502, "502 Bad Gateway"), true, true},
		{"504", answer(504, ""), true, true},
		{"500 after a status was read", answer(500, "(psycopg.OperationalError) server closed the connection"), true, true},
		{"507", answer(507, ""), true, true},
		{"408", answer(408, ""), false, true},
		{"429", answer(429, ""), false, true},
		{"connection refused", refused, false, true},
		{"reset before the answer", transport(ErrNoResponse, errRead), true, true},
		{"per-attempt timeout", transport(ErrAttemptTimeout, &timeoutError{limit: time.Second}), true, true},
		{"answer cut short", read(ErrAnswerCut, io.ErrUnexpectedEOF), true, true},
		{"answer stalled", read(ErrIdleTimeout, &timeoutError{idle: true, limit: time.Second}), true, true},
		{"no answer, after a 503", fmt.Errorf("%w; last answer: %w", refused, answer(503, "")), true, true},
		// What another read would only repeat: the end of the wait.
		{"500 before any status was read", answer(500, "(psycopg.OperationalError)"), false, false},
		{"unknown evaluation, status route's 500", answer(500, "'NoneType' object has no attribute 'status'"), true, false},
		{"malformed id", answer(500, malformedID), true, false},
		{"unknown evaluation, 404", answer(404, "Evaluation with id e not found"), true, false},
		{"no such route", &APIError{StatusCode: 404, Message: "Not Found", Body: []byte(`{"detail":"Not Found"}`)}, true, false},
		{"501", answer(501, ""), true, false},
		{"505", answer(505, ""), true, false},
		{"400", answer(400, ""), true, false},
		{"401", answer(401, ""), true, false},
		{"403", answer(403, ""), true, false},
		{"422", &ValidationError{APIError: answer(422, "").(*APIError)}, true, false},
		{"redirect not followed", answer(307, "redirect to … not followed"), true, false},
		{"not the JSON expected", &DecodeError{StatusCode: 200, Err: &json.SyntaxError{}}, true, false},
		{"an answer without a status", &DecodeError{StatusCode: 200, Err: errors.New(`the answer has no "status"`)}, true, false},
		{"answer over its limit", &DecodeError{StatusCode: 200, Err: &LimitError{Field: "Single", Limit: 1}}, true, false},
		{"refused argument", invalid("evaluationID", "is required"), true, false},
		{"untrusted certificate", transport(errCert, errCert), true, false},
		{"untrusted certificate, after a 503", fmt.Errorf("%w; last answer: %w", transport(errCert, errCert), answer(503, "")), true, false},
		{"redirect loop", transport(errRedirect, errRedirect), true, false},
	} {
		got := transientWaitFailure(tc.err, tc.seen)
		assert.Equal(t, tc.want, got, "%s (status seen before: %v): expected transient=%v, got %v", tc.name, tc.seen, tc.want, got)
	}
}

func TestWaitPause(t *testing.T) {
	t.Parallel()
	assert.Equal(t, DefaultRetryWaitMin, waitPause(0, 0, 2*time.Second, 1), "a Client without retry waits still pauses")
	assert.Equal(t, time.Millisecond, waitPause(0, 0, time.Millisecond, 5), "but never longer than the interval")
	for _, tc := range []struct {
		failures int
		lo, hi   time.Duration
	}{
		{1, 250 * time.Millisecond, 500 * time.Millisecond},
		{2, 500 * time.Millisecond, time.Second},
		{3, time.Second, 2 * time.Second},
		{10, 2500 * time.Millisecond, 5 * time.Second}, // capped, jitter kept
	} {
		seen := map[time.Duration]bool{}
		for i := 0; i < 100; i++ {
			got := waitPause(DefaultRetryWaitMin, DefaultRetryWaitMax, DefaultWaitInterval, tc.failures)
			require.True(t, got >= tc.lo && got <= tc.hi, "failure %d: expected a pause in [%s, %s], got %s", tc.failures, tc.lo, tc.hi, got)
			seen[got] = true
		}
		assert.Greater(t, len(seen), 1, "failure %d: expected jitter", tc.failures)
	}
}

// planRead never lets a wait sleep through its deadline without a read.
func TestPlanRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		pause, left time.Duration
		after       time.Duration
		last        bool
	}{
		{"far from the deadline", 2 * time.Second, time.Hour, 2 * time.Second, false},
		{"no pause", 0, time.Second, 0, false},
		{"--interval 1h --timeout 20s", time.Hour, 20 * time.Second, 18 * time.Second, true},
		{"a tenth of the time left", time.Hour, 10 * time.Second, 9 * time.Second, true},
		{"at most 2 s kept", time.Hour, 100 * time.Second, 98 * time.Second, true},
		{"fits before the margin", 500 * time.Millisecond, time.Second, 500 * time.Millisecond, false},
		{"would end in the margin", 950 * time.Millisecond, time.Second, 900 * time.Millisecond, true},
		{"deadline now", time.Second, 0, -1, true},
		{"deadline past", time.Second, -5 * time.Second, -1, true},
	} {
		after, last := planRead(tc.pause, tc.left)
		assert.Equal(t, [2]any{tc.after, tc.last}, [2]any{after, last}, "%s: planRead(%s, %s)", tc.name, tc.pause, tc.left)
	}
}

// GETs are still retried, with the Client's own transport and through a
// wrapping RoundTripper: a 503 then 200, and a dropped connection then 200.
func TestGETRetriesThroughAnyTransport(t *testing.T) {
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

// A stop is a write: an answer lost after it was sent (a 502, 503 or 504
// from a proxy, a connection cut) is not retried, as for creates, forks
// and commits; the run may have been stopped, and on a closed run a second
// stop need not succeed.
func TestStopNotRetried(t *testing.T) {
	mux, c := setup(t)
	var stops, forks, commits, creates int
	count := func(n *int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			*n++
			w.WriteHeader(http.StatusBadGateway)
			_, _ = fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/simple/evaluations/r1/stop", count(&stops, `{"detail":"bad gateway"}`))
	mux.HandleFunc("/applications/variants/fork", count(&forks, `{"detail":"bad gateway"}`))
	mux.HandleFunc("/applications/revisions/commit", count(&commits, `{"detail":"bad gateway"}`))
	mux.HandleFunc("/simple/evaluations/", count(&creates, `{"detail":"bad gateway"}`))
	ctx := context.Background()
	_, err := c.StopSimpleEvaluation(ctx, "r1")
	assert.Error(t, err)
	_, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: "v"},
		ApplicationVariant: models.NewApplicationVariant{Slug: "s"}})
	assert.Error(t, err)
	data := models.ApplicationRevisionData{URL: "http://x"}
	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: "v", Data: &data})
	assert.Error(t, err)
	_, err = c.CreateSimpleEvaluation(ctx, models.SimpleEvaluationCreate{TestsetRevisionID: "t", ApplicationRevisionID: "a"})
	assert.Error(t, err)
	assert.Equal(t, []int{1, 1, 1, 1}, []int{stops, forks, commits, creates}, "stop, fork, commit and create each sent once")
}

// A call goes back to the pool with nothing of its own left but its
// retryablehttp.Client, whose hooks stay bound to it and whose sending
// client is dropped; the next call starts from the Client's settings.
func TestCallReleasedAfresh(t *testing.T) {
	c := gockClient(t, WithMaxRetries(2))
	st := c.newCall(context.Background(), &request{operation: "GetVariant", method: "GET", path: "/variants/v"}, "/api/variants/v")
	retry := st.retry
	require.Same(t, c.retry.HTTPClient, retry.HTTPClient, "the call sends through the Client's client")
	require.Equal(t, 2, retry.RetryMax, "the call's retry bound")
	st.attempt, st.wait, st.last, st.ended = 3, time.Second, errors.New("503"), true
	st.wrote = new(atomic.Bool)

	st.release()

	assert.Nil(t, retry.HTTPClient, "a released call keeps the Client's sending client")
	assert.NotNil(t, retry.CheckRetry, "the CheckRetry hook is unbound")
	assert.NotNil(t, retry.Backoff, "the Backoff hook is unbound")
	left := *st // the pool has st: change nothing of it
	left.retry = nil
	assert.Equal(t, call{}, left, "a released call keeps state of the call it served")
}

// The call that follows one that retried starts afresh: its error counts
// its own attempts and holds no answer of the call before.
func TestCallAfterRetriesStartsAfresh(t *testing.T) {
	c := gockClient(t, WithMaxRetries(1), WithRetryWait(0, 0))
	expect("GET", "/api/variants/v", "").times(2).replyJSON(503, `{"detail":"busy"}`)
	cause := errors.New("connection reset by peer")
	expect("GET", "/api/variants/w", "").times(2).ReplyError(cause)

	_, err := c.GetVariant(context.Background(), "v")
	requireAPIError(t, err, 503, "GET", "/api/variants/v")
	_, err = c.GetVariant(context.Background(), "w")

	require.ErrorIs(t, err, cause)
	var apiErr *APIError
	assert.False(t, errors.As(err, &apiErr), "the second call's error holds the first call's answer: %v", err)
	assert.Contains(t, err.Error(), "after 2 attempts", "the second call counts its own attempts")
	assertAllSent(t)
}

// An answer that is slow to read spends the time the wait would have had:
// the deadline is weighed after the answer is read, so the last answer
// comes back, not a deadline error from a wait that could never end in
// time. (Before, the wait was planned before the read and slept into the
// deadline.)
func TestRetryWaitAfterSlowAnswerBeyondDeadline(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(503)
		_, _ = io.WriteString(w, `{"detail":`)
		w.(http.Flusher).Flush()
		select { // the rest of the answer comes late
		case <-time.After(1500 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `"restarting"}`)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL+"/api", WithRetryWait(2*time.Second, 2*time.Second), WithMaxRetries(3))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()

	_, err := c.GetVariant(ctx, "v")

	apiErr := requireAPIError(t, err, 503, "GET", "/api/variants/v")
	assert.Equal(t, "restarting", apiErr.Message)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "expected the answer, not a deadline error: %v", err)
	assert.EqualValues(t, 1, requests.Load(), "no second attempt fits before the deadline")
}

// After a retried answer, a later attempt's success is returned whole: the
// answer checkRetry kept for a declined retry belongs to that attempt only.
func TestRetriedThenSucceededKeepsNothing(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if requests.Add(1) == 1 {
			w.WriteHeader(503)
			_, _ = io.WriteString(w, `{"detail":"restarting"}`)
			return
		}
		_, _ = io.WriteString(w, `{"variant_id":"v","variant_name":"app.default"}`)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL+"/api")

	v, err := c.GetVariant(context.Background(), "v")

	require.NoError(t, err)
	assert.Equal(t, "v", v.VariantID)
	assert.EqualValues(t, 2, requests.Load())
}
