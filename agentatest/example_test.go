package agentatest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

func ExampleSeedDemo() {
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)

	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	v, err := client.GetVariantByEnvironment(context.Background(), demo.AppID, models.EnvironmentProduction)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.VariantName, v.Revision)
	// Output: capitals.default 3
}

func ExampleServer_AddVariant() {
	srv := agentatest.NewServer()
	defer srv.Close()
	app := srv.AddApp(agentatest.App{Name: "greeter"})
	base := srv.AddBase(agentatest.Base{AppID: app})
	variant := srv.AddVariant(agentatest.Variant{
		BaseID:     base,
		ConfigName: "formal",
		Parameters: map[string]any{"prompt_user": "Good day, {name}."},
	})
	srv.DeployToEnvironment(variant, models.EnvironmentProduction)

	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	v, err := client.GetVariantByEnvironment(context.Background(), app, models.EnvironmentProduction)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.VariantName, v.Parameters["prompt_user"])
	// Output: greeter.formal Good day, {name}.
}

func ExampleServer_InjectFault() {
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL(), agenta.WithRetryWait(time.Millisecond, 10*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}

	// Two 503s, then the real answer: the client retries a read through them.
	srv.InjectFault(agentatest.OpGetVariant, 2, agentatest.Fault{Status: 503, RetryAfter: "0"})
	v, err := client.GetVariant(context.Background(), demo.VariantID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.VariantName)
	for _, r := range srv.RequestsFor(agentatest.OpGetVariant) {
		fmt.Println(r.Method, r.Path, r.Status, r.Fault)
	}

	// A create is never repeated after a 502.
	srv.InjectFault(agentatest.OpAddVariantFromBase, 1, agentatest.Fault{Status: 502})
	_, err = client.AddVariantFromBase(context.Background(), models.AddVariantFromBase{
		BaseID: demo.BaseID, NewVariantName: "x", NewConfigName: "x",
	})
	fmt.Println(errors.Is(err, agenta.ErrServer), len(srv.RequestsFor(agentatest.OpAddVariantFromBase)))
	// Output:
	// capitals.default
	// GET /api/variants/0190547f-5e5f-7de0-8000-000000000c01 503 true
	// GET /api/variants/0190547f-5e5f-7de0-8000-000000000c01 503 true
	// GET /api/variants/0190547f-5e5f-7de0-8000-000000000c01 200 false
	// true 1
}

func ExampleWithManualEvaluations() {
	srv := agentatest.NewServer(agentatest.WithManualEvaluations())
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	evs, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID},
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	progress := func() {
		scenarios, err := client.FetchEvaluationScenarios(ctx, evs[0].ID)
		if err != nil {
			log.Fatal(err)
		}
		ev, _ := srv.Evaluation(evs[0].ID)
		fmt.Printf("%d/%d %s\n", len(scenarios), demo.TestsetRows, ev.State())
	}
	progress() // no worker: the run waits, as on a service whose worker is down
	srv.AdvanceEvaluations(8)
	progress() // every row's app call made; no scenario is written before the last
	srv.AdvanceEvaluations(3)
	progress() // three scenarios written, one row at a time: still running
	srv.AdvanceEvaluations(5)
	progress() // the last write aggregates and finishes
	// Output:
	// 0/8 EVALUATION_INITIALIZED
	// 0/8 EVALUATION_STARTED
	// 3/8 EVALUATION_STARTED
	// 8/8 EVALUATION_FINISHED
}

// A test makes the fake's background runs finish deterministically by
// waiting for them after create.
func ExampleServer_WaitEvaluations() {
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	evs, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         demo.VariantIDs(),
		EvaluatorConfigIDs: []string{demo.ExactMatchID},
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", evs[0].State(), evs[1].State())

	if err := srv.WaitEvaluations(ctx); err != nil {
		log.Fatal(err)
	}
	for _, ev := range evs {
		finished, _ := srv.Evaluation(ev.ID)
		score, _ := finished.AggregatedResults[0].Result.Float64()
		scenarios, err := client.FetchEvaluationScenarios(ctx, ev.ID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(finished.VariantNames[0], finished.State(), len(scenarios), "scenarios, exact match", score)
	}
	// Output:
	// created: EVALUATION_INITIALIZED EVALUATION_INITIALIZED
	// capitals.default EVALUATION_FINISHED 8 scenarios, exact match 0.625
	// capitals.verbose EVALUATION_FINISHED 8 scenarios, exact match 0
}
