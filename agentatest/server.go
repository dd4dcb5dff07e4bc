package agentatest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Operation names one of the service's seven operations. Its value is the
// service's own operationId; the constant names follow the SDK's methods.
type Operation string

// The seven operations, for fault injection and the request log.
const (
	OpFetchEvaluationScenarios Operation = "fetch_evaluation_scenarios"
	OpCreateEvaluation         Operation = "create_evaluation"
	OpGetVariantByEnvironment  Operation = "get_variant_by_env"
	OpAddVariantFromBase       Operation = "add_variant_from_base_and_config"
	OpGetVariant               Operation = "get_variant"
	OpGetSpan                  Operation = "get_span_of_generation"
	OpListHumanEvaluations     Operation = "fetch_list_human_evaluations_human_evaluations_get"
	// OpFetchEvaluation and OpFetchEvaluationStatus are the two evaluation
	// reads the published document also holds: the evaluation with its
	// aggregated results, and its status alone.
	OpFetchEvaluation       Operation = "fetch_evaluation"
	OpFetchEvaluationStatus Operation = "fetch_evaluation_status"
	// AnyOperation matches every request in InjectFault, including requests
	// that match no operation.
	AnyOperation Operation = ""
)

// Operations lists the seven operations and the two evaluation reads.
func Operations() []Operation {
	return []Operation{
		OpFetchEvaluationScenarios, OpCreateEvaluation, OpGetVariantByEnvironment,
		OpAddVariantFromBase, OpGetVariant, OpGetSpan, OpListHumanEvaluations,
		OpFetchEvaluation, OpFetchEvaluationStatus,
	}
}

// Server is an in-memory fake of the Agenta evaluation and variant service,
// serving real HTTP on 127.0.0.1. It is safe for concurrent use: requests,
// seeding, inspection and fault injection may happen from any goroutine.
type Server struct {
	ts     *httptest.Server
	prefix string

	// Configuration, fixed after NewServer.
	apiKey          string
	clock           func() time.Time
	mode            runMode
	pace            time.Duration
	version         pydanticVersion
	correctAnswers  bool
	redirectNoPrefx bool

	mu          sync.Mutex
	nextID      uint64
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
	faults      []*faultEntry

	// logMu guards the request log. It is taken after mu, never before, so
	// that a handler holding mu can record its status.
	logMu    sync.Mutex
	requests []*Request

	closing   chan struct{}
	closeOnce sync.Once
	runners   sync.WaitGroup
	idle      *sync.Cond // signalled when an evaluation run finishes
}

// runMode says when evaluations fill in their scenarios.
type runMode int

const (
	runSync   runMode = iota // before CreateEvaluation answers
	runPaced                 // in the background, one row per pace
	runManual                // when AdvanceEvaluations is called
)

// Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the Server require the key in the Authorization header,
// sent raw as the service expects (the form "ApiKey <key>" is accepted too).
// A request without it gets 401, one with another value 403.
func WithAPIKey(key string) Option {
	return func(s *Server) { s.apiKey = key }
}

// WithEvaluationPace runs evaluations in the background, filling in one
// scenario per row every d, so that polling shows progress as on the real
// service. Without it (or with d <= 0) every scenario is filled in before
// CreateEvaluation answers, which keeps tests deterministic.
func WithEvaluationPace(d time.Duration) Option {
	return func(s *Server) {
		if d > 0 {
			s.mode, s.pace = runPaced, d
		} else {
			s.mode, s.pace = runSync, 0
		}
	}
}

// WithManualEvaluations holds every evaluation at zero scenarios until the
// test calls AdvanceEvaluations, so that progress can be observed step by
// step without timing.
func WithManualEvaluations() Option {
	return func(s *Server) { s.mode = runManual }
}

// WithClock sets the clock used for the timestamps of created objects and
// of seeds that leave them unset, for deterministic output.
func WithClock(now func() time.Time) Option {
	return func(s *Server) {
		if now != nil {
			s.clock = now
		}
	}
}

// WithUser sets the user the Server acts for: the user_id and
// user_username of what it creates.
func WithUser(u User) Option {
	return func(s *Server) { s.user = u }
}

// WithNewerServer makes the Server answer as newer deployments do: 422
// items in Pydantic v2's form (with input and url), and scenarios carrying
// correct_answers instead of correct_answer.
func WithNewerServer() Option {
	return func(s *Server) {
		s.version = pydanticV2
		s.correctAnswers = true
	}
}

// WithPathPrefix serves the API under prefix instead of "/api". An empty
// prefix serves it at the root.
func WithPathPrefix(prefix string) Option {
	return func(s *Server) {
		s.prefix = strings.TrimRight(prefix, "/")
		if s.prefix != "" && !strings.HasPrefix(s.prefix, "/") {
			s.prefix = "/" + s.prefix
		}
	}
}

// WithRedirectLosingPrefix makes the span operation's 307 redirect point at
// the path without the "/api" prefix, as it does behind a path-prefixed
// proxy, so that clients can be tested against that trap.
func WithRedirectLosingPrefix() Option {
	return func(s *Server) { s.redirectNoPrefx = true }
}

// User is who the Server acts for.
type User struct {
	ID       string
	Username string
}

// NewServer starts a fake service on a random port of 127.0.0.1. Call Close
// when done; NewTestServer does that for a test.
func NewServer(opts ...Option) *Server {
	s := &Server{
		prefix:      "/api",
		clock:       time.Now,
		nextID:      0x100,
		apps:        map[string]*appRecord{},
		bases:       map[string]*baseRecord{},
		variants:    map[string]*variantRecord{},
		testsets:    map[string]*testsetRecord{},
		evaluators:  map[string]*evaluatorRecord{},
		spans:       map[string]*spanRecord{},
		evaluations: map[string]*evaluationRun{},
		closing:     make(chan struct{}),
		user:        User{ID: "66a0c0de0000000000000001", Username: "agentatest"},
	}
	s.idle = sync.NewCond(&s.mu)
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("agentatest: listen on 127.0.0.1: %v", err))
	}
	s.ts = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.ts.Listener.Close()
	s.ts.Listener = l
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
		s.ts.Close()
		s.runners.Wait()
	})
}

// newID returns a fresh identifier shaped like the service's MongoDB
// ObjectIds. Identifiers are sequential, so a test's output is stable.
// Callers hold s.mu.
func (s *Server) newID() string {
	s.nextID++
	return fmt.Sprintf("66a0c0de%016x", s.nextID)
}

// --- Request log ---

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
	s.requests = nil
	s.logMu.Unlock()
}

// --- Serving ---

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

// maxBody bounds what the Server reads of a request body.
const maxBody = 16 << 20

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
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
	s.requests = append(s.requests, entry)
	s.logMu.Unlock()
	rec := &statusRecorder{ResponseWriter: w, s: s, entry: entry}
	defer func() {
		if p := recover(); p != nil && rec.status == 0 {
			// The fake must never take a test down: report its bug as a 500.
			writeDetail(rec, http.StatusInternalServerError, fmt.Sprintf("agentatest: internal error: %v", p))
		}
	}()

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
	if s.apiKey != "" && !s.authorized(w, r) {
		return
	}
	switch rt.kind {
	case routeNotFound:
		writeDetail(w, http.StatusNotFound, "Not Found")
	case routeMethodNotAllowed:
		w.Header().Set("Allow", rt.allow)
		writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
	case routeRedirect:
		s.redirectToSlash(w, r)
	case routeOperation:
		rt.handle(w, r, body)
	}
}

// authorized checks the API key; it answers 401 or 403 and reports false
// when the request may not proceed.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	got := strings.TrimSpace(r.Header.Get("Authorization"))
	switch {
	case got == "":
		writeDetail(w, http.StatusUnauthorized, "Unauthorized: missing API key in the Authorization header")
		return false
	case got != s.apiKey && got != "ApiKey "+s.apiKey:
		writeDetail(w, http.StatusForbidden, "Forbidden: invalid API key")
		return false
	}
	return true
}

// redirectToSlash answers 307 to the same URL with a trailing slash, as
// Starlette does for a route registered only with one.
func (s *Server) redirectToSlash(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath() + "/"
	if s.redirectNoPrefx && s.prefix != "" {
		path = strings.TrimPrefix(path, s.prefix)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	target := scheme + "://" + r.Host + path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", target)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusTemporaryRedirect)
}

type routeKind int

const (
	routeNotFound routeKind = iota
	routeMethodNotAllowed
	routeRedirect
	routeOperation
)

type route struct {
	kind   routeKind
	op     Operation
	allow  string
	handle func(http.ResponseWriter, *http.Request, []byte)
}

// route matches a request to an operation. Like Starlette it matches the
// decoded path, so an id containing an encoded "/" matches nothing.
func (s *Server) route(r *http.Request) route {
	path := r.URL.Path
	if s.prefix != "" {
		if !strings.HasPrefix(path, s.prefix+"/") {
			return route{kind: routeNotFound}
		}
		path = path[len(s.prefix):]
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	slash := len(segs) > 1 && segs[len(segs)-1] == ""
	if slash {
		segs = segs[:len(segs)-1]
	}
	for _, seg := range segs {
		if seg == "" {
			return route{kind: routeNotFound}
		}
	}
	get := func(op Operation, h func(http.ResponseWriter, *http.Request, []byte)) route {
		if r.Method != http.MethodGet {
			return route{kind: routeMethodNotAllowed, allow: "GET"}
		}
		return route{kind: routeOperation, op: op, handle: h}
	}
	post := func(op Operation, h func(http.ResponseWriter, *http.Request, []byte)) route {
		if r.Method != http.MethodPost {
			return route{kind: routeMethodNotAllowed, allow: "POST"}
		}
		return route{kind: routeOperation, op: op, handle: h}
	}
	switch {
	case len(segs) == 1 && segs[0] == "evaluations":
		return post(OpCreateEvaluation, s.handleCreateEvaluation)
	case len(segs) == 2 && segs[0] == "evaluations":
		id := segs[1]
		return get(OpFetchEvaluation, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			s.handleFetchEvaluation(w, id)
		})
	case len(segs) == 3 && segs[0] == "evaluations" && segs[2] == "status":
		id := segs[1]
		return get(OpFetchEvaluationStatus, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			s.handleFetchEvaluationStatus(w, id)
		})
	case len(segs) == 3 && segs[0] == "evaluations" && segs[2] == "evaluation_scenarios":
		id := segs[1]
		return get(OpFetchEvaluationScenarios, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			s.handleFetchScenarios(w, id)
		})
	case len(segs) == 2 && segs[0] == "apps" && segs[1] == "get_variant_by_env":
		return get(OpGetVariantByEnvironment, s.handleGetVariantByEnv)
	case len(segs) == 2 && segs[0] == "variants" && segs[1] == "from-base" && r.Method != http.MethodGet:
		return post(OpAddVariantFromBase, s.handleAddVariantFromBase)
	case len(segs) == 2 && segs[0] == "variants":
		id := segs[1]
		return get(OpGetVariant, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			s.handleGetVariant(w, id)
		})
	case len(segs) == 3 && segs[0] == "observability" && segs[1] == "spans":
		if !slash {
			if r.Method != http.MethodGet {
				return route{kind: routeMethodNotAllowed, allow: "GET"}
			}
			return route{kind: routeRedirect}
		}
		id := segs[2]
		return get(OpGetSpan, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			s.handleGetSpan(w, r, id)
		})
	case len(segs) == 1 && segs[0] == "human-evaluations":
		return get(OpListHumanEvaluations, s.handleListHumanEvaluations)
	}
	return route{kind: routeNotFound}
}
