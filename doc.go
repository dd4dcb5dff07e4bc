// Package agenta is a Go client for the evaluation and variant service of the
// Agenta LLM-ops platform: read and fork application variants, run automatic
// evaluations against test sets and read their per-row scenarios, list human
// evaluations, and read trace spans.
//
// # Getting started
//
// Create one Client and share it; it is safe for concurrent use:
//
//	client, err := agenta.NewClientFromEnv() // AGENTA_HOST, AGENTA_API_KEY
//	if err != nil {
//		log.Fatal(err)
//	}
//	variant, err := client.GetVariantByEnvironment(ctx, appID, models.EnvironmentProduction)
//
// NewClientFromEnv reads the server's URL from AGENTA_HOST, adding /api when
// it has no path, and the optional key from AGENTA_API_KEY. NewClient takes
// the base URL directly, such as "https://cloud.agenta.ai/api": it carries
// the service's path prefix, usually /api, and every operation path resolves
// under it. Neither does network I/O.
//
// # Authentication
//
// WithAPIKey sends the key verbatim as the Authorization header, which is what
// Agenta expects (no "Bearer" prefix for API keys). Deployments that want
// "ApiKey <key>" or "Bearer <jwt>" take that full value instead. A browser
// session can be passed as a cookie with WithHeader("Cookie", ...).
// Credentials are never written to errors or logs, are dropped when a
// redirect leaves the original host, and provider keys in
// models.NewEvaluation print as [REDACTED].
//
// # Errors
//
// Every non-2xx answer is an *APIError with the status, method, path, the
// server's message and up to 1 MiB of the raw body. A 422 is a
// *ValidationError that also lists the refused fields; errors.As to *APIError
// works on it too. Sentinels classify errors for errors.Is:
//
//	_, err := client.GetVariant(ctx, id)
//	switch {
//	case errors.Is(err, agenta.ErrNotFound):
//		// no such variant
//	case errors.Is(err, agenta.ErrInvalidArgument):
//		// refused before anything was sent
//	}
//	var apiErr *agenta.APIError
//	if errors.As(err, &apiErr) {
//		log.Printf("status %d: %s", apiErr.StatusCode, apiErr.Message)
//	}
//
// ErrNotFound also matches the service's not-found answers that come as 500
// on the operation that sends them, such as GetVariant's "'NoneType' object
// has no attribute 'base_id'" (the README lists them); ErrServer matches
// those too. ErrRouteNotFound matches FastAPI's 404 for a path the server has
// no route for: usually a base URL without /api.
//
// A 2xx answer that is not the expected JSON is a *DecodeError. Transport
// failures wrap their cause, so errors.Is(err, context.DeadlineExceeded)
// works.
//
// # Retries and timeouts
//
// Reads (GET) are retried on transport errors, 429, 502, 503 and 504. The two
// creates, CreateEvaluation and AddVariantFromBase, are not idempotent: they
// are retried only on 429 and on connection failures that happened before any
// byte was sent, so the SDK never starts an evaluation twice. 500 is never
// retried: this service uses it for deterministic failures.
//
// Waits grow exponentially with jitter from 250 ms up to 5 s, and honour
// Retry-After up to that maximum. There are at most 3 retries. Each attempt
// waits at most 60 s for the answer's headers, and then at most 60 s for
// each next bytes of its body, so a long answer that keeps arriving is never
// cut off. WithMaxRetries, WithRetryWait, WithTimeout and WithIdleTimeout
// change these; the context bounds the whole call, and a wait that would
// outlast its deadline is skipped in favour of returning the last answer.
// WaitEvaluation rides out server trouble (503s, a restart) until its
// context's deadline.
//
// # Evaluations
//
// An automatic evaluation runs in the service's background worker:
// CreateEvaluation answers at once with one Evaluation per variant, each in
// EVALUATION_INITIALIZED, and the scenarios stay empty until the run is
// over. Wait for it, then read the rows:
//
//	created, err := client.CreateEvaluation(ctx, newEvaluation)
//	// ...
//	ev, err := client.WaitEvaluation(ctx, created[0].ID, nil) // polls the status every 2 s
//	if errors.Is(err, agenta.ErrEvaluationFailed) {
//		// FAILED or AGGREGATION_FAILED: ev is set, and it has no scenarios
//	}
//	scenarios, err := client.FetchEvaluationScenarios(ctx, ev.ID)
//
// A run goes INITIALIZED, STARTED, then FINISHED, FINISHED_WITH_ERRORS (some
// rows failed, which is no error), FAILED or AGGREGATION_FAILED; the
// models.Evaluation… constants name them, and models.EvaluationStatus's
// Terminal, Failed and Running read them. A run that stays INITIALIZED
// usually means no worker runs on the server: bound the wait with ctx, and
// the error names the status and how long it held. FetchEvaluation reads the
// evaluation with its aggregated results; FetchEvaluationStatus reads the
// status alone.
//
// # Today's Agenta (the 2026 API)
//
// Servers from Agenta v0.96 on no longer serve the routes above; they
// speak a newer API of runs, scenarios, results, metrics and traces
// (v0.103.4 on). Generation says which one a server speaks, set with
// WithGeneration or detected once per Client. The 2026 operations have
// their own methods: RetrieveApplicationRevision, ForkApplicationVariant,
// CommitApplicationRevision, RetrieveTestsetRevision,
// RetrieveEvaluatorRevision, CreateSimpleEvaluation, WaitRun, the paged
// QueryScenarios, QueryResults and QueryMetrics, FetchTraces, and
// StreamRunRows, which joins a run's cells, test cases and traces into
// rows of the 2024 shape. Its "nothing" is 200 {"count":0}: a lookup
// returns a *NotFoundError (ErrNotFound), a create a *NotCreatedError
// (ErrNotCreated). docs/2026.md maps each 2024 concept to its 2026
// counterpart.
//
// One job runs on either: once a Client knows its server speaks the 2026
// API (WithGeneration, AGENTA_API_GENERATION, or DetectGeneration, which
// evals.Evaluate calls), CreateEvaluation, WaitEvaluation, FetchEvaluation,
// FetchEvaluationStatus, FetchEvaluationScenarios,
// StreamEvaluationScenarios, GetVariant, GetVariantByEnvironment and
// AddVariantFromBase map onto it, in the 2024 shapes: a run per variant,
// its id as the evaluation's, its rows as scenarios that name their test
// case. Until it knows, a Client sends the 2024 requests as it always did.
//
// # Testing code that uses the SDK
//
// Package agentatest provides an in-memory fake of the service on a real
// loopback listener. The SDK also works with HTTP mocking libraries through
// WithHTTPClient.
//
// # Layout
//
// For maintainers, each file of this package and the one thing it holds,
// from the bottom floor up (a file uses only the files listed before it,
// but for client.go, which wires engine.go's retry hook and generation.go's
// state; layers_test.go keeps it so):
//
//	errors.go          every error type and sentinel; the checks of operation
//	                   arguments; answerError, the one place a non-2xx answer
//	                   becomes an error; the 500s that mean not found
//	redact.go          the Client's secrets (every credential it sent), which
//	                   internal/text applies
//	scenario_stream.go the fast reader of JSON arrays and scenarios (bytes only)
//	options.go         Option and every With… function, ResponseLimits,
//	                   Generation, and where the base URL came from
//	transport.go       the pooled transport, the redirect policy, which
//	                   credentials to drop, the gzip reader
//	retry.go           the retry policy and the backoff, as pure functions
//	client.go          the Client, NewClient, NewClientFromEnv, accessors
//	engine.go          one call: request → attempts → status → the decoded
//	                   answer (one object, or a list element by element, and
//	                   its end) or the typed error, with logging
//	generation.go      which API the server speaks, detected once
//	envelope.go        the 2026 envelope {"count":N,…}: lookups, creates,
//	                   paging by id cursor
//	observability.go, human_evaluations.go, applications.go, evaluators.go,
//	testsets.go, traces.go, runs.go, run_rows.go, wait.go
//	                   the operations, one file per API area; run_rows.go
//	                   joins a 2026 run's rows; wait.go has the waiter and
//	                   WaitRun
//	api.go             the seam: the operations whose requests differ by
//	                   generation, as one internal interface
//	gen2024.go, gen2026.go
//	                   its two implementations: the mid-2024 routes, and the
//	                   2024 operations done with today's API
//	evaluations.go, variants.go
//	                   the 2024 operations, which check their arguments and
//	                   call the seam
//	preflight.go, preflight2024.go, preflight2026.go
//	                   the checks before an evaluation is created: the call
//	                   and its judging, and each generation's reads
//	environments.go    GetVariantByEnvironment's fallback on a 0.19 server,
//	                   whose lookup route is broken: the app's environments
//	stop.go            StopEvaluation, which makes the Client an evals.Stopper
//	create_lost2026.go a 2026 create whose answer was lost: found by its
//	                   tag, never sent again
//	repeats.go         NewEvaluation.Repeats on a mid-2024 server, which has
//	                   none: K creates, each sent once
//
// docs/design.md has the floors, how they are measured, and the numbers.
//
// Outside the root package: internal/text is the module's one treatment of
// text (scrub, then cut; clip by runes; escape controls; neutralise CSV
// cells), used by the SDK, the command, the fake and evals; internal/sealed
// keeps models.ProviderKeys' values out of reach of reflection.
//
// One call, GetVariant: variants.go checks the id (segment, errors.go) and
// gives getOne (engine.go) a request; start builds the URL, headers and body
// and sends them through the call's retryablehttp.Client, whose CheckRetry
// hook (checkRetry, engine.go) asks shouldRetry and backoff (retry.go) after
// each attempt and whose Backoff hook hands go-retryablehttp the wait to
// sleep; decodeObject (engine.go) reads the 2xx answer.
//
// One error, a 422, in three files: variants.go → engine.go (start;
// checkRetry, where shouldRetry refuses to retry it; readError reads at
// most 1 MiB) → errors.go (answerError scrubs, then cuts the body and
// parses it into a *ValidationError); start returns it unchanged through
// getOne to the caller's errors.As.
package agenta
