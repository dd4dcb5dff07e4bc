package evals_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"maps"
	"os"

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

	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         []string{production.VariantID, candidate.VariantID},
		EvaluatorConfigIDs: demo.EvaluatorConfigIDs(),
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	var runs [2]evals.Run
	for i, ev := range evaluations {
		// The fake finishes at once; on a real server, wait for the
		// evaluation to finish first, and take the finished Evaluation
		// (for the evaluator names) from that wait.
		finished, _ := srv.Evaluation(ev.ID)
		scenarios, err := client.FetchEvaluationScenarios(ctx, ev.ID)
		if err != nil {
			log.Fatal(err)
		}
		runs[i] = evals.Run{Evaluation: finished, Scenarios: scenarios}
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
	// | Evaluator | capitals.default | capitals.precise | Change | Better / worse / same | p |
	// |---|---:|---:|---:|---:|---:|
	// | Edit distance (lower is better) | 2.125 (-0.3806 – 4.631) | 0 (0 – 0) | -2.125 | 3 / 0 / 5 | 0.25 |
	// | Exact match | 62.5% (30.6% – 86.3%) | 100.0% (67.6% – 100.0%) | +37.5 pts | 3 / 0 / 5 | 0.25 |
	// | Terse answer | 100.0% (67.6% – 100.0%) | 100.0% (67.6% – 100.0%) | +0.0 pts | 0 / 0 / 8 | 1 |
	//
	// 8 rows paired by their inputs, 0 unpaired. Means over the paired rows, with 95% confidence intervals; p is two-sided (exact McNemar for pass/fail, Wilcoxon signed-rank for scores).
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
