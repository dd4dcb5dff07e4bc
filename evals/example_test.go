package evals_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"maps"
	"os"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
)

// A release gate: evaluate a candidate variant and the one in production on
// the same test set, compare them row by row, check the gates and write a
// report. It runs here on agentatest's embedded fake, loaded with demo data.
func Example() {
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// The candidate: production's parameters at temperature 0.
	production, err := client.GetVariantByEnvironment(ctx, demo.AppID, models.EnvironmentProduction)
	if err != nil {
		log.Fatal(err)
	}
	parameters := maps.Clone(production.Parameters)
	parameters["temperature"] = 0.0
	candidate, err := client.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: production.BaseID, NewVariantName: "precise", NewConfigName: "precise", Parameters: parameters,
	})
	if err != nil {
		log.Fatal(err)
	}

	// Create the evaluation of both variants, wait for each run to end (the
	// fake's take a fraction of a second: poll faster than the default 2 s)
	// and read their scenarios, in one call. The finished evaluations name
	// the evaluator configs.
	runs, err := evals.Evaluate(ctx, client, models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         []string{production.VariantID, candidate.VariantID},
		EvaluatorConfigIDs: demo.EvaluatorConfigIDs(),
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	}, &agenta.WaitOptions{Interval: 20 * time.Millisecond})
	if err != nil {
		log.Fatal(err) // a *evals.RunError names the run that failed
	}

	report := evals.NewReport(runs[0], runs[1])
	err = report.Check(
		evals.MinMean("Exact match", 0.9),
		evals.NoSignificantRegression("Exact match", 0.05),
		evals.MaxWorseRows("Edit distance", 0),
		evals.MaxAppErrors(0),
	)
	if err := report.WriteMarkdown(os.Stdout); err != nil {
		log.Fatal(err)
	}
	fmt.Println()
	fmt.Println("release:", !errors.Is(err, evals.ErrGateFailed))
	// Output:
	// ### `capitals.precise` against `capitals.default`
	//
	// | Evaluator | capitals.default | capitals.precise | Change | Better / worse / same | Without value | p |
	// |---|---:|---:|---:|---:|---:|---:|
	// | Edit distance (lower is better) | 2.125 (-0.3806 – 4.631) | 0 (0 – 0) | -2.125 | 3 / 0 / 5 | 0 / 0 | 0.25 |
	// | Exact match | 62.5% (30.6% – 86.3%) | 100.0% (67.6% – 100.0%) | +37.5 pts | 3 / 0 / 5 | 0 / 0 | 0.25 |
	// | Terse answer | 100.0% (67.6% – 100.0%) | 100.0% (67.6% – 100.0%) | +0.0 pts | 0 / 0 / 8 | 0 / 0 | 1 |
	//
	// 8 rows paired by their inputs and expected answers, 0 unpaired. Means over every row, with 95% confidence intervals; a row without a value (errored, missing, or a baseline row the candidate lacks) counts as a fail in a pass rate and as worse in a comparison; a candidate row the baseline never ran counts on neither side. p is two-sided (exact McNemar for pass/fail, Wilcoxon signed-rank for scores).
	//
	// | Run | capitals.default | capitals.precise |
	// |---|---:|---:|
	// | Rows | 8 | 8 |
	// | App errors | 0 | 0 |
	// | Cost per row, mean | 1.4e-05 | 1.4e-05 |
	// | Cost, total | 0.000112 | 0.000112 |
	// | Latency p50 / p95 (s) | 0.5515 / 0.5596 | 0.5465 / 0.5577 |
	//
	// | Gate | Measured | Result |
	// |---|---:|---|
	// | `Exact match >= 0.9` | 1 | ✅ pass |
	// | `regression_p(Exact match) >= 0.05` | 1 | ✅ pass |
	// | `worse(Edit distance) <= 0` | 0 | ✅ pass |
	// | `app_errors <= 0` | 0 | ✅ pass |
	//
	// release: true
}

// Gates read from text, as a command line or a configuration file gives
// them.
func ExampleParseGate() {
	for _, text := range []string{"Exact match >= 90%", "worse(Edit distance)<=2", "latency.p95 <= 2.5", "Exact match = 1"} {
		gate, err := evals.ParseGate(text)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-28s measure %-12s evaluator %-15q %s %v\n", gate, gate.Measure, gate.Evaluator, gate.Op, gate.Limit)
	}
	// Output:
	// Exact match >= 90%           measure mean         evaluator "Exact match"   >= 0.9
	// worse(Edit distance) <= 2    measure worse        evaluator "Edit distance" <= 2
	// latency.p95 <= 2.5           measure latency.p95  evaluator ""              <= 2.5
	// evals: gate "Exact match = 1": unknown operator: want one of >=, >, <=, <
}

// Summarising an evaluation as it streams, in memory that does not grow
// with its rows.
func ExampleSummarizeStream() {
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{demo.VariantID}, EvaluatorConfigIDs: []string{demo.ExactMatchID},
		TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.WaitEvaluations(ctx); err != nil { // the run ends in the background
		log.Fatal(err)
	}
	summary, err := evals.SummarizeStream(client.StreamEvaluationScenarios(ctx, evaluations[0].ID))
	if err != nil {
		log.Fatal(err)
	}
	exact := summary.Evaluators[demo.ExactMatchID]
	fmt.Printf("%d rows, %d passed, pass rate %.3f, 95%% interval %.3f to %.3f\n",
		summary.Rows, exact.Passed(), exact.Mean, exact.Low, exact.High)
	// Output:
	// 8 rows, 5 passed, pass rate 0.625, 95% interval 0.306 to 0.863
}
