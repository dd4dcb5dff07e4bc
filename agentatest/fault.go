package agentatest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

// Fault is a misbehaviour injected in front of an operation, for testing
// how a client copes with an unreliable service or network. The zero Fault
// does nothing; set the fields to combine effects: Stall, then Drop or
// answer Status.
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
}

// StallForever, as Fault.Stall, holds a request until the client gives up or
// the Server closes.
const StallForever time.Duration = 1<<63 - 1

// Always, as the count given to InjectFault, applies the fault to every
// matching request until ClearFaults.
const Always = -1

type faultEntry struct {
	op        Operation
	remaining int
	fault     Fault
}

// InjectFault makes the next n requests to op meet f; n == Always makes it
// permanent. AnyOperation matches every request. Faults are used up in the
// order they were injected, so that "two 503s, then a 429" is two calls.
func (s *Server) InjectFault(op Operation, n int, f Fault) {
	if n == 0 || n < Always {
		return
	}
	if f.Header != nil {
		f.Header = f.Header.Clone()
	}
	s.mu.Lock()
	s.faults = append(s.faults, &faultEntry{op: op, remaining: n, fault: f})
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
	for i, e := range s.faults {
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
	if f.Stall > 0 {
		var timeout <-chan time.Time
		if f.Stall != StallForever {
			t := time.NewTimer(f.Stall)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-timeout:
		case <-r.Context().Done():
			return true
		case <-s.closing:
			return true
		}
	}
	var handled *httptest.ResponseRecorder
	if f.AfterHandling {
		handled = httptest.NewRecorder()
		serve(handled)
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
