package agentatest

import (
	"net/http"
	"slices"
	"strings"
)

// Operation names one of the service's operations the Server serves: the
// seven of the interface, the two evaluation reads, and the results read. Its value is the
// service's own operationId; the constant names follow the SDK's methods.
type Operation string

// The operations, for fault injection and the request log.
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
	// OpFetchEvaluationResults is the service's read of an evaluation's
	// aggregated results alone, GET /evaluations/{id}/results/. It is not in
	// the published document, and the SDK does not call it: FetchEvaluation
	// carries the same aggregates. The fake serves it as the service does.
	OpFetchEvaluationResults Operation = "fetch_evaluation_results"
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

// routeNotFoundAnswer is Starlette's answer for a path no route matches.
func routeNotFoundAnswer() answer {
	return detailAnswer(http.StatusNotFound, "Not Found")
}

// servesSpans reports whether the Server has the span operation's route.
// A self-hosted server of mid-2024 has none: it answers the span paths 404
// {"detail":"Not Found"}, with or without the slash, as any unknown path
// (the real server's span_slash and span_noslash). The route exists on the
// cloud, and a Server holding a trace answers as the cloud does.
func (s *Server) servesSpans() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.spans) > 0
}

// redirectToSlash answers 307 to the same URL with a trailing slash, as
// Starlette does for a route registered only with one.
func (s *Server) redirectToSlash(r *http.Request) answer {
	path := r.URL.EscapedPath() + "/"
	if s.redirectLosesPrefix && s.prefix != "" {
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
	return answer{status: http.StatusTemporaryRedirect, header: http.Header{"Location": {target}}}
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
	id     string // the path's id, for the routes that have one
	handle handler
	gen26  bool // a route of the 2026 generation (gen2026.go)
	public bool // served without credentials
}

// handler serves one operation. Every handler has this signature: it reads
// the call and returns the whole answer, which the Server writes after the
// handler has released its lock, so that a client that stops reading
// cannot hold up the others.
type handler func(c *call) answer

// call is what a handler reads of a request.
type call struct {
	r    *http.Request
	id   string // the path's id, for the routes that have one
	body []byte
}

// endpoint declares one route: its method, its path below the prefix
// ("{id}" matches one segment, and the segments it matches are the call's
// id, joined by "/"), its operation and handler. The router, the method
// check and the 404/405 answers all come from a generation's table.
type endpoint struct {
	method, path string
	op           Operation
	handle       func(*Server, *call) answer
	public       bool // served without credentials
	// yields: a request of another method goes on to the next routes, as
	// Starlette tries every route before answering 405 for the first
	// whose path matched.
	yields bool
	// slashOnly: the route is registered with a trailing slash only, so
	// the path without it is answered 307 (routeRedirect).
	slashOnly bool
}

// routes2024 are the mid-2024 service's routes, in its order.
var routes2024 = []endpoint{
	{method: "POST", path: "evaluations", op: OpCreateEvaluation, handle: (*Server).handleCreateEvaluation},
	{method: "GET", path: "evaluations/{id}", op: OpFetchEvaluation, handle: (*Server).handleFetchEvaluation},
	{method: "GET", path: "evaluations/{id}/status", op: OpFetchEvaluationStatus, handle: (*Server).handleFetchEvaluationStatus},
	{method: "GET", path: "evaluations/{id}/results", op: OpFetchEvaluationResults, handle: (*Server).handleFetchEvaluationResults},
	{method: "GET", path: "evaluations/{id}/evaluation_scenarios", op: OpFetchEvaluationScenarios, handle: (*Server).handleFetchScenarios},
	{method: "GET", path: "apps/get_variant_by_env", op: OpGetVariantByEnvironment, handle: (*Server).handleGetVariantByEnv},
	{method: "POST", path: "variants/from-base", op: OpAddVariantFromBase, handle: (*Server).handleAddVariantFromBase, yields: true},
	{method: "GET", path: "variants/{id}", op: OpGetVariant, handle: (*Server).handleGetVariant},
	{method: "GET", path: "observability/spans/{id}", op: OpGetSpan, handle: (*Server).handleGetSpan, slashOnly: true},
	{method: "GET", path: "human-evaluations", op: OpListHumanEvaluations, handle: (*Server).handleListHumanEvaluations},
	// Reads the SDK makes beside the operations: GetVariantByEnvironment's
	// fallback (environments.go) and Preflight's (lists2024.go).
	{method: "GET", path: "apps/{id}/environments", op: OpListEnvironments, handle: (*Server).handleListEnvironments},
	{method: "GET", path: "testsets/{id}", op: OpGetTestset, handle: (*Server).handleGetTestset},
	{method: "GET", path: "apps/{id}/variants", op: OpListAppVariants, handle: (*Server).handleListAppVariants},
	{method: "GET", path: "evaluators/configs", op: OpListEvaluatorConfigs, handle: (*Server).handleListEvaluatorConfigs},
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
	if slices.Contains(segs, "") {
		return route{kind: routeNotFound}
	}
	if s.v26 != nil {
		if rt, ok := matchRoute(s, routes2026, r.Method, segs, slash); ok {
			rt.gen26 = true
			return rt
		}
		if !s.v26.with2024 {
			return route{kind: routeNotFound}
		}
	}
	rt, _ := matchRoute(s, routes2024, r.Method, segs, slash)
	return rt
}

// matchRoute finds the first route of table whose path matches segs; ok is
// false when none does.
func matchRoute(s *Server, table []endpoint, method string, segs []string, slash bool) (route, bool) {
	var refused *route // the first route whose path matched but not its method
	for _, e := range table {
		id, ok := matchPath(e.path, segs)
		if !ok {
			continue
		}
		if method != e.method {
			if refused == nil {
				refused = &route{kind: routeMethodNotAllowed, allow: e.method}
			}
			if e.yields {
				continue
			}
			return *refused, true
		}
		if e.slashOnly && !slash {
			return route{kind: routeRedirect}, true
		}
		return route{kind: routeOperation, op: e.op, id: id, public: e.public,
			handle: func(c *call) answer { return e.handle(s, c) }}, true
	}
	if refused != nil {
		return *refused, true
	}
	return route{kind: routeNotFound}, false
}

// matchPath matches segs against a route's path, returning the segments
// its "{id}" wildcards matched, joined by "/".
func matchPath(pattern string, segs []string) (string, bool) {
	want := strings.Split(pattern, "/")
	if len(want) != len(segs) {
		return "", false
	}
	var ids []string
	for i, w := range want {
		switch {
		case w == "{id}":
			ids = append(ids, segs[i])
		case w != segs[i]:
			return "", false
		}
	}
	return strings.Join(ids, "/"), true
}
