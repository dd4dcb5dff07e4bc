package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

func TestQuickstartEmbedded(t *testing.T) {
	t.Setenv("AGENTA_HOST", "")
	var out bytes.Buffer
	if err := run(context.Background(), nil, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"== GetVariantByEnvironment", "== GetVariant", "== AddVariantFromBase", "== CreateEvaluation",
		"== WaitEvaluation", "== FetchEvaluationScenarios", "== GetSpan", "== ListHumanEvaluations",
		"capitals.default (", "), revision 3",
		"capitals.quickstart",
		"status EVALUATION_FINISHED\nExact match    1.0\nEdit distance  0.0\nTerse answer   1.0\n",
		"INPUT                ANSWER    EXPECTED  EXACT MATCH  EDIT DISTANCE  TERSE ANSWER",
		"country=Australia    Canberra  Canberra  true         0              true", "8 scenarios",
		"6 spans, 1 with an error",
		"human_a_b_testing  capitals.default vs capitals.verbose",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The statuses the wait saw, in the order of the lifecycle; which of
	// the running ones it saw depends on timing, the end does not.
	statuses := regexp.MustCompile(`(?m)^status (\S+)$`).FindAllStringSubmatch(out.String(), -1)
	order := map[string]int{"EVALUATION_INITIALIZED": 0, "EVALUATION_STARTED": 1, "EVALUATION_FINISHED": 2}
	for i, s := range statuses {
		if i > 0 && order[s[1]] <= order[statuses[i-1][1]] {
			t.Errorf("status %s after %s: the wait must print each change once, in lifecycle order", s[1], statuses[i-1][1])
		}
	}
	if n := len(statuses); n == 0 || statuses[n-1][1] != "EVALUATION_FINISHED" {
		t.Errorf("statuses %v, want them to end with EVALUATION_FINISHED", statuses)
	}
}

// TestQuickstartAgainstAHost points AGENTA_HOST at a fake, as a user would
// at their server, with the key and ids passed in.
func TestQuickstartAgainstAHost(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithAPIKey("key.secret"))
	d := agentatest.SeedDemo(srv)
	t.Setenv("AGENTA_HOST", strings.TrimSuffix(srv.URL(), "/api"))
	t.Setenv("AGENTA_API_KEY", "key.secret")
	var out bytes.Buffer
	err := run(context.Background(), []string{
		"-app", d.AppID, "-base", d.BaseID, "-testset", d.TestsetID, "-span", d.SpanID,
		"-evaluators", d.ExactMatchID + "," + d.EditDistanceID,
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Agenta quickstart against " + strings.TrimSuffix(srv.URL(), "/api"),
		"capitals.quickstart-", // a real server gets a unique config name
		"INPUT                ANSWER    EXPECTED  EXACT MATCH  EDIT DISTANCE\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The seven operations once each, and the two evaluation reads.
	for _, op := range agentatest.Operations() {
		n := len(srv.RequestsFor(op))
		if op == agentatest.OpFetchEvaluationStatus && n < 1 || op != agentatest.OpFetchEvaluationStatus && n != 1 {
			t.Errorf("%s requested %d times, want once (the status at least once)", op, n)
		}
	}

	t.Setenv("AGENTA_API_KEY", "")
	if err := run(context.Background(), []string{"-app", d.AppID}, &out); err == nil {
		t.Error("missing ids must be refused")
	}
}

// TestQuickstartOnAMid2024Server runs against a fake that answers as the
// self-hosted server of mid-2024 does: the lookup by environment is a 500
// (its bug) and there is no span route. Without -variant the SDK reads the
// app's environments instead; with -variant it goes on with that one; an
// app with nothing deployed says what to pass; without -span it skips the
// span.
func TestQuickstartOnAMid2024Server(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithBrokenEnvironmentLookup())
	app := srv.AddApp(agentatest.App{Name: "capitals"})
	base := srv.AddBase(agentatest.Base{AppID: app, Application: agentatest.CapitalsApplication})
	variant := srv.AddVariant(agentatest.Variant{BaseID: base, Parameters: map[string]any{
		"prompt_user": "{country}", "prompt_system": "Answer in one word.", "temperature": 0.7}})
	srv.DeployToEnvironment(variant, "production")
	testset := srv.AddTestset(agentatest.Testset{AppID: app, Rows: []map[string]string{{"country": "France", "correct_answer": "Paris"}}})
	exact := srv.AddEvaluatorConfig(models.EvaluatorConfig{Name: "Exact match", EvaluatorKey: "auto_exact_match",
		SettingsValues: map[string]any{"correct_answer_key": "correct_answer"}})
	t.Setenv("AGENTA_HOST", srv.URL())
	t.Setenv("AGENTA_API_KEY", "")
	args := []string{"-app", app, "-testset", testset, "-evaluators", exact}

	var out bytes.Buffer
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatalf("without -variant: %v\n%s", err, out.String())
	}
	for _, want := range []string{"capitals.default (" + variant + "), revision 1\n", "status EVALUATION_FINISHED\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	undeployed := srv.AddApp(agentatest.App{Name: "undeployed"})
	err := run(context.Background(), []string{"-app", undeployed, "-testset", testset, "-evaluators", exact}, &out)
	if err == nil || !strings.Contains(err.Error(), `has no variant deployed to "production"`) || !strings.Contains(err.Error(), "with -variant ID") {
		t.Fatalf("nothing deployed: got %v, want the reason and what to pass instead", err)
	}
	if !errors.Is(err, agenta.ErrNotFound) {
		t.Errorf("the error %v must match agenta.ErrNotFound", err)
	}

	out.Reset()
	if err := run(context.Background(), append(args, "-variant", variant), &out); err != nil {
		t.Fatalf("with -variant: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"capitals.default (" + variant + "), revision 1\n",
		"status EVALUATION_FINISHED\n",
		"== GetSpan: a trace of one call to the app\nskipped: pass -span ID",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := run(context.Background(), append(args, "-variant", variant, "-span", "0190b5a2-1234-7abc-8def-0123456789ab"), &out); err != nil {
		t.Fatalf("with -span on a server without the route: %v", err)
	}
	if !strings.Contains(out.String(), "skipped: this server has no span route") {
		t.Errorf("output lacks the missing route:\n%s", out.String())
	}
}
