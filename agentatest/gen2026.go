package agentatest

import (
	"net/http"
	"strings"
	"time"
)

// Generation picks which API a Server speaks: the mid-2024 routes (the
// default), today's 2026 routes, or both at once.
type Generation int

// The generations a Server can speak.
const (
	// Generation2024 serves the seven operations and two evaluation reads
	// of the mid-2024 service (the default).
	Generation2024 Generation = iota
	// Generation2026 serves today's API as Agenta v0.113 does (runs,
	// scenarios, results, metrics, traces, application and test-set
	// revisions); the 2024 routes answer 404 {"detail":"Not Found"}, as
	// they do on a v0.113 server.
	Generation2026
	// GenerationBoth serves both sets of routes on one Server, each as its
	// own generation does. A client that detects the generation
	// (agenta.Client.Generation) finds 2026.
	GenerationBoth
)

// WithGeneration makes the Server speak gen. Under Generation2026 and
// GenerationBoth the 2026 routes behave as v0.113's do, credentials
// included: every 2026 route but /health wants an Authorization header
// ("ApiKey <key>" or the bare key; the key given WithAPIKey, or any value
// without it) and answers 401 {"detail":{"message":"Unauthorized"}}
// otherwise, before routing, so that an unknown path without one is a 401
// too. Seed the 2026 objects with AddApplication2026, AddTestset2026,
// AddEvaluator2026 and SeedDemo2026, or over HTTP through the service's
// own simple create routes (POST /simple/applications/, /simple/testsets/,
// /simple/evaluators/).
func WithGeneration(gen Generation) Option {
	return func(s *Server) {
		if gen == Generation2026 || gen == GenerationBoth {
			s.v26 = newState2026(gen == GenerationBoth)
		} else {
			s.v26 = nil
		}
	}
}

// The 2026 operations, for fault injection and the request log. Their
// values are the service's operationIds.
const (
	OpHealth2026                  Operation = "health_check"
	OpRetrieveApplicationRevision Operation = "retrieve_application_revision"
	OpFetchApplicationRevision    Operation = "fetch_application_revision"
	OpFetchApplicationVariant     Operation = "fetch_application_variant"
	OpForkApplicationVariant      Operation = "fork_application_variant"
	OpCommitApplicationRevision   Operation = "commit_application_revision"
	OpDeployApplicationRevision   Operation = "deploy_application_revision"
	OpQueryEnvironments           Operation = "query_environments"
	OpRetrieveTestsetRevision     Operation = "retrieve_testset_revision"
	OpRetrieveEvaluatorRevision   Operation = "retrieve_evaluator_revision"
	OpFetchTestcase               Operation = "fetch_testcase"
	OpQueryTestcases              Operation = "query_testcases"
	OpCreateSimpleEvaluation      Operation = "create_simple_evaluation"
	OpFetchSimpleEvaluation       Operation = "fetch_simple_evaluation"
	OpStopSimpleEvaluation        Operation = "stop_simple_evaluation"
	OpFetchRun                    Operation = "fetch_run"
	OpQueryRuns                   Operation = "query_runs"
	OpQueryScenarios              Operation = "query_scenarios"
	OpQueryResults                Operation = "query_results"
	OpQueryMetrics                Operation = "query_metrics"
	OpRefreshMetrics              Operation = "refresh_metrics"
	OpFetchTrace                  Operation = "fetch_trace"
	OpFetchTraces                 Operation = "fetch_traces"
	OpFetchSpan                   Operation = "fetch_span"
	OpCreateSimpleApplication     Operation = "create_simple_application"
	OpCreateSimpleTestset         Operation = "create_simple_testset"
	OpCreateSimpleEvaluator       Operation = "create_simple_evaluator"
)

// Operations2026 lists the 2026 operations the Server serves under
// Generation2026 or GenerationBoth.
func Operations2026() []Operation {
	return []Operation{
		OpHealth2026, OpRetrieveApplicationRevision, OpFetchApplicationRevision, OpFetchApplicationVariant,
		OpForkApplicationVariant, OpCommitApplicationRevision, OpDeployApplicationRevision, OpQueryEnvironments,
		OpRetrieveTestsetRevision, OpRetrieveEvaluatorRevision, OpFetchTestcase, OpQueryTestcases,
		OpCreateSimpleEvaluation, OpFetchSimpleEvaluation, OpStopSimpleEvaluation, OpFetchRun, OpQueryRuns,
		OpQueryScenarios, OpQueryResults, OpQueryMetrics, OpRefreshMetrics,
		OpFetchTrace, OpFetchTraces, OpFetchSpan,
		OpCreateSimpleApplication, OpCreateSimpleTestset, OpCreateSimpleEvaluator,
	}
}

// state2026 is everything the 2026 generation holds. It is guarded by the
// Server's mu, like the 2024 state.
type state2026 struct {
	with2024 bool // GenerationBoth

	apps        map[string]*app26
	variants    map[string]*variant26
	revisions   map[string]*revision26
	envs        []*env26
	testsets    map[string]*testset26
	tsRevisions map[string]*tsRevision26
	testcases   map[string]*testcase26
	evaluators  map[string]*evaluator26
	evRevisions map[string]*evRevision26
	runs        map[string]*run26
	runOrder    []*run26
	traces      map[string]*trace26 // by 32-hex id
	backlog     []*trace26          // written while tracing is down

	workerDown  bool
	tracingDown bool
	queue       []*run26 // runs waiting for a worker
}

func newState2026(with2024 bool) *state2026 {
	return &state2026{
		with2024:    with2024,
		apps:        map[string]*app26{},
		variants:    map[string]*variant26{},
		revisions:   map[string]*revision26{},
		testsets:    map[string]*testset26{},
		tsRevisions: map[string]*tsRevision26{},
		testcases:   map[string]*testcase26{},
		evaluators:  map[string]*evaluator26{},
		evRevisions: map[string]*evRevision26{},
		runs:        map[string]*run26{},
		traces:      map[string]*trace26{},
	}
}

// authorize2026 applies v0.113's credential check to the 2026 routes, and
// to unknown paths when the Server serves the 2026 generation alone: an
// Authorization header is required ("ApiKey <key>" or the bare key; with
// WithAPIKey, that key), checked before routing. ok is true when the
// request may proceed or is not the 2026 generation's to judge.
func (s *Server) authorize2026(r *http.Request, rt route) (answer, bool) {
	if s.v26 == nil || rt.public || !(rt.gen26 || rt.kind == routeNotFound && !s.v26.with2024) {
		return answer{}, true
	}
	got := strings.TrimSpace(r.Header.Get("Authorization"))
	key := strings.TrimSpace(strings.TrimPrefix(got, "ApiKey "))
	good := got != "" && !strings.HasPrefix(got, "Bearer ") && key != ""
	if s.apiKey != "" {
		good = key == s.apiKey
	}
	if !good {
		return jsonAnswer(http.StatusUnauthorized, object{{"detail", object{{"message", "Unauthorized"}}}}), false
	}
	return answer{}, true
}

func (s *Server) handleHealth2026(*call) answer {
	return jsonAnswer(http.StatusOK, object{{"status", "ok"}})
}

// StopWorker stops the Server's 2026 worker, as when the service's
// worker-queues process is down: a run created then stays running with
// no scenario, for ever, until StartWorker. Runs already executing go on.
func (s *Server) StopWorker() {
	s.with26(func(v26 *state2026) { v26.workerDown = true })
}

// StartWorker starts the 2026 worker again: the runs queued meanwhile run,
// as a restarted worker consumes the service's durable queue.
func (s *Server) StartWorker() {
	s.with26(func(v26 *state2026) {
		if v26.workerDown {
			v26.workerDown = false
			for _, run := range v26.queue {
				s.start2026(run)
			}
			v26.queue = nil
		}
	})
}

// StopTracing makes the 2026 traces go missing, as when the service's
// worker-streams process is down: runs still finish success with every
// cell success, but GET /traces answers {"count":0} for their traces and
// no metrics rows are written. StartTracing makes the traces written
// meanwhile appear.
func (s *Server) StopTracing() {
	s.with26(func(v26 *state2026) { v26.tracingDown = true })
}

// StartTracing ingests the traces written while tracing was down. Their
// metrics stay missing until POST /evaluations/metrics/refresh, as on the
// service.
func (s *Server) StartTracing() {
	s.with26(func(v26 *state2026) {
		v26.tracingDown = false
		for _, t := range v26.backlog {
			v26.traces[t.id] = t
		}
		v26.backlog = nil
	})
}

// with26 runs f on the 2026 state, under s.mu, when the Server serves the
// 2026 generation.
func (s *Server) with26(f func(*state2026)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.v26 != nil {
		f(s.v26)
	}
}

// now26 is the time of a 2026 write.
func (s *Server) now26() time.Time { return s.clock() }
