// Package agentatest is an in-memory fake of the Agenta evaluation and
// variant service, for trying the SDK without a server and for testing code
// that uses it.
//
// A Server speaks real HTTP on 127.0.0.1 and answers the seven operations
// and the two evaluation reads as the mid-2024 service does: the same JSON
// shapes with explicit nulls, UUIDv7 ids, the service's three timestamp
// forms, FastAPI's 422 bodies in Pydantic 2's dialect, {"detail": "..."}
// for other errors with the service's statuses and texts (an unknown
// variant is a 500, a malformed id "badly formed hexadecimal UUID string"),
// and the span operation's 307 to its slashed path. Fields a self-hosted
// server lacks are absent: an app seeded without an organization has
// variants without previous_variant_name, organization_id and workspace_id.
// Lists (scenarios, human evaluations) come back in the order they were
// written; the service defines no order, so code under test must not rely
// on one.
//
//	srv := agentatest.NewServer()
//	defer srv.Close()
//	demo := agentatest.SeedDemo(srv)
//	client, _ := agenta.NewClient(srv.URL())
//	variant, err := client.GetVariantByEnvironment(ctx, demo.AppID, "production")
//
// Seed state with AddApp, AddBase, AddVariant, DeployToEnvironment,
// AddTestset, AddEvaluatorConfig, AddHumanEvaluation and AddTrace, or load
// the demo data with SeedDemo.
//
// # The life of an evaluation
//
// Evaluations really run, in the background, as on the service.
// CreateEvaluation answers at once with one EVALUATION_INITIALIZED
// evaluation per variant, in the order of variant_ids, and a scenario fetch
// right after it answers []. The fake's worker then picks the run up, sets
// EVALUATION_STARTED and calls the variant's Application on every test-set
// row (by default the variant's prompt template filled in with the row;
// NoisyApplication makes an app that is right only with some probability
// per call, seeded, for testing repeats and flaky cases).
// Only then does it write the scenarios, one row at a time in row order,
// so that the list grows while the run is still STARTED, as on the
// service: code that polls the scenarios must not take a non-empty list
// for a finished run. Each scenario is scored with the evaluators the
// service computes locally (see SupportedEvaluators). After the last write
// the worker aggregates and sets the final status: EVALUATION_FINISHED,
// EVALUATION_FINISHED_WITH_ERRORS when any result is an error, or
// EVALUATION_FAILED with {"message": "Evaluation Failed"} and the
// traceback when the run breaks, for example on a test set whose columns
// do not match the app's inputs (no scenario is written then). Read the
// status with GET /evaluations/{id}/status (Client.WaitEvaluation polls
// it), the aggregates with GET /evaluations/{id}, or with
// Server.Evaluation, and the aggregates alone with GET
// /evaluations/{id}/results, as the service serves them.
//
// By default the worker picks a run up 100 ms after create and spends 5 ms
// on each step (a row's app call, or a scenario's write), so the demo's
// runs end about 180 ms after create. Like the service's, it calls the app
// in batches of rate_limit.batch_size rows and pauses
// delay_between_batches seconds between batches. WithEvaluationPace
// changes that pace. A test makes runs finish deterministically in one of
// two ways:
//
//   - after create, call Server.WaitEvaluations (or Client.WaitEvaluation),
//     which returns once every run has its final status;
//   - with WithManualEvaluations no worker runs: evaluations stay
//     INITIALIZED until the test calls AdvanceEvaluations(n), which makes n
//     steps of the worker: a run of r rows takes r app calls, then r
//     scenario writes, the last one finishing it.
//
// The fake never ends a run EVALUATION_AGGREGATION_FAILED, nor leaves one
// STARTED after a failed aggregation, as the service can. To test how code
// meets those, answer the status read with a fault:
//
//	srv.InjectFault(agentatest.OpFetchEvaluationStatus, agentatest.Always, agentatest.Fault{
//		Status: 200, Body: `{"status":{"type":"status","value":"EVALUATION_AGGREGATION_FAILED","error":null}}`})
//
// WithOlderServer answers as the servers before July 2024 did (naive
// timestamps, Pydantic 1 errors, scenarios with correct_answer), so that a
// client can be tested on what they send.
//
// For testing a client's resilience, InjectFault makes the next calls to an
// operation fail with a status (say, 503 with Retry-After), stall, or drop
// the connection, or shape the answer's body (it trickles, stalls half-way
// or is cut short); InjectFaultFor does the same for a stretch of time, and
// Restart refuses connections for a while, as a restarting service does.
// Requests records what each request carried. A client
// that stops reading an answer holds up no other request, no seeding and
// not Close.
//
// # Today's Agenta
//
// WithGeneration(Generation2026) serves the 2026 API as Agenta v0.113
// does instead (GenerationBoth serves both); seed it with SeedDemo2026.
// A differential test checks it against a real v0.113 server
// (docs/2026.md).
package agentatest
