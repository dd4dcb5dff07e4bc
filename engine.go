package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/go-querystring/query"
	"github.com/hashicorp/go-retryablehttp"
)

// request describes one operation call for the engine.
type request struct {
	operation string // the Client method, for APIError.Operation
	method    string
	path      string // escaped, relative to the base URL, starting with "/"
	query     any    // a struct for go-querystring, or nil
	body      any    // marshalled as JSON, or nil
	// whole names the ResponseLimits field that bounds the whole answer:
	// "Single" for one object, "List" for a list read whole; "" for a
	// stream, which only its elements bound.
	whole string
	// read marks a POST that only reads, such as the 2026 API's queries
	// and retrieves: it may be retried like a GET.
	read bool
}

// idempotent reports whether a request may be sent twice without harm.
func (r *request) idempotent() bool {
	return r.read || r.method == http.MethodGet || r.method == http.MethodHead
}

// call is the state of one operation call across its attempts. It rides in
// the request's context, where the Client's retry hooks find it.
type call struct {
	c       *Client
	r       request
	path    string // the full escaped path, for errors and logs
	attempt int
	wrote   atomic.Bool     // some of this attempt's request was written
	last    error           // the last answer before a retry
	ctx     context.Context // the caller's, to tell its end from the attempt's timeout
	body    *answerBody     // the 2xx answer, as the decoders read it
	secrets *secretSet      // the Client's secrets when the call started
	// valueEnd is the offset in the body just past the decoded value, and
	// ended whether end has taken the body over.
	valueEnd int64
	ended    bool
}

// callKey is the context key of a call's state.
type callKey struct{}

// getOne runs a request whose answer is one JSON object.
func getOne[T any](ctx context.Context, c *Client, r *request) (*T, error) {
	one := *r
	one.whole = "Single"
	st, resp, err := c.start(ctx, &one)
	if err != nil {
		return nil, err
	}
	v, err := decodeObject[T](st, resp)
	if err == nil {
		if err = st.end(resp); err != nil {
			v = nil
		}
	}
	st.finish(resp.Body)
	return v, err
}

// getList runs a request whose answer is a JSON array and returns its
// elements, read by decode.
func getList[T any](ctx context.Context, c *Client, r *request, decode listDecoder[T]) ([]T, error) {
	out := []T{}
	whole := *r
	whole.whole = "List"
	for v, err := range streamList(ctx, c, &whole, decode) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// streamList runs a request whose answer is a JSON array and yields its
// elements as decode reads them, so memory does not grow with the array.
// Stopping the loop early closes the response at once.
func streamList[T any](ctx context.Context, c *Client, r *request, decode listDecoder[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		st, resp, err := c.start(ctx, r)
		if err != nil {
			var zero T
			yield(zero, err)
			return
		}
		defer func() { st.finish(resp.Body) }() // decode may replace resp.Body
		if decode(st, resp, yield) {
			if err := st.end(resp); err != nil {
				var zero T
				yield(zero, err)
			}
		}
	}
}

// start runs the request with retries. It returns a 2xx response, whose body
// the caller must close, or an error: non-2xx answers become *APIError or
// *ValidationError.
func (c *Client) start(ctx context.Context, r *request) (*call, *http.Response, error) {
	if ctx == nil {
		return nil, nil, invalid("ctx", "is nil")
	}
	if c == nil || c.retry == nil {
		return nil, nil, invalid("Client", "is nil or not made by NewClient")
	}
	target := c.base + r.path
	// The path for errors and logs is the tail of target: no allocation.
	path := target[len(c.base)-len(c.basePath):]
	if err := ctx.Err(); err != nil {
		// Send nothing for a context that has already ended.
		return nil, nil, fmt.Errorf("agenta: %s %s: %w", r.method, path, err)
	}
	if r.query != nil {
		values, err := query.Values(r.query)
		if err != nil {
			return nil, nil, fmt.Errorf("agenta: %s %s: encode query: %w", r.method, path, err)
		}
		if encoded := values.Encode(); encoded != "" {
			target += "?" + encoded
		}
	}
	var body any
	if r.body != nil {
		data, err := json.Marshal(r.body)
		if err != nil {
			// A value JSON cannot carry, such as NaN in Parameters.
			return nil, nil, unencodableError(r.body, err)
		}
		body = data
	}

	st := &call{c: c, r: *r, path: path, ctx: ctx, secrets: c.secrets.load()}
	ctx = context.WithValue(ctx, callKey{}, st)
	if !r.idempotent() {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteHeaders: func() { st.wrote.Store(true) },
		})
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, nil, fmt.Errorf("agenta: %s %s: build request: %w", r.method, path, err)
	}
	// Share the Client's header values instead of cloning them: net/http
	// only reads them, and the capped capacity makes an Add copy, not write.
	for name, values := range c.header {
		req.Header[name] = values[:len(values):len(values)]
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.gzip {
		req.Header.Set("Accept-Encoding", "gzip") // inflated by inflate, not net/http
	}

	resp, err := c.retry.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, nil, st.transportError(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, st.readError(resp) // which inflates an error body itself
	}
	if c.gzip {
		inflate(resp)
	}
	st.body = newAnswerBody(st.scrubAnswer(resp.Body), r.whole, c.limits.whole(r.whole))
	resp.Body = st.body
	return st, resp, nil
}

// checkRetry is the Client's CheckRetry hook. It applies shouldRetry to the
// attempt, plans the wait with backoff, logs the attempt, and then waits
// itself: go-retryablehttp's Backoff hook sees neither the context nor, after
// a transport error, the response, so it cannot find the call whose wait
// it would have to return. A wait that would outlast the caller's deadline
// is not started: it would only turn the last answer into a deadline error.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st := ctx.Value(callKey{}).(*call)
	st.attempt++
	wrote := st.wrote.Swap(false)
	retry := ctx.Err() == nil && st.attempt <= c.maxRetries &&
		shouldRetry(st.r.idempotent(), wrote, resp, err)
	var wait time.Duration
	if retry {
		wait = backoff(c.waitMin, c.waitMax, st.attempt-1, resp, time.Now())
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			retry = false
		}
	}
	if retry && resp != nil {
		// Keep what the server said, in case the context ends while we wait.
		st.last = st.readError(resp)
	}
	st.log(ctx, resp, err, retry, wait)
	if !retry || wait <= 0 {
		return retry, nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-timer.C:
		return true, nil
	}
}

// noWait is the Client's Backoff hook: checkRetry has already waited.
func noWait(_, _ time.Duration, _ int, _ *http.Response) time.Duration { return 0 }

func (st *call) log(ctx context.Context, resp *http.Response, err error, retry bool, wait time.Duration) {
	l := st.c.logger
	if l == nil {
		return
	}
	level := slog.LevelInfo
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs,
		slog.String("method", st.r.method),
		slog.String("path", st.path),
		slog.Int("attempt", st.attempt))
	if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
		if resp.StatusCode >= 400 {
			level = slog.LevelWarn
		}
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", st.text(unwrapURLError(err).Error(), maxMessage)))
		level = slog.LevelWarn
	}
	if retry {
		attrs = append(attrs, slog.Duration("wait", wait))
	}
	l.LogAttrs(ctx, level, "agenta request", attrs...)
}

// transportError is the error of a call that ended without an answer it
// could use: its cause, classified by reason, after how many attempts, and
// the last answer, if an earlier attempt had one.
func (st *call) transportError(err error) error {
	cause := st.reason(unwrapURLError(err))
	suffix := ""
	if st.attempt > 1 {
		suffix = " (after " + strconv.Itoa(st.attempt) + " attempts)"
	}
	if st.last != nil {
		// An earlier attempt had an answer: keep it for errors.As.
		return fmt.Errorf("agenta: %s %s: %w%s; last answer: %w", st.r.method, st.path, cause, suffix, st.last)
	}
	return fmt.Errorf("agenta: %s %s: %w%s", st.r.method, st.path, cause, suffix)
}

// reason wraps a failure to send or to read an answer with the sentinel
// that classifies it, and a message that says which limit expired or what
// broke: the caller's context, the per-attempt timeout waiting for the
// headers (ErrAttemptTimeout), the idle timeout reading the body
// (ErrIdleTimeout), the connection before an answer (ErrNoResponse) or
// after one began (ErrAnswerCut). The cause stays wrapped; its text, which
// may quote the server (a Location header), is scrubbed and bounded.
func (st *call) reason(err error) error {
	raw := err.Error()
	text := st.text(raw, maxMessage)
	var netErr net.Error
	var limit *timeoutError
	cause := err
	if st.holdsSecret(raw) {
		// The cause quotes a credential (net/http quotes a Location that
		// fails to parse): the chain keeps its scrubbed text instead, so
		// that errors.Unwrap shows no more than err.Error() does.
		cause = errors.New(text)
	}
	// read is how much of a 2xx answer had arrived, when one had begun.
	read := ""
	if st.body != nil {
		read = " after " + strconv.FormatInt(st.body.read, 10) + " bytes"
	}
	switch {
	case st.ctx != nil && st.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return &failure{text: "the caller's context ended: " + text, errs: []error{cause}}
	case errors.As(err, &limit) && limit.idle:
		return &failure{
			text: "the answer stalled" + read + ": nothing arrived for " + limit.limit.String() +
				" (the idle timeout: WithIdleTimeout, by default WithTimeout)",
			errs: []error{ErrIdleTimeout, cause},
		}
	case errors.As(err, &limit):
		return &failure{
			text: "the per-attempt timeout (WithTimeout, " + limit.limit.String() + ") expired before the answer's headers arrived",
			errs: []error{ErrAttemptTimeout, cause},
		}
	case dialFailure(err):
		return &failure{text: "no answer from the server: " + text, errs: []error{ErrNoResponse, cause}}
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		// A timeout of the caller's transport (a TLS handshake, its
		// ResponseHeaderTimeout): its text says which.
		return &failure{text: "the attempt timed out" + read + ": " + text, errs: []error{ErrAttemptTimeout, cause}}
	case st.body != nil && (errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)):
		return &failure{text: "the answer was cut short" + read + ": " + text, errs: []error{ErrAnswerCut, cause}}
	case errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return &failure{text: "no answer from the server: " + text, errs: []error{ErrNoResponse, cause}}
	}
	return &failure{text: text, errs: []error{cause}}
}

// readError turns a non-2xx answer into an error and closes the body. It
// keeps up to maxErrorBody of the body, scrubbed before it is cut, and
// never reads the body of a 1xx answer: after a 101 that is the raw
// connection, which no timeout bounds. A redirect that was not followed
// names its Location.
func (st *call) readError(resp *http.Response) error {
	var body []byte
	if resp.StatusCode >= 200 {
		if st.c.gzip {
			inflate(resp)
		}
		// Read past the cut by a secret's length, so that a secret the cut
		// would split is recognised and dropped whole.
		body, _ = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+st.readPastCut()))
	}
	resp.Body.Close()
	err := buildAPIError(resp.StatusCode, st.r.method, st.path, st.scrubCut(body, maxErrorBody), st.secrets.all)
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		apiErr.Operation = st.r.operation
		if location := resp.Header.Get("Location"); location != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
			note := "redirect to " + st.text(location, maxMessage) + " not followed"
			if !st.r.idempotent() {
				note += " (a create follows at most one 307 or 308, to the same origin)"
			}
			if apiErr.Message != "" {
				note += ": " + apiErr.Message
			}
			apiErr.Message = note
		}
	}
	return err
}

// unwrapURLError drops net/http's *url.Error wrapper, whose message repeats
// the full URL with its query.
func unwrapURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) && uerr.Err != nil {
		return uerr.Err
	}
	return err
}
