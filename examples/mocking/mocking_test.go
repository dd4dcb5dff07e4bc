package mocking

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"gopkg.in/h2non/gock.v1"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// With agentatest: a fake service on 127.0.0.1 with real state. The test
// creates an evaluation the way production code would, and the fake runs it.
func TestPassRateWithAgentatest(t *testing.T) {
	srv := agentatest.NewTestServer(t) // closed when the test ends
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL(), agenta.WithRetryWait(time.Millisecond, 10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
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
		t.Fatal(err)
	}
	// The fake runs the evaluation in the background, as the service does;
	// waiting for it makes the test deterministic.
	if err := srv.WaitEvaluations(ctx); err != nil {
		t.Fatal(err)
	}

	rate, err := PassRate(ctx, client, evs[0].ID, demo.ExactMatchID)
	if err != nil {
		t.Fatal(err)
	}
	if rate != 0.625 {
		t.Errorf("pass rate = %v, want 0.625 (5 of the 8 demo capitals)", rate)
	}

	// Failures are one call away: the fake answers the next call 500.
	srv.InjectFault(agentatest.OpFetchEvaluationScenarios, 1, agentatest.Fault{Status: 500})
	if _, err := PassRate(ctx, client, evs[0].ID, demo.ExactMatchID); !errors.Is(err, agenta.ErrServer) {
		t.Errorf("PassRate error = %v, want one matching agenta.ErrServer", err)
	}
	// The request log shows what was sent.
	if got := len(srv.RequestsFor(agentatest.OpFetchEvaluationScenarios)); got != 2 {
		t.Errorf("scenarios fetched %d times, want 2 (a 500 is not retried)", got)
	}
}

// With gock: the SDK's HTTP client is intercepted and every answer is
// scripted. gock keeps global state, so these tests must not run in parallel.
func TestPassRateWithGock(t *testing.T) {
	client := gockClient(t)
	gock.New("https://agenta.example").
		Get("/api/evaluations/ev-1/evaluation_scenarios").
		AddMatcher(exactly("/api/evaluations/ev-1/evaluation_scenarios", "")).
		Reply(200).
		JSON(`[
			{"evaluation_id": "ev-1", "inputs": [], "outputs": [],
			 "results": [{"evaluator_config": "exact", "result": {"type": "bool", "value": true, "error": null}}]},
			{"evaluation_id": "ev-1", "inputs": [], "outputs": [],
			 "results": [{"evaluator_config": "exact", "result": {"type": "bool", "value": false, "error": null}}]},
			{"evaluation_id": "ev-1", "inputs": [], "outputs": [],
			 "results": [{"evaluator_config": "exact", "result": {"type": "error", "value": null,
			              "error": {"message": "Error during Auto Exact Match evaluation"}}}]}
		]`)

	rate, err := PassRate(context.Background(), client, "ev-1", "exact")
	if err != nil {
		t.Fatal(err)
	}
	if rate != 1.0/3 {
		t.Errorf("pass rate = %v, want 1/3", rate)
	}
	if !gock.IsDone() {
		t.Error("the scripted request was not made")
	}
}

func TestPassRateWithGockServerError(t *testing.T) {
	client := gockClient(t)
	gock.New("https://agenta.example").
		Get("/api/evaluations/ev-2/evaluation_scenarios").
		AddMatcher(exactly("/api/evaluations/ev-2/evaluation_scenarios", "")).
		Times(1).
		Reply(500).
		JSON(map[string]string{"detail": "Evaluation not found"})

	_, err := PassRate(context.Background(), client, "ev-2", "exact")
	var apiErr *agenta.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Message != "Evaluation not found" {
		t.Fatalf("PassRate error = %v, want the server's 500", err)
	}
	if !gock.IsDone() || gock.HasUnmatchedRequest() {
		t.Error("want exactly one request: a 500 is not retried")
	}
}

// gockClient returns an SDK client whose HTTP client gock intercepts, and
// undoes everything when the test ends.
func gockClient(t *testing.T) *agenta.Client {
	t.Helper()
	hc := &http.Client{}
	gock.InterceptClient(hc) // before NewClient, which copies the transport
	t.Cleanup(func() {
		gock.RestoreClient(hc)
		gock.Off()
	})
	client, err := agenta.NewClient("https://agenta.example/api",
		agenta.WithHTTPClient(hc),
		agenta.WithRetryWait(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// exactly matches the escaped path and raw query to the byte. gock's own
// path matching is a regular expression on the decoded path, so
// "/evaluations/ev-1" would also match "/evaluations/ev-10".
func exactly(path, rawQuery string) gock.MatchFunc {
	return func(req *http.Request, _ *gock.Request) (bool, error) {
		return req.URL.EscapedPath() == path && req.URL.RawQuery == rawQuery, nil
	}
}
