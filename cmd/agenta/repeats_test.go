package main

import (
	"time"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/rogpeppe/go-internal/testscript"
)

// noisyRight is the chance that the noisy fakes' app answers a call
// right: low enough that 3 repeats of 8 (or 5) cases show flaky ones.
const noisyRight = 0.6

// agentatestPace runs the noisy fakes' evaluations quickly.
const agentatestPace = 2 * time.Millisecond

// setupNoisy serves, for eval_repeats.txtar, an app that answers as an
// LLM app does, right with probability noisyRight per call (seeded, so a
// run reproduces), on both generations:
//
//	NOISY_HOST    a mid-2024 fake with the demo, and NOISY_VARIANT, a variant
//	              of its app (APP_ID's twin, NOISY_APP) served by the noisy app;
//	              NOISY_PRODUCTION its steady variant, NOISY_TESTSET, NOISY_EXACT
//	NOISY26_HOST  a 2026 fake with the demo, and NOISY26_APP, NOISY26_VARIANT,
//	              an application served by the noisy app; NOISY26_TESTSET,
//	              NOISY26_EXACT
func setupNoisy(env *testscript.Env) {
	srv := agentatest.NewServer(agentatest.WithEvaluationPace(agentatestPace))
	env.Defer(srv.Close)
	demo := agentatest.SeedDemo(srv)
	base := srv.AddBase(agentatest.Base{AppID: demo.AppID, Name: "noisy",
		Application: agentatest.NoisyApplication(agentatest.CapitalsApplication, 27, agentatest.RightWith(noisyRight), nil)})
	noisy := srv.AddVariant(agentatest.Variant{BaseID: base, ConfigName: "noisy", Parameters: map[string]any{
		"prompt_system": "You are an expert in geography. Answer in one word.", "prompt_user": "What is the capital of {country}?",
		"temperature": 0.7, "inputs": []any{map[string]any{"name": "country"}}}})

	srv26 := agentatest.NewServer(agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithEvaluationPace(agentatestPace))
	env.Defer(srv26.Close)
	demo26 := agentatest.SeedDemo2026(srv26)
	app26 := srv26.AddApplication2026(agentatest.Application2026{Slug: "noisy",
		Parameters:  map[string]any{"prompt_template": "What is the capital of {country}?", "temperature": 0.7},
		Application: agentatest.NoisyApplication(agentatest.StandInApplication, 27, agentatest.RightWith(noisyRight), nil)})

	for _, kv := range [][2]string{
		{"NOISY_HOST", srv.URL()}, {"NOISY_APP", demo.AppID}, {"NOISY_TESTSET", demo.TestsetID},
		{"NOISY_VARIANT", noisy}, {"NOISY_PRODUCTION", demo.VariantID}, {"NOISY_EXACT", demo.ExactMatchID},
		{"NOISY26_HOST", srv26.URL()}, {"NOISY26_APP", app26.ApplicationID}, {"NOISY26_VARIANT", app26.VariantID},
		{"NOISY26_TESTSET", demo26.TestsetID}, {"NOISY26_EXACT", demo26.EvaluatorID},
	} {
		env.Setenv(kv[0], kv[1])
	}
}
