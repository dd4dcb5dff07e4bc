// Command quickstart calls each of the SDK's seven operations once, waits
// for the evaluation it starts (WaitEvaluation, which reads the evaluation's
// status and then the finished evaluation), and prints what came back.
//
// Run as is, it starts an embedded fake of the service (package agentatest)
// loaded with demo data, so it needs no server and no account:
//
//	go run ./examples/quickstart
//
// With AGENTA_HOST (and AGENTA_API_KEY) set it talks to that server instead;
// then pass the ids of your own objects:
//
//	AGENTA_HOST=https://cloud.agenta.ai AGENTA_API_KEY=... go run ./examples/quickstart \
//	    -app ID -testset ID -evaluators ID,ID [-variant ID] [-span ID]
//
// Self-hosted servers of mid-2024 answer every lookup of the variant
// deployed to an environment with a 500 (a bug of that release), which the
// SDK gets past by reading the app's environments; they have no span
// route, so leave out -span there.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// config holds the ids the example works on.
type config struct {
	appID, baseID, testsetID, spanID string
	variantID, environment           string
	evaluatorIDs                     []string
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	var cfg config
	var evaluators string
	fs.StringVar(&cfg.appID, "app", "", "app id (AGENTA_HOST only)")
	fs.StringVar(&cfg.baseID, "base", "", "base id to fork a variant from (default: the deployed variant's)")
	fs.StringVar(&cfg.testsetID, "testset", "", "test set id (AGENTA_HOST only)")
	fs.StringVar(&evaluators, "evaluators", "", "evaluator config ids, comma-separated (AGENTA_HOST only)")
	fs.StringVar(&cfg.spanID, "span", "", "span id (AGENTA_HOST only; without it the span step is skipped)")
	fs.StringVar(&cfg.variantID, "variant", "", "id of the variant to start from, instead of the one deployed to -env")
	fs.StringVar(&cfg.environment, "env", models.EnvironmentProduction, "environment to read the deployed variant from")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.evaluatorIDs = strings.FieldsFunc(evaluators, func(r rune) bool { return r == ',' || r == ' ' })

	// Without AGENTA_HOST, an embedded fake loaded with the demo data stands
	// in for the service. Its worker takes 60 ms per step, so that the wait
	// below sees the run start and finish, as it would on a real server.
	demo, stop := agentatest.StartDemoUnlessHost(agentatest.WithEvaluationPace(60 * time.Millisecond))
	defer stop()
	configName, poll := "quickstart", 100*time.Millisecond
	if demo != nil {
		cfg.appID, cfg.testsetID, cfg.spanID = demo.AppID, demo.TestsetID, demo.SpanID
		cfg.evaluatorIDs = demo.EvaluatorConfigIDs()
		fmt.Fprintln(out, "Agenta quickstart against the embedded demo server (set AGENTA_HOST to use yours)")
	} else if cfg.appID == "" || cfg.testsetID == "" || len(cfg.evaluatorIDs) == 0 {
		return errors.New("with AGENTA_HOST set, pass -app, -testset and -evaluators (and -variant, -span when you have them)")
	} else {
		// A real server keeps what earlier runs created; its web page polls
		// every 2 s, and so does WaitEvaluation by default.
		configName, poll = fmt.Sprintf("quickstart-%d", time.Now().Unix()), 0
		fmt.Fprintf(out, "Agenta quickstart against %s\n", os.Getenv("AGENTA_HOST"))
	}
	client, err := agenta.NewClientFromEnv() // AGENTA_HOST, and AGENTA_API_KEY when set
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()

	// 1. Which variant serves production? With -variant, the answer is
	// shown but not needed: that variant is the one the example goes on
	// with, so a server whose lookup fails does not stop it.
	section(out, "GetVariantByEnvironment: the variant deployed to "+cfg.environment)
	variantID := cfg.variantID
	deployed, err := client.GetVariantByEnvironment(ctx, cfg.appID, cfg.environment)
	switch {
	case err == nil:
		fmt.Fprintf(out, "%s (%s), revision %d\n", deployed.VariantName, deployed.VariantID, deployed.Revision)
		variantID = cmp.Or(variantID, deployed.VariantID)
	case variantID != "":
		fmt.Fprintf(out, "the lookup failed: %v\ngoing on with -variant %s\n", err, variantID)
	default:
		return fmt.Errorf("%w\npass the id of the variant to start from with -variant ID", err)
	}

	// 2. That variant, by id.
	section(out, "GetVariant: that variant by id, with its parameters")
	variant, err := client.GetVariant(ctx, variantID)
	if err != nil {
		return err
	}
	printVariant(out, variant)

	// 3. Fork a variant from the same base with other parameters.
	section(out, "AddVariantFromBase: a new variant with temperature 0 and gpt-4o-mini")
	params := map[string]any{}
	maps.Copy(params, variant.Parameters)
	params["temperature"] = 0.0
	params["model"] = "gpt-4o-mini"
	baseID := cmp.Or(cfg.baseID, variant.BaseID)
	forked, err := client.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: baseID, NewVariantName: configName, NewConfigName: configName, Parameters: params,
	})
	if err != nil {
		return err
	}
	printVariant(out, forked)

	// 4. Evaluate the new variant against the test set. The service answers
	// at once; a worker runs the evaluation afterwards.
	section(out, "CreateEvaluation: evaluate the new variant on the test set")
	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              cfg.appID,
		VariantIDs:         []string{forked.VariantID},
		EvaluatorConfigIDs: cfg.evaluatorIDs,
		TestsetID:          cfg.testsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		return err
	}
	evaluation := evaluations[0]
	fmt.Fprintf(out, "evaluation %s of %s on test set %q: %s\n",
		evaluation.ID, strings.Join(evaluation.VariantNames, ", "), evaluation.TestsetName, evaluation.State())

	// 5. Wait for it: WaitEvaluation reads the status (FetchEvaluationStatus)
	// until the run ends, then returns the finished evaluation
	// (FetchEvaluation), with its evaluator configs and aggregated results.
	section(out, "WaitEvaluation: the status until the run ends, then the finished evaluation")
	finished, err := client.WaitEvaluation(ctx, evaluation.ID, &agenta.WaitOptions{
		Interval: poll,
		OnStatus: func(status models.Result) { fmt.Fprintf(out, "status %s\n", status.String()) },
	})
	if err != nil {
		return err // a failed run matches agenta.ErrEvaluationFailed
	}
	names := map[string]string{}
	for _, r := range finished.AggregatedResults {
		names[r.EvaluatorConfig.ID] = r.EvaluatorConfig.Name
		fmt.Fprintf(out, "%-14s %s\n", r.EvaluatorConfig.Name, r.Result.String())
	}

	// 6. Its scenarios: one per test-set row, with each evaluator's result.
	section(out, "FetchEvaluationScenarios: one scenario per test-set row")
	scenarios, err := client.FetchEvaluationScenarios(ctx, evaluation.ID)
	if err != nil {
		return err
	}
	printScenarios(out, scenarios, cfg.evaluatorIDs, names)

	// 7. A trace of one call to the app, where the server keeps traces.
	section(out, "GetSpan: a trace of one call to the app")
	if err := printSpan(ctx, out, client, cfg.spanID); err != nil {
		return err
	}

	// 8. The app's human evaluations.
	section(out, "ListHumanEvaluations: the app's human evaluations")
	humans, err := client.ListHumanEvaluations(ctx, cfg.appID)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tVARIANTS\tTEST SET\tSTATUS\tCREATED")
	for _, h := range humans {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.EvaluationType, strings.Join(h.VariantNames, " vs "),
			h.TestsetName, h.Status, h.CreatedAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	return tw.Flush()
}

// printSpan prints a summary of a span's tree. Without a span id, or on a
// server without the span route (self-hosted servers of mid-2024 have
// none), it says so and returns no error.
func printSpan(ctx context.Context, out io.Writer, client *agenta.Client, spanID string) error {
	if spanID == "" {
		fmt.Fprintln(out, "skipped: pass -span ID (self-hosted servers of mid-2024 keep no traces)")
		return nil
	}
	span, err := client.GetSpan(ctx, spanID, nil)
	if errors.Is(err, agenta.ErrRouteNotFound) {
		fmt.Fprintln(out, "skipped: this server has no span route (self-hosted servers of mid-2024 have none)")
		return nil
	}
	if err != nil {
		return err
	}
	count, errorsSeen := 0, 0
	span.Walk(func(s *models.Span, _ int) bool {
		count++
		if s.Status == models.SpanStatusError {
			errorsSeen++
		}
		return true
	})
	latency, _ := span.Latency()
	fmt.Fprintf(out, "%s (%s, %s) in %s, variant %s rev %d, %s: %d spans, %d with an error\n",
		span.Name, span.SpanKind, span.Status, span.DeployedEnvironment(),
		span.Variant.VariantName, span.Variant.Revision, seconds(latency), count, errorsSeen)
	fmt.Fprintln(out, "(go run ./examples/trace prints the whole tree)")
	return nil
}

func section(out io.Writer, title string) {
	fmt.Fprintf(out, "\n== %s\n", title)
}

func printVariant(out io.Writer, v *models.AppVariantResponse) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "variant\t%s (%s)\n", v.VariantName, v.VariantID)
	fmt.Fprintf(tw, "revision\t%d\n", v.Revision)
	fmt.Fprintf(tw, "base\t%s (%s)\n", v.BaseName, v.BaseID)
	if v.PreviousVariantName != "" {
		fmt.Fprintf(tw, "forked from\t%s\n", v.PreviousVariantName)
	}
	keys := make([]string, 0, len(v.Parameters))
	for k := range v.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		label := ""
		if i == 0 {
			label = "parameters"
		}
		value, _ := json.Marshal(v.Parameters[k])
		fmt.Fprintf(tw, "%s\t%s = %s\n", label, k, value)
	}
	_ = tw.Flush()
}

// printScenarios writes one line per scenario: the inputs, the app's
// answer, the expected answer and each evaluator's result, by name.
func printScenarios(out io.Writer, scenarios []models.EvaluationScenario, evaluatorIDs []string, names map[string]string) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	header := []string{"INPUT", "ANSWER", "EXPECTED"}
	for _, id := range evaluatorIDs {
		header = append(header, strings.ToUpper(cmp.Or(names[id], id)))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, sc := range scenarios {
		row := []string{sc.InputsText(), sc.OutputText(), sc.ExpectedAnswer()}
		for _, id := range evaluatorIDs {
			r, _ := sc.Result(id)
			row = append(row, r.String())
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	fmt.Fprintf(out, "%d scenarios\n", len(scenarios))
}

func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}
