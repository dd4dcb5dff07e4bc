package agenta

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
)

// Sentinel errors for errors.Is. An *APIError matches the sentinel of its
// status code; ErrInvalidArgument matches arguments refused before anything
// was sent. ErrNotFound also matches the service's not-found answers that
// come as 500 on the operation that sends them, such as GetVariant's
// "'NoneType' object has no attribute 'base_id'" (the README's Errors
// section lists them), which still match ErrServer too.
var (
	ErrBadRequest      = errors.New("agenta: bad request")       // 400
	ErrUnauthorized    = errors.New("agenta: unauthorized")      // 401
	ErrForbidden       = errors.New("agenta: forbidden")         // 403
	ErrNotFound        = errors.New("agenta: not found")         // 404
	ErrValidation      = errors.New("agenta: validation failed") // 422
	ErrRateLimited     = errors.New("agenta: rate limited")      // 429
	ErrServer          = errors.New("agenta: server error")      // any 5xx
	ErrInvalidArgument = errors.New("agenta: invalid argument")  // refused before sending
)

// Sentinels for answers that never came or were refused by a limit (issue
// 12). They tell a network failure, the per-attempt timeout (WithTimeout)
// and an oversized answer apart from each other and from the caller's own
// context, which still matches context.DeadlineExceeded or
// context.Canceled. The underlying cause stays wrapped.
var (
	// ErrNoResponse matches a call that ended without an answer from the
	// server: the connection could not be made, or was reset or closed
	// before a complete answer arrived.
	ErrNoResponse = errors.New("agenta: no answer from the server")
	// ErrAttemptTimeout matches a call whose last attempt outlasted the
	// per-attempt timeout set by WithTimeout waiting for the answer's
	// headers, or whose answer then stalled (ErrIdleTimeout, a case of it).
	ErrAttemptTimeout = errors.New("agenta: the per-attempt timeout expired")
	// ErrAnswerTooLarge matches a 2xx answer that exceeded one of the
	// limits on decoded bytes (see WithResponseLimits).
	ErrAnswerTooLarge = errors.New("agenta: the answer exceeds its size limit")
	// ErrAnswerCut matches a 2xx answer whose connection broke (a reset,
	// a close before the announced length) after the answer had begun:
	// the server answered, and the answer was cut short. It is not
	// ErrNoResponse, and the error says how many bytes had arrived.
	ErrAnswerCut = errors.New("agenta: the answer was cut short")
)

// ErrIdleTimeout matches an answer that stopped arriving: no byte of it
// came for the idle timeout (WithIdleTimeout, by default WithTimeout's
// duration) while the SDK waited for one. It also matches
// ErrAttemptTimeout, and errors.Is(ErrIdleTimeout, ErrAttemptTimeout)
// holds.
var ErrIdleTimeout error = &narrowerSentinel{"agenta: the answer stalled past the idle timeout", ErrAttemptTimeout}

// timeoutError is the cause of an attempt that one of its own limits
// ended (see poolKeeper): the per-attempt timeout, waiting for the answer's
// headers, or the idle timeout, waiting for the next bytes of its body. It
// is a net.Error whose Timeout is true.
type timeoutError struct {
	idle  bool
	limit time.Duration
}

func (e *timeoutError) Error() string {
	if e.idle {
		return "no data arrived for " + e.limit.String()
	}
	return "no answer headers within " + e.limit.String()
}
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

// ErrRouteNotFound matches FastAPI's answer for a path the server has no
// route for, exactly 404 {"detail":"Not Found"}: the base URL lacks the
// service's prefix (usually /api), or the server's version lacks the
// operation (today's servers removed these routes in 2026). It also matches
// ErrNotFound, and errors.Is(ErrRouteNotFound, ErrNotFound) holds.
var ErrRouteNotFound error = &narrowerSentinel{"agenta: route not found", ErrNotFound}

// narrowerSentinel is a sentinel that is a case of a broader one.
type narrowerSentinel struct {
	text    string
	broader error
}

func (e *narrowerSentinel) Error() string { return e.text }
func (e *narrowerSentinel) Unwrap() error { return e.broader }

// Errors of the 2026 API's envelope, {"count":N,"<member>":…}, whose
// answer to "nothing" is 200 {"count":0}.

// ErrNotCreated matches a 2026 create, fork or commit that the service
// answered 200 {"count":0}: it caught an error and left the reason in its
// log. errors.As to *NotCreatedError gives the answer.
var ErrNotCreated = errors.New("agenta: the server could not create it")

// NotFoundError is a 2026 lookup that the service answered 200
// {"count":0}, its way of saying there is no such object; errors.Is(err,
// ErrNotFound) holds, as for the 404s of the 2024 routes. The service
// answers an internal error of its read routes the same way, so it proves
// less than a 404 would.
type NotFoundError struct {
	// Operation is the Client method, such as "FetchRun".
	Operation string
	Method    string
	// Path is the escaped path, with the base URL's prefix, without query.
	Path string
	// What names what was looked for, such as "run 0193…", cut to 200
	// characters.
	What string
	// Body is the answer, such as {"count":0}.
	Body []byte
}

// Error names the request, what was not found and the answer.
func (e *NotFoundError) Error() string {
	s := "agenta: " + e.Method + " " + e.Path + ": not found"
	if e.What != "" {
		s += ": no " + e.What
	}
	return s + " (the server answered " + text.Clip(string(e.Body), maxMessage) + ")"
}

// Is matches ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// NotCreatedError is a 2026 create, fork or commit that the service
// answered 200 {"count":0}; errors.Is(err, ErrNotCreated) holds. The
// service says no more: Causes lists what usually makes it answer so.
type NotCreatedError struct {
	Operation string
	Method    string
	Path      string
	// What names what could not be created, such as "the evaluation".
	What string
	// Causes says what usually makes the service refuse it.
	Causes string
	// Body is the answer, such as {"count":0}.
	Body []byte
}

// Error says what the server could not create, its answer, and the usual
// causes.
func (e *NotCreatedError) Error() string {
	s := "agenta: " + e.Method + " " + e.Path + ": the server could not create " + e.What +
		" (it answered " + text.Clip(string(e.Body), maxMessage) + "; the reason is only in its log)"
	if e.Causes != "" {
		s += "; usual causes: " + e.Causes
	}
	return s
}

// Is matches ErrNotCreated.
func (e *NotCreatedError) Is(target error) bool { return target == ErrNotCreated }

// ErrNoWorker matches the error WaitRun returns for a run that stayed
// running with no scenario past WaitRunOptions.NoWorkerAfter: nothing on
// the server is consuming the evaluation queue. errors.As to
// *NoWorkerError says how long it waited.
var ErrNoWorker = errors.New("agenta: no worker is consuming the queue")

// NoWorkerError is a run that stayed running without any scenario for
// longer than WaitRunOptions.NoWorkerAfter. The run is left as it is: the
// queue is durable, and a worker that starts later will run it.
type NoWorkerError struct {
	RunID string
	// Status is the run's last status, usually "running".
	Status models.RunStatus
	// Waited is how long the wait saw the run without a scenario.
	Waited time.Duration
}

// Error names the run and how long it had no scenario.
func (e *NoWorkerError) Error() string {
	return "agenta: run " + text.Clip(e.RunID, maxMessage) + " is " + text.Clip(string(e.Status), maxMessage) +
		" with no scenario after " + e.Waited.Round(time.Millisecond).String() +
		": no worker is consuming the evaluation queue (or it is busy with other runs); the run stays queued and may still run later"
}

// Is matches ErrNoWorker.
func (e *NoWorkerError) Is(target error) bool { return target == ErrNoWorker }

// maxErrorBody is how much of an error answer is kept: enough for any real
// error document, bounded against a misbehaving server or proxy.
const maxErrorBody = 1 << 20

// maxMessage bounds APIError.Message so error strings stay readable when the
// server answers with a long text or HTML page.
const maxMessage = 200

// APIError is a non-2xx answer from the service. It keeps the status, the
// request's method and path, the server's message and up to 1 MiB of the raw
// body, so nothing the server said is lost.
type APIError struct {
	StatusCode int
	Method     string
	// Path is the escaped URL path the request was sent to, including the
	// base URL's prefix. It never includes the query.
	Path string
	// Message is the server's "detail" string (or "detail.message", as
	// newer servers send it), without a prefix that repeats the status
	// ("404: App not found" becomes "App not found"), or the trimmed text of
	// a body that is not JSON, such as a proxy's HTML page. It is at most
	// 200 characters, a cut marked with "…".
	Message string
	// Body is the raw answer, cut at 1 MiB. Credentials the request carried
	// are replaced by [REDACTED] should the server echo them.
	Body []byte
	// Operation is the Client method that got the answer, such as
	// "GetVariant". With StatusCode and Message it tells the service's
	// not-found answers that come as 500 (which match ErrNotFound) from
	// other server errors.
	Operation string

	// mapped: the route is one of the 2024 routes a 2026 server lacks and
	// the Client maps (request.mapped).
	mapped bool
}

// Error says the method, path, status and the server's message, with a
// hint for an unknown route or a not-found answered as a 500.
func (e *APIError) Error() string {
	s := "agenta: " + e.Method + " " + e.Path + ": " + strconv.Itoa(e.StatusCode)
	if text := http.StatusText(e.StatusCode); text != "" {
		s += " " + text
	}
	if e.Message != "" && !e.repeatsStatus() {
		s += ": " + e.Message
	}
	if e.routeNotFound() {
		operation := e.Operation
		if operation == "" {
			operation = "this operation"
		}
		s += ": the server has no route for this path; check that the base URL ends in the service's prefix, usually /api, and that the server's version has " + operation
		if e.mapped {
			s += " (a server of Agenta v0.96 or later has none of the 2024 routes: tell the client it speaks the 2026 API with AGENTA_API_GENERATION=2026 or WithGeneration, or call DetectGeneration first)"
		}
	}
	if e.StatusCode == http.StatusUnauthorized && e.mapped && answeredAs2026(e.Body) {
		// The client did not know the server's API and sent the 2024
		// request: say so, or the 401 reads as a wrong key alone.
		s += " (a 2026 server's answer, Agenta v0.96 or later, which has no route for " + e.Operation +
			": the request above is the mid-2024 one, sent because the client did not know the server's API; tell it with AGENTA_API_GENERATION=2026 or WithGeneration, or call DetectGeneration first, and check the key)"
	}
	if missing, ok := e.notFoundAs500(); ok {
		s += " (the service's answer when " + missing + " does not exist)"
	}
	return s
}

// answeredAs2026 reports whether an error body has the shape of today's
// API, {"detail": {"message": …}}, which no mid-2024 server sends.
func answeredAs2026(body []byte) bool {
	var b struct {
		Detail struct {
			Message *string `json:"message"`
		} `json:"detail"`
	}
	return json.Unmarshal(body, &b) == nil && b.Detail.Message != nil
}

// repeatsStatus reports a Message that only repeats the status, as a
// default error page does ("Internal Server Error", "502 Bad Gateway"), so
// that Error() says it once.
func (e *APIError) repeatsStatus() bool {
	text := http.StatusText(e.StatusCode)
	if text == "" {
		return false
	}
	m := strings.TrimPrefix(e.Message, strconv.Itoa(e.StatusCode)+" ")
	return strings.EqualFold(m, text)
}

// routeNotFound reports FastAPI's answer for an unknown path: 404 with a
// body of exactly {"detail":"Not Found"}, give or take whitespace.
func (e *APIError) routeNotFound() bool {
	if e.StatusCode != http.StatusNotFound || len(e.Body) > 64 {
		return false
	}
	var doc map[string]any
	if json.Unmarshal(e.Body, &doc) != nil || len(doc) != 1 {
		return false
	}
	return doc["detail"] == "Not Found"
}

// Is matches the sentinel of the error's status code. ErrNotFound also
// matches the service's not-found answers that come as 500 on the operation
// that sends them, such as GetVariant's "'NoneType' object has no attribute
// 'base_id'"; ErrServer matches those too. ErrRouteNotFound matches
// FastAPI's 404 for an unknown path.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrBadRequest:
		return e.StatusCode == http.StatusBadRequest
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrRouteNotFound:
		return e.routeNotFound()
	case ErrNotFound:
		if _, ok := e.notFoundAs500(); ok {
			return true
		}
		return e.StatusCode == http.StatusNotFound
	case ErrValidation:
		return e.StatusCode == http.StatusUnprocessableEntity
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrServer:
		return e.StatusCode >= 500 && e.StatusCode <= 599
	}
	return false
}

// ValidationError is a 422 answer: the service refused the shape of a path
// parameter, query parameter or body. Details says which field failed and why.
//
// It embeds *APIError, and errors.As to *APIError succeeds on it.
type ValidationError struct {
	*APIError
	Details []ValidationDetail
}

// ValidationDetail is one refused field, as FastAPI reports it.
type ValidationDetail struct {
	// Loc is the field's location, such as ["body", "variant_ids", 0]. Each
	// item is a string or an int.
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
	// Input is the refused value, which newer servers echo. The other
	// fields newer servers add (url, ctx) stay in APIError.Body.
	Input json.RawMessage `json:"input,omitempty"`
}

// Field renders Loc as a dotted path, such as "body.variant_ids.0".
func (d ValidationDetail) Field() string {
	parts := make([]string, len(d.Loc))
	for i, p := range d.Loc {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}

// String renders the detail as "field: message".
func (d ValidationDetail) String() string {
	if len(d.Loc) == 0 {
		return d.Msg
	}
	return d.Field() + ": " + d.Msg
}

// UnmarshalJSON decodes a detail, turning integer locations into int. A
// location item that is neither a string nor an int (which no server is
// known to send) is kept as its JSON text, so one odd item never hides the
// rest of the details.
func (d *ValidationDetail) UnmarshalJSON(data []byte) error {
	type wire ValidationDetail
	var w struct {
		wire
		Loc []json.RawMessage `json:"loc"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*d = ValidationDetail(w.wire)
	d.Loc = nil
	if w.Loc != nil {
		d.Loc = make([]any, 0, len(w.Loc))
	}
	for _, raw := range w.Loc {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			d.Loc = append(d.Loc, s)
			continue
		}
		text := string(bytes.TrimSpace(raw))
		if n, err := strconv.Atoi(text); err == nil {
			d.Loc = append(d.Loc, n)
		} else {
			d.Loc = append(d.Loc, text)
		}
	}
	return nil
}

// Error reads as the embedded APIError's, whose message lists the
// refused fields.
func (e *ValidationError) Error() string {
	if e.APIError == nil {
		return "agenta: validation failed"
	}
	return e.APIError.Error()
}

// Unwrap returns the embedded *APIError, so errors.As finds it.
func (e *ValidationError) Unwrap() error {
	if e.APIError == nil {
		return nil
	}
	return e.APIError
}

// Is reports ErrValidation, and whatever the embedded APIError matches.
func (e *ValidationError) Is(target error) bool {
	return target == ErrValidation || (e.APIError != nil && e.APIError.Is(target))
}

// ArgumentError is an argument refused before any request was sent. It
// names the argument and says what was wrong; errors.Is matches
// ErrInvalidArgument.
type ArgumentError struct {
	// Name is the argument or field, such as "evaluationID" or
	// "NewEvaluation.RateLimit.BatchSize".
	Name string
	// Field is the name on the wire, such as "evaluation_id" or
	// "rate_limit.batch_size", when the argument has one.
	Field string
	// Reason says what was wrong with it.
	Reason string
}

// Error names the argument, its wire name when it has one, and what
// was wrong with it.
func (e *ArgumentError) Error() string {
	name := e.Name
	if e.Field != "" && e.Field != e.Name {
		name += " (" + e.Field + ")"
	}
	return "agenta: invalid argument " + name + ": " + e.Reason
}

// Unwrap returns ErrInvalidArgument, so errors.Is matches it.
func (e *ArgumentError) Unwrap() error { return ErrInvalidArgument }

func invalid(name, format string, args ...any) error {
	return &ArgumentError{Name: name, Reason: fmt.Sprintf(format, args...)}
}

// invalidField is invalid for an argument that has a name on the wire.
func invalidField(name, field, format string, args ...any) error {
	return &ArgumentError{Name: name, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// newAPIError builds the error for a non-2xx answer from up to maxErrorBody
// bytes of its body. A 422 becomes a *ValidationError.
func newAPIError(status int, method, path string, body []byte) error {
	_, err := buildAPIError(status, method, path, body, nil)
	return err
}

// buildAPIError is newAPIError for a call whose credentials are secrets:
// every text taken from the body is scrubbed of them, then cut. It also
// returns the *APIError, which a *ValidationError embeds.
func buildAPIError(status int, method, path string, body []byte, secrets *text.Secrets) (*APIError, error) {
	apiErr := &APIError{StatusCode: status, Method: method, Path: path, Body: body}
	details, message := parseErrorBody(body)
	apiErr.Message = secrets.Text(dropStatusPrefix(message, status), maxMessage)
	for i := range details {
		d := &details[i]
		d.Msg = secrets.Text(d.Msg, 4*maxMessage)
		d.Type = secrets.Text(d.Type, maxMessage)
		for j, loc := range d.Loc {
			if s, ok := loc.(string); ok {
				d.Loc[j] = secrets.Text(s, maxMessage)
			}
		}
		d.Input = secrets.Scrub(d.Input)
	}
	if status == http.StatusUnprocessableEntity {
		verr := &ValidationError{APIError: apiErr, Details: details}
		if len(details) > 0 {
			parts := make([]string, len(details))
			for i, d := range details {
				parts[i] = d.String()
			}
			apiErr.Message = text.Clip(strings.Join(parts, "; "), 4*maxMessage)
		}
		return apiErr, verr
	}
	if apiErr.Message == "" && len(details) > 0 {
		apiErr.Message = text.Clip(details[0].String(), maxMessage)
	}
	return apiErr, apiErr
}

// parseErrorBody reads the service's error documents: {"detail": "..."},
// FastAPI's {"detail": [...]}, a few common alternatives, and plain text or
// HTML from proxies. The message is whole: the caller scrubs, then cuts it.
func parseErrorBody(body []byte) ([]ValidationDetail, string) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, ""
	}
	if trimmed[0] == '{' {
		var doc struct {
			Detail  json.RawMessage `json:"detail"`
			Message json.RawMessage `json:"message"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(trimmed, &doc) == nil {
			if s, ok := jsonText(doc.Detail); ok {
				return nil, s
			}
			if s, ok := detailMessage(doc.Detail); ok {
				// Newer servers: {"detail":{"message":"Unauthorized"}}.
				return nil, s
			}
			var details []ValidationDetail
			if len(doc.Detail) > 0 && doc.Detail[0] == '[' && json.Unmarshal(doc.Detail, &details) == nil {
				return details, ""
			}
			for _, alt := range []json.RawMessage{doc.Message, doc.Error} {
				if s, ok := jsonText(alt); ok {
					return nil, s
				}
			}
			if len(doc.Detail) > 0 && !bytes.Equal(doc.Detail, []byte("null")) && !bytes.Equal(doc.Detail, []byte(`""`)) {
				return nil, string(doc.Detail)
			}
			return nil, string(trimmed)
		}
	}
	return nil, plainText(trimmed)
}

// detailMessage returns the message of a detail object, as newer servers
// send it: {"message": "..."}.
func detailMessage(detail json.RawMessage) (string, bool) {
	if len(detail) == 0 || detail[0] != '{' {
		return "", false
	}
	var doc struct {
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(detail, &doc) != nil {
		return "", false
	}
	return jsonText(doc.Message)
}

// dropStatusPrefix removes the status the service puts in front of a
// re-raised text ("404: App not found"), when it is the answer's own status:
// the error string says it already.
func dropStatusPrefix(message string, status int) string {
	code := strconv.Itoa(status)
	if rest, ok := strings.CutPrefix(message, code); ok {
		if rest, ok := strings.CutPrefix(rest, ":"); ok {
			if rest = strings.TrimSpace(rest); rest != "" {
				return rest
			}
		}
	}
	return message
}

// jsonText returns raw as a string when it is a non-empty JSON string.
func jsonText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
		return "", false
	}
	return strings.TrimSpace(s), true
}

// plainText turns a text or HTML body into one readable line: the page title
// when there is one, otherwise the text with tags removed.
func plainText(body []byte) string {
	s := string(body)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	// Lower-case ASCII letters only: full Unicode lower-casing changes the
	// byte length of some runes, and the indexes must fit s.
	lower := asciiLower(s)
	if i := strings.Index(lower, "<title>"); i >= 0 {
		if j := strings.Index(lower[i:], "</title>"); j > len("<title>") {
			if title := strings.TrimSpace(s[i+len("<title>") : i+j]); title != "" {
				return strings.Join(strings.Fields(title), " ")
			}
		}
	}
	if strings.Contains(s, "<") {
		var b strings.Builder
		inTag := false
		for _, r := range s {
			switch {
			case r == '<':
				inTag = true
				b.WriteByte(' ')
			case r == '>':
				inTag = false
			case !inTag:
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	return strings.Join(strings.Fields(s), " ")
}

// asciiLower lower-cases the ASCII letters of s and keeps every other byte,
// so the result has the same length and byte positions as s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// DecodeError is a 2xx answer whose body is not the JSON the operation
// returns, or that broke off while being read. It keeps the status and,
// from the point where decoding stopped, up to 1 MiB of the body.
type DecodeError struct {
	StatusCode int
	Method     string
	Path       string
	// Offset is the byte offset in the body where decoding failed.
	Offset int64
	// Body is what was left unread of the answer where decoding stopped, up
	// to 1 MiB: for a syntax error, from the start of the failing value, so
	// an answer that is not JSON at all, such as an HTML page, is kept
	// whole; for a complete value of the wrong type it may be empty.
	Body []byte
	Err  error

	text string // Err's message, scrubbed and bounded, when the SDK made it
}

// Error says where decoding the answer stopped and why, or that the
// answer broke off while being read.
func (e *DecodeError) Error() string {
	msg := e.text
	if msg == "" && e.Err != nil {
		msg = text.Clip(e.Err.Error(), maxMessage)
	}
	if readFailure(e.Err) {
		return fmt.Sprintf("agenta: %s %s: read %d answer: %s", e.Method, e.Path, e.StatusCode, msg)
	}
	return fmt.Sprintf("agenta: %s %s: decode %d answer at byte %d: %s", e.Method, e.Path, e.StatusCode, e.Offset, msg)
}

// readFailure reports an answer that broke off while being read (a reset,
// a timeout, the context ending) or outgrew its limit, rather than one that
// is not valid JSON.
func readFailure(err error) bool {
	var netErr net.Error
	var f *failure
	return errors.As(err, &netErr) || errors.As(err, &f) || errors.Is(err, ErrAnswerTooLarge) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Unwrap returns the underlying decoding error.
func (e *DecodeError) Unwrap() error { return e.Err }

// Errors of WaitEvaluation.

// ErrEvaluationFailed is matched by errors.Is on the error WaitEvaluation
// returns for a run that ended EVALUATION_FAILED or
// EVALUATION_AGGREGATION_FAILED; errors.As to *EvaluationFailedError gives
// the service's message.
var ErrEvaluationFailed = errors.New("agenta: evaluation failed")

// EvaluationFailedError is a run that ended in failure. WaitEvaluation
// returns it together with the evaluation, whose Status.Error carries the
// whole of what the service said.
type EvaluationFailedError struct {
	EvaluationID string
	// Status is the final status, models.EvaluationFailed or
	// models.EvaluationAggregationFailed.
	Status models.EvaluationStatus
	// Message is the service's error message, such as "Evaluation Failed",
	// cut to 200 characters; "" when the service sent none.
	Message string
	// Cause is the last line of the service's stack trace, the exception
	// that ended the run, such as "KeyError: 'country'" (see
	// models.Error.Cause), scrubbed of credentials and cut to 200
	// characters; "" when the service sent no trace.
	Cause string
	// Hint says what to do about a cause the SDK recognises, such as "the
	// test set has no column 'country', which the app takes as input";
	// "" otherwise.
	Hint string
}

// Error names the evaluation, its final status, the service's message,
// the cause and what to do about it.
func (e *EvaluationFailedError) Error() string {
	s := "agenta: evaluation " + text.Clip(e.EvaluationID, maxMessage) + " ended " + text.Clip(string(e.Status), maxMessage)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Cause != "" {
		s += ": " + e.Cause
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Is matches ErrEvaluationFailed.
func (e *EvaluationFailedError) Is(target error) bool { return target == ErrEvaluationFailed }

// WaitError is a wait that its context ended before the run did. It wraps
// the context's error, so errors.Is(err, context.DeadlineExceeded) holds,
// and says which status the run was in, for how long, when the status was
// last read, and the failure the wait was riding out, if any.
type WaitError struct {
	EvaluationID string
	// Status is the last status read, "" when no read succeeded; credentials
	// it echoes are scrubbed, and it is cut to a few hundred characters.
	Status models.EvaluationStatus
	// Held is how long Status had held when the wait ended: the time since
	// the first read that saw it.
	Held time.Duration
	// LastRead is how long before the wait ended the status was last read
	// successfully; 0 when no read succeeded.
	LastRead time.Duration
	// LastError is the transient failure (see WaitOptions) of the reads
	// after the last successful one, which the wait was retrying when its
	// context ended; nil when the last read succeeded. errors.As finds the
	// *APIError or the transport failure in it.
	LastError error
	// Err is the context's error.
	Err error
}

// Error names the evaluation, why the wait ended, the last status seen
// with how long it held and when it was last read, and the failure of the
// reads since then.
func (e *WaitError) Error() string {
	reason := "ended"
	if e.Err != nil {
		reason = e.Err.Error()
	}
	s := "agenta: wait for evaluation " + text.Clip(e.EvaluationID, maxMessage) + ": " + reason
	if e.Status == "" {
		s += "; no status read yet"
	} else {
		s += "; status " + text.Clip(string(e.Status), maxMessage) + " for " + e.Held.Round(time.Millisecond).String() +
			", last read " + e.LastRead.Round(time.Millisecond).String() + " ago"
		if e.Status == models.EvaluationInitialized {
			s += " (no worker may be running on the server: a run stays INITIALIZED until a worker picks it up)"
		}
	}
	if e.LastError != nil {
		s += "; the last read failed: " + text.Clip(strings.TrimPrefix(e.LastError.Error(), "agenta: "), 2*maxMessage)
	}
	return s
}

// Unwrap returns the context's error.
func (e *WaitError) Unwrap() error { return e.Err }

// failure is a transport or read failure classified by call.reason: its
// message says which limit expired, and it wraps the sentinel (if any) and
// the cause.
type failure struct {
	text string
	errs []error
}

func (e *failure) Error() string   { return e.text }
func (e *failure) Unwrap() []error { return e.errs }

// ErrTrailingData is matched by errors.Is on the *DecodeError of a 2xx
// answer whose JSON value is followed by more than whitespace, such as
// […][], […]<html> or […]{"detail":"…"}: the answer is refused, not read as
// the value alone.
var ErrTrailingData = errors.New("agenta: data after the JSON answer")

// trailingError is the cause of such a *DecodeError: it quotes the start of
// the data, scrubbed and cut.
type trailingError struct{ excerpt string }

func (e *trailingError) Error() string {
	return "more data after the JSON answer: " + strconv.Quote(e.excerpt)
}

func (e *trailingError) Is(target error) bool { return target == ErrTrailingData }

// notFoundAnswers are the service's answers that mean "not found" but come
// with status 500 (see the contract's README, "Variants" and "Create
// evaluation"). An *APIError of the operation with status 500 and exactly
// this Message matches ErrNotFound as well as ErrServer, so that a typo in an
// id does not page whoever alerts on ErrServer. The README's Errors section
// lists the same table; keep the two in step (TestNotFoundTableDocumented).
//
// Each text is matched only on its operation: "'id'" from another
// operation is no evidence of anything missing.
var notFoundAnswers = []struct {
	operation string // the Client method
	message   string // APIError.Message, exactly
	missing   string // what is missing, said in the error string
}{
	{"GetVariantByEnvironment", "App Variant not found", "the app, or a variant deployed to that environment"},
	{"GetVariant", "'NoneType' object has no attribute 'base_id'", "the variant"},
	{"AddVariantFromBase", "'NoneType' object has no attribute 'base_name'", "the base"},
	{"AddVariantFromBase", "'base_name'", "the base"},
	{"AddVariantFromBase", "Previous app variant not found", "a variant of the base to fork from"},
	// The real mid-2024 server reads an unknown variant's revision first
	// (../shared/realserver, create_unknown_variant).
	{"CreateEvaluation", "'NoneType' object has no attribute 'revision'", "the variant"},
	{"CreateEvaluation", "'NoneType' object has no attribute 'id'", "a variant or the test set"},
	{"CreateEvaluation", "'id'", "a variant or the test set"},
	{"FetchEvaluationStatus", "'NoneType' object has no attribute 'status'", "the evaluation"},
}

// notFoundAs500 returns what is missing when e is one of notFoundAnswers.
func (e *APIError) notFoundAs500() (missing string, ok bool) {
	if e.StatusCode != http.StatusInternalServerError || e.Operation == "" {
		return "", false
	}
	for _, a := range notFoundAnswers {
		if a.operation == e.Operation && a.message == e.Message {
			return a.missing, true
		}
	}
	return "", false
}

// unencodableError explains why body, a request body, cannot be marshalled
// (marshalErr): it walks the value for the first part JSON cannot carry and
// names it by its Go path, such as
// AddVariantFromBase.Parameters["temperature"]: NaN cannot be sent as JSON.
// The reason never quotes a value, which may be a credential.
func unencodableError(body any, marshalErr error) error {
	v := reflect.ValueOf(body)
	root := "body"
	if t := reflect.TypeOf(body); t != nil {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Name() != "" {
			root = t.Name()
		}
	}
	w := walker{seen: map[uintptr]bool{}}
	if path, reason, ok := w.find(v, root, 0); ok {
		return invalid(path, "%s cannot be sent as JSON", reason)
	}
	return invalid(root, "cannot be sent as JSON: %s", jsonReason(marshalErr))
}

// maxWalkDepth bounds the walk, as encoding/json bounds its own recursion.
const maxWalkDepth = 1000

// walker looks for the part of a value that encoding/json refuses.
type walker struct {
	seen map[uintptr]bool // maps, slices and pointers on the current path
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// find returns the path of the first unencodable part of v and what it is.
func (w *walker) find(v reflect.Value, path string, depth int) (string, string, bool) {
	if !v.IsValid() {
		return "", "", false
	}
	if depth > maxWalkDepth {
		return path, "a value nested this deep", true
	}
	if v.CanInterface() && implementsMarshaler(v) {
		// A custom encoding decides for itself: look inside only when it
		// fails, and blame the value itself when nothing inside explains it.
		if _, err := json.Marshal(v.Interface()); err == nil {
			return "", "", false
		} else if p, r, ok := w.inside(v, path, depth); ok {
			return p, r, true
		} else {
			return path, "its value (" + jsonReason(err) + ")", true
		}
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		switch f := v.Float(); {
		case math.IsNaN(f):
			return path, "NaN", true
		case math.IsInf(f, 1):
			return path, "+Inf", true
		case math.IsInf(f, -1):
			return path, "-Inf", true
		}
	case reflect.Complex64, reflect.Complex128, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return path, "a " + v.Kind().String(), true
	}
	return w.inside(v, path, depth)
}

// inside walks the parts of a composite value.
func (w *walker) inside(v reflect.Value, path string, depth int) (string, string, bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if v.IsNil() {
			return "", "", false
		}
		if v.Kind() != reflect.Slice || v.Len() > 0 {
			ptr := v.Pointer()
			if w.seen[ptr] {
				return path, "a value that contains itself", true
			}
			w.seen[ptr] = true
			defer delete(w.seen, ptr)
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return w.find(v.Elem(), path, depth+1)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("json") == "-" {
				continue
			}
			fieldPath := path + "." + f.Name
			if f.Anonymous {
				fieldPath = path // promoted fields are named as the caller writes them
			}
			if p, r, ok := w.find(v.Field(i), fieldPath, depth+1); ok {
				return p, r, true
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			if p, r, ok := w.find(v.MapIndex(k), path+"["+mapKey(k)+"]", depth+1); ok {
				return p, r, true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if p, r, ok := w.find(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1); ok {
				return p, r, true
			}
		}
	}
	return "", "", false
}

// implementsMarshaler reports a value with its own JSON or text encoding.
func implementsMarshaler(v reflect.Value) bool {
	t := v.Type()
	if t.Kind() == reflect.Interface {
		return false
	}
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) {
		return true
	}
	return v.CanAddr() && (reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType))
}

// mapKey writes a map key as Go source would: quoted when it is a string.
func mapKey(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return strconv.Quote(k.String())
	}
	return fmt.Sprint(k)
}

// jsonReason is encoding/json's innermost complaint without its "json: "
// prefixes, for an error the walk could not place or a failing MarshalJSON.
func jsonReason(err error) string {
	var unsupported *json.UnsupportedValueError
	if errors.As(err, &unsupported) {
		return "unsupported value " + unsupported.Str
	}
	var unsupportedType *json.UnsupportedTypeError
	if errors.As(err, &unsupportedType) {
		return "unsupported type " + unsupportedType.Type.String()
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	return strings.ReplaceAll(err.Error(), "json: ", "")
}

// segment checks an identifier and escapes it as exactly one path segment,
// so that no id, whatever it contains, can reach another endpoint. name is
// the Go argument, field the service's name for it.
func segment(name, field, id string) (string, error) {
	if err := required(name, field, id); err != nil {
		return "", err
	}
	if id == "." || id == ".." {
		return "", invalidField(name, field, "%q is not an identifier: it would change the path", id)
	}
	return url.PathEscape(id), nil
}

// required refuses an empty, blank or control-character value.
func required(name, field, value string) error {
	switch {
	case value == "":
		return invalidField(name, field, "is required")
	case strings.TrimSpace(value) == "":
		return invalidField(name, field, "is blank")
	case hasControl(value):
		return invalidField(name, field, "contains a control character")
	}
	return nil
}

// hasControl reports a control character other than tab, which no header
// value or identifier may hold.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

// requiredList refuses an empty list or one with an empty item.
func requiredList(name, field string, values []string) error {
	if len(values) == 0 {
		return invalidField(name, field, "must list at least one id")
	}
	for i, v := range values {
		index := "[" + strconv.Itoa(i) + "]"
		if err := required(name+index, field+index, v); err != nil {
			return err
		}
	}
	return nil
}

// LimitError is a 2xx answer that outgrew one of the ResponseLimits. It
// names the limit and how to raise it; errors.Is matches ErrAnswerTooLarge.
type LimitError struct {
	// Field is the ResponseLimits field that was exceeded: "Single",
	// "List" or "Element".
	Field string
	// Limit is its value in bytes.
	Limit int64
}

// Error names the limit exceeded and the option that raises it.
func (e *LimitError) Error() string {
	what := "an answer"
	switch e.Field {
	case "Single":
		what = "an answer of one object"
	case "List":
		what = "a list answer"
	case "Element":
		what = "one element of a list"
	}
	return "the answer exceeds the limit of " + formatBytes(e.Limit) + " on " + what +
		"; raise it with WithResponseLimits(agenta.ResponseLimits{" + e.Field + ": …})"
}

// Is matches ErrAnswerTooLarge.
func (e *LimitError) Is(target error) bool { return target == ErrAnswerTooLarge }

// formatBytes writes n in MiB when it is a whole number of them.
func formatBytes(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// errTooManyRedirects ends a redirect loop; it is never retried.
var errTooManyRedirects = errors.New("stopped after 10 redirects")

// redirectRefused marks a redirect refused by the caller's redirect policy,
// or to a scheme other than http and https, which another attempt would
// only repeat: it is never retried.
type redirectRefused struct{ err error }

func (e *redirectRefused) Error() string { return e.err.Error() }
func (e *redirectRefused) Unwrap() error { return e.err }

// unwrapURLError drops net/http's *url.Error wrapper, whose message repeats
// the full URL with its query.
func unwrapURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) && uerr.Err != nil {
		return uerr.Err
	}
	return err
}
