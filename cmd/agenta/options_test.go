package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
	"github.com/spf13/cobra"
)

// testFactory returns a Factory on buffers, with an empty environment.
func testFactory() (*Factory, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := newFactory(&IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	f.getenv = func(string) string { return "" }
	return f, out, errOut
}

// execute runs a command built by NewCmdX with args, as cobra would.
func execute(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.Execute()
}

// TestEveryCommandHasAnExample walks the whole command tree, the commands
// cobra generates included: each one's --help shows an example.
func TestEveryCommandHasAnExample(t *testing.T) {
	f, _, _ := testFactory()
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Example == "" && !cmd.Hidden {
			t.Errorf("%q has no example in its --help", cmd.CommandPath())
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	root := NewCmdRoot(f)
	walk(root)
	for _, name := range []string{"help", "completion"} {
		if sub, _, err := root.Find([]string{name}); err != nil || sub.Name() != name {
			t.Errorf("the root has no %s command before Execute (found %v, %v)", name, sub, err)
		}
	}
}

// syncBuffer is a bytes.Buffer that a goroutine may write while the test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestEvalRunOptions checks that eval run's flags parse into its options,
// repeatable ones in order, and gates through evals.ParseGate.
func TestEvalRunOptions(t *testing.T) {
	f, _, _ := testFactory()
	var got *EvalRunOptions
	cmd := NewCmdEvalRun(f, func(o *EvalRunOptions) error { got = o; return nil })
	err := execute(cmd, "--app", "a", "--testset", "t", "--variant", "v1", "--variant", "v2",
		"--evaluator", "e1,e2", "--gate", "Exact match>=90%", "--gate", "worse(Edit distance) <= 2",
		"--junit", "r.xml", "--csv", "r.csv", "--json", "r.jsonl", "--markdown", "r.md", "--interval", "100ms", "--timeout", "1m")
	if err != nil {
		t.Fatalf("eval run with every flag: %v", err)
	}
	want := EvalRunOptions{AppID: "a", TestsetID: "t", VariantIDs: []string{"v1", "v2"}, EvaluatorIDs: []string{"e1", "e2"},
		Gates: []evals.Gate{
			{Measure: evals.MeasureMean, Evaluator: "Exact match", Op: evals.AtLeast, Limit: 0.9},
			{Measure: evals.MeasureWorseRows, Evaluator: "Edit distance", Op: evals.AtMost, Limit: 2},
		},
		JUnit: "r.xml", CSV: "r.csv", JSON: "r.jsonl", Markdown: "r.md", Interval: 100 * time.Millisecond, Timeout: time.Minute}
	got.IO, got.Factory, got.gates, got.flags = nil, nil, nil, nil
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("options:\n got %+v\nwant %+v", *got, want)
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

// TestVariantForkSettings checks how --set values are read: JSON when they
// parse, else text.
func TestVariantForkSettings(t *testing.T) {
	f, _, _ := testFactory()
	var got *VariantForkOptions
	cmd := NewCmdVariantFork(f, func(o *VariantForkOptions) error { got = o; return nil })
	err := execute(cmd, "base", "--name", "precise", "--set", "temperature=0", "--set", "prompt=Answer: {x}",
		"--set", "stop=[\"\\n\"]", "--set", "stream=false", "--set", "empty=", "--set", "eq=a=b",
		"--set", "seed=12345678901234567890", "--set", "top_p= 0.95")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"temperature": json.Number("0"), "prompt": "Answer: {x}", "stop": []any{"\n"}, "stream": false, "empty": "", "eq": "a=b",
		"seed": json.Number("12345678901234567890"), "top_p": json.Number("0.95")}
	if !reflect.DeepEqual(got.Set, want) {
		t.Errorf("--set values: got %#v, want %#v", got.Set, want)
	}
	// A number is sent as written: a float64 would send 12345678901234567000.
	if body, _ := json.Marshal(got.Set["seed"]); string(body) != "12345678901234567890" {
		t.Errorf("--set seed=12345678901234567890 is sent as %s, want it as written", body)
	}
	if got.VariantName != "precise" || got.BaseID != "base" {
		t.Errorf("variant name %q and base %q, want precise and base", got.VariantName, got.BaseID)
	}
}

// TestHostURL checks the server URL from --host or AGENTA_HOST.
func TestHostURL(t *testing.T) {
	tests := []struct {
		flag, env, want string
		usage           bool
	}{
		{"", "https://cloud.agenta.ai", "https://cloud.agenta.ai/api", false},
		{"", "https://cloud.agenta.ai/", "https://cloud.agenta.ai/api", false},
		{"", "http://127.0.0.1:8080/api", "http://127.0.0.1:8080/api", false},
		{"", "http://host/prefix/api", "http://host/prefix/api", false},
		{"http://flag:1", "http://env:2/api", "http://flag:1/api", false},
		{"", "", "", true},
		{"", "cloud.agenta.ai", "", true},
	}
	for _, tt := range tests {
		f, _, _ := testFactory()
		f.Host = tt.flag
		f.getenv = func(name string) string {
			if name == "AGENTA_HOST" {
				return tt.env
			}
			return ""
		}
		got, err := f.hostURL()
		if tt.usage {
			if exitCode(err) != exitUsage {
				t.Errorf("--host %q, AGENTA_HOST %q: error %v, want a usage error", tt.flag, tt.env, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("--host %q, AGENTA_HOST %q: got %q, %v; want %q", tt.flag, tt.env, got, err, tt.want)
		}
	}
}

// TestProgress checks both displays: plain lines when stderr is not a
// terminal, a line redrawn in place when it is.
func TestProgress(t *testing.T) {
	status := func(s models.EvaluationStatus) models.Result {
		return models.Result{Type: "status", Value: []byte(`"` + string(s) + `"`)}
	}
	for _, tty := range []bool{false, true} {
		errOut := &bytes.Buffer{}
		p := startProgress(&IOStreams{ErrOut: errOut, errTTY: tty}, "evaluation e1")
		p.OnStatus(status(models.EvaluationStarted))
		p.OnStatus(status(models.EvaluationFinished))
		p.Stop()
		got := errOut.String()
		for _, want := range []string{"evaluation e1: EVALUATION_STARTED", "evaluation e1: EVALUATION_FINISHED"} {
			if !strings.Contains(got, want) {
				t.Errorf("tty=%v: progress %q lacks %q", tty, got, want)
			}
		}
		if redraws := strings.Contains(got, "\r\x1b[K"); redraws != tty {
			t.Errorf("tty=%v: progress redraws in place: %v, want %v (%q)", tty, redraws, tty, got)
		}
		if lines := strings.Count(got, "\n"); tty && lines != 1 || !tty && lines != 2 {
			t.Errorf("tty=%v: progress wrote %d lines: %q", tty, lines, got)
		}
	}

	// On a terminal, a long label is cut so that the line never wraps: a
	// wrapped line cannot be redrawn in place.
	for _, width := range []int{0, 40, 120} {
		errOut := &bytes.Buffer{}
		streams := &IOStreams{ErrOut: errOut, errTTY: true, errWidth: width}
		p := startProgress(streams, "evaluation 0190b606-17b8-7000-8000-000000000003 (capitals.a-long-variant-name)")
		p.OnStatus(status(models.EvaluationAggregationFailed))
		p.Stop()
		for _, drawn := range strings.Split(strings.TrimSpace(errOut.String()), "\x1b[K") {
			drawn = strings.TrimSuffix(drawn, "\r")
			if n := utf8.RuneCountInString(drawn); n >= streams.errorWidth() {
				t.Errorf("width %d: live line of %d runes, want fewer than %d: %q", width, n, streams.errorWidth(), drawn)
			}
		}
		if !strings.Contains(errOut.String(), "EVALUATION_AGGREGATION_FAILED") {
			t.Errorf("width %d: the live line lost its status: %q", width, errOut.String())
		}
	}
	// The plain display repeats its line when the status stays the same
	// for long, so that a CI job that ends silent jobs keeps running.
	var errOut syncBuffer
	p := startProgressQuiet(&IOStreams{ErrOut: &errOut}, "evaluation e2", 40*time.Millisecond)
	p.OnStatus(status(models.EvaluationStarted))
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(errOut.String(), "evaluation e2: EVALUATION_STARTED after") < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	p.Stop()
	if n := strings.Count(errOut.String(), "evaluation e2: EVALUATION_STARTED after"); n < 3 {
		t.Errorf("a status unchanged for several quiet periods was written %d times, want at least 3: %q", n, errOut.String())
	}
	if got := columns("132"); got != 132 {
		t.Errorf("COLUMNS=132: width %d, want 132", got)
	}
	if got := columns("wide"); got != 0 {
		t.Errorf("COLUMNS=wide: width %d, want 0 (the default)", got)
	}
}
