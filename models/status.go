package models

// Evaluation statuses, carried as the value of Evaluation.Status, of the
// status read (FetchEvaluationStatus) and as HumanEvaluation.Status.
//
// A run goes INITIALIZED (created, waiting for the service's background
// worker; with no worker running it stays there), then STARTED, then one of
// the four terminal statuses. The constants are untyped, so they compare
// with a plain string and with an EvaluationStatus alike.
const (
	// EvaluationInitialized is the status CreateEvaluation answers with: the
	// run is queued for the service's background worker.
	EvaluationInitialized = "EVALUATION_INITIALIZED"
	// EvaluationStarted means the worker is calling the app on the rows.
	EvaluationStarted = "EVALUATION_STARTED"
	// EvaluationFinished means every scenario was written and aggregated.
	EvaluationFinished = "EVALUATION_FINISHED"
	// EvaluationFinishedWithErrors is a finished run in which some scenario
	// result is an error, such as an app call that failed.
	EvaluationFinishedWithErrors = "EVALUATION_FINISHED_WITH_ERRORS"
	// EvaluationFailed means the run broke, for example because the test
	// set's columns do not match the app's inputs; it has no scenarios.
	EvaluationFailed = "EVALUATION_FAILED"
	// EvaluationAggregationFailed means the scenarios were written but their
	// aggregation failed.
	EvaluationAggregationFailed = "EVALUATION_AGGREGATION_FAILED"
)

// EvaluationStatus is an evaluation's status value, such as
// EvaluationFinished. Its methods say what a value means, so that callers
// need not compare strings; a value the SDK does not know (a newer server's)
// is neither terminal nor failed nor running.
type EvaluationStatus string

// Terminal reports whether the run is over: finished, finished with errors,
// failed or failed in aggregation. An unknown value is not terminal, so
// a newer server's status never ends a wait early.
func (s EvaluationStatus) Terminal() bool {
	switch s {
	case EvaluationFinished, EvaluationFinishedWithErrors, EvaluationFailed, EvaluationAggregationFailed:
		return true
	}
	return false
}

// Failed reports whether the run ended in failure (EvaluationFailed or
// EvaluationAggregationFailed). A run finished with errors did not fail: its
// scenarios are there, some with error results.
func (s EvaluationStatus) Failed() bool {
	return s == EvaluationFailed || s == EvaluationAggregationFailed
}

// Running reports whether the run is known to be still in progress:
// initialized or started, as the service's own web page treats them.
func (s EvaluationStatus) Running() bool {
	return s == EvaluationInitialized || s == EvaluationStarted
}

// EvaluationStatus returns the result's value as an evaluation status, or ""
// when the value is not a JSON string. It is meant for the Result of
// Evaluation.Status and of the status read.
func (r Result) EvaluationStatus() EvaluationStatus {
	s, _ := r.Text()
	return EvaluationStatus(s)
}

// State returns the evaluation's status value, such as EvaluationStarted, or
// "" when the status carries no text.
func (e Evaluation) State() string { return string(e.Status.EvaluationStatus()) }

// Terminal reports whether the evaluation's run is over; see
// EvaluationStatus.Terminal.
func (e Evaluation) Terminal() bool { return e.Status.EvaluationStatus().Terminal() }

// Failed reports whether the evaluation's run ended in failure; see
// EvaluationStatus.Failed. The service's message is in Status.Error.
func (e Evaluation) Failed() bool { return e.Status.EvaluationStatus().Failed() }

// Running reports whether the evaluation's run is initialized or started;
// see EvaluationStatus.Running.
func (e Evaluation) Running() bool { return e.Status.EvaluationStatus().Running() }
