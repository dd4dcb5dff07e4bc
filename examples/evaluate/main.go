// Command evaluate compares a new variant with the one in production: it
// forks a variant from the production variant's base with new parameters,
// evaluates both against a test set, follows the evaluations until every
// row is scored (progress on stderr), and prints a comparison per evaluator
// and the rows each variant got worst.
//
// Run as is, it uses an embedded fake of the service loaded with demo data:
//
//	go run ./examples/evaluate
//
// With AGENTA_HOST (and AGENTA_API_KEY) set it uses that server; pass your
// ids, and the number of test-set rows so it knows when the runs are done:
//
//	go run ./examples/evaluate -app ID -testset ID -rows 50 \
//	    -evaluators "Exact match=ID,Levenshtein=ID" -set temperature=0 -set model=gpt-4o-mini
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/examples/internal/demo"
	"github.com/agenta-go/agenta/models"
)

// run is one evaluated variant and its scenarios so far.
type run struct {
	label     string
	variantID string
	eval      models.Evaluation
	scenarios []models.EvaluationScenario
}

// settings are parameter overrides given as -set key=value.
type settings map[string]any

func (s settings) String() string { return fmt.Sprint(map[string]any(s)) }

// Set parses key=value; the value is JSON if it parses as JSON, text
// otherwise.
func (s settings) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", kv)
	}
	var parsed any
	if err := json.Unmarshal([]byte(v), &parsed); err != nil {
		parsed = v
	}
	s[k] = parsed
	return nil
}

func main() {
	if err := evaluate(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "evaluate:", err)
		os.Exit(1)
	}
}

func evaluate(ctx context.Context, args []string, out, progress io.Writer) error {
	fs := flag.NewFlagSet("evaluate", flag.ContinueOnError)
	appID := fs.String("app", "", "app id (AGENTA_HOST only)")
	testsetID := fs.String("testset", "", "test set id (AGENTA_HOST only)")
	rows := fs.Int("rows", 0, "rows in the test set: each evaluation is done at this many scenarios (AGENTA_HOST only)")
	evaluatorList := fs.String("evaluators", "", "evaluator configs as name=id, comma-separated (AGENTA_HOST only)")
	environment := fs.String("env", models.EnvironmentProduction, "environment of the baseline variant")
	configName := fs.String("name", "", "config name of the new variant (default: precise, or precise-<time> on a real server)")
	overrides := settings{}
	fs.Var(overrides, "set", "parameter of the new variant as key=value (repeatable); default: temperature=0 model=gpt-4o-mini")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(overrides) == 0 {
		overrides["temperature"] = 0.0
		overrides["model"] = "gpt-4o-mini"
	}
	evaluators := demo.ParseEvaluators(*evaluatorList)

	// The embedded server fills in a scenario every 20 ms, so that the
	// progress shows as it would on a real server.
	target := demo.Connect(agentatest.WithEvaluationPace(20 * time.Millisecond))
	defer target.Close()
	if d := target.Demo; d != nil {
		*appID, *testsetID, *rows = d.AppID, d.TestsetID, d.TestsetRows
		evaluators = demo.Evaluators(*d)
	} else if *appID == "" || *testsetID == "" || *rows <= 0 || len(evaluators) < 2 {
		return errors.New("with AGENTA_HOST set, pass -app, -testset, -rows and at least two -evaluators")
	}
	if *configName == "" {
		*configName = target.UniqueName("precise")
	}

	// The base URL ends in /api; the API key goes with every request.
	var opts []agenta.Option
	if target.APIKey != "" {
		opts = append(opts, agenta.WithAPIKey(target.APIKey))
	}
	client, err := agenta.NewClient(target.URL, opts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	// The baseline: what production runs today.
	baseline, err := client.GetVariantByEnvironment(ctx, *appID, *environment)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	// The candidate: the same base and parameters, with the overrides.
	params := map[string]any{}
	for k, v := range baseline.Parameters {
		params[k] = v
	}
	for k, v := range overrides {
		params[k] = v
	}
	candidate, err := client.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: baseline.BaseID, NewVariantName: *configName, NewConfigName: *configName, Parameters: params,
	})
	if err != nil {
		return fmt.Errorf("fork: %w", err)
	}
	fmt.Fprintf(out, "baseline   %s (revision %d)\ncandidate  %s, forked with %s\n\n",
		baseline.VariantName, baseline.Revision, candidate.VariantName, describe(overrides))

	evals, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              *appID,
		VariantIDs:         []string{baseline.VariantID, candidate.VariantID},
		EvaluatorConfigIDs: demo.IDs(evaluators),
		TestsetID:          *testsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		return fmt.Errorf("create evaluation: %w", err)
	}
	if len(evals) != 2 {
		return fmt.Errorf("expected one evaluation per variant, got %d", len(evals))
	}
	runs := []*run{
		{label: baseline.VariantName, variantID: baseline.VariantID, eval: evals[0]},
		{label: candidate.VariantName, variantID: candidate.VariantID, eval: evals[1]},
	}

	if err := follow(ctx, client, runs, *rows, progress); err != nil {
		return err
	}
	compare(out, runs, evaluators)
	for _, r := range runs {
		worstRows(out, r, evaluators, 3)
	}
	return nil
}

// follow polls every run's scenarios until each has one per row, drawing
// progress on w.
func follow(ctx context.Context, client *agenta.Client, runs []*run, rows int, w io.Writer) error {
	interval := 50 * time.Millisecond
	for {
		done := true
		var parts []string
		for _, r := range runs {
			scenarios, err := client.FetchEvaluationScenarios(ctx, r.eval.ID)
			if err != nil {
				return fmt.Errorf("poll %s: %w", r.label, err)
			}
			r.scenarios = scenarios
			parts = append(parts, fmt.Sprintf("%s %d/%d", r.label, len(scenarios), rows))
			done = done && len(scenarios) >= rows
		}
		fmt.Fprintf(w, "\revaluating: %s", strings.Join(parts, ", "))
		if done {
			fmt.Fprintln(w)
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(w)
			return fmt.Errorf("evaluations not finished: %w", ctx.Err())
		case <-time.After(interval):
		}
		interval = min(2*interval, 5*time.Second)
	}
}

// score is one evaluator's summary over a run.
type score struct {
	value            float64 // share of true, or mean of numbers
	boolean          bool
	scored, failed   int
	avgCost, avgLate float64
}

func summarize(r *run, evaluatorID string) score {
	var s score
	var cost, latency float64
	var costs, latencies int
	for _, sc := range r.scenarios {
		res, ok := resultOf(sc, evaluatorID)
		if !ok || res.Failed() {
			s.failed++
			continue
		}
		if b, ok := res.Bool(); ok {
			s.boolean = true
			if b {
				s.value++
			}
		} else if f, ok := res.Float64(); ok {
			s.value += f
		} else {
			s.failed++
			continue
		}
		s.scored++
		if len(sc.Outputs) > 0 {
			if c := sc.Outputs[0].Cost; c != nil {
				cost += *c
				costs++
			}
			if l := sc.Outputs[0].Latency; l != nil {
				latency += *l
				latencies++
			}
		}
	}
	if s.scored > 0 {
		s.value /= float64(s.scored)
	}
	if costs > 0 {
		s.avgCost = cost / float64(costs)
	}
	if latencies > 0 {
		s.avgLate = latency / float64(latencies)
	}
	return s
}

func resultOf(sc models.EvaluationScenario, evaluatorID string) (models.Result, bool) {
	for _, r := range sc.Results {
		if r.EvaluatorConfig == evaluatorID {
			return r.Result, true
		}
	}
	return models.Result{}, false
}

// compare prints, per evaluator, each variant's score, average cost and
// average latency over the rows the evaluator scored.
func compare(out io.Writer, runs []*run, evaluators []demo.Evaluator) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EVALUATOR\tVARIANT\t  SCORE\t   AVG COST\tAVG LATENCY\tERRORS")
	for _, e := range evaluators {
		for i, r := range runs {
			s := summarize(r, e.ID)
			name := e.Name
			if i > 0 {
				name = ""
			}
			value := fmt.Sprintf("%7.2f", s.value)
			if s.boolean {
				value = fmt.Sprintf("%6.1f%%", 100*s.value)
			}
			if s.scored == 0 {
				value = fmt.Sprintf("%7s", "-")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t$%.7f\t%10.3fs\t%6d\n", name, r.label, value, s.avgCost, s.avgLate, s.failed)
		}
	}
	_ = tw.Flush()
}

// worstRows prints the rows a run did worst on: the most failed checks, then
// the largest numeric score (an edit distance), first.
func worstRows(out io.Writer, r *run, evaluators []demo.Evaluator, n int) {
	type row struct {
		sc       models.EvaluationScenario
		failures []string
		distance float64
	}
	var rows []row
	for _, sc := range r.scenarios {
		rw := row{sc: sc}
		for _, e := range evaluators {
			res, ok := resultOf(sc, e.ID)
			switch b, isBool := res.Bool(); {
			case !ok || res.Failed():
				rw.failures = append(rw.failures, e.Name+" (error)")
			case isBool && !b:
				rw.failures = append(rw.failures, e.Name)
			case !isBool:
				if f, ok := res.Float64(); ok {
					rw.distance += f
				}
			}
		}
		if len(rw.failures) > 0 || rw.distance > 0 {
			rows = append(rows, rw)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if len(rows[i].failures) != len(rows[j].failures) {
			return len(rows[i].failures) > len(rows[j].failures)
		}
		return rows[i].distance > rows[j].distance
	})
	fmt.Fprintf(out, "\nworst rows of %s:\n", r.label)
	if len(rows) == 0 {
		fmt.Fprintln(out, "  none: every row passed every evaluator")
		return
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  INPUT\tANSWER\tEXPECTED\tFAILED")
	for i, rw := range rows {
		if i == n {
			break
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", demo.Inputs(rw.sc), demo.Answer(rw.sc), demo.Expected(rw.sc), strings.Join(rw.failures, ", "))
	}
	_ = tw.Flush()
}

func describe(s settings) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v, _ := json.Marshal(s[k])
		parts[i] = k + "=" + string(v)
	}
	return strings.Join(parts, " ")
}
