package agenta

import (
	"io"
	"math"
	"strconv"
	"time"
)

// Default limits on the decoded bytes of a 2xx answer. net/http inflates a
// gzip answer transparently, so a few hundred KiB on the wire can unpack to
// gigabytes; these bound what a call reads, whatever the server sends.
const (
	// DefaultSingleLimit bounds an answer that is one object, such as a
	// variant or a span tree.
	DefaultSingleLimit = 32 << 20
	// DefaultListLimit bounds a whole list answer, such as the scenarios
	// FetchEvaluationScenarios returns: 100,000 rows are about 100 MB.
	DefaultListLimit = 256 << 20
	// DefaultElementLimit bounds one element of a list or of a stream, and
	// the whitespace before it. StreamEvaluationScenarios has no limit on
	// the whole answer, which it never holds.
	DefaultElementLimit = 16 << 20
)

// ResponseLimits bounds the decoded bytes of 2xx answers, by kind. A zero
// field keeps its default. An answer over a limit ends the call with a
// *DecodeError wrapping a *LimitError, which errors.Is matches to
// ErrAnswerTooLarge.
type ResponseLimits struct {
	// Single bounds an answer that is one object; DefaultSingleLimit.
	Single int64
	// List bounds a whole list answer; DefaultListLimit.
	List int64
	// Element bounds one element of a list or stream; DefaultElementLimit.
	Element int64
}

// withDefaults returns l with each zero field set to its default.
func (l ResponseLimits) withDefaults() ResponseLimits {
	if l.Single == 0 {
		l.Single = DefaultSingleLimit
	}
	if l.List == 0 {
		l.List = DefaultListLimit
	}
	if l.Element == 0 {
		l.Element = DefaultElementLimit
	}
	return l
}

// whole returns the limit on a whole answer named by field, or 0 for none.
func (l ResponseLimits) whole(field string) int64 {
	switch field {
	case "Single":
		return l.Single
	case "List":
		return l.List
	}
	return 0
}

// WithResponseLimits replaces the default limits on the decoded size of 2xx
// answers (DefaultSingleLimit, DefaultListLimit, DefaultElementLimit). A
// zero field keeps its default; a negative one is refused.
func WithResponseLimits(l ResponseLimits) Option {
	return func(s *settings) error {
		for _, f := range []struct {
			name  string
			value int64
		}{{"Single", l.Single}, {"List", l.List}, {"Element", l.Element}} {
			if f.value < 0 {
				return invalid("WithResponseLimits", "ResponseLimits.%s must not be negative, got %d", f.name, f.value)
			}
		}
		s.limits = l
		return nil
	}
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
