package gate_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
)

// TestReleaseGate forks a candidate from the variant in production,
// evaluates both on the test set, and fails unless the candidate may
// replace production. Against your server: agenta.NewClientFromEnv(), and
// your ids in place of demo's.
func TestReleaseGate(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	production, err := client.GetVariantByEnvironment(ctx, demo.AppID, models.EnvironmentProduction)
	if err != nil {
		t.Fatal(err)
	}
	parameters := maps.Clone(production.Parameters)
	parameters["temperature"] = 0.0
	candidate, err := client.AddVariantFromBase(ctx, models.AddVariantFromBase{BaseID: production.BaseID,
		NewVariantName: "candidate", NewConfigName: "candidate", Parameters: parameters})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := evals.Evaluate(ctx, client, models.NewEvaluation{AppID: demo.AppID, TestsetID: demo.TestsetID,
		VariantIDs: []string{production.VariantID, candidate.VariantID}, EvaluatorConfigIDs: demo.EvaluatorConfigIDs(),
		RateLimit: models.DefaultRateLimit()}, &agenta.WaitOptions{Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err) // a *evals.RunError names the run that failed
	}
	evals.RequireGates(t, evals.NewReport(runs[0], runs[1]), evals.MinMean("Exact match", 0.9),
		evals.NoSignificantRegression("Exact match", 0.05), evals.MaxWorseRows("Edit distance", 0), evals.MaxAppErrors(0))
}
