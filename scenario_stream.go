package agenta

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/agenta-go/agenta/internal/scenariojson"
	"github.com/agenta-go/agenta/models"
)

// slowScenarios turns the fast path for scenario lists off. The
// differential tests set it to compare against encoding/json alone.
var slowScenarios atomic.Bool

// streamScenariosFast is streamList's fast path for evaluation scenarios,
// the one answer that can be large. It reads the array itself and decodes
// each element with internal/scenariojson, in one pass and several times
// faster than encoding/json. An element that package does not handle is
// decoded with json.Unmarshal; one that encoding/json refuses, or an array
// that breaks the grammar, is handed to a json.Decoder positioned where the
// fast path stopped, so that errors, offsets included, are exactly those of
// the encoding/json path.
//
// It reports handled=false, having consumed nothing (resp.Body then replays
// what was read), when T is not models.EvaluationScenario or the answer is
// not a JSON array; streamList then runs as usual. Otherwise it has run the
// whole loop and set *complete when the array was read to its end.
func streamScenariosFast[T any](st *call, resp *http.Response, yield func(T, error) bool, complete *bool) (handled bool) {
	if slowScenarios.Load() {
		return false
	}
	yieldScenario, ok := any(yield).(func(models.EvaluationScenario, error) bool)
	if !ok {
		return false
	}
	body := resp.Body
	a := &arrayReader{r: body, buf: make([]byte, 0, 16<<10)}

	// The first non-space byte decides: only an array takes the fast path.
	j := 0
	for {
		for j < len(a.buf) && isSpace(a.buf[j]) {
			j++
		}
		if j < len(a.buf) || !a.fill(0) {
			break
		}
	}
	if j >= len(a.buf) || a.buf[j] != '[' {
		resp.Body = a.replay(0, body)
		return false
	}

	var (
		pos     = j + 1 // the next unread byte
		n       = 0     // elements yielded
		scanned = int64(0)
		zero    models.EvaluationScenario
	)
	for {
		mark := pos // where a json.Decoder would take over
		// Skip to the next element, past the comma after the one before.
		for {
			for pos < len(a.buf) && isSpace(a.buf[pos]) {
				pos++
			}
			if pos < len(a.buf) {
				break
			}
			shift := a.keep(mark)
			mark, pos = mark-shift, pos-shift
			if !a.fill(mark) {
				return st.resume(resp, a, mark, n, scanned, yieldScenario, complete)
			}
		}
		c := a.buf[pos]
		if c == ']' {
			*complete = true
			resp.Body = a.replay(pos+1, body) // finish drains what follows
			return true
		}
		valueStart := pos // where encoding/json's scanner starts this value
		if n > 0 {
			if c != ',' {
				return st.resume(resp, a, mark, n, scanned, yieldScenario, complete)
			}
			pos++
			valueStart = pos
			for {
				for pos < len(a.buf) && isSpace(a.buf[pos]) {
					pos++
				}
				if pos < len(a.buf) {
					break
				}
				shift := a.keep(mark)
				mark, pos, valueStart = mark-shift, pos-shift, valueStart-shift
				if !a.fill(mark) {
					return st.resume(resp, a, mark, n, scanned, yieldScenario, complete)
				}
			}
		}
		if a.buf[pos] != '{' {
			return st.resume(resp, a, mark, n, scanned, yieldScenario, complete)
		}

		var s models.EvaluationScenario
		var size int
		for {
			var status scenariojson.Status
			size, status = scenariojson.Decode(a.buf[pos:], &s)
			if status == scenariojson.OK {
				break
			}
			s = zero
			if status == scenariojson.Short {
				// Decode again once the unread input has doubled, so that
				// an answer trickling in small reads costs linear time.
				want := 2 * (len(a.buf) - pos)
				shift := a.keep(mark)
				mark, pos, valueStart = mark-shift, pos-shift, valueStart-shift
				for a.fill(mark) {
					if len(a.buf)-pos >= want {
						break
					}
				}
				if len(a.buf)-pos >= want {
					continue
				}
			}
			// Not for the fast decoder: let encoding/json decode this one
			// element, or take over if it refuses it.
			end, found := a.valueEnd(&mark, &pos, &valueStart)
			if !found {
				return st.resume(resp, a, mark, n, scanned, yieldScenario, complete)
			}
			if err := json.Unmarshal(a.buf[pos:end], &s); err != nil {
				return st.resume(resp, a, mark, n, scanned, yieldScenario, complete)
			}
			size = end - pos
			break
		}
		pos += size
		scanned += int64(pos - valueStart)
		n++
		if !yieldScenario(s, nil) {
			return true
		}
	}
}

// resume hands the rest of the answer, from buf[mark:] on, to a json.Decoder
// in the state the encoding/json path would be in after n elements, and
// runs that path's loop to the end. The decoder reads a short synthetic
// prefix first ("[" and, after an element, a dummy "{}"); offsets in errors
// are corrected for it, so that errors are those of the encoding/json path:
// the DecodeError offset and, in a *json.SyntaxError, the decoder's count of
// scanned bytes (scanned is that count for the n elements before).
func (st *call) resume(resp *http.Response, a *arrayReader, mark, n int, scanned int64,
	yield func(models.EvaluationScenario, error) bool, complete *bool) bool {
	resp.Body = a.replay(mark, resp.Body)
	prefix, dummy := "[", int64(0)
	if n > 0 {
		prefix, dummy = "[{}", 2
	}
	base := a.offset(mark) - int64(len(prefix)) // stream offset = base + dec.InputOffset()
	dec := json.NewDecoder(io.MultiReader(strings.NewReader(prefix), resp.Body))
	_, _ = dec.Token() // the '['
	if n > 0 {
		var v struct{}
		_ = dec.Decode(&v)
	}
	fail := func(err error, scannerError bool) {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			if scannerError {
				se.Offset += scanned - dummy
			} else {
				se.Offset += base
			}
		}
		derr := st.decodeError(resp, dec, err)
		var de *DecodeError
		if errors.As(derr, &de) {
			de.Offset += base
		}
		yield(models.EvaluationScenario{}, derr)
	}
	v := new(models.EvaluationScenario)
	for dec.More() {
		*v = models.EvaluationScenario{}
		if err := dec.Decode(v); err != nil {
			var se *json.SyntaxError
			commaErr := errors.As(err, &se) && se.Error() == "expected comma after array element"
			fail(err, !commaErr)
			return true
		}
		if !yield(*v, nil) {
			return true
		}
	}
	if _, err := dec.Token(); err != nil {
		fail(err, false)
		return true
	}
	*complete = true
	return true
}

// arrayReader buffers the answer for the fast path.
type arrayReader struct {
	r    io.Reader
	buf  []byte // buf[:len] holds read bytes
	base int64  // stream offset of buf[0]
	err  error  // the read error that ended the input, io.EOF at the end
}

func (a *arrayReader) offset(i int) int64 { return a.base + int64(i) }

// keep drops the bytes before buf[from] when that frees at least half the
// buffer, and returns how far the rest moved down.
func (a *arrayReader) keep(from int) int {
	if from == 0 || from < cap(a.buf)/2 {
		return 0
	}
	n := copy(a.buf, a.buf[from:])
	a.buf = a.buf[:n]
	a.base += int64(from)
	return from
}

// fill reads more input, growing the buffer when it is full, and reports
// whether any arrived. Bytes from buf[keep] on are never dropped.
func (a *arrayReader) fill(keep int) bool {
	if a.err != nil {
		return false
	}
	if len(a.buf) == cap(a.buf) {
		grown := make([]byte, len(a.buf), 2*cap(a.buf))
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

// valueEnd finds the end of the object at buf[*pos], reading more as
// needed, by its structure alone: encoding/json validates it afterwards.
// The indices passed in are moved with the buffer.
func (a *arrayReader) valueEnd(mark, pos, valueStart *int) (int, bool) {
	i, depth, inString := *pos, 0, false
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
		shift := a.keep(*mark)
		*mark, *pos, *valueStart, i = *mark-shift, *pos-shift, *valueStart-shift, i-shift
		if !a.fill(*mark) {
			return 0, false
		}
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
