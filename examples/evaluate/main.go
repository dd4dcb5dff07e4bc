// Command evaluate is a release gate. It forks a candidate variant from the
// one in production with new parameters, evaluates both on a test set,
// waits for both runs, compares the candidate with production row by row
// (package evals), checks the gates and writes the report: Markdown on
// stdout, JUnit XML and CSV to files when asked. It exits with status 1
// when a gate fails; 2 when a gate, flag or id is wrong (found before any
// evaluation is created); 3 when the runs could not be judged; 130 on
// SIGINT or SIGTERM, after stopping what the server can stop and writing
// the report of the runs cut short.
//
// Run as is, it uses an embedded fake of the service loaded with demo data:
//
//	go run ./examples/evaluate -junit report.xml -csv report.csv
//	go run ./examples/evaluate -set temperature=1   # a worse candidate: exit status 1
//
// With AGENTA_HOST (and AGENTA_API_KEY) set it uses that server; pass your
// ids and your gates:
//
//	go run ./examples/evaluate -app ID -testset ID -evaluators ID,ID -set temperature=0 \
//	    -gate "Exact match >= 90%" -gate "regression_p(Exact match) >= 0.05"
//
// The baseline is the variant deployed to production (on a mid-2024 server,
// whose lookup by environment is a 500, read from the app's environments),
// or -baseline ID.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
)

// demoGates are the gates checked on the demo data when -gate is not given:
// the same as -gate "Exact match >= 90%" -gate "regression_p(Exact match) >= 0.05"
// -gate "worse(Edit distance) <= 0" -gate "app_errors <= 0".
var demoGates = []evals.Gate{
	evals.MinLow("Exact match", 0.6),                // the pass rate's 95% lower bound, not its estimate
	evals.NotWorseThanBaseline("Exact match", 0.05), // the release gate: at most 5 points worse, with 95% confidence
	evals.MaxWorseRows("Edit distance", 0),          // rows further from the answer
	evals.MaxAppErrors(0),
}

func main() {
	// Ctrl-C or SIGTERM ends ctx: the runs are stopped where the server can
	// stop them, the report says what was not judged, and the exit is 130.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := evaluate(ctx, os.Args[1:], os.Stdout, os.Stderr)
	interrupted := ctx.Err() != nil
	stop()
	code := exitCode(err, interrupted)
	if code != 0 {
		fmt.Fprintln(os.Stderr, "evaluate:", err)
	}
	os.Exit(code)
}

// The exit codes, as the agenta command's: CI tells a regression from a
// typo in a gate, and both from a run that could not be judged.
const (
	exitGateFailed  = 1   // a gate failed: the candidate may not replace production
	exitInvalidGate = 2   // a gate or flag names nothing the run has: fix the command
	exitNotJudged   = 3   // the runs could not be judged: the service, the network, a failed run
	exitInterrupted = 130 // SIGINT or SIGTERM
)

// exitCode maps the error of evaluate to the process's exit code. An
// invalid gate also matches ErrGateFailed, so it is tested first.
func exitCode(err error, interrupted bool) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, evals.ErrInvalidGate):
		return exitInvalidGate
	case interrupted:
		return exitInterrupted
	case errors.Is(err, evals.ErrGateFailed):
		return exitGateFailed
	case errors.As(err, new(usageError)):
		return exitInvalidGate
	}
	// The preflight found the evaluation misconfigured before creating it:
	// a wrong id is the command line's fault, a test set without the app's
	// input fails as the mid-2024 service's run would.
	var pre *agenta.PreflightError
	if errors.As(err, &pre) && pre.Report.Has(models.PreflightNotFound) {
		return exitInvalidGate
	}
	return exitNotJudged
}

// usageError is a flag or gate that could not be read.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func evaluate(ctx context.Context, args []string, out, progress io.Writer) error {
	fs := flag.NewFlagSet("evaluate", flag.ContinueOnError)
	appID := fs.String("app", "", "app id (AGENTA_HOST only)")
	testsetID := fs.String("testset", "", "test set id (AGENTA_HOST only)")
	evaluatorIDs := fs.String("evaluators", "", "evaluator config ids, comma-separated (AGENTA_HOST only)")
	environment := fs.String("env", models.EnvironmentProduction, "environment of the variant to compare with")
	baselineID := fs.String("baseline", "", "id of the variant to compare with, instead of the one in -env")
	name := fs.String("name", "precise", "config name of the candidate (a timestamp is added on a real server)")
	overrides := map[string]any{}
	fs.Func("set", "candidate parameter as key=value, the value JSON or else text; repeatable (default temperature=0)", func(kv string) error {
		key, value, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			return fmt.Errorf("want key=value, got %q", kv)
		}
		var parsed any
		if json.Unmarshal([]byte(value), &parsed) != nil {
			parsed = value
		}
		overrides[key] = parsed
		return nil
	})
	var gates []evals.Gate
	fs.Func("gate", fmt.Sprintf("gate such as %q, repeatable (default on the demo: %v)", "Exact match >= 90%", demoGates), func(text string) error {
		gate, err := evals.ParseGate(text)
		gates = append(gates, gate)
		return err
	})
	junitPath := fs.String("junit", "", "also write the report as JUnit XML to this file")
	csvPath := fs.String("csv", "", "also write one CSV line per scenario to this file")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	repeats := fs.Int("repeats", 1, "run each test case this many times, as an LLM app answers differently from call to call")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if len(overrides) == 0 {
		overrides["temperature"] = 0.0
	}
	ids := strings.FieldsFunc(*evaluatorIDs, func(r rune) bool { return r == ',' || r == ' ' })

	// Without AGENTA_HOST, an embedded fake loaded with the demo data.
	demo, stop := agentatest.StartDemoUnlessHost()
	defer stop()
	poll := time.Duration(0) // the service's own 2 s
	if demo != nil {
		*appID, *testsetID, ids = demo.AppID, demo.TestsetID, demo.EvaluatorConfigIDs()
		if len(gates) == 0 {
			gates = demoGates
		}
		poll = 50 * time.Millisecond // the fake's runs take a fraction of a second
	} else if *appID == "" || *testsetID == "" || len(ids) == 0 || len(gates) == 0 {
		return usageError{errors.New("with AGENTA_HOST set, pass -app, -testset, -evaluators and at least one -gate")}
	} else {
		*name = fmt.Sprintf("%s-%d", *name, time.Now().Unix()) // earlier runs took the name
	}
	client, err := agenta.NewClientFromEnv()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	// Fork the candidate from production, then evaluate both.
	var production *models.AppVariantResponse
	if *baselineID != "" {
		production, err = client.GetVariant(ctx, *baselineID)
	} else {
		production, err = client.GetVariantByEnvironment(ctx, *appID, *environment)
	}
	if err != nil && *baselineID == "" {
		return fmt.Errorf("baseline variant: %w\npass the baseline variant's id with -baseline ID", err)
	}
	if err != nil {
		return fmt.Errorf("baseline variant: %w", err)
	}
	parameters := map[string]any{}
	maps.Copy(parameters, production.Parameters)
	maps.Copy(parameters, overrides)
	candidate, err := client.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: production.BaseID, NewVariantName: *name, NewConfigName: *name, Parameters: parameters,
	})
	if err != nil {
		return fmt.Errorf("fork: %w", err)
	}
	// Create the evaluation, wait for both runs (their status changes go to
	// progress) and read their scenarios, in one call.
	names := []string{production.VariantName, candidate.VariantName}
	runs, err := evals.EvaluateWith(ctx, client, models.NewEvaluation{
		AppID: *appID, VariantIDs: []string{production.VariantID, candidate.VariantID},
		EvaluatorConfigIDs: ids, TestsetID: *testsetID, RateLimit: models.DefaultRateLimit(), Repeats: *repeats,
	}, evals.EvaluateOptions[*agenta.WaitOptions]{
		Gates: gates, // resolved before anything is created: a typo costs no run
		Wait: func(i int, _ models.Evaluation) *agenta.WaitOptions {
			return &agenta.WaitOptions{Interval: poll, OnStatus: func(s models.Result) { fmt.Fprintf(progress, "%s: %s\n", names[i], s) }}
		},
	})
	if err != nil && len(runs) < 2 {
		return err // a *evals.RunError names the run and what failed
	}

	// Judge, then report, whatever the verdict. Runs cut short (ctx ended,
	// a run failed) are reported as not judged: their gates fail, saying so.
	report := evals.NewReport(runs[0], runs[1])
	verdict := report.Check(gates...)
	if err := report.WriteMarkdown(out); err != nil {
		return err
	}
	if err := writeFile(*junitPath, report.WriteJUnit); err != nil {
		return err
	}
	if err := writeFile(*csvPath, report.WriteCSV); err != nil {
		return err
	}
	if err != nil {
		return err // the *evals.RunError: what was stopped, what may still run
	}
	return verdict
}

// writeFile writes a report to path, unless path is empty.
func writeFile(path string, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
