package agentatest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault is a misbehaviour injected in front of an operation, for testing
// how a client copes with an unreliable service or network. The zero Fault
// does nothing; set the fields to combine effects: Stall, then Drop or
// answer Status, the answer's body shaped by Trickle, StallAfter and
// CutAfter.
type Fault struct {
	// Status, when not 0, answers this status instead of serving the
	// request, with Body or else {"detail": "<status text>"}.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header, in seconds
	// ("2") or as an HTTP date.
	RetryAfter string
	// Header holds extra headers for the answer.
	Header http.Header
	// Body replaces the answer's body, for example a proxy's HTML page.
	Body string
	// ContentType is the Content-Type of Body. It defaults to
	// application/json when Body starts with "{" or "[", and text/html
	// otherwise.
	ContentType string
	// Stall holds the request this long before anything else happens, or
	// until the client gives up or the Server closes. StallForever waits
	// for one of those. A stall alone then serves the request normally.
	Stall time.Duration
	// Drop closes the connection without answering.
	Drop bool
	// AfterHandling lets the operation take effect before the answer is
	// replaced by Status or Drop: the evaluation is created, the variant
	// added, yet the client sees a failure. It tests that a client does not
	// blindly repeat a create.
	AfterHandling bool
	// Trickle writes the answer's body slowly, as a slow network does: in
	// pieces of TrickleBytes (1 KiB when 0), pausing Trickle before each
	// piece after the first, so that a client can be tested on an answer
	// that takes long to arrive but keeps arriving. The Server's write
	// timeout (WithWriteTimeout, one minute by default) still bounds the
	// whole answer.
	Trickle      time.Duration
	TrickleBytes int
	// StallAfter, when above 0, writes that many bytes of the answer's
	// body, then holds the rest until the client gives up or the Server
	// closes: an answer that stalls half-way.
	StallAfter int
	// CutAfter, when above 0, writes that many bytes of the answer's body,
	// then closes the connection: an answer cut short, which the
	// Content-Length it announced lets the client notice.
	CutAfter int
}

// shapesBody reports whether f changes how the answer's body is written.
func (f *Fault) shapesBody() bool {
	return f.Trickle > 0 || f.StallAfter > 0 || f.CutAfter > 0
}

// StallForever, as Fault.Stall, holds a request until the client gives up or
// the Server closes.
const StallForever time.Duration = 1<<63 - 1

// Always, as the count given to InjectFault, applies the fault to every
// matching request until ClearFaults.
const Always = -1

type faultEntry struct {
	op        Operation
	remaining int       // requests left, or Always
	until     time.Time // for a window (InjectFaultFor): when it ends
	fault     Fault
}

// InjectFault makes the next n requests to op meet f; n == Always makes it
// permanent. AnyOperation matches every request. Faults are used up in the
// order they were injected, so that "two 503s, then a 429" is two calls.
func (s *Server) InjectFault(op Operation, n int, f Fault) {
	if n == 0 || n < Always {
		return
	}
	s.addFault(&faultEntry{op: op, remaining: n, fault: f})
}

// InjectFaultFor makes every request to op meet f for the next d, as a
// service does during an outage: InjectFaultFor(OpFetchEvaluationStatus,
// 8*time.Second, Fault{Status: 503}) answers status reads 503 for 8 s, and
// AnyOperation every request. Like InjectFault's, the window takes its turn
// in the order faults were injected, and while it lasts, faults injected
// after it for the same requests wait. d <= 0 injects nothing.
func (s *Server) InjectFaultFor(op Operation, d time.Duration, f Fault) {
	if d <= 0 {
		return
	}
	s.addFault(&faultEntry{op: op, remaining: Always, until: time.Now().Add(d), fault: f})
}

// addFault queues e, with its own copy of the fault's header.
func (s *Server) addFault(e *faultEntry) {
	e.fault.Header = e.fault.Header.Clone()
	s.mu.Lock()
	s.faults = append(s.faults, e)
	s.mu.Unlock()
}

// ClearFaults removes every fault not yet used up.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

// takeFault returns the fault due for a request to op, using it up.
func (s *Server) takeFault(op Operation, isOperation bool) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for i := 0; i < len(s.faults); i++ {
		e := s.faults[i]
		if !e.until.IsZero() && !now.Before(e.until) {
			// A window that has ended.
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			i--
			continue
		}
		if e.op != AnyOperation && (!isOperation || e.op != op) {
			continue
		}
		f := e.fault
		if e.remaining > 0 {
			e.remaining--
			if e.remaining == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return &f
	}
	return nil
}

// applyFault carries out f. It reports whether the request has been
// answered (or abandoned); when it reports false the request is served
// normally.
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f *Fault, serve func(http.ResponseWriter)) bool {
	if f.Stall > 0 && !s.hold(r.Context().Done(), f.Stall) {
		return true
	}
	var handled *httptest.ResponseRecorder
	if f.AfterHandling {
		handled = httptest.NewRecorder()
		serve(handled)
	}
	if f.shapesBody() && !f.Drop {
		w = &shapedWriter{ResponseWriter: w, s: s, r: r, f: f}
	}
	switch {
	case f.Drop:
		dropConnection(w)
		return true
	case f.Status != 0:
		h := w.Header()
		for name, values := range f.Header {
			h[name] = append([]string(nil), values...)
		}
		if f.RetryAfter != "" {
			h.Set("Retry-After", f.RetryAfter)
		}
		body := f.Body
		if body == "" {
			body = `{"detail":` + strconv.Quote(statusText(f.Status)) + `}`
		}
		ct := f.ContentType
		if ct == "" {
			ct = "text/html; charset=utf-8"
			if t := strings.TrimSpace(body); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
				ct = "application/json"
			}
		}
		h.Set("Content-Type", ct)
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte(body))
		return true
	case handled != nil:
		for name, values := range handled.Header() {
			w.Header()[name] = values
		}
		w.WriteHeader(handled.Code)
		_, _ = w.Write(handled.Body.Bytes())
		return true
	case f.shapesBody():
		serve(w)
		return true
	}
	return false
}

// shapedWriter writes an answer's body as a Fault's Trickle, StallAfter
// and CutAfter say. A write it broke off reports errAnswerShaped.
type shapedWriter struct {
	http.ResponseWriter
	s       *Server
	r       *http.Request
	f       *Fault
	written int  // bytes of the body written
	ended   bool // the body was cut, or stalled until the client left
}

// Unwrap gives dropConnection access to the connection.
func (w *shapedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *shapedWriter) Write(b []byte) (int, error) {
	total := 0
	for len(b) > 0 {
		if w.ended {
			return total, errAnswerShaped
		}
		n := len(b)
		if w.f.Trickle > 0 {
			piece := w.f.TrickleBytes
			if piece <= 0 {
				piece = 1 << 10
			}
			n = min(n, piece)
			if w.written > 0 && !w.s.hold(w.r.Context().Done(), w.f.Trickle) {
				w.ended = true
				continue
			}
		}
		if w.f.StallAfter > w.written {
			n = min(n, w.f.StallAfter-w.written)
		}
		if w.f.CutAfter > w.written {
			n = min(n, w.f.CutAfter-w.written)
		}
		m, err := w.ResponseWriter.Write(b[:n])
		w.written += m
		total += m
		b = b[m:]
		if err != nil {
			return total, err
		}
		_ = http.NewResponseController(w.ResponseWriter).Flush()
		switch {
		case w.f.CutAfter > 0 && w.written >= w.f.CutAfter:
			dropConnection(w.ResponseWriter)
			w.ended = true
		case w.f.StallAfter > 0 && w.written >= w.f.StallAfter:
			w.s.hold(w.r.Context().Done(), StallForever)
			w.ended = true
		}
	}
	return total, nil
}

// hold waits d (StallForever: for ever), or until gone closes (the client
// gave up; nil: never) or the Server closes; it reports whether the whole
// of d passed.
func (s *Server) hold(gone <-chan struct{}, d time.Duration) bool {
	var timeout <-chan time.Time
	if d != StallForever {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return true
	case <-gone:
	case <-s.closing:
	}
	return false
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "Status " + strconv.Itoa(code)
}

// dropConnection closes the client's connection without a word.
func dropConnection(w http.ResponseWriter) {
	for {
		switch t := w.(type) {
		case http.Hijacker:
			if conn, _, err := t.Hijack(); err == nil {
				conn.Close()
				return
			}
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
			continue
		}
		return
	}
}

// Restart makes the Server go down and come back as a service does when it
// restarts: it drops every connection at once, refuses new ones
// (connection refused) for down, then accepts them again on the same
// address, with its data and its running evaluations intact. It returns at
// once. A Restart while the Server is down moves its return to down from
// now.
func (s *Server) Restart(down time.Duration) {
	s.listener.down(down)
	s.ts.CloseClientConnections()
}

// restartListener is the Server's listener. Restart closes the socket and
// opens another on the same address after a while; meanwhile Accept waits,
// so that the HTTP server never sees the gap.
type restartListener struct {
	addr net.Addr

	mu     sync.Mutex
	l      net.Listener  // the socket; nil while down
	up     chan struct{} // closed when l is set again
	gen    int           // counts Restarts: only the last one reopens
	closed bool
	done   chan struct{} // closed by Close
}

func newRestartListener(l net.Listener) *restartListener {
	up := make(chan struct{})
	close(up)
	return &restartListener{addr: l.Addr(), l: l, up: up, done: make(chan struct{})}
}

// Addr is the address, the same across restarts.
func (rl *restartListener) Addr() net.Addr { return rl.addr }

// Accept waits for the next connection, across restarts.
func (rl *restartListener) Accept() (net.Conn, error) {
	for {
		rl.mu.Lock()
		l, up, closed := rl.l, rl.up, rl.closed
		rl.mu.Unlock()
		switch {
		case closed:
			return nil, net.ErrClosed
		case l == nil:
			select {
			case <-up:
			case <-rl.done:
			}
			continue
		}
		conn, err := l.Accept()
		if err == nil {
			return conn, nil
		}
		rl.mu.Lock()
		replaced := rl.l != l || rl.closed
		rl.mu.Unlock()
		if !replaced {
			return nil, err
		}
		// Closed for a restart, or for good: look again.
	}
}

// Close stops accepting for good.
func (rl *restartListener) Close() error {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.closed {
		return nil
	}
	rl.closed = true
	close(rl.done)
	if rl.l != nil {
		return rl.l.Close()
	}
	return nil
}

// down closes the socket now and opens another on the same address after d.
func (rl *restartListener) down(d time.Duration) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.closed {
		return
	}
	if rl.l != nil {
		rl.l.Close()
		rl.l = nil
		rl.up = make(chan struct{})
	}
	rl.gen++
	gen := rl.gen
	time.AfterFunc(max(d, 0), func() { rl.reopen(gen) })
}

// reopen listens on the address again, unless another Restart or Close
// came since down; it tries until it can, in case the port is briefly busy.
func (rl *restartListener) reopen(gen int) {
	for {
		l, err := net.Listen("tcp", rl.addr.String())
		rl.mu.Lock()
		if rl.closed || rl.gen != gen {
			rl.mu.Unlock()
			if err == nil {
				l.Close()
			}
			return
		}
		if err == nil {
			rl.l = l
			close(rl.up)
			rl.mu.Unlock()
			return
		}
		rl.mu.Unlock()
		select {
		case <-time.After(10 * time.Millisecond):
		case <-rl.done:
			return
		}
	}
}
