package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
)

// TestEvalRunOptions checks that eval run's flags parse into its options,
// repeatable ones in order, and gates through evals.ParseGate.
func TestEvalRunOptions(t *testing.T) {
	f, _, _ := testFactory()
	var got *EvalRunOptions
	cmd := NewCmdEvalRun(f, func(o *EvalRunOptions) error { got = o; return nil })
	err := execute(cmd, "--app", "a", "--testset", "t", "--variant", "v1", "--variant", "v2",
		"--evaluator", "e1,e2", "--gate", "Exact match>=90%", "--gate", "worse(Edit distance) <= 2",
		"--junit", "r.xml", "--csv", "r.csv", "--json", "r.jsonl", "--markdown", "r.md", "--interval", "100ms", "--timeout", "1m",
		"--batch-size", "50", "--batch-delay", "2s", "--repeats", "3", "--confidence", "0.9")
	if err != nil {
		t.Fatalf("eval run with every flag: %v", err)
	}
	want := EvalRunOptions{AppID: "a", TestsetID: "t", VariantIDs: []string{"v1", "v2"}, EvaluatorIDs: []string{"e1", "e2"},
		Gates: []evals.Gate{
			{Measure: evals.MeasureMean, Evaluator: "Exact match", Op: evals.AtLeast, Limit: 0.9, Percent: true},
			{Measure: evals.MeasureWorseRows, Evaluator: "Edit distance", Op: evals.AtMost, Limit: 2},
		},
		Reports: map[string]string{"junit": "r.xml", "csv": "r.csv", "json": "r.jsonl", "markdown": "r.md"}, Interval: 100 * time.Millisecond, Timeout: time.Minute,
		BatchSize: 50, BatchDelay: 2 * time.Second, Repeats: 3, Confidence: 0.9}
	got.IO, got.Factory, got.gates, got.flags = nil, nil, nil, nil
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("options:\n got %+v\nwant %+v", *got, want)
	}
}

// --repeats and --confidence are checked before anything is created, the
// flag named.
func TestEvalRunRefusesRepeatsAndConfidence(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--repeats", "0"}, "--repeats 0: want 1"},
		{[]string{"--repeats", "-2"}, "--repeats -2: want 1"},
		{[]string{"--repeats", "101"}, "--repeats 101: want 1 (each test case once) to 100"},
		{[]string{"--confidence", "0.5"}, "--confidence 0.5: want a level above 0.5 and below 1"},
		{[]string{"--confidence", "1"}, "--confidence 1: want"},
		{[]string{"--confidence", "NaN"}, "--confidence NaN: want"},
		{[]string{"--confidence", "95"}, "--confidence 95: want"},
	} {
		f, _, _ := testFactory()
		cmd := NewCmdEvalRun(f, func(*EvalRunOptions) error { return nil })
		err := execute(cmd, append([]string{"--app", "a", "--testset", "t", "--variant", "v", "--evaluator", "e"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// With repeats, the summary's footnote names a score whose interval is
// over fewer test cases than the rest (those with a value on every
// repeat), and says nothing more when every interval is over all of them.
func TestPrintSummarySaysWhenAnIntervalIsOverFewerCases(t *testing.T) {
	result := func(id, typ, value string) models.ScenarioResult {
		return models.ScenarioResult{EvaluatorConfig: id, Result: models.Result{Type: typ, Value: json.RawMessage(value)}}
	}
	run := func(erred bool) evals.Run {
		r := evals.Run{Evaluation: models.Evaluation{ID: "e1", AggregatedResults: []models.AggregatedResult{
			{EvaluatorConfig: models.EvaluatorConfig{ID: "ex", Name: "Exact match", EvaluatorKey: "auto_exact_match"}},
			{EvaluatorConfig: models.EvaluatorConfig{ID: "sim", Name: "Similarity", EvaluatorKey: "auto_similarity_match"}}}}, Repeats: 3}
		for i := range 4 {
			for j := range 3 {
				s := models.EvaluationScenario{ID: fmt.Sprintf("s%d-%d", i, j), TestcaseID: fmt.Sprintf("tc%d", i),
					Outputs: []models.Output{{Result: models.Result{Type: "text", Value: json.RawMessage(`"Paris"`)}}},
					Results: []models.ScenarioResult{result("ex", "bool", "true"), result("sim", "number", fmt.Sprint(0.25*float64(i+j)))}}
				if erred && i == 2 && j == 1 {
					s.Results[1] = models.ScenarioResult{EvaluatorConfig: "sim", Result: models.Result{Type: "error", Value: json.RawMessage("null"), Error: &models.Error{Message: "judge timed out"}}}
				}
				r.Scenarios = append(r.Scenarios, s)
			}
		}
		return r
	}
	for _, tc := range []struct {
		erred bool
		want  string
	}{
		{false, "  95% CI over 4 test cases, each the mean of its 3 repeats\n"},
		{true, "  95% CI over 4 test cases, each the mean of its 3 repeats (Similarity: over the 3 with a value on every repeat)\n"},
	} {
		var out strings.Builder
		if err := printSummary(&out, evals.NewReport(evals.Run{}, run(tc.erred)), false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("a score erred on a repeat: %v; want the line %q in:\n%s", tc.erred, tc.want, out.String())
		}
	}
}
