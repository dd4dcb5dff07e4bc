package agenta

import (
	"context"
	"iter"

	"github.com/agenta-go/agenta/models"
)

// FetchEvaluationScenarios returns every scenario (test-set row) of an
// evaluation, with the variant's outputs and each evaluator's results.
//
// The service writes all of a run's scenarios in one burst at its end, so
// the list is empty until then, and stays empty for a run that failed: wait
// for the run with WaitEvaluation rather than polling this, which reads
// about 1 kB per row. For very large evaluations,
// StreamEvaluationScenarios avoids holding every row. On a 2026 server (see
// DetectGeneration) they are the run's rows (StreamRunScenarios), which a
// running run lists as far as it has got.
func (c *Client) FetchEvaluationScenarios(ctx context.Context, evaluationID string) ([]models.EvaluationScenario, error) {
	if _, err := segment("evaluationID", "evaluation_id", evaluationID); err != nil {
		return nil, err
	}
	return c.api().fetchEvaluationScenarios(ctx, evaluationID)
}

// StreamEvaluationScenarios yields an evaluation's scenarios one at a time as
// they are decoded from the answer, so memory stays flat however many rows
// the evaluation has: 100,000 rows (about 100 MB of JSON) stream through a
// heap of under 5 MB, where FetchEvaluationScenarios must hold them all. Use
// it over FetchEvaluationScenarios for evaluations of many thousands of rows,
// to handle rows as they arrive, or to stop reading early: breaking out of
// the loop closes the response at once. Each row is the caller's to keep.
//
// A refused argument or a non-2xx answer arrives as the first and only
// (zero, err) pair; a malformed element ends the sequence with its error,
// after the rows before it. Each range over the sequence sends the request
// anew. No wall clock cuts a long stream off: the per-attempt timeout
// (WithTimeout, 60 s by default) bounds the wait for the answer's headers,
// and the idle timeout (WithIdleTimeout, the same by default) each wait for
// the next bytes, never the time spent in the loop body; bound the whole
// call with ctx. On a 2026 server (see DetectGeneration) it is
// StreamRunScenarios.
func (c *Client) StreamEvaluationScenarios(ctx context.Context, evaluationID string) iter.Seq2[models.EvaluationScenario, error] {
	if _, err := segment("evaluationID", "evaluation_id", evaluationID); err != nil {
		return func(yield func(models.EvaluationScenario, error) bool) {
			yield(models.EvaluationScenario{}, err)
		}
	}
	return c.api().streamEvaluationScenarios(ctx, evaluationID)
}

// FetchEvaluation returns one evaluation with its status, its aggregated
// results (one per evaluator config) and its costs and latency. An unknown
// id is a 404 (ErrNotFound). On a 2026 server (see DetectGeneration) it is
// the run in this shape, its aggregates computed from its rows once it is
// over (docs/2026.md says how).
func (c *Client) FetchEvaluation(ctx context.Context, evaluationID string) (*models.Evaluation, error) {
	if _, err := segment("evaluationID", "evaluation_id", evaluationID); err != nil {
		return nil, err
	}
	return c.api().fetchEvaluation(ctx, evaluationID)
}

// FetchEvaluationStatus returns an evaluation's status, a Result such as
// {"type":"status","value":"EVALUATION_STARTED"}; its EvaluationStatus
// method says whether the run is over. The read is about 100 bytes, so it is
// the one to poll; WaitEvaluation does that. The service answers any failure
// here, an unknown id included, with a 500. On a 2026 server (see
// DetectGeneration) it is the run's status, mapped: running is
// EVALUATION_STARTED, success EVALUATION_FINISHED, errors
// EVALUATION_FINISHED_WITH_ERRORS, failure and cancelled EVALUATION_FAILED.
func (c *Client) FetchEvaluationStatus(ctx context.Context, evaluationID string) (*models.Result, error) {
	if _, err := segment("evaluationID", "evaluation_id", evaluationID); err != nil {
		return nil, err
	}
	return c.api().fetchEvaluationStatus(ctx, evaluationID)
}

// CreateEvaluation starts an automatic evaluation of each variant in ev
// against the test set. It returns at once with one Evaluation per variant,
// in the order of ev.VariantIDs, each in status EVALUATION_INITIALIZED: the
// service's background worker runs them later, and their scenarios stay
// empty until a run is over. Follow a run with WaitEvaluation (or
// FetchEvaluationStatus), then read its scenarios.
//
// Create is not atomic across variants: the service starts each variant's
// run in turn, so when it refuses a later variant (an unknown one is a 500),
// the runs of the variants before it have already started.
//
// ev.RateLimit.MaxRetries must be at least 1, since the service counts it as
// attempts per row; it is refused before anything is sent otherwise.
//
// Creating is not idempotent: the request is retried only when the server
// answers 429 or the connection failed before anything was sent, so an
// evaluation is never started twice by the SDK.
// After any other failure once the request was sent (a dropped connection,
// a timeout, a *DecodeError), the outcome is unknown: the evaluation may
// have started. Check before creating again.
//
// On a 2026 server (once the Client knows it: see DetectGeneration), it
// creates one run per variant, in order, each sent once: a variant id
// stands for its latest application revision (an application revision's
// id is taken as it is), the test set and each evaluator for their latest
// revisions; RateLimit becomes the run's concurrency, and provider keys
// are refused, since such a server reads them from the project's secrets.
// When a run after the first cannot be created, the runs created before
// it are returned with the error. Each Evaluation's ID is its run's id,
// which the other evaluation methods take. docs/2026.md has the mapping.
//
// With ev.Repeats K above 1, each test case runs K times. A 2026 server
// runs the repeats itself: each variant's run has data.repeats K and
// flags.is_split, so that the app is called once per repeat, and it still
// returns one Evaluation per variant, whose scenarios are the K repeats of
// each row. A mid-2024 server has no repeats: the create is sent K times,
// each request once, and the answer holds K evaluations per variant,
// repeat after repeat: element r*len(ev.VariantIDs)+i is repeat r of
// variant i. When repeat r cannot be created, the evaluations of the
// repeats before it are returned with an error that lists them: they are
// running on the server. evals.Evaluate reads each variant's K
// evaluations as one run of K repeats.
func (c *Client) CreateEvaluation(ctx context.Context, ev models.NewEvaluation) ([]models.Evaluation, error) {
	if err := checkNewEvaluation(ev); err != nil {
		return nil, err
	}
	return c.api().createEvaluation(ctx, ev)
}

func checkNewEvaluation(ev models.NewEvaluation) error {
	if err := checkEvaluationIDs("NewEvaluation", ev.AppID, ev.VariantIDs, ev.EvaluatorConfigIDs, ev.TestsetID); err != nil {
		return err
	}
	rl := ev.RateLimit
	if rl == (models.RateLimit{}) {
		return invalidField("NewEvaluation.RateLimit", "rate_limit", "is required; models.DefaultRateLimit() gives the web UI's values")
	}
	if rl.BatchSize < 1 {
		return invalidField("NewEvaluation.RateLimit.BatchSize", "rate_limit.batch_size", "must be at least 1, got %d", rl.BatchSize)
	}
	if rl.MaxRetries < 1 {
		return invalidField("NewEvaluation.RateLimit.MaxRetries", "rate_limit.max_retries",
			"must be at least 1, got %d: the service counts attempts, so with %d it never calls the app and every row fails with \"Max retries reached\"",
			rl.MaxRetries, rl.MaxRetries)
	}
	for _, f := range []struct {
		name, field string
		value       int
	}{
		{"RetryDelay", "retry_delay", rl.RetryDelay},
		{"DelayBetweenBatches", "delay_between_batches", rl.DelayBetweenBatches},
	} {
		if f.value < 0 {
			return invalidField("NewEvaluation.RateLimit."+f.name, "rate_limit."+f.field, "must not be negative, got %d", f.value)
		}
	}
	if ev.Repeats < 0 || ev.Repeats > models.MaxRepeats {
		return invalidField("NewEvaluation.Repeats", "repeats", "must be between 0 (once) and models.MaxRepeats (%d), got %d", models.MaxRepeats, ev.Repeats)
	}
	for _, name := range ev.LMProvidersKeys.Names() {
		if name == "" {
			return invalidField("NewEvaluation.LMProvidersKeys", "lm_providers_keys", "has an empty key name")
		}
	}
	return nil
}

// checkEvaluationIDs checks the ids an evaluation names, in the request
// what (such as "NewEvaluation"): an app, its variants, the evaluator
// configs and a test set.
func checkEvaluationIDs(what, appID string, variantIDs, evaluatorConfigIDs []string, testsetID string) error {
	if err := required(what+".AppID", "app_id", appID); err != nil {
		return err
	}
	if err := requiredList(what+".VariantIDs", "variant_ids", variantIDs); err != nil {
		return err
	}
	if err := requiredList(what+".EvaluatorConfigIDs", "evaluators_configs", evaluatorConfigIDs); err != nil {
		return err
	}
	return required(what+".TestsetID", "testset_id", testsetID)
}

// WaitEvaluation waits until an evaluation's run is over and returns the
// evaluation as FetchEvaluation reads it then, aggregated results included.
//
// It reads the status every opts.Interval (a read is about 100 bytes), never
// the scenario list, and stops at a terminal status: EVALUATION_FINISHED,
// EVALUATION_FINISHED_WITH_ERRORS, EVALUATION_FAILED or
// EVALUATION_AGGREGATION_FAILED. A status value it does not know does not
// end the wait. A run that FAILED or AGGREGATION_FAILED returns the
// evaluation and an *EvaluationFailedError, which matches
// ErrEvaluationFailed and carries the service's message and the cause, the
// last line of its stack trace (such as "KeyError: 'country'"); a run finished with
// errors is finished and returns no error.
//
// Bound the wait with ctx. A wait never sleeps through ctx's deadline
// without reading: when the next read would come after it, one last read is
// made shortly before it. When ctx ends first, the error is a *WaitError
// that wraps ctx.Err() and names the last status seen, how long it held,
// when it was last read and, if the reads were failing, the last failure.
// A run that stays EVALUATION_INITIALIZED usually means no worker is
// running on the server.
//
// Server trouble does not end the wait: each read is retried like every
// GET (WithMaxRetries), and a read that still fails transiently (no answer:
// a refused or reset connection, a timeout of one read; an answer cut short;
// 408, 429 or a 5xx) is reported to opts.OnRetry and retried, with
// exponential backoff and jitter (WithRetryWait, capped at its maximum),
// until ctx ends, so that a server restart or a minute of 503s is ridden
// out. Without a deadline on ctx, a server that stays down keeps the wait
// going. A permanent error ends the wait at once and is returned as it is:
// a 4xx other than 408 and 429, an unknown evaluation (404, or the status
// read's not-found 500, which matches ErrNotFound), a malformed id, an
// answer that is not the JSON expected, and a 500 before any status was
// read, since the service answers an unknown or malformed id with 500.
// opts may be nil.
//
// On a 2026 server (see DetectGeneration), it waits for the run with
// WaitRun, the statuses mapped to the 2024 ones: it also ends on a run
// that no worker takes (opts.NoWorkerAfter).
func (c *Client) WaitEvaluation(ctx context.Context, evaluationID string, opts *WaitOptions) (*models.Evaluation, error) {
	if _, err := segment("evaluationID", "evaluation_id", evaluationID); err != nil {
		return nil, err
	}
	if opts != nil && opts.Interval < 0 {
		return nil, invalid("WaitOptions.Interval", "must not be negative, got %v", opts.Interval)
	}
	if ctx == nil {
		return nil, invalid("ctx", "is nil")
	}
	return c.api().waitEvaluation(ctx, evaluationID, opts)
}
