package evals

import (
	"errors"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// The evaluators of the run: the server calls one "Exact capital".
var resolveEvaluators = []Evaluator{
	EvaluatorOf(models.EvaluatorConfig{ID: "ev-exact", Name: "Exact capital", EvaluatorKey: "auto_exact_match"}),
	EvaluatorOf(models.EvaluatorConfig{ID: "ev-lev", Name: "Edit distance", EvaluatorKey: "auto_levenshtein_distance"}),
	{ID: "ev-26", Name: "Exact match 2026", Slug: "exact-capital-26"},
}

func TestResolveGates(t *testing.T) {
	for _, text := range []string{
		"Exact capital >= 0.9", "ev-exact >= 90%", "worse(Edit distance) <= 0", "regression_p(Exact capital) >= 0.05",
		"exact-capital-26 >= 0.5", "app_errors <= baseline", "latency.p95 <= 3", "Edit distance <= 2",
	} {
		g, err := ParseGate(text)
		if err != nil {
			t.Fatalf("ParseGate(%q): %v", text, err)
		}
		if err := ResolveGates(resolveEvaluators, g); err != nil {
			t.Errorf("ResolveGates(%q) = %v, want nil", text, err)
		}
	}
}

func TestResolveGatesRefusesBeforeAnyRun(t *testing.T) {
	tests := []struct{ gate, says string }{
		{"Exact match >= 0.9", `no evaluator named "Exact match" (known: "Edit distance", "Exact capital", "Exact match 2026")`},
		{"Exact capitl >= 0.9", `no evaluator named "Exact capitl"; did you mean "Exact capital"?`},
		{"wrose(Exact capital) <= 0", `did you mean worse(Exact capital)?`},
		{"Edit distance <= 20%", `"Edit distance" is an edit distance, a count of edits, not a rate`},
	}
	for _, tt := range tests {
		g, err := ParseGate(tt.gate)
		if err != nil {
			t.Fatalf("ParseGate(%q): %v", tt.gate, err)
		}
		err = ResolveGates(resolveEvaluators, g)
		var gateErr *GateError
		if !errors.Is(err, ErrInvalidGate) || !errors.As(err, &gateErr) || len(gateErr.Failed) != 1 {
			t.Fatalf("ResolveGates(%q) = %v, want one invalid gate", tt.gate, err)
		}
		if !strings.Contains(gateErr.Failed[0].Reason, tt.says) {
			t.Errorf("ResolveGates(%q): reason %q lacks %q", tt.gate, gateErr.Failed[0].Reason, tt.says)
		}
	}
}

// A gate built in Go, not parsed, is checked all the same.
func TestResolveGatesBuiltInGo(t *testing.T) {
	err := ResolveGates(resolveEvaluators, Gate{Evaluator: "Exact capital", Op: ">=", Limit: 0.9, RelativeToBaseline: true})
	if !errors.Is(err, ErrInvalidGate) || !strings.Contains(err.Error(), "only app_errors takes a limit relative to the baseline") {
		t.Errorf("ResolveGates = %v, want the relative limit refused", err)
	}
}

// Two gates wrong of three: both named, the total says three.
func TestResolveGatesNamesEveryMiss(t *testing.T) {
	err := ResolveGates(resolveEvaluators, MinMean("Exact capital", 0.9), MinMean("Exact match", 0.9), MaxWorseRows("nope", 0))
	var gateErr *GateError
	if !errors.As(err, &gateErr) || len(gateErr.Failed) != 2 || gateErr.Total != 3 {
		t.Fatalf("ResolveGates = %v, want 2 of 3 invalid", err)
	}
}
