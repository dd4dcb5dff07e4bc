package agenta_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// passesPerCase runs the 2026 demo test set five times per case (repeats,
// the app called per repeat) against an app right with probability 0.6 per
// call, and returns each case's number of passes.
func passesPerCase2026(t *testing.T, seed uint64) map[string]int {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	app := srv.AddApplication2026(agentatest.Application2026{Slug: "noisy", Parameters: map[string]any{"temperature": 0.7},
		Application: agentatest.NoisyApplication(agentatest.StandInApplication, seed, agentatest.RightWith(0.6), nil)})
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID, Repeats: 5, Split: true,
		ApplicationRevisionID: app.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	_, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	passes := map[string]int{}
	for _, row := range collect(t, c.StreamRunRows(ctx, created.ID, nil)) {
		require.Len(t, row.Scenario.Results, 1)
		ok, _ := row.Scenario.Results[0].Result.Bool()
		passes[row.TestcaseID] += map[bool]int{true: 1}[ok]
	}
	require.Len(t, passes, 5)
	return passes
}

// A noisy app on the 2026 fake gives flaky cases (some repeats pass, some
// fail), the same ones for the same seed.
func TestNoisyApplicationRepeats2026(t *testing.T) {
	first := passesPerCase2026(t, 42)
	flaky := 0
	for _, n := range first {
		if n > 0 && n < 5 {
			flaky++
		}
	}
	assert.Positive(t, flaky, "no case both passed and failed: %v", first)
	assert.Equal(t, first, passesPerCase2026(t, 42), "the same seed, the same outcomes per case")
}

// On the mid-2024 fake, repeats are evaluations run again: each run of the
// same variant calls the noisy app anew.
func TestNoisyApplicationRepeats2024(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithEvaluationPace(time.Millisecond))
	app := srv.AddApp(agentatest.App{Name: "noisy"})
	base := srv.AddBase(agentatest.Base{AppID: app,
		Application: agentatest.NoisyApplication(agentatest.CapitalsApplication, 5, agentatest.RightWith(0.5), nil)})
	variant := srv.AddVariant(agentatest.Variant{BaseID: base, Parameters: map[string]any{
		"prompt_user": "{country}", "prompt_system": "Answer in one word.", "temperature": 0.0}})
	countries := []string{"France", "Germany", "Italy", "Spain", "Japan", "Brazil"}
	rows := make([]map[string]string, len(countries))
	for i, c := range countries {
		rows[i] = map[string]string{"country": c, "correct_answer": "?"}
	}
	capitals := map[string]string{}
	for _, c := range countries {
		out, err := agentatest.CapitalsApplication(map[string]any{"prompt_system": "Answer in one word.", "temperature": 0.0}, map[string]string{"country": c})
		require.NoError(t, err)
		capitals[c] = out
	}
	testset := srv.AddTestset(agentatest.Testset{AppID: app, Rows: rows})
	exact := srv.AddEvaluatorConfig(models.EvaluatorConfig{Name: "Exact match", EvaluatorKey: "auto_exact_match",
		SettingsValues: map[string]any{"correct_answer_key": "correct_answer"}})
	c := clientFor(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	right := map[string]int{}
	for range 4 {
		evs, err := c.CreateEvaluation(ctx, models.NewEvaluation{AppID: app, VariantIDs: []string{variant}, TestsetID: testset,
			EvaluatorConfigIDs: []string{exact}, RateLimit: models.DefaultRateLimit()})
		require.NoError(t, err)
		require.NoError(t, srv.WaitEvaluations(ctx))
		scenarios, err := c.FetchEvaluationScenarios(ctx, evs[0].ID)
		require.NoError(t, err)
		for _, s := range scenarios {
			var country string
			for _, in := range s.Inputs {
				if in.Name == "country" {
					require.NoError(t, json.Unmarshal(in.Value, &country))
				}
			}
			if s.OutputText() == capitals[country] {
				right[country]++
			}
		}
	}
	flaky := 0
	for _, n := range right {
		if n > 0 && n < 4 {
			flaky++
		}
	}
	assert.Positive(t, flaky, "no case both right and wrong over 4 runs: %v", right)
}
