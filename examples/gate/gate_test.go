package gate_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
)

// releaseGates are what a candidate must meet to replace production.
var releaseGates = []evals.Gate{
	evals.MinMean("Exact match", 0.9),
	evals.NoSignificantRegression("Exact match", 0.05),
	evals.MaxWorseRows("Edit distance", 0),
	evals.MaxAppErrors(0),
}

func TestReleaseGate(t *testing.T) {
	// Here the service is agentatest's fake with the demo data; against
	// your server, build the client with agenta.NewClientFromEnv and take
	// the ids from your project.
	srv := agentatest.NewTestServer(t)
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a candidate at temperature 0 may replace production", func(t *testing.T) {
		report := judge(t, client, demo, "precise", map[string]any{"temperature": 0.0})
		evals.RequireGates(t, report, releaseGates...)
	})

	// A failing gate fails the test with every failing gate, its measured
	// value and its limit. Shown on a recorder in place of t, so that this
	// test itself passes.
	t.Run("a failing gate fails the test, saying why", func(t *testing.T) {
		report := judge(t, client, demo, "warm", map[string]any{"temperature": 1.0})
		var rec recorder
		evals.RequireGates(&rec, report, releaseGates...)
		want := "evals: 2 of 4 gates failed\n" +
			"  Exact match >= 0.9 failed: measured 0.375, limit >= 0.9\n" +
			"  worse(Edit distance) <= 0 failed: measured 2, limit <= 0"
		if rec.fatal != want {
			t.Errorf("RequireGates reported\n%s\nwant\n%s", rec.fatal, want)
		}
	})
}

// judge forks a candidate from the variant in production with parameters,
// evaluates both on the test set, waits for both runs and returns the
// report comparing them.
func judge(t testing.TB, client *agenta.Client, demo agentatest.Demo, name string, parameters map[string]any) *evals.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	production, err := client.GetVariantByEnvironment(ctx, demo.AppID, models.EnvironmentProduction)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{}
	maps.Copy(params, production.Parameters)
	maps.Copy(params, parameters)
	candidate, err := client.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: production.BaseID, NewVariantName: name, NewConfigName: name, Parameters: params,
	})
	if err != nil {
		t.Fatal(err)
	}
	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{production.VariantID, candidate.VariantID},
		EvaluatorConfigIDs: demo.EvaluatorConfigIDs(), TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var runs [2]evals.Run
	for i, ev := range evaluations {
		finished, err := client.WaitEvaluation(ctx, ev.ID, &agenta.WaitOptions{Interval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		scenarios, err := client.FetchEvaluationScenarios(ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = evals.Run{Evaluation: *finished, Scenarios: scenarios}
	}
	return evals.NewReport(runs[0], runs[1])
}

// recorder is an evals.TB that keeps the failure instead of failing.
type recorder struct{ fatal string }

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = strings.TrimSpace(fmt.Sprintf(format, args...))
}
