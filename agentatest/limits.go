package agentatest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"sync/atomic"
	"time"
)

// Limits bound what a Server reads and holds, so that a client that sends
// too much, too many or too slowly (a runaway test, a load test, a
// hostile job beside it in CI) cannot make it grow without bound or hold
// its connections. What a limit refuses is answered at once, clearly:
//
//   - a request body over BodyBytes: 413, with {"detail": ...};
//   - request headers over HeaderBytes: 431 (net/http's own answer);
//   - more than InFlight requests at once, or bodies in flight over
//     BodyBudget bytes together: 429, with Retry-After: 1;
//   - a create over Evaluations stored evaluations (each variant it names
//     is one), or a fork over Variants stored variants: 429, naming the
//     limit;
//   - a create of more than EvaluatorConfigs evaluator configs: 413;
//   - a create or a fork once the forked variants and the runs' answers
//     hold StoredBytes: 429, naming the limit; a run's row computed past it
//     gets an error output naming it instead of the app's answer;
//   - a body that does not arrive within ReadTimeout: 408, and the
//     connection closed; headers that do not within ReadHeaderTimeout, or
//     an idle connection past IdleTimeout: the connection closed.
//
// The request log keeps the latest LoggedRequests requests, and no more
// than LoggedBytes of their bodies and headers: older entries are dropped
// first (RequestsDropped counts them). A zero field keeps its default
// (DefaultLimits). Memory then stays within about BodyBudget, plus the
// stored evaluations and StoredBytes, plus the log: under 10,000 creates
// and 200 slow connections, the heap grows by under 64 MiB
// (TestBoundedUnderLoad).
type Limits struct {
	// BodyBytes bounds one request body; default MaxBodyBytes (16 MiB).
	BodyBytes int64
	// BodyBudget bounds the bodies being read at once, together; default
	// 64 MiB.
	BodyBudget int64
	// HeaderBytes bounds a request's headers; default 64 KiB.
	HeaderBytes int
	// InFlight bounds the requests handled at once; default 256.
	InFlight int
	// Evaluations bounds the evaluations stored; default 1,000.
	Evaluations int
	// Variants bounds the variants stored, seeded ones included; default
	// 1,000. Seeding past it is the test's own choice and is not refused.
	Variants int
	// EvaluatorConfigs bounds the evaluator configs one create names (each
	// is run on every row of every variant); default 100.
	EvaluatorConfigs int
	// StoredBytes bounds the bytes the clients' requests make the fake
	// hold: the bodies of the forks stored and the app's answers of the
	// runs, together; default 256 MiB. Seeded data does not count.
	StoredBytes int64
	// LoggedRequests bounds the request log's entries; default 10,000.
	LoggedRequests int
	// LoggedBytes bounds the bodies and headers the log holds; default
	// 64 MiB.
	LoggedBytes int64
	// ReadHeaderTimeout bounds the wait for a request's headers; default
	// 10 s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the wait for a request's body; default 30 s.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long; default
	// 60 s.
	IdleTimeout time.Duration
}

// DefaultLimits returns the limits a Server has unless WithLimits changes
// them.
func DefaultLimits() Limits {
	return Limits{
		BodyBytes:         MaxBodyBytes,
		BodyBudget:        64 << 20,
		HeaderBytes:       64 << 10,
		InFlight:          256,
		Evaluations:       1_000,
		Variants:          1_000,
		EvaluatorConfigs:  100,
		StoredBytes:       256 << 20,
		LoggedRequests:    10_000,
		LoggedBytes:       64 << 20,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
}

// WithLimits replaces the default limits (DefaultLimits); a zero field
// keeps its default.
func WithLimits(l Limits) Option {
	return func(s *Server) { s.limits = l.withDefaults() }
}

// withDefaults returns l with each zero or negative field set to its
// default.
func (l Limits) withDefaults() Limits {
	// Every field is an integer or a duration.
	v, def := reflect.ValueOf(&l).Elem(), reflect.ValueOf(DefaultLimits())
	for i := range v.NumField() {
		if v.Field(i).Int() <= 0 {
			v.Field(i).Set(def.Field(i))
		}
	}
	return l
}

// Limits returns the Server's limits.
func (s *Server) Limits() Limits { return s.limits }

// RequestsDropped returns how many requests the log dropped to stay within
// Limits.LoggedRequests and Limits.LoggedBytes.
func (s *Server) RequestsDropped() int {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.dropped
}

// admission is the state the limits keep across requests.
type admission struct {
	inFlight atomic.Int64
	bodies   atomic.Int64 // bytes of bodies being read or handled
	creating int          // creates and forks admitted, not yet done; under Server.mu
	// stored is the bytes the clients made the fake hold (see
	// Limits.StoredBytes); runs add their answers without the lock.
	stored atomic.Int64
}

// refusal is an answer a limit gives before the request is handled.
type refusal struct {
	status int
	detail string
	close  bool // the connection cannot be reused
}

// admit takes a slot for a request, or refuses it. release gives back the
// slot and the body's bytes.
func (s *Server) admit() (release func(body int64), refused *refusal) {
	if n := s.admission.inFlight.Add(1); n > int64(s.limits.InFlight) {
		s.admission.inFlight.Add(-1)
		return nil, &refusal{http.StatusTooManyRequests, fmt.Sprintf("agentatest: more than %d requests at once (Limits.InFlight); retry", s.limits.InFlight), true}
	}
	return func(body int64) {
		s.admission.bodies.Add(-body)
		s.admission.inFlight.Add(-1)
	}, nil
}

// readBody reads a request's body within Limits.ReadTimeout, BodyBytes and
// BodyBudget. It returns the body and how many bytes it holds of the
// budget, or a refusal and the bytes held so far.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int64, *refusal) {
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(s.limits.ReadTimeout)) == nil {
		defer rc.SetReadDeadline(time.Time{})
	}
	var body []byte
	var held int64
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Body.Read(chunk)
		if n > 0 {
			if int64(len(body)+n) > s.limits.BodyBytes {
				return nil, held, &refusal{http.StatusRequestEntityTooLarge,
					fmt.Sprintf("agentatest: the request body is over %d bytes", s.limits.BodyBytes), true}
			}
			if s.admission.bodies.Add(int64(n)) > s.limits.BodyBudget {
				s.admission.bodies.Add(-int64(n))
				return nil, held, &refusal{http.StatusTooManyRequests,
					fmt.Sprintf("agentatest: more than %d bytes of request bodies at once (Limits.BodyBudget); retry", s.limits.BodyBudget), true}
			}
			held += int64(n)
			body = append(body, chunk[:n]...)
		}
		switch {
		case err == io.EOF:
			return body, held, nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, held, &refusal{http.StatusRequestTimeout,
				fmt.Sprintf("agentatest: the request body did not arrive within %s (Limits.ReadTimeout)", s.limits.ReadTimeout), true}
		case err != nil:
			// The client went away, or sent a broken body: nothing to answer.
			return nil, held, &refusal{status: 0}
		}
	}
}

// stateRefusal refuses a create or a fork over the stored limits, or
// admits it: done must then be called once it is handled. Creates and
// forks admitted but not done count against the limit, so that concurrent
// ones cannot pass it together; a create of several variants is checked
// again, whole, when it is handled (see createRuns).
func (s *Server) stateRefusal(op Operation) (done func(), refused *refusal) {
	if op != OpCreateEvaluation && op != OpAddVariantFromBase {
		return func() {}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case op == OpCreateEvaluation && len(s.evaluations)+s.admission.creating >= s.limits.Evaluations:
		return nil, &refusal{status: http.StatusTooManyRequests, detail: fmt.Sprintf(
			"agentatest: the fake holds %d evaluations, its limit (Limits.Evaluations); use a new Server", s.limits.Evaluations)}
	case op == OpAddVariantFromBase && len(s.variants)+s.admission.creating >= s.limits.Variants:
		return nil, &refusal{status: http.StatusTooManyRequests, detail: fmt.Sprintf(
			"agentatest: the fake holds %d variants, its limit (Limits.Variants); use a new Server", s.limits.Variants)}
	case s.admission.stored.Load() >= s.limits.StoredBytes:
		return nil, &refusal{status: http.StatusTooManyRequests, detail: s.storedFull()}
	}
	s.admission.creating++
	return func() {
		s.mu.Lock()
		s.admission.creating--
		s.mu.Unlock()
	}, nil
}

// storedFull says that Limits.StoredBytes is spent.
func (s *Server) storedFull() string {
	return fmt.Sprintf("agentatest: the fake holds %d bytes of forked variants and of the runs' answers, its limit (Limits.StoredBytes); use a new Server", s.limits.StoredBytes)
}

// write answers the refusal.
func (f *refusal) write(w http.ResponseWriter) {
	if f.close {
		w.Header().Set("Connection", "close")
	}
	if f.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	detailAnswer(f.status, f.detail).write(w)
}

// logRequest adds an entry to the log, dropping the oldest ones to stay
// within the limits. Callers hold logMu.
func (s *Server) logRequest(entry *Request) {
	size := requestSize(entry)
	s.requests = append(s.requests, entry)
	s.logged += size
	drop := 0
	for drop < len(s.requests)-1 && (len(s.requests)-drop > s.limits.LoggedRequests || s.logged > s.limits.LoggedBytes) {
		s.logged -= requestSize(s.requests[drop])
		s.requests[drop] = nil
		drop++
	}
	if drop > 0 {
		s.requests = s.requests[drop:]
		s.dropped += drop
	}
}

// requestSize is what a log entry holds of the request: its body and its
// headers.
func requestSize(r *Request) int64 {
	n := int64(len(r.Body) + len(r.Path) + len(r.RawQuery))
	for k, vs := range r.Header {
		n += int64(len(k))
		for _, v := range vs {
			n += int64(len(v))
		}
	}
	return n
}
