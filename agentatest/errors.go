package agentatest

import (
	"errors"
	"fmt"
)

// The fake's errors: those it returns in Go, and the shapes of the
// service's own errors that it writes in its answers.

// ErrUnreachable, returned by an Application, makes the 2026 fake behave as
// v0.113 does when the application's URL cannot be reached: the row gets
// no invocation cell and no evaluator cell, and its scenario ends errors
// with nothing in the API saying why.
var ErrUnreachable = fmt.Errorf("agentatest: the application is unreachable")

// errServerClosed is what WaitEvaluations returns when the server closes
// before the evaluations it waits for end.
var errServerClosed = errors.New("agentatest: server closed")

// errAnswerShaped is how a fault's writer refuses what follows the point
// where it cut or stalled the answer.
var errAnswerShaped = errors.New("agentatest: the answer was cut short or stalled by a fault")

// resultError is a scenario result's error, as the service stores it: the
// message and, when there is one, the stack trace.
type resultError struct {
	Message    string
	Stacktrace *string
}

// errorResult is a result of type "error", as the service's evaluators
// give one.
func errorResult(message string, stacktrace string) result {
	e := &resultError{Message: message}
	if stacktrace != "" {
		e.Stacktrace = &stacktrace
	}
	return result{Type: "error", Err: e}
}

// validationError is one item of a 422 answer's detail list.
type validationError struct {
	Loc  []any
	Msg  string
	Type string
	// Input is the refused value; only Pydantic v2 sends it.
	Input any
	// Ctx is extra context; nil leaves it out.
	Ctx any
}
