// Package agentatest is an in-memory fake of the Agenta evaluation and
// variant service, for trying the SDK without a server and for testing code
// that uses it.
//
// A Server speaks real HTTP on 127.0.0.1 and answers the seven operations as
// the service does: the same JSON shapes with explicit nulls, naive
// timestamps on stored objects and zoned ones on created objects, FastAPI's
// 422 bodies with exact locations, {"detail": "..."} for other errors, the
// same status codes for unknown ids, and the span operation's 307 to its
// slashed path.
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
// Evaluations really run. CreateEvaluation answers one EVALUATION_STARTED
// evaluation per variant; the Server then fills in one scenario per test-set
// row, computing each variant's answer with its base's Application (by
// default, the variant's prompt template filled in with the row) and scoring
// it with the evaluators the service computes locally: exact match,
// contains, starts and ends with, regex, Levenshtein distance and more (see
// SupportedEvaluators). By default the scenarios are filled in before
// CreateEvaluation answers; WithEvaluationPace fills them in the background
// so that polling shows progress, and WithManualEvaluations leaves it to the
// test (AdvanceEvaluations).
//
// For testing a client's resilience, InjectFault makes the next calls to an
// operation fail with a status (say, 503 with Retry-After), stall, or drop
// the connection, and Requests records what each request carried.
package agentatest
