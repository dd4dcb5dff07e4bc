package agentatest

import (
	"net/http"
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
	if s.v26 != nil {
		if rt, ok := s.route2026(r, segs); ok {
			return rt
		}
		if !s.v26.with2024 {
			return route{kind: routeNotFound}
		}
	}
	get := func(op Operation, h handler, id string) route {
		if r.Method != http.MethodGet {
			return route{kind: routeMethodNotAllowed, allow: "GET"}
		}
		return route{kind: routeOperation, op: op, handle: h, id: id}
	}
	post := func(op Operation, h handler) route {
		if r.Method != http.MethodPost {
			return route{kind: routeMethodNotAllowed, allow: "POST"}
		}
		return route{kind: routeOperation, op: op, handle: h}
	}
	if rt, ok := s.routeLists2024(r, segs); ok {
		return rt
	}
	switch {
	case len(segs) == 1 && segs[0] == "evaluations":
		return post(OpCreateEvaluation, s.handleCreateEvaluation)
	case len(segs) == 2 && segs[0] == "evaluations":
		return get(OpFetchEvaluation, s.handleFetchEvaluation, segs[1])
	case len(segs) == 3 && segs[0] == "evaluations" && segs[2] == "status":
		return get(OpFetchEvaluationStatus, s.handleFetchEvaluationStatus, segs[1])
	case len(segs) == 3 && segs[0] == "evaluations" && segs[2] == "results":
		return get(OpFetchEvaluationResults, s.handleFetchEvaluationResults, segs[1])
	case len(segs) == 3 && segs[0] == "evaluations" && segs[2] == "evaluation_scenarios":
		return get(OpFetchEvaluationScenarios, s.handleFetchScenarios, segs[1])
	case len(segs) == 2 && segs[0] == "apps" && segs[1] == "get_variant_by_env":
		return get(OpGetVariantByEnvironment, s.handleGetVariantByEnv, "")
	case len(segs) == 3 && segs[0] == "apps" && segs[2] == "environments":
		return get(OpListEnvironments, s.handleListEnvironments, segs[1])
	case len(segs) == 2 && segs[0] == "variants" && segs[1] == "from-base" && r.Method != http.MethodGet:
		return post(OpAddVariantFromBase, s.handleAddVariantFromBase)
	case len(segs) == 2 && segs[0] == "variants":
		return get(OpGetVariant, s.handleGetVariant, segs[1])
	case len(segs) == 3 && segs[0] == "observability" && segs[1] == "spans":
		if !slash {
			if r.Method != http.MethodGet {
				return route{kind: routeMethodNotAllowed, allow: "GET"}
			}
			return route{kind: routeRedirect}
		}
		return get(OpGetSpan, s.handleGetSpan, segs[2])
	case len(segs) == 1 && segs[0] == "human-evaluations":
		return get(OpListHumanEvaluations, s.handleListHumanEvaluations, "")
	}
	return route{kind: routeNotFound}
}
