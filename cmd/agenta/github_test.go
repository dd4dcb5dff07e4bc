package main

import (
	"strings"
	"testing"

	"github.com/agenta-go/agenta/evals"
)

// A message from the server cannot end the annotation and start another
// workflow command, nor a title its property.
func TestWorkflowEscaping(t *testing.T) {
	msg := workflowData("50% done\n::error::injected\r")
	if strings.ContainsAny(msg, "\r\n") || !strings.Contains(msg, "50%25 done") {
		t.Errorf("workflowData = %q", msg)
	}
	title := workflowProperty("Gate failed: a, b\n::x")
	if strings.ContainsAny(title, ":,\n") {
		t.Errorf("workflowProperty = %q: a : , or newline ends the property", title)
	}
}

// The doubtful findings: unpaired rows on each side, repeated cases.
func TestDoubts(t *testing.T) {
	r := &evals.Report{Comparison: &evals.Comparison{UnpairedBaseline: 2, UnpairedCandidate: 1, CandidateRepeats: 3, CandidateRepeatedCase: "country=France"}}
	got := strings.Join(doubts(r), "\n")
	for _, want := range []string{"2 row(s) of the baseline have no candidate row", "1 row(s) of the candidate have no baseline row",
		`lists test case "country=France" more than once (3 repeated rows)`} {
		if !strings.Contains(got, want) {
			t.Errorf("doubts lack %q:\n%s", want, got)
		}
	}
	if len(doubts(&evals.Report{})) != 0 {
		t.Error("a report without a comparison has doubts")
	}
}

// Flaky cases are a doubtful finding: one warning per evaluator, naming
// the cases, with or without a baseline.
func TestDoubtsListFlakyCases(t *testing.T) {
	r := &evals.Report{CandidateCases: &evals.CaseSummary{Cases: 30, Evaluators: map[string]evals.CaseStats{
		"ev-exact": {Cases: 30, Rates: 30, MaxRepeats: 3, Flaky: 25, FlakyCases: []evals.FlakyCase{{Case: "country=Peru", Passed: 1, Repeats: 3}}},
	}}, CandidateSummary: evals.Summary{EvaluatorIDs: []string{"ev-exact"}}}
	got := doubts(r)
	if len(got) != 1 || !strings.Contains(got[0], `25 flaky cases (repeats that disagree): "country=Peru" 1 of 3 passed; and 24 more`) {
		t.Errorf("doubts = %q, want the flaky cases of ev-exact", got)
	}
}
