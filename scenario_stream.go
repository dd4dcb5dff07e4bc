package agenta

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/agenta-go/agenta/internal/scenariojson"
	"github.com/agenta-go/agenta/models"
)

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

// object decodes the object at buf[pos] with json.Unmarshal, and moves pos
// past it. It reports false when encoding/json refuses the object or the
// input ends first.
func object[T any](a *arrayReader) (T, bool) {
	var v T
	end, found := a.valueEnd()
	if !found || json.Unmarshal(a.buf[a.pos:end], &v) != nil {
		var zero T
		return zero, false
	}
	a.pos = end
	return v, true
}

// scenario decodes the object at buf[pos] and moves pos past it. It reports
// false when encoding/json would refuse the object or the input ends first.
func (a *arrayReader) scenario() (models.EvaluationScenario, bool) {
	var s models.EvaluationScenario
	for {
		size, status := scenariojson.Decode(a.buf[a.pos:], &s)
		if status == scenariojson.OK {
			a.pos += size
			return s, true
		}
		s = models.EvaluationScenario{}
		if status == scenariojson.Short {
			// Decode again once the unread input has doubled, so that an
			// answer trickling in small reads costs linear time.
			want := 2 * (len(a.buf) - a.pos)
			for len(a.buf)-a.pos < want && a.fill() {
			}
			if len(a.buf)-a.pos >= want {
				continue
			}
		}
		// Not for the fast decoder: let encoding/json decode this one
		// element, or take over if it refuses it.
		return object[models.EvaluationScenario](a)
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

// arrayReader buffers the answer for the fast path. Its indices into buf
// (mark, start, pos) move with the bytes when fill compacts the buffer.
type arrayReader struct {
	r    io.Reader
	buf  []byte // buf[:len] holds read bytes
	base int64  // stream offset of buf[0]
	err  error  // the read error that ended the input, io.EOF at the end
	most int    // the capacity buf grows to, if it can make room otherwise; 0 for no bound

	mark  int // where a json.Decoder would take over: never dropped
	start int // where encoding/json's scanner starts the current element
	pos   int // the next unread byte
}

func (a *arrayReader) offset(i int) int64 { return a.base + int64(i) }

// skipSpace moves pos past whitespace, reading more as needed, and reports
// whether a byte follows. It is the one place the fast path waits for input
// between values.
func (a *arrayReader) skipSpace() bool {
	for {
		for a.pos < len(a.buf) && isSpace(a.buf[a.pos]) {
			a.pos++
		}
		if a.pos < len(a.buf) {
			return true
		}
		if !a.fill() {
			return false
		}
	}
}

// fill reads more input and reports whether any arrived. To make room it
// first drops the bytes before mark, when that frees at least half the
// buffer, and grows the buffer when it is still full.
func (a *arrayReader) fill() bool {
	if a.err != nil {
		return false
	}
	full := len(a.buf) == cap(a.buf) && a.most > 0 && cap(a.buf) >= a.most
	if from := a.mark; from > 0 && (from >= cap(a.buf)/2 || full) {
		n := copy(a.buf, a.buf[from:])
		a.buf = a.buf[:n]
		a.base += int64(from)
		a.mark, a.start, a.pos = a.mark-from, a.start-from, a.pos-from
	}
	if len(a.buf) == cap(a.buf) {
		// Grow by doubling, but not past most, so that an element at the
		// limit costs the limit, not twice it.
		size := 2 * cap(a.buf)
		if a.most > 0 && 2*size > a.most && a.most > len(a.buf) {
			size = a.most // the last step: straight to most, not past it
		}
		grown := make([]byte, len(a.buf), size)
		copy(grown, a.buf)
		a.buf = grown
	}
	for {
		n, err := a.r.Read(a.buf[len(a.buf):cap(a.buf)])
		a.buf = a.buf[:len(a.buf)+n]
		if err != nil {
			a.err = err
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// valueEnd finds the end of the object at buf[pos], reading more as needed,
// by its structure alone: encoding/json validates it afterwards.
func (a *arrayReader) valueEnd() (int, bool) {
	i, depth, inString := a.pos, 0, false
	for {
		for ; i < len(a.buf); i++ {
			c := a.buf[i]
			if inString {
				switch c {
				case '\\':
					i++
				case '"':
					inString = false
				}
				continue
			}
			switch c {
			case '"':
				inString = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		seen := i - a.pos // fill may move pos
		if !a.fill() {
			return 0, false
		}
		i = a.pos + seen
	}
}

// replay returns a body that reads buf[from:] and then the rest of the
// answer, ending with the same read error, and closes the real body.
func (a *arrayReader) replay(from int, body io.ReadCloser) io.ReadCloser {
	var rest io.Reader = body
	if a.err != nil {
		rest = errorReader{a.err}
	}
	return replayBody{io.MultiReader(bytes.NewReader(a.buf[from:]), rest), body}
}

type replayBody struct {
	io.Reader
	io.Closer
}

type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
