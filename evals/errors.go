package evals

// The errors of package evals: the check of gates (ErrGateFailed,
// ErrInvalidGate, GateError) and the runs of Evaluate (RunError).

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrGateFailed matches (with errors.Is) the error of a check in which at
// least one gate failed; errors.As to *GateError gives the details.
var ErrGateFailed = errors.New("evals: gate failed")

// ErrInvalidGate matches (with errors.Is) the error of a check in which a
// gate is wrong rather than the candidate: it names an evaluator the runs
// do not have, a measure or an operator that does not exist. Such a gate
// fails too (the error also matches ErrGateFailed), and its reason names
// what does exist, with a suggestion when a name is close. A command line
// reports it as a usage error.
var ErrInvalidGate = errors.New("evals: invalid gate")

// GateError is the error of a check in which gates failed. It matches
// ErrGateFailed, and ErrInvalidGate when a gate is invalid.
type GateError struct {
	Failed []GateResult // every failing gate
	Total  int          // gates checked
}

// Error lists every failing gate with its measured value and limit.
func (e *GateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "evals: %d of %d gates failed", len(e.Failed), e.Total)
	for _, r := range e.Failed {
		b.WriteString("\n  ")
		b.WriteString(r.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrGateFailed) true, and errors.Is(err,
// ErrInvalidGate) when a failing gate is invalid.
func (e *GateError) Is(target error) bool {
	switch target {
	case ErrGateFailed:
		return true
	case ErrInvalidGate:
		return slices.ContainsFunc(e.Failed, func(r GateResult) bool { return r.Invalid })
	}
	return false
}

// Invalid returns the failing gates that are invalid (see
// GateResult.Invalid).
func (e *GateError) Invalid() []GateResult {
	var out []GateResult
	for _, r := range e.Failed {
		if r.Invalid {
			out = append(out, r)
		}
	}
	return out
}

// RunError is a run of Evaluate that did not end well: its wait failed (the
// run failed on the service, ctx ended, the service answered an error) or
// its scenarios could not be read. It wraps the cause, so errors.Is and
// errors.As see the SDK's errors through it.
type RunError struct {
	// Run is the run's index in the request's VariantIDs, and Runs their
	// number.
	Run, Runs int
	// EvaluationID is the run's evaluation (with repeats on a server
	// without them, the repeat's whose wait or read failed), and Variant
	// its variant's name (or id).
	EvaluationID, Variant string
	// Step is what failed: StepWait or StepScenarios.
	Step string
	// Err is the failure, as the service (or the Scenarios hook) returned it.
	Err error
	// Stopped lists the evaluations Evaluate asked the service to stop
	// when it gave up, and the service agreed to.
	Stopped []string
	// Unfinished lists the evaluations Evaluate started, did not see end
	// and could not stop: they may still be running on the service.
	Unfinished []string
	// StopErr holds the failures to stop, if any.
	StopErr error
}

// Error names the run and says what failed, and what may still be running.
func (e *RunError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "evals: evaluation %s (%s, run %d of %d): %s: %v", bound(e.EvaluationID, 80), bound(e.Variant, 120), e.Run+1, e.Runs, e.Step, e.Err)
	if len(e.Stopped) > 0 {
		// On v0.113 a stop flags the run; rows already dispatched still run.
		fmt.Fprintf(&b, "; asked the service to stop %s", idList(e.Stopped))
	}
	if len(e.Unfinished) > 0 {
		fmt.Fprintf(&b, "; %s may still be running on the service", idList(e.Unfinished))
	}
	if e.StopErr != nil {
		fmt.Fprintf(&b, " (%s)", oneLine(e.StopErr.Error()))
	}
	return b.String()
}

// Unwrap returns what failed.
func (e *RunError) Unwrap() error { return e.Err }

// idList names evaluations in a message.
func idList(ids []string) string {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = bound(id, 80)
	}
	if len(ids) == 1 {
		return "evaluation " + quoted[0]
	}
	return "evaluations " + strings.Join(quoted, ", ")
}
