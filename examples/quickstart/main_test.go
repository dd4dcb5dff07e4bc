package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/agentatest"
)

func TestQuickstartEmbedded(t *testing.T) {
	t.Setenv("AGENTA_HOST", "")
	var out bytes.Buffer
	if err := run(context.Background(), nil, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"== GetVariantByEnvironment", "== GetVariant", "== AddVariantFromBase", "== CreateEvaluation",
		"== FetchEvaluationScenarios", "== GetSpan", "== ListHumanEvaluations",
		"capitals.default (0190547f-5e5f-7de0-8000-000000000c01), revision 3",
		"capitals.quickstart", "EVALUATION_INITIALIZED", "8 scenarios",
		"Australia    Canberra  Canberra  true",
		"6 spans, 1 with an error",
		"human_a_b_testing  capitals.default vs capitals.verbose",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
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
		"-evaluators", "Exact=" + d.ExactMatchID + "," + d.EditDistanceID,
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "capitals.quickstart-") {
		t.Errorf("a real server gets a unique config name:\n%s", out.String())
	}
	// One request per operation; the scenarios are polled until the run
	// has written them.
	for _, op := range []agentatest.Operation{
		agentatest.OpGetVariantByEnvironment, agentatest.OpGetVariant, agentatest.OpAddVariantFromBase,
		agentatest.OpCreateEvaluation, agentatest.OpGetSpan, agentatest.OpListHumanEvaluations,
	} {
		if n := len(srv.RequestsFor(op)); n != 1 {
			t.Errorf("%s requested %d times, want once", op, n)
		}
	}
	if len(srv.RequestsFor(agentatest.OpFetchEvaluationScenarios)) == 0 {
		t.Error("the scenarios were never fetched")
	}

	t.Setenv("AGENTA_API_KEY", "")
	if err := run(context.Background(), []string{"-app", d.AppID}, &out); err == nil {
		t.Error("missing ids must be refused")
	}
}
