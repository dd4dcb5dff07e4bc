package agentatest

// routes2026 are v0.113's routes the fake serves, in the order the fake
// tries them: the first whose path matches decides, 405 for another method.
var routes2026 = []endpoint{
	{method: "GET", path: "health", op: OpHealth2026, handle: (*Server).handleHealth2026, public: true},
	{method: "POST", path: "applications/revisions/retrieve", op: OpRetrieveApplicationRevision, handle: (*Server).handleRetrieveApplicationRevision},
	{method: "POST", path: "applications/revisions/commit", op: OpCommitApplicationRevision, handle: (*Server).handleCommitApplicationRevision},
	{method: "POST", path: "applications/revisions/deploy", op: OpDeployApplicationRevision, handle: (*Server).handleDeployApplicationRevision},
	{method: "POST", path: "applications/variants/fork", op: OpForkApplicationVariant, handle: (*Server).handleForkApplicationVariant},
	{method: "GET", path: "applications/revisions/{id}", op: OpFetchApplicationRevision, handle: (*Server).handleFetchApplicationRevision},
	{method: "GET", path: "applications/variants/{id}", op: OpFetchApplicationVariant, handle: (*Server).handleFetchApplicationVariant},
	{method: "POST", path: "environments/query", op: OpQueryEnvironments, handle: (*Server).handleQueryEnvironments},
	{method: "POST", path: "testsets/revisions/retrieve", op: OpRetrieveTestsetRevision, handle: (*Server).handleRetrieveTestsetRevision},
	{method: "POST", path: "evaluators/revisions/retrieve", op: OpRetrieveEvaluatorRevision, handle: (*Server).handleRetrieveEvaluatorRevision},
	{method: "POST", path: "testcases/query", op: OpQueryTestcases, handle: (*Server).handleQueryTestcases},
	{method: "GET", path: "testcases/{id}", op: OpFetchTestcase, handle: (*Server).handleFetchTestcase},
	{method: "POST", path: "simple/evaluations", op: OpCreateSimpleEvaluation, handle: (*Server).handleCreateSimpleEvaluation},
	{method: "GET", path: "simple/evaluations/{id}", op: OpFetchSimpleEvaluation, handle: (*Server).handleFetchSimpleEvaluation},
	{method: "POST", path: "simple/evaluations/{id}/stop", op: OpStopSimpleEvaluation, handle: (*Server).handleStopSimpleEvaluation},
	{method: "POST", path: "simple/applications", op: OpCreateSimpleApplication, handle: (*Server).handleCreateSimpleApplication},
	{method: "POST", path: "simple/testsets", op: OpCreateSimpleTestset, handle: (*Server).handleCreateSimpleTestset},
	{method: "POST", path: "simple/evaluators", op: OpCreateSimpleEvaluator, handle: (*Server).handleCreateSimpleEvaluator},
	{method: "POST", path: "evaluations/runs/query", op: OpQueryRuns, handle: (*Server).handleQueryRuns, yields: true},
	{method: "GET", path: "evaluations/runs/{id}", op: OpFetchRun, handle: (*Server).handleFetchRun},
	{method: "POST", path: "evaluations/scenarios/query", op: OpQueryScenarios, handle: (*Server).handleQueryScenarios},
	{method: "POST", path: "evaluations/results/query", op: OpQueryResults, handle: (*Server).handleQueryResults},
	{method: "POST", path: "evaluations/metrics/query", op: OpQueryMetrics, handle: (*Server).handleQueryMetrics},
	{method: "POST", path: "evaluations/metrics/refresh", op: OpRefreshMetrics, handle: (*Server).handleRefreshMetrics},
	{method: "GET", path: "traces", op: OpFetchTraces, handle: (*Server).handleFetchTraces},
	{method: "GET", path: "traces/{id}", op: OpFetchTrace, handle: (*Server).handleFetchTrace},
	{method: "GET", path: "spans/{id}/{id}", op: OpFetchSpan, handle: (*Server).handleFetchSpan},
}
