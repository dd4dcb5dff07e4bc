package agenta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
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
	// mapped marks a 2024 route that a 2026 server lacks and that a Client
	// which knows it speaks the 2026 API maps onto that API: its errors
	// say how to tell the Client (APIError.Error).
	mapped bool
}

// idempotent reports whether a request may be sent twice without harm.
func (r *request) idempotent() bool {
	return r.read || r.method == http.MethodGet || r.method == http.MethodHead
}

// call is the state of one operation call across its attempts, with the
// go-retryablehttp client that runs them. go-retryablehttp hands its hooks
// nothing of a request but its context (CheckRetry) and its answer
// (Backoff, which gets nil after a transport error), so a hook shared by
// every call could find the call's facts only in a context value. Each
// call has a retryablehttp.Client of its own instead, whose hooks are the
// call's methods; calls are pooled (callPool), so that binding the hooks
// costs nothing per call.
type call struct {
	c       *Client
	r       request
	path    string // the full escaped path, for errors and logs
	attempt int
	wait    time.Duration // before the next attempt, planned by checkRetry
	// wrote, for a call that is not idempotent, is set by the request's
	// trace when some of the attempt's request was written. It is a flag
	// of its own, not a field, so that a late trace event never reaches
	// the call that reuses this one.
	wrote *atomic.Bool
	last  error // the last answer before a retry
	// kept is the call's error when checkRetry read the last attempt's
	// answer and then declined the retry (the answer, or the context's end
	// with it): go-retryablehttp then hands back a body already read.
	kept error
	ctx  context.Context // the caller's, to tell its end from the attempt's timeout
	body *answerBody     // the 2xx answer, as the decoders read it
	// secrets are the Client's when the call started (secretSet.all):
	// every text and body taken from the server for an error or a log is
	// scrubbed of them, in case the server echoes one (FastAPI echoes
	// refused input); answers scrubs 2xx answers (secretSet.answers).
	secrets, answers *text.Secrets
	// valueEnd is the offset in the body just past the decoded value, and
	// ended whether end has taken the body over.
	valueEnd int64
	ended    bool
	retry    *retryablehttp.Client // this call's, its hooks bound to it once
}

// callPool keeps calls for reuse, each with its retryablehttp.Client and
// hooks: PassthroughErrorHandler returns the last answer or error as they
// are, without go-retryablehttp's "giving up" wrapper.
var callPool = sync.Pool{New: func() any {
	st := new(call)
	st.retry = &retryablehttp.Client{
		CheckRetry:   st.checkRetry,
		Backoff:      st.plannedWait,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	return st
}}

// newCall returns a call of r, with the Client's go-retryablehttp settings.
func (c *Client) newCall(ctx context.Context, r *request, path string) *call {
	st := callPool.Get().(*call)
	set := c.secrets.load()
	st.c, st.r, st.path, st.ctx, st.secrets, st.answers = c, *r, path, ctx, set.all, set.answers
	st.retry.HTTPClient, st.retry.RetryMax = c.retry.HTTPClient, c.retry.RetryMax
	return st
}

// release returns st to the pool once the call is over: its answer read
// and closed, or its error built. Nothing that outlives a call refers to
// it: errors copy what they need, and end's reader holds the body alone.
func (st *call) release() {
	retry := st.retry
	retry.HTTPClient = nil
	*st = call{retry: retry}
	callPool.Put(st)
}

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
	st.release()
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
		defer func() { // decode may replace resp.Body
			st.finish(resp.Body)
			st.release()
		}()
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

	st := c.newCall(ctx, r, path)
	if !r.idempotent() {
		// Only net/http knows whether a byte was written; it tells a
		// trace in the context, the one way it has.
		wrote := new(atomic.Bool)
		st.wrote = wrote
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteHeaders: func() { wrote.Store(true) },
		})
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		st.release()
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

	resp, err := st.retry.Do(req)
	switch {
	case err != nil:
		if resp != nil {
			resp.Body.Close()
		}
		err = st.transportError(err)
	case st.kept != nil:
		err = st.kept
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		err = st.readError(resp) // which inflates an error body itself
	}
	if err != nil {
		st.release()
		return nil, nil, err
	}
	if c.gzip {
		inflate(resp)
	}
	st.body = newAnswerBody(st.scrubAnswer(resp.Body), r.whole, c.limits.whole(r.whole))
	resp.Body = st.body
	return st, resp, nil
}

// checkRetry is the call's CheckRetry hook: go-retryablehttp asks it after
// each attempt whether to send another. It applies shouldRetry within the
// retry bound, plans the wait with backoff, keeps the answer it retries,
// and logs the attempt; go-retryablehttp then sleeps the wait (see
// plannedWait), ending it when the context ends. The wait is planned here
// because the decision depends on it: a wait that would outlast the
// caller's deadline is not started, since it would only turn the last
// answer into a deadline error, and go-retryablehttp asks Backoff only
// once the retry is decided.
func (st *call) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st.attempt++
	st.kept = nil
	wrote := st.wrote != nil && st.wrote.Swap(false)
	// Never past RetryMax: go-retryablehttp would then return an answer
	// whose body this hook has read.
	retry := ctx.Err() == nil && st.attempt <= st.retry.RetryMax &&
		shouldRetry(st.r.idempotent(), wrote, resp, err)
	st.wait = 0
	if retry {
		st.wait = backoff(st.c.waitMin, st.c.waitMax, st.attempt-1, resp, time.Now())
		if resp != nil {
			// Keep what the server said, in case the context ends while we
			// wait. It is read before the deadline is consulted: a slow
			// answer spends the time the wait would have had.
			st.last = st.readError(resp)
		}
		switch deadline, ok := ctx.Deadline(); {
		case ctx.Err() != nil:
			// The context ended the read: that is the error, with the
			// answer as far as it came.
			retry = false
			if resp != nil {
				st.kept = st.transportError(ctx.Err())
			}
		case ok && time.Until(deadline) < st.wait:
			retry = false
			if resp != nil {
				st.kept = st.last
			}
		}
	}
	st.log(ctx, resp, err, retry, st.wait)
	return retry, nil
}

// plannedWait is the call's Backoff hook: the wait checkRetry planned. It
// needs none of go-retryablehttp's arguments: the bounds are the Client's,
// the attempt is counted by the call, and the Retry-After was read from
// the answer checkRetry saw.
func (st *call) plannedWait(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return st.wait
}

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
		attrs = append(attrs, slog.String("error", st.secrets.Text(unwrapURLError(err).Error(), maxMessage)))
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
	text := st.secrets.Text(raw, maxMessage)
	var netErr net.Error
	var limit *timeoutError
	cause := err
	if st.secrets.Holds(raw) {
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
	return answerError(resp, body, &st.r, st.path, st.secrets)
}

// readPastCut is how far past a cut an error body is read: the longest
// form of a secret, so that the scrub sees a secret the cut splits whole.
func (st *call) readPastCut() int64 {
	return int64(max(maxSecretLength, st.secrets.Longest()))
}

// scrubAnswer returns a 2xx answer's body scrubbed as it is read, or body
// itself when the Client has no long secret.
func (st *call) scrubAnswer(body io.ReadCloser) io.ReadCloser {
	if st.answers == nil {
		return body
	}
	return replayBody{st.answers.NewReader(body), body}
}

// decodeObject reads an answer that is one JSON object. null is refused:
// decoding into **T tells it from {}.
//
// It reads the object into a buffer that grows to the limit on single
// answers at most (json.Decoder's own buffer would double past it), stops
// at the object's closing brace without waiting for the body to end, and
// decodes it with json.Unmarshal. Anything else (a scalar, an object
// encoding/json refuses) is decoded anew by a json.Decoder, whose errors
// the caller then gets.
func decodeObject[T any](st *call, resp *http.Response) (*T, error) {
	body := resp.Body
	a := &arrayReader{r: body, buf: make([]byte, 0, 1<<10), most: bufferBound(st.c.limits.Single)}
	if a.skipSpace() && a.buf[a.pos] == '{' {
		if end, found := a.valueEnd(); found {
			v := new(T)
			if json.Unmarshal(a.buf[a.pos:end], v) == nil {
				resp.Body = a.replay(end, body) // end reads what follows
				st.valueEnd = a.offset(end)
				return v, nil
			}
		}
	}
	var limit *LimitError
	if errors.As(a.err, &limit) {
		return nil, st.decodeErrorAt(resp, a.offset(a.pos), bytes.NewReader(a.buf[a.pos:]), limit)
	}
	resp.Body = a.replay(0, body)
	dec := json.NewDecoder(resp.Body)
	var v *T
	if err := dec.Decode(&v); err != nil {
		return nil, st.decodeError(resp, dec, err)
	}
	if v == nil {
		return nil, st.decodeError(resp, dec, errors.New("the answer is null"))
	}
	st.after(resp, dec, 0)
	return v, nil
}

// after makes resp.Body what follows the value dec has decoded, whose
// input starts at offset base of the body, for end to read.
func (st *call) after(resp *http.Response, dec *json.Decoder, base int64) {
	resp.Body = replayBody{io.MultiReader(dec.Buffered(), resp.Body), resp.Body}
	st.valueEnd = base + dec.InputOffset()
}

// A listDecoder reads a 2xx answer that holds a JSON array (or null, for no
// elements) and yields each element, or at most one error, until yield
// returns false. It reports whether it read the answer to its end; it may
// replace resp.Body, which the engine then drains and closes. The caller of
// the engine chooses it: jsonList for any type, scenarioList for the one
// answer that can be large.
type listDecoder[T any] func(st *call, resp *http.Response, yield func(T, error) bool) (complete bool)

// jsonList is the listDecoder for any element type: arrayList, each
// element decoded with json.Unmarshal.
func jsonList[T any](st *call, resp *http.Response, yield func(T, error) bool) bool {
	return arrayList(st, resp, yield, object[T])
}

// decoderList reads a list with a json.Decoder alone, one element at a
// time. It is arrayList's reference, and reads what arrayList does not: an
// answer that is not an array.
func decoderList[T any](st *call, resp *http.Response, yield func(T, error) bool) bool {
	var zero T
	dec := json.NewDecoder(resp.Body)
	st.element(0) // whitespace before the '[' counts as the first element's
	tok, err := dec.Token()
	if err != nil {
		yield(zero, st.decodeError(resp, dec, err))
		return false
	}
	if tok == nil { // null: no elements
		st.after(resp, dec, 0)
		return true
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		// Name the kind of value only: a string may be huge, or hold a secret.
		yield(zero, st.decodeError(resp, dec, fmt.Errorf("expected a JSON array, got %s", jsonKind(tok))))
		return false
	}
	if !decodeElements(st, 0, dec, false, yield, func(err error) {
		yield(zero, st.decodeError(resp, dec, err))
	}, nil) {
		return false
	}
	st.after(resp, dec, 0)
	return true
}

// element starts the budget of the next list element, whose whitespace
// begins at offset in the body. It always reports true.
func (st *call) element(offset int64) bool {
	if st.body != nil {
		st.body.element(offset, "Element", st.c.limits.Element)
	}
	return true
}

// jsonKind names the kind of JSON value tok starts.
func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case json.Delim:
		return "an object"
	}
	return "null"
}

// decodeElements decodes with encoding/json the elements of an array whose
// '[' dec has read, and its closing ']', yielding each element. afterElement
// says whether dec has read an element already, so that a comma comes next.
// On a decoding error it calls fail with the error and returns false; it
// reports whether the array was read to its end. When grammar is not nil,
// it is set, before fail is called, to whether the error broke the array's
// grammar (a missing comma or ']') rather than an element. Each element,
// with the whitespace and comma before it, is bounded by
// ResponseLimits.Element; base is the body offset of dec's input.
func decodeElements[T any](st *call, base int64, dec *json.Decoder, afterElement bool, yield func(T, error) bool, fail func(error), grammar *bool) bool {
	var zero T
	// One holder for all elements: decoding into a fresh variable would
	// allocate one per element. It is zeroed first, so no element shares
	// memory with the one before.
	v := new(T)
	for st.element(base+dec.InputOffset()) && dec.More() {
		if grammar != nil {
			// Decode reads the comma between elements itself and fails
			// there when the next byte is not one.
			*grammar = afterElement && !commaNext(dec)
		}
		*v = zero
		if err := dec.Decode(v); err != nil {
			fail(err)
			return false
		}
		afterElement = true
		if !yield(*v, nil) {
			return false
		}
	}
	if _, err := dec.Token(); err != nil {
		if grammar != nil {
			*grammar = true
		}
		fail(err)
		return false
	}
	return true
}

// commaNext reports whether the first byte dec has buffered, after
// whitespace, is a comma.
func commaNext(dec *json.Decoder) bool {
	var b [1]byte
	for r := dec.Buffered(); ; {
		if n, _ := r.Read(b[:]); n == 0 {
			return false
		}
		if !isSpace(b[0]) {
			return b[0] == ','
		}
	}
}

// decodeError builds the *DecodeError for an answer dec could not decode,
// keeping what was left unread, credentials scrubbed before it is cut. A
// read that failed (the connection, the attempt's timeout, the caller's
// context) is classified by reason; the message is scrubbed after
// decoding, since a decoding error may quote the server (a timestamp).
func (st *call) decodeError(resp *http.Response, dec *json.Decoder, err error) error {
	return st.decodeErrorAt(resp, dec.InputOffset(), dec.Buffered(), err)
}

// decodeErrorAt builds the *DecodeError for decoding that stopped at offset
// in the body, buffered holding what was read past it.
func (st *call) decodeErrorAt(resp *http.Response, offset int64, buffered io.Reader, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	var timestamp *models.TimestampError
	if errors.As(err, &timestamp) {
		// It stays in the chain for errors.As, and quotes the server's
		// value: scrub and bound it like the message.
		timestamp.Value = st.secrets.Text(timestamp.Value, maxMessage)
	}
	var limit *LimitError
	if !errors.As(err, &limit) && st.body != nil && st.body.err != nil && st.body.err != io.EOF {
		err = st.reason(err)
	}
	rest, _ := io.ReadAll(io.LimitReader(io.MultiReader(buffered, resp.Body), maxErrorBody+st.readPastCut()))
	return st.answerDecodeError(resp, offset, st.secrets.ScrubCut(rest, maxErrorBody), err, st.secrets.Text(err.Error(), maxMessage))
}

// answerDecodeError is the *DecodeError of resp, this call's answer, at
// offset in its body; body and text are already scrubbed and cut.
func (st *call) answerDecodeError(resp *http.Response, offset int64, body []byte, err error, text string) error {
	return &DecodeError{StatusCode: resp.StatusCode, Method: st.r.method, Path: st.path,
		Offset: offset, Body: body, Err: err, text: text}
}

// end checks the end of an answer whose JSON value was read whole: only
// whitespace may follow it. More data ([…][], […]<html>, […]{"detail":…}),
// which a proxy or a broken server may add, is an error: the answer was
// not the value alone, and taking the value as the answer would hide that.
// The error is a *DecodeError with the position of the data and a scrubbed
// excerpt of it.
//
// What follows must be read anyway for the connection to return to the
// pool, but the caller never waits on the network for long: a goroutine
// reads it, for at most drainWait before it closes the connection
// instead, and the caller waits for its verdict for at most trailingWait,
// long enough for bytes in flight on a healthy connection; a server that
// holds back the end of a complete answer costs that wait, never more.
// end takes the body over: finish then leaves it to end.
func (st *call) end(resp *http.Response) error {
	body := resp.Body
	st.ended = true
	if st.body != nil && st.body.err != nil {
		// The body has ended: what follows the value is in memory.
		at, excerpt := firstData(body, nil)
		body.Close()
		return st.trailing(resp, at, excerpt)
	}
	type verdict struct {
		at      int64
		excerpt []byte
	}
	found := make(chan verdict, 1)
	var saw atomic.Bool // data came: the verdict is a short read away
	go func() {
		stop := time.AfterFunc(drainWait, func() { body.Close() })
		at, excerpt := firstData(body, func() {
			saw.Store(true)
			// The connection is not reused after data that should not
			// be there: close it if the excerpt is slow to come.
			time.AfterFunc(excerptWait, func() { body.Close() })
		})
		found <- verdict{at, excerpt}
		stop.Stop()
		body.Close()
	}()
	wait := time.NewTimer(trailingWait)
	defer wait.Stop()
	select {
	case v := <-found:
		return st.trailing(resp, v.at, v.excerpt)
	case <-wait.C:
		if saw.Load() {
			v := <-found
			return st.trailing(resp, v.at, v.excerpt)
		}
		return nil
	}
}

// firstData reads body past whitespace, up to 64 KiB of it, to its end or
// to the first byte that is not whitespace, and then on to the end or
// maxExcerpt bytes from that byte. It returns how many whitespace bytes
// came before that byte, and the bytes from it on (nil when none came).
// sawData, if not nil, is called when the byte comes.
func firstData(body io.Reader, sawData func()) (int64, []byte) {
	buf := drainPool.Get().(*[]byte)
	defer drainPool.Put(buf)
	var skipped int64
	var excerpt []byte
	for skipped < 64<<10 || excerpt != nil {
		n, err := body.Read(*buf)
		chunk := (*buf)[:n]
		if excerpt == nil {
			i := 0
			for i < len(chunk) && isSpace(chunk[i]) {
				i++
			}
			skipped += int64(i)
			if i < len(chunk) {
				excerpt = []byte{}
				if sawData != nil {
					sawData()
				}
			}
			chunk = chunk[i:]
		}
		if excerpt != nil {
			excerpt = append(excerpt, chunk[:min(len(chunk), maxExcerpt-len(excerpt))]...)
			if len(excerpt) == maxExcerpt {
				break
			}
		}
		if err != nil {
			break
		}
	}
	return skipped, excerpt
}

// maxExcerpt bounds the excerpt of trailing data an error keeps, and
// excerptWait how long it waits for it once the data started.
const (
	maxExcerpt  = 64
	excerptWait = 10 * time.Millisecond
)

// trailing returns the error for data found at offset at after the value,
// or nil when excerpt is nil.
func (st *call) trailing(resp *http.Response, at int64, excerpt []byte) error {
	if excerpt == nil {
		return nil
	}
	excerpt = st.secrets.Scrub(excerpt)
	err := &trailingError{excerpt: st.secrets.Text(string(excerpt), 40)}
	return st.answerDecodeError(resp, st.valueEnd+at, excerpt, err, err.Error())
}

// finish closes an answer's body, unless end has taken it over.
func (st *call) finish(body io.ReadCloser) {
	if !st.ended {
		body.Close()
	}
}

var drainPool = sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}

// scenarioList is the listDecoder of evaluation scenarios, the one answer
// that can be large: arrayList with internal/scenariojson, which decodes a
// scenario in one pass and several times faster than encoding/json.
func scenarioList(st *call, resp *http.Response, yield func(models.EvaluationScenario, error) bool) (complete bool) {
	return arrayList(st, resp, yield, (*arrayReader).scenario)
}

// arrayList reads a JSON array itself, into a buffer that grows to the
// limit on one element at most (ResponseLimits.Element), and decodes each
// element with decode. An element decode refuses, or an array that breaks
// the grammar, is handed to a json.Decoder positioned where the fast path
// stopped (see resume), so that errors, offsets included, are exactly those
// of decoderList. An answer that is not an array (null, an object) goes to
// decoderList whole.
func arrayList[T any](st *call, resp *http.Response, yield func(T, error) bool, decode func(*arrayReader) (T, bool)) (complete bool) {
	body := resp.Body
	a := &arrayReader{r: body, buf: make([]byte, 0, 16<<10), most: bufferBound(st.c.limits.Element)}
	st.element(0) // whitespace before the '[' counts as the first element's
	// The first non-space byte decides: only an array takes the fast path.
	if !a.skipSpace() || a.buf[a.pos] != '[' {
		resp.Body = a.replay(0, body)
		return decoderList(st, resp, yield)
	}
	a.pos++
	n, scanned := 0, int64(0) // elements yielded, and the bytes encoding/json's scanner saw for them
	for {
		a.mark = a.pos // where a json.Decoder would take over
		st.element(a.offset(a.pos))
		if !a.skipSpace() {
			return resume(st, resp, a, n, scanned, yield)
		}
		c := a.buf[a.pos]
		if c == ']' {
			resp.Body = a.replay(a.pos+1, body) // end reads what follows
			st.valueEnd = a.offset(a.pos + 1)
			return true
		}
		a.start = a.pos // where encoding/json's scanner starts this value
		if n > 0 {
			if c != ',' {
				return resume(st, resp, a, n, scanned, yield)
			}
			a.pos++
			a.start = a.pos
			if !a.skipSpace() {
				return resume(st, resp, a, n, scanned, yield)
			}
		}
		if a.buf[a.pos] != '{' {
			return resume(st, resp, a, n, scanned, yield)
		}
		s, ok := decode(a)
		if !ok {
			return resume(st, resp, a, n, scanned, yield)
		}
		scanned += int64(a.pos - a.start)
		n++
		if !yield(s, nil) {
			return false
		}
	}
}

// resume hands the rest of the answer, from buf[mark:] on, to a json.Decoder
// in the state decoderList would be in after n elements, and runs its loop
// to the end. The decoder reads a short synthetic prefix first ("["
// and, after an element, a dummy "{}"); offsets in errors are corrected for
// it, so that errors are those of decoderList: the DecodeError offset and, in a
// *json.SyntaxError, the decoder's count of scanned bytes (scanned is that
// count for the n elements before).
func resume[T any](st *call, resp *http.Response, a *arrayReader, n int, scanned int64,
	yield func(T, error) bool) (complete bool) {
	var zero T
	var limit *LimitError
	if errors.As(a.err, &limit) {
		// Nothing to decode: the element outgrew its limit.
		yield(zero, st.decodeErrorAt(resp, a.offset(a.mark), bytes.NewReader(a.buf[a.mark:]), limit))
		return false
	}
	resp.Body = a.replay(a.mark, resp.Body)
	prefix, dummy := "[", int64(0)
	if n > 0 {
		prefix, dummy = "[{}", 2
	}
	base := a.offset(a.mark) - int64(len(prefix)) // stream offset = base + dec.InputOffset()
	dec := json.NewDecoder(io.MultiReader(strings.NewReader(prefix), resp.Body))
	_, _ = dec.Token() // the '['
	if n > 0 {
		var v struct{}
		_ = dec.Decode(&v)
	}
	var grammar bool
	defer func() {
		if complete {
			st.after(resp, dec, base)
		}
	}()
	return decodeElements(st, base, dec, n > 0, yield, func(err error) {
		// A grammar error is at the decoder's input offset; an element's
		// syntax error counts the bytes its scanner has seen.
		var se *json.SyntaxError
		if errors.As(err, &se) {
			if grammar {
				se.Offset += base
			} else {
				se.Offset += scanned - dummy
			}
		}
		derr := st.decodeError(resp, dec, err)
		var de *DecodeError
		if errors.As(derr, &de) {
			de.Offset += base
		}
		yield(zero, derr)
	}, &grammar)
}

// answerBody is the body of a 2xx answer as the engine reads it. It never
// reads past its limit (the whole answer's, or the current element's),
// and it records how the body ended, so that finish knows whether the
// connection can go back to the pool without waiting on the network.
type answerBody struct {
	body  io.ReadCloser
	read  int64 // bytes read so far
	total int64 // the limit on the whole answer, or -1
	limit int64 // the offset read may not pass, or -1
	field string
	value int64 // the value of the limit enforced, for the error
	err   error // the read error that ended the body; io.EOF at its end
}

func newAnswerBody(body io.ReadCloser, field string, total int64) *answerBody {
	a := &answerBody{body: body, total: -1, limit: -1}
	if total > 0 {
		a.total, a.limit, a.field, a.value = total, total, field, total
	}
	return a
}

// element starts the budget of a list element at offset, the position in
// the body of the first byte after the element before it.
func (a *answerBody) element(offset int64, field string, limit int64) {
	end := offset + limit
	if end < offset { // a limit so large it overflows: none
		end = math.MaxInt64
	}
	if a.total >= 0 && a.total < end {
		a.limit, a.field, a.value = a.total, "List", a.total
		return
	}
	a.limit, a.field, a.value = end, field, limit
}

// Read reads at most one byte past the limit: the byte that proves the
// answer needs more. Reading on from there returns a *LimitError.
func (a *answerBody) Read(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	if a.limit >= 0 {
		if a.read > a.limit {
			return 0, &LimitError{Field: a.field, Limit: a.value}
		}
		// Up to one byte past the limit. Not limit+1, which overflows at
		// math.MaxInt64, the value a caller may set to mean no limit.
		if room := a.limit - a.read; int64(len(p)) > room {
			p = p[:room+1]
		}
	}
	n, err := a.body.Read(p)
	a.read += int64(n)
	if err != nil {
		a.err = err
	}
	return n, err
}

func (a *answerBody) Close() error { return a.body.Close() }

// trailingWait is how long a call waits for the end of a complete answer to
// be read, to know that no data follows the value, and drainWait how long
// it is read at all before the connection is closed instead (see
// call.end). On a healthy connection the end is in flight; a server that
// holds it back costs a connection and this wait, never more.
const (
	trailingWait = 100 * time.Millisecond
	drainWait    = time.Second
)

// bufferBound is the capacity a decoder's buffer may grow to for an answer
// or element bounded by limit: the limit and 64 KiB, or 0 (no bound of its
// own; answerBody still enforces the limit) when the sum would overflow an
// int, as with math.MaxInt64.
func bufferBound(limit int64) int {
	const slack = 64 << 10
	if limit > int64(math.MaxInt-slack) {
		return 0
	}
	return int(limit) + slack
}

// answerError is the one place where a non-2xx answer becomes an error,
// as go-github's CheckResponse: a 422 becomes a *ValidationError, any other
// status an *APIError, with r's operation, the body (up to maxErrorBody
// bytes, scrubbed of secrets before it is cut) and, for a redirect that was
// not followed, its Location. path is the escaped path with the base URL's
// prefix.
func answerError(resp *http.Response, body []byte, r *request, path string, secrets *text.Secrets) error {
	apiErr, err := buildAPIError(resp.StatusCode, r.method, path, secrets.ScrubCut(body, maxErrorBody), secrets)
	apiErr.Operation, apiErr.mapped = r.operation, r.mapped
	if location := resp.Header.Get("Location"); location != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		note := "redirect to " + secrets.Text(location, maxMessage) + " not followed"
		if !r.idempotent() {
			note += " (a create follows at most one 307 or 308, to the same origin)"
		}
		if apiErr.Message != "" {
			note += ": " + apiErr.Message
		}
		apiErr.Message = note
	}
	return err
}
