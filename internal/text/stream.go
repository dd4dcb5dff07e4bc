package text

import (
	"io"
	"unicode/utf8"
)

// holdBack returns how many bytes at the end of b a stream must keep until
// it sees what follows: the longest tail made only of bytes that occur in
// some form, which may be the start of a secret, up to the longest form.
// A JSON answer or a report ends in bytes no form holds (a closing bracket,
// a line feed), so the whole of it passes at once.
func (s *Secrets) holdBack(b []byte) int {
	n := 0
	for n < len(b) && n < s.longest && s.formByte[b[len(b)-1-n]] {
		n++
	}
	return n
}

// scrubPrefix appends to dst the scrubbed part of buf that can be written
// now, all of it when final, and returns how many bytes of buf that took.
// A run of a secret that starts before the held-back tail ends before it
// (the tail is as long as the longest form), so it is always whole.
func (s *Secrets) scrubPrefix(dst, buf []byte, final bool) ([]byte, int) {
	limit := len(buf)
	if !final {
		limit -= s.holdBack(buf)
	}
	if limit == 0 {
		return dst, 0
	}
	runs := s.spans(buf, limit)
	end := limit
	if len(runs) > 0 {
		end = max(end, runs[len(runs)-1].end)
	}
	return redact(dst, buf, runs, 0, end), end
}

// Writer scrubs what is written through it, however the writes split a
// secret: it holds back a tail that may be the start of one until the next
// write or Flush shows what follows.
type Writer struct {
	w       io.Writer
	s       *Secrets
	pending []byte
	out     []byte
}

// NewWriter returns a Writer that writes to w what it is given, scrubbed of
// s. Call Flush at the end.
func (s *Secrets) NewWriter(w io.Writer) *Writer { return &Writer{w: w, s: s} }

// Write scrubs p with what was held back before it, and writes all but a
// tail that may be the start of a secret.
func (x *Writer) Write(p []byte) (int, error) {
	if x.s.Len() == 0 {
		return x.w.Write(p)
	}
	x.pending = append(x.pending, p...)
	out, n := x.s.scrubPrefix(x.out[:0], x.pending, false)
	x.out = out[:0]
	x.pending = append(x.pending[:0], x.pending[n:]...)
	if len(out) > 0 {
		if _, err := x.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what was held back, scrubbed.
func (x *Writer) Flush() error {
	if len(x.pending) == 0 {
		return nil
	}
	out, _ := x.s.scrubPrefix(x.out[:0], x.pending, true)
	x.pending = x.pending[:0]
	x.out = out[:0]
	_, err := x.w.Write(out)
	return err
}

// Reader scrubs what is read through it. See NewReader.
type Reader struct {
	r    io.Reader
	s    *Secrets
	tail []byte // held back: may be the start of a secret
	err  error  // the error that ended the input, given once all is read

	// The buffered path, for a small p or a redaction that grows.
	own []byte // the Reader's buffer, for a small p
	out []byte // scrubbed, not yet read
	pos int    // how much of out was read
}

// NewReader returns a Reader that reads r scrubbed of s. It holds back a
// tail of what r gave only while that tail may be the start of a secret,
// so that a complete JSON answer is read whole even when the body's end
// is slow to come. It scrubs in the caller's buffer and allocates only for
// the tail it holds back.
func (s *Secrets) NewReader(r io.Reader) *Reader { return &Reader{r: r, s: s} }

func (x *Reader) Read(p []byte) (int, error) {
	if x.pos < len(x.out) {
		n := copy(p, x.out[x.pos:])
		x.pos += n
		return n, x.endWith(x.pos == len(x.out))
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if x.err != nil && len(x.tail) == 0 {
			return 0, x.err
		}
		// Room for the tail, a read, and a redaction: the caller's
		// buffer, or for a small one the Reader's own, made once.
		buf, small := p, len(p) < 2*x.s.longest+2*len(Redacted)
		if small {
			if x.own == nil {
				x.own = make([]byte, 2*x.s.longest+ownChunk)
			}
			buf = x.own
		}
		n := copy(buf, x.tail)
		if x.err == nil {
			m, err := x.r.Read(buf[n:])
			n += m
			x.err = err
		}
		final := x.err != nil
		limit := n
		if !final {
			limit -= x.s.holdBack(buf[:n])
		}
		runs := x.s.spans(buf[:n], limit)
		end := limit
		if len(runs) > 0 {
			end = max(end, runs[len(runs)-1].end)
		}
		x.tail = append(x.tail[:0], buf[end:n]...)
		k, inPlace := redactInPlace(buf, runs, end)
		switch {
		case !inPlace: // a redaction that grows the text: rare
			x.out = redact(x.out[:0], buf, runs, 0, end)
		case small:
			x.out = buf[:k]
		case k > 0:
			return k, x.endWith(true)
		default:
			continue
		}
		x.pos = copy(p, x.out)
		if x.pos > 0 || final {
			return x.pos, x.endWith(x.pos == len(x.out))
		}
	}
}

// redactInPlace replaces runs in b[:end] with Redacted in place, when no
// run is shorter than Redacted, and returns the new length; it leaves b
// as it was and reports false otherwise.
func redactInPlace(b []byte, runs []span, end int) (int, bool) {
	for _, r := range runs {
		if r.end-r.start < len(Redacted) {
			return 0, false
		}
	}
	w, from := 0, 0
	for _, r := range runs {
		w += copy(b[w:], b[from:r.start])
		w += copy(b[w:], Redacted)
		from = r.end
	}
	w += copy(b[w:], b[from:end])
	return w, true
}

// ownChunk is how much a Reader reads at a time into its own buffer.
const ownChunk = 4 << 10

// endWith returns the error that ended the input along with the last bytes
// of it, as net/http's bodies do, so that a reader learns of the end
// without another call: the engine then knows that nothing follows an
// answer without waiting for the network.
func (x *Reader) endWith(drained bool) error {
	if drained && len(x.tail) == 0 {
		return x.err
	}
	return nil
}

// EscapeWriter writes what it is given through an escape, such as
// Document or JSON, however the writes split a character: the start of a
// character that the next write ends is held back.
type EscapeWriter struct {
	w       io.Writer
	escape  func([]byte) []byte
	pending []byte // the start of a character the next write ends
}

// NewDocumentWriter returns an EscapeWriter to w through Document: line
// breaks and tabs kept, every other control character and bidirectional
// override escaped visibly. Call Flush at the end.
func NewDocumentWriter(w io.Writer) *EscapeWriter {
	return &EscapeWriter{w: w, escape: func(b []byte) []byte { return []byte(Document(string(b))) }}
}

// NewJSONWriter returns an EscapeWriter to w through JSON, for JSON text.
// Call Flush at the end.
func NewJSONWriter(w io.Writer) *EscapeWriter { return &EscapeWriter{w: w, escape: JSON} }

// Write writes p escaped, but for the start of a character it ends with.
func (e *EscapeWriter) Write(p []byte) (int, error) {
	buf := append(e.pending, p...)
	end := wholeRunes(buf)
	// JSON may return its argument: write it before pending, which
	// shares buf's memory, changes.
	_, err := e.w.Write(e.escape(buf[:end]))
	e.pending = append(e.pending[:0], buf[end:]...)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what was held back.
func (e *EscapeWriter) Flush() error {
	if len(e.pending) == 0 {
		return nil
	}
	_, err := e.w.Write(e.escape(e.pending))
	e.pending = e.pending[:0]
	return err
}

// wholeRunes returns how much of buf ends on a whole character: a
// character whose last bytes are still to come is held back.
func wholeRunes(buf []byte) int {
	end := len(buf)
	for i := max(0, end-utf8.UTFMax+1); i < end; i++ {
		if utf8.RuneStart(buf[i]) && !utf8.FullRune(buf[i:end]) {
			return i
		}
	}
	return end
}
