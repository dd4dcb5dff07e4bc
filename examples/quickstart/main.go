// Command quickstart calls each of the SDK's seven operations once and prints
// what came back.
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
//	    -app ID -base ID -testset ID -evaluators ID,ID -span ID
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
	"github.com/agenta-go/agenta/examples/internal/demo"
	"github.com/agenta-go/agenta/models"
)

// config holds the ids the example works on.
type config struct {
	appID, baseID, testsetID, spanID string
	environment                      string
	evaluators                       []demo.Evaluator
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
	fs.StringVar(&cfg.baseID, "base", "", "base id to fork a variant from (AGENTA_HOST only)")
	fs.StringVar(&cfg.testsetID, "testset", "", "test set id (AGENTA_HOST only)")
	fs.StringVar(&evaluators, "evaluators", "", "evaluator config ids, comma-separated, each optionally as name=id (AGENTA_HOST only)")
	fs.StringVar(&cfg.spanID, "span", "", "span id (AGENTA_HOST only)")
	fs.StringVar(&cfg.environment, "env", models.EnvironmentProduction, "environment to read the deployed variant from")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.evaluators = demo.ParseEvaluators(evaluators)

	client, configName, stop, err := connect(&cfg, out)
	if err != nil {
		return err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	// 1. Which variant serves production?
	section(out, "GetVariantByEnvironment: the variant deployed to "+cfg.environment)
	deployed, err := client.GetVariantByEnvironment(ctx, cfg.appID, cfg.environment)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s (%s), revision %d\n", deployed.VariantName, deployed.VariantID, deployed.Revision)

	// 2. The same variant, by id.
	section(out, "GetVariant: that variant by id, with its parameters")
	variant, err := client.GetVariant(ctx, deployed.VariantID)
	if err != nil {
		return err
	}
	printVariant(out, variant)

	// 3. Fork a variant from the same base with other parameters.
	section(out, "AddVariantFromBase: a new variant with temperature 0 and gpt-4o-mini")
	params := map[string]any{}
	for k, v := range variant.Parameters {
		params[k] = v
	}
	params["temperature"] = 0.0
	params["model"] = "gpt-4o-mini"
	baseID := cfg.baseID
	if baseID == "" {
		baseID = variant.BaseID
	}
	forked, err := client.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: baseID, NewVariantName: configName, NewConfigName: configName, Parameters: params,
	})
	if err != nil {
		return err
	}
	printVariant(out, forked)

	// 4. Evaluate the new variant against the test set.
	section(out, "CreateEvaluation: evaluate the new variant on the test set")
	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              cfg.appID,
		VariantIDs:         []string{forked.VariantID},
		EvaluatorConfigIDs: demo.IDs(cfg.evaluators),
		TestsetID:          cfg.testsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		return err
	}
	for _, ev := range evaluations {
		fmt.Fprintf(out, "evaluation %s of %s on test set %q: %s\n",
			ev.ID, strings.Join(ev.VariantNames, ", "), ev.TestsetName, ev.State())
	}

	// 5. Its scenarios: one per test-set row, with each evaluator's verdict.
	section(out, "FetchEvaluationScenarios: one scenario per test-set row")
	scenarios, err := firstScenarios(ctx, client, evaluations[0].ID)
	if err != nil {
		return err
	}
	printScenarios(out, scenarios, cfg.evaluators)

	// 6. A trace of one call to the app.
	section(out, "GetSpan: a trace of one call to the app")
	span, err := client.GetSpan(ctx, cfg.spanID, nil)
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

	// 7. The app's human evaluations.
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

// connect returns a client for AGENTA_HOST, or else for an embedded fake
// loaded with the demo data, whose ids then fill in cfg. It also returns the
// config name to give the forked variant, unique on a real server.
func connect(cfg *config, out io.Writer) (*agenta.Client, string, func(), error) {
	target := demo.Connect()
	if d := target.Demo; d != nil {
		cfg.appID, cfg.baseID, cfg.testsetID, cfg.spanID = d.AppID, d.BaseID, d.TestsetID, d.SpanID
		cfg.evaluators = demo.Evaluators(*d)
		fmt.Fprintln(out, "Agenta quickstart against the embedded demo server (set AGENTA_HOST to use yours)")
	} else if cfg.appID == "" || cfg.testsetID == "" || len(cfg.evaluators) == 0 || cfg.spanID == "" {
		return nil, "", nil, errors.New("with AGENTA_HOST set, pass -app, -testset, -evaluators and -span")
	} else {
		fmt.Fprintf(out, "Agenta quickstart against %s\n", target.URL)
	}

	// The base URL ends in /api; the API key goes with every request.
	var opts []agenta.Option
	if target.APIKey != "" {
		opts = append(opts, agenta.WithAPIKey(target.APIKey))
	}
	client, err := agenta.NewClient(target.URL, opts...)
	if err != nil {
		target.Close()
		return nil, "", nil, err
	}
	return client, target.UniqueName("quickstart"), target.Close, nil
}

// firstScenarios waits until the evaluation has scenarios. The embedded
// server fills them in at once; a real one runs the app on each row first.
func firstScenarios(ctx context.Context, client *agenta.Client, id string) ([]models.EvaluationScenario, error) {
	for {
		scenarios, err := client.FetchEvaluationScenarios(ctx, id)
		if err != nil || len(scenarios) > 0 {
			return scenarios, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
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

func printScenarios(out io.Writer, scenarios []models.EvaluationScenario, evaluators []demo.Evaluator) {
	names := map[string]string{}
	for _, e := range evaluators {
		names[e.ID] = e.Name
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	header := []string{"INPUT", "ANSWER", "EXPECTED"}
	if len(scenarios) > 0 {
		for _, r := range scenarios[0].Results {
			header = append(header, strings.ToUpper(nameOr(names, r.EvaluatorConfig)))
		}
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, sc := range scenarios {
		row := []string{demo.Inputs(sc), demo.Answer(sc), demo.Expected(sc)}
		for _, r := range sc.Results {
			row = append(row, r.Result.String())
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	fmt.Fprintf(out, "%d scenarios\n", len(scenarios))
}

func nameOr(names map[string]string, id string) string {
	if n, ok := names[id]; ok {
		return n
	}
	return id
}

func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}
