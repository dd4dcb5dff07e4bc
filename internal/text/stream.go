package text

import "io"

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

// readChunk is how much a Reader reads from below at a time.
const readChunk = 32 << 10

// Reader scrubs what is read through it. See NewReader.
type Reader struct {
	r        io.Reader
	s        *Secrets
	buf      []byte // read from below: buf[:used] is ready, the rest held back
	used     int
	out      []byte // what is ready to be read: buf[:used], or it scrubbed
	pos      int    // how much of out was read
	scrubbed []byte // the scrubbed copy, when buf[:used] held a secret
	err      error  // the error that ended the input, given once out is read
}

// NewReader returns a Reader that reads r scrubbed of s. It holds back a
// tail of what r gave only while that tail may be the start of a secret,
// so that a complete JSON answer is read whole even when the body's end
// is slow to come.
func (s *Secrets) NewReader(r io.Reader) *Reader { return &Reader{r: r, s: s} }

func (x *Reader) Read(p []byte) (int, error) {
	for x.pos == len(x.out) {
		if x.err != nil {
			return 0, x.err
		}
		if len(p) == 0 {
			return 0, nil
		}
		// Keep the held-back tail, and make room for a chunk after it.
		n := copy(x.buf, x.buf[x.used:])
		x.buf, x.used = x.buf[:n], 0
		if cap(x.buf)-len(x.buf) < readChunk/2 {
			grown := make([]byte, len(x.buf), len(x.buf)+readChunk)
			copy(grown, x.buf)
			x.buf = grown
		}
		read, err := x.r.Read(x.buf[len(x.buf):cap(x.buf)])
		x.buf = x.buf[:len(x.buf)+read]
		if err != nil {
			x.err = err
		}
		x.ready(err != nil)
	}
	n := copy(p, x.out[x.pos:])
	x.pos += n
	return n, nil
}

// ready makes out the part of buf that can be read now, scrubbed.
func (x *Reader) ready(final bool) {
	limit := len(x.buf)
	if !final {
		limit -= x.s.holdBack(x.buf)
	}
	x.pos, x.out, x.used = 0, x.buf[:0], 0
	if limit == 0 {
		return
	}
	runs := x.s.spans(x.buf, limit)
	if len(runs) == 0 {
		x.out, x.used = x.buf[:limit], limit
		return
	}
	end := max(limit, runs[len(runs)-1].end)
	x.scrubbed = redact(x.scrubbed[:0], x.buf, runs, 0, end)
	x.out, x.used = x.scrubbed, end
}
