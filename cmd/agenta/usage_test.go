package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestClosest checks the suggestions a usage error makes: a swap of two
// neighbours is one edit, a prefix counts, and nothing far is guessed.
func TestClosest(t *testing.T) {
	formats := []string{"jsonl", "csv", "json", "table"}
	tests := []struct {
		word       string
		candidates []string
		want       []string
	}{
		{"jsnol", formats, []string{"jsonl"}},
		{"jsn", formats, []string{"json"}},
		{"jso", formats, []string{"json", "jsonl"}},
		{"JSON", formats, []string{"json", "jsonl"}},
		{"csb", formats, []string{"csv"}},
		{"yaml", formats, nil},
		{"evl", []string{"eval", "evaluation", "fake"}, []string{"eval"}},
		{"eva", []string{"eval", "evaluation", "fake"}, []string{"eval", "evaluation"}},
		{"gaet", []string{"gate", "junit", "app"}, []string{"gate"}},
		{"zzz", []string{"eval", "fake", "scenarios"}, nil},
	}
	for _, tt := range tests {
		if got := closest(tt.word, tt.candidates); !slices.Equal(got, tt.want) {
			t.Errorf("closest(%q, %q) = %q, want %q", tt.word, tt.candidates, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "abc", 3}, {"wiat", "wait", 1}, {"ca", "abc", 3}, {"kitten", "sitting", 3}, {"Türkiye", "Turkiye", 1}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestUsageErrors checks that bad input is refused before any work, with
// exit code 2 and a message naming the flag.
func TestUsageErrors(t *testing.T) {
	never := func(t *testing.T) func() { return func() { t.Fatal("the command ran despite a usage error") } }
	tests := []struct {
		name string
		cmd  func(f *Factory, ran func()) *cobra.Command
		args []string
		want string
	}{
		{"eval run without --app", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdEvalRun(f, func(*EvalRunOptions) error { ran(); return nil })
		}, []string{"--testset", "t", "--variant", "v", "--evaluator", "e"}, "--app is required"},
		{"eval run with a bad gate", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdEvalRun(f, func(*EvalRunOptions) error { ran(); return nil })
		}, []string{"--app", "a", "--testset", "t", "--variant", "v", "--evaluator", "e", "--gate", "Exact match"}, "--gate"},
		{"eval run with a baseline gate and one variant", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdEvalRun(f, func(*EvalRunOptions) error { ran(); return nil })
		}, []string{"--app", "a", "--testset", "t", "--variant", "v", "--evaluator", "e", "--gate", "regression_p(Exact match) >= 0.05"}, "compares with a baseline: give two --variant"},
		{"eval run with a zero interval", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdEvalRun(f, func(*EvalRunOptions) error { ran(); return nil })
		}, []string{"--app", "a", "--testset", "t", "--variant", "v", "--evaluator", "e", "--interval", "0s"}, "--interval 0s"},
		{"scenarios with a bad format", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdScenarios(f, func(*ScenariosOptions) error { ran(); return nil })
		}, []string{"id", "--format", "xml"}, `--format "xml"`},
		{"variant fork with a bad --set", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdVariantFork(f, func(*VariantForkOptions) error { ran(); return nil })
		}, []string{"base", "--name", "n", "--set", "=1"}, `--set "=1"`},
		{"span get with a bad --output", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdSpanGet(f, func(*SpanGetOptions) error { ran(); return nil })
		}, []string{"id", "-o", "yaml"}, `--output "yaml"`},
		{"eval run with an empty id in a --variant list", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdEvalRun(f, func(*EvalRunOptions) error { ran(); return nil })
		}, []string{"--app", "a", "--testset", "t", "--variant", "v1,,v2", "--evaluator", "e"}, `--variant: an id is empty`},
		{"eval run with a tab in an --evaluator", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdEvalRun(f, func(*EvalRunOptions) error { ran(); return nil })
		}, []string{"--app", "a", "--testset", "t", "--variant", "v", "--evaluator", "e\tx"}, `--evaluator: an id contains a control character`},
		{"eval run with a tab in --app", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdEvalRun(f, func(*EvalRunOptions) error { ran(); return nil })
		}, []string{"--app", "a\tb", "--testset", "t", "--variant", "v", "--evaluator", "e"}, `--app: the id contains a control character`},
		{"variant get with a line break in its id", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdVariantGet(f, func(*VariantGetOptions) error { ran(); return nil })
		}, []string{"a\nb"}, `VARIANT_ID contains a control character`},
		{"fake with a bad --addr", func(f *Factory, ran func()) *cobra.Command {
			return NewCmdFake(f, func(*FakeOptions) error { ran(); return nil })
		}, []string{"--addr", "8080"}, `--addr "8080"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory()
			err := execute(tt.cmd(f, never(t)), tt.args...)
			if code := exitCode(err); code != exitUsage {
				t.Errorf("exit code %d (error %v), want %d", code, err, exitUsage)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to name %q", err, tt.want)
			}
		})
	}
}
