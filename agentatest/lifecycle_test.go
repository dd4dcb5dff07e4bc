package agentatest_test

// Tests that pin the contract README's "The life of an evaluation", read
// with plain net/http so that they hold whatever the SDK does.

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta/agentatest"
)

// createDemoEvaluation starts one evaluation of capitals.default through the
// SDK and returns its id.
func createDemoEvaluation(t *testing.T, srv *agentatest.Server, d agentatest.Demo) string {
	t.Helper()
	evs, err := newClient(t, srv).CreateEvaluation(context.Background(), newEvaluation(d, d.VariantID))
	require.NoError(t, err)
	require.Len(t, evs, 1)
	return evs[0].ID
}

func TestEvaluationReads(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	id := createDemoEvaluation(t, srv, d)
	require.NoError(t, srv.WaitEvaluations(context.Background()))

	r := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+id)
	require.Equal(t, 200, r.status, "GET /evaluations/{id}: %s", r.body)
	doc := r.json(t).(map[string]any)
	assert.Equal(t, id, doc["id"])
	assert.Len(t, doc["aggregated_results"], len(d.EvaluatorConfigIDs()), "one aggregate per evaluator config")
	for _, name := range []string{"average_cost", "total_cost", "average_latency", "status"} {
		assert.Contains(t, doc, name)
	}

	r = get(t, http.DefaultClient, srv.URL()+"/evaluations/"+id+"/status")
	require.Equal(t, 200, r.status, "GET /evaluations/{id}/status: %s", r.body)
	status := r.json(t).(map[string]any)
	assert.Len(t, status, 1, "the answer is {\"status\": <Result>}: %s", r.body)
	assert.Equal(t, doc["status"], status["status"], "the status read agrees with the evaluation read")

	for _, tc := range []struct {
		name, path string
		status     int
		detail     string
	}{
		{"unknown evaluation", "/evaluations/0190b5a2-0000-7000-8000-000000000000", 404,
			"404: Evaluation with id 0190b5a2-0000-7000-8000-000000000000 not found"},
		{"malformed id", "/evaluations/nope", 500, "badly formed hexadecimal UUID string"},
		{"status of an unknown evaluation", "/evaluations/0190b5a2-0000-7000-8000-000000000000/status", 500,
			"'NoneType' object has no attribute 'status'"},
		{"status of a malformed id", "/evaluations/nope/status", 500, "badly formed hexadecimal UUID string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, http.DefaultClient, srv.URL()+tc.path)
			assert.Equal(t, tc.status, r.status, "GET %s: %s", tc.path, r.body)
			assert.Equal(t, tc.detail, detail(t, r))
		})
	}
	assert.Len(t, srv.RequestsFor(agentatest.OpFetchEvaluation), 3)
	assert.Len(t, srv.RequestsFor(agentatest.OpFetchEvaluationStatus), 3)
}
