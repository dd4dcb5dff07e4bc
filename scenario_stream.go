package agenta

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/agenta-go/agenta/internal/scenariojson"
	"github.com/agenta-go/agenta/models"
)

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
