package agentatest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// The 2026 generation: a run of the demo's failing test set, waited for,
// and read as rows.
func ExampleSeedDemo2026() {
	srv := agentatest.NewServer(agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey("demo-key"))
	defer srv.Close()
	demo := agentatest.SeedDemo2026(srv)

	client, err := agenta.NewClient(srv.URL(), agenta.WithAPIKey("ApiKey demo-key"))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	created, err := client.CreateSimpleEvaluation(ctx, models.SimpleEvaluationCreate{
		Name:                  "capitals",
		TestsetRevisionID:     demo.ErrTestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID,
		EvaluatorRevisionIDs:  []string{demo.EvaluatorRevisionID},
	})
	if err != nil {
		log.Fatal(err)
	}
	run, err := client.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 50 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("run:", run.Status)
	for row, err := range client.StreamRunRows(ctx, run.ID, nil) {
		if err != nil {
			log.Fatal(err)
		}
		country, _ := row.Scenario.Input("country")
		if msg, failed := row.Scenario.AppError(); failed {
			fmt.Printf("%s: error: %s\n", country, msg)
			continue
		}
		fmt.Printf("%s: %s, exact match %s\n", country, row.Scenario.OutputText(), row.Scenario.Results[0].Result)
	}
	// Output:
	// run: errors
	// France: Paris, exact match true
	// ERRland: error: stand-in app error for ERRland
	// Germany: Berlin, exact match true
	// ERRor2: error: stand-in app error for ERRor2
	// Italy: Rome, exact match false
}
