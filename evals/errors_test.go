package evals

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Each error of the package says what failed and is recognised by
// errors.Is and errors.As, never by its text.
func TestErrors(t *testing.T) {
	invalid := GateResult{Gate: MinMean("Exact macth", 0.8), Reason: `no evaluator named "Exact macth"`, Invalid: true}
	failed := GateResult{Gate: MinMean("Exact match", 0.8), Measured: 0.5, Limit: 0.8}
	run := &RunError{Run: 1, Runs: 2, EvaluationID: "ev-2", Variant: "capitals.precise", Step: StepWait, Err: context.DeadlineExceeded,
		Unfinished: []string{"ev-2"}}
	tests := []struct {
		name   string
		err    error
		is     []error
		isNot  []error
		saying []string
	}{
		{"a failed gate", &GateError{Failed: []GateResult{failed}, Total: 2},
			[]error{ErrGateFailed}, []error{ErrInvalidGate}, []string{"evals: 1 of 2 gates failed", "Exact match >= 0.8 failed: measured 0.5, limit >= 0.8"}},
		{"an invalid gate", &GateError{Failed: []GateResult{failed, invalid}, Total: 2},
			[]error{ErrGateFailed, ErrInvalidGate}, nil, []string{"2 of 2 gates failed", `no evaluator named "Exact macth"`}},
		{"a run that timed out", run,
			[]error{context.DeadlineExceeded}, []error{ErrGateFailed}, []string{"evals: evaluation ev-2 (capitals.precise, run 2 of 2): wait: context deadline exceeded", "evaluation ev-2 may still be running on the service"}},
	}
	for _, tt := range tests {
		for _, target := range tt.is {
			if !errors.Is(tt.err, target) {
				t.Errorf("%s: errors.Is(%v) = false, want true", tt.name, target)
			}
		}
		for _, target := range tt.isNot {
			if errors.Is(tt.err, target) {
				t.Errorf("%s: errors.Is(%v) = true, want false", tt.name, target)
			}
		}
		for _, text := range tt.saying {
			if !strings.Contains(tt.err.Error(), text) {
				t.Errorf("%s: %q does not say %q", tt.name, tt.err.Error(), text)
			}
		}
	}
	var ge *GateError
	if !errors.As(error(&GateError{Failed: []GateResult{failed, invalid}}), &ge) || len(ge.Invalid()) != 1 || ge.Invalid()[0].Gate != invalid.Gate {
		t.Errorf("GateError.Invalid() = %v, want the invalid gate alone", ge.Invalid())
	}
}
