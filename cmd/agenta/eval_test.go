package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/agenta-go/agenta/evals"
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
		"--batch-size", "50", "--batch-delay", "2s")
	if err != nil {
		t.Fatalf("eval run with every flag: %v", err)
	}
	want := EvalRunOptions{AppID: "a", TestsetID: "t", VariantIDs: []string{"v1", "v2"}, EvaluatorIDs: []string{"e1", "e2"},
		Gates: []evals.Gate{
			{Measure: evals.MeasureMean, Evaluator: "Exact match", Op: evals.AtLeast, Limit: 0.9, Percent: true},
			{Measure: evals.MeasureWorseRows, Evaluator: "Edit distance", Op: evals.AtMost, Limit: 2},
		},
		JUnit: "r.xml", CSV: "r.csv", JSON: "r.jsonl", Markdown: "r.md", Interval: 100 * time.Millisecond, Timeout: time.Minute,
		BatchSize: 50, BatchDelay: 2 * time.Second}
	got.IO, got.Factory, got.gates, got.flags = nil, nil, nil, nil
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("options:\n got %+v\nwant %+v", *got, want)
	}
}
