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
// Retry-After up to that maximum. There are at most 3 retries, and each
// attempt has a 60 s timeout. WithMaxRetries, WithRetryWait and WithTimeout
// change these; the context bounds the whole call, and a wait that would
// outlast its deadline is skipped in favour of returning the last answer.
//
// # Testing code that uses the SDK
//
// Package agentatest provides an in-memory fake of the service on a real
// loopback listener. The SDK also works with HTTP mocking libraries through
// WithHTTPClient.
package agenta
