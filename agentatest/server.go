package agentatest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is an in-memory fake of the Agenta evaluation and variant service,
// serving real HTTP on 127.0.0.1. It is safe for concurrent use: requests,
// seeding, inspection and fault injection may happen from any goroutine.
type Server struct {
	ts       *httptest.Server
	listener *restartListener // ts's, for Restart
	prefix   string

	// Configuration, fixed after NewServer.
	apiKey              string
	clock               func() time.Time
	idClock             func() time.Time // the time in generated ids
	manual              bool             // no worker: AdvanceEvaluations runs rows
	pickup              time.Duration    // from create to the worker's first row
	rowPace             time.Duration    // the time of one row's app call
	version             pydanticVersion
	older               bool // answer as the servers before July 2024
	writeTimeout        time.Duration
	redirectLosesPrefix bool
	limits              Limits
	admission           admission
	// brokenEnvironmentLookup answers every lookup by environment with
	// the 500 of the mid-2024 backend's bug.
	brokenEnvironmentLookup bool

	mu          sync.Mutex
	nextID      uint64
	usedIDs     map[string]bool
	user        User
	apps        map[string]*appRecord
	bases       map[string]*baseRecord
	variants    map[string]*variantRecord
	testsets    map[string]*testsetRecord
	evaluators  map[string]*evaluatorRecord
	humanEvals  []humanEvaluationRecord
	spans       map[string]*spanRecord
	evaluations map[string]*evaluationRun
	evalOrder   []string
	v26         *state2026 // the 2026 generation, when served (gen2026.go)
	faults      []*faultEntry

	// logMu guards the request log. It is taken after mu, never before, so
	// that a handler holding mu can record its status.
	logMu    sync.Mutex
	requests []*Request
	logged   int64 // the bytes the log holds (see Limits.LoggedBytes)
	dropped  int   // entries dropped to stay within the limits

	closing   chan struct{}
	closeOnce sync.Once
	runners   sync.WaitGroup
}

// NewServer starts a fake service on a random port of 127.0.0.1. Call Close
// when done; NewTestServer does that for a test.
func NewServer(opts ...Option) *Server {
	s := &Server{
		prefix:       "/api",
		clock:        time.Now,
		writeTimeout: defaultWriteTimeout,
		limits:       DefaultLimits(),
		idClock:      func() time.Time { return idEpoch },
		version:      pydanticV2,
		pickup:       defaultPickup,
		rowPace:      defaultRowPace,
		usedIDs:      map[string]bool{},
		apps:         map[string]*appRecord{},
		bases:        map[string]*baseRecord{},
		variants:     map[string]*variantRecord{},
		testsets:     map[string]*testsetRecord{},
		evaluators:   map[string]*evaluatorRecord{},
		spans:        map[string]*spanRecord{},
		evaluations:  map[string]*evaluationRun{},
		closing:      make(chan struct{}),
		// A self-hosted server of mid-2024 has one user, created at its
		// first start with the username "agenta".
		user: User{ID: uuid7(demoTime, demoMark, 0x0001), Username: "agenta"},
	}
	defaultUser := s.user
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	if s.user == defaultUser {
		s.user.ID = s.demoID(0x0001) // an ObjectId under WithOlderServer
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("agentatest: listen on 127.0.0.1: %v", err))
	}
	s.ts = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	// A client that stops reading cannot hold a handler longer than this,
	// nor one that is slow to send its headers, or idles, its connection.
	s.ts.Config.WriteTimeout = s.writeTimeout
	s.ts.Config.ReadHeaderTimeout = s.limits.ReadHeaderTimeout
	s.ts.Config.IdleTimeout = s.limits.IdleTimeout
	s.ts.Config.MaxHeaderBytes = s.limits.HeaderBytes
	s.ts.Listener.Close()
	s.listener = newRestartListener(l)
	s.ts.Listener = s.listener
	s.ts.Start()
	return s
}

// NewTestServer starts a Server for the duration of a test: it is closed
// when the test and its subtests end.
func NewTestServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := NewServer(opts...)
	tb.Cleanup(s.Close)
	return s
}

// URL returns the base URL to give agenta.NewClient, such as
// "http://127.0.0.1:41234/api"; like the real service's, it ends in /api.
func (s *Server) URL() string { return s.ts.URL + s.prefix }

// Close stops background evaluations, waits for requests in flight (ending
// stalled ones) and shuts the Server down. It is safe to call twice.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		// Stop accepting, then end every connection, those of clients that
		// stopped reading an answer included: httptest's Close alone would
		// wait for their handlers until the write timeout.
		s.ts.Listener.Close()
		s.ts.CloseClientConnections()
		s.ts.Close()
		s.runners.Wait()
	})
}

// Request is one request the Server received, as recorded in its log.
type Request struct {
	// Operation is the operation the request was routed to, or "" when it
	// matched none (including the span operation's redirect).
	Operation Operation
	Method    string
	// Path is the escaped path as sent, including the /api prefix.
	Path string
	// RawQuery is the query as sent, and Query its decoded values.
	RawQuery string
	Query    url.Values
	Header   http.Header
	Body     []byte
	// Status is the status the Server answered, or 0 when a fault dropped
	// the connection.
	Status int
	// Fault reports whether an injected fault answered the request.
	Fault bool
}

// Requests returns a copy of every request received so far, in order of
// arrival.
func (s *Server) Requests() []Request {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

// RequestsFor returns the requests routed to op, in order of arrival.
func (s *Server) RequestsFor(op Operation) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Operation == op {
			out = append(out, r)
		}
	}
	return out
}

// ResetRequests empties the request log.
func (s *Server) ResetRequests() {
	s.logMu.Lock()
	s.requests, s.logged = nil, 0
	s.logMu.Unlock()
}

// statusRecorder records the status a handler writes in the request log
// before any byte of the answer leaves, so that a client that has its
// answer always finds its request logged.
type statusRecorder struct {
	http.ResponseWriter
	s      *Server
	entry  *Request
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.s.logMu.Lock()
		w.entry.Status = code
		w.s.logMu.Unlock()
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap gives fault injection access to the connection.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// MaxBodyBytes is the largest request body the Server accepts by default
// (Limits.BodyBytes); a larger one is answered 413, never cut short and
// read as if whole.
const MaxBodyBytes = 16 << 20

// defaultWriteTimeout bounds how long the Server writes one answer.
const defaultWriteTimeout = time.Minute

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	release, refused := s.admit()
	if refused != nil {
		refused.write(w)
		return
	}
	body, held, refused := s.readBody(w, r)
	defer func() { release(held) }()
	route := s.route(r)
	entry := &Request{
		Operation: route.op,
		Method:    r.Method,
		Path:      r.URL.EscapedPath(),
		RawQuery:  r.URL.RawQuery,
		Query:     r.URL.Query(),
		Header:    r.Header.Clone(),
		Body:      body,
	}
	s.logMu.Lock()
	s.logRequest(entry)
	s.logMu.Unlock()
	rec := &statusRecorder{ResponseWriter: w, s: s, entry: entry}
	defer func() {
		if p := recover(); p != nil && rec.status == 0 {
			// The fake must never take a test down: report its bug as a 500.
			detailAnswer(http.StatusInternalServerError, fmt.Sprintf("agentatest: internal error: %v", p)).write(rec)
		}
	}()

	if refused == nil {
		var done func()
		if done, refused = s.stateRefusal(route.op); done != nil {
			defer done()
		}
	}
	if refused != nil {
		if refused.status != 0 { // 0: the client went away
			refused.write(rec)
		}
		return
	}
	if f := s.takeFault(route.op, route.kind == routeOperation); f != nil {
		s.logMu.Lock()
		entry.Fault = true
		s.logMu.Unlock()
		if s.applyFault(rec, r, f, func(w http.ResponseWriter) { s.serveRoute(w, r, route, body) }) {
			return
		}
	}
	s.serveRoute(rec, r, route, body)
}

func (s *Server) serveRoute(w http.ResponseWriter, r *http.Request, rt route, body []byte) {
	w.Header().Set("Server", "uvicorn")
	s.answer(r, rt, body).write(w)
}

// answer computes the whole answer to a request before anything is written.
func (s *Server) answer(r *http.Request, rt route, body []byte) answer {
	if refused, ok := s.authorize2026(r, rt); !ok {
		return refused
	}
	if s.apiKey != "" && !rt.gen26 {
		if refused, ok := s.authorize(r); !ok {
			return refused
		}
	}
	switch rt.kind {
	case routeMethodNotAllowed:
		a := detailAnswer(http.StatusMethodNotAllowed, "Method Not Allowed")
		a.header = http.Header{"Allow": {rt.allow}}
		return a
	case routeRedirect:
		if !s.servesSpans() {
			return routeNotFoundAnswer()
		}
		return s.redirectToSlash(r)
	case routeOperation:
		return rt.handle(&call{r: r, id: rt.id, body: body})
	}
	return routeNotFoundAnswer()
}

// authorize checks the API key, sent raw or as "ApiKey <key>"; a missing
// or wrong one gets the newer servers' 401 {"detail":{"message":
// "Unauthorized"}}, alike. When the request may not proceed it returns the
// refusal and false.
func (s *Server) authorize(r *http.Request) (answer, bool) {
	got := strings.TrimSpace(r.Header.Get("Authorization"))
	if got != s.apiKey && got != "ApiKey "+s.apiKey {
		return jsonAnswer(http.StatusUnauthorized, object{{"detail", object{{"message", "Unauthorized"}}}}), false
	}
	return answer{}, true
}
