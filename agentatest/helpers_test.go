package agentatest_test

// Helpers the tests of several files share.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// newDemo starts a fake seeded with the demo data and a client for it, with
// near-zero retry waits.
func newDemo(t *testing.T, opts ...agentatest.Option) (*agentatest.Server, agentatest.Demo, *agenta.Client) {
	t.Helper()
	srv := agentatest.NewTestServer(t, opts...)
	demo := agentatest.SeedDemo(srv)
	return srv, demo, newClient(t, srv)
}

func newClient(t *testing.T, srv *agentatest.Server, opts ...agenta.Option) *agenta.Client {
	t.Helper()
	opts = append([]agenta.Option{agenta.WithRetryWait(time.Millisecond, 5*time.Millisecond)}, opts...)
	c, err := agenta.NewClient(srv.URL(), opts...)
	require.NoError(t, err)
	return c
}

// waitRuns waits until every evaluation created so far has reached its
// final status: how a test makes runs finish deterministically.
func waitRuns(t *testing.T, srv *agentatest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, srv.WaitEvaluations(ctx), "the evaluations did not finish")
}

func newEvaluation(d agentatest.Demo, variants ...string) models.NewEvaluation {
	return models.NewEvaluation{
		AppID:              d.AppID,
		VariantIDs:         variants,
		EvaluatorConfigIDs: d.EvaluatorConfigIDs(),
		TestsetID:          d.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	}
}

// rawResponse is an answer read in full.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body, failing the test when it is not JSON.
func (r rawResponse) json(t *testing.T) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(r.body, &v), "body: %s", r.body)
	return v
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

func do(t *testing.T, hc *http.Client, req *http.Request) rawResponse {
	t.Helper()
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: body}
}

func get(t *testing.T, hc *http.Client, url string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return do(t, hc, req)
}

func post(t *testing.T, url, contentType, body string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(t, http.DefaultClient, req)
}

func detail(t *testing.T, r rawResponse) string {
	t.Helper()
	doc, ok := r.json(t).(map[string]any)
	require.True(t, ok, "body: %s", r.body)
	s, ok := doc["detail"].(string)
	require.True(t, ok, "detail is not a string: %s", r.body)
	return s
}

// within fails the test when f has not returned after a deadline far
// beyond its normal time: it detects a freeze, not a slow machine.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still blocked after 30 s; expected it to return at once", what)
	}
}

// seedEcho seeds an app whose base runs app (or the template application)
// with two variants, a three-row test set and the given evaluator keys.
func seedEcho(srv *agentatest.Server, app agentatest.Application, evaluatorKeys ...string) (appID, testsetID string, variants, evaluators []string) {
	appID = srv.AddApp(agentatest.App{Name: "echo"})
	base := srv.AddBase(agentatest.Base{AppID: appID, Application: app})
	variants = []string{
		srv.AddVariant(agentatest.Variant{BaseID: base, ConfigName: "plain", Parameters: map[string]any{"prompt_user": "{word}"}}),
		srv.AddVariant(agentatest.Variant{BaseID: base, ConfigName: "shout", Parameters: map[string]any{"prompt_user": "{word}!"}}),
	}
	testsetID = srv.AddTestset(agentatest.Testset{AppID: appID, Name: "words", Rows: []map[string]string{
		{"word": "alpha", "correct_answer": "alpha"},
		{"word": "beta", "correct_answer": "beta"},
		{"word": "gamma", "correct_answer": "gamma!"},
	}})
	for _, key := range evaluatorKeys {
		evaluators = append(evaluators, srv.AddEvaluatorConfig(models.EvaluatorConfig{
			EvaluatorKey: key, SettingsValues: map[string]any{"correct_answer_key": "correct_answer"},
		}))
	}
	return appID, testsetID, variants, evaluators
}

func create(t *testing.T, c *agenta.Client, appID, testsetID string, variants, evaluators []string) []models.Evaluation {
	t.Helper()
	evs, err := c.CreateEvaluation(context.Background(), models.NewEvaluation{
		AppID: appID, VariantIDs: variants, EvaluatorConfigIDs: evaluators,
		TestsetID: testsetID, RateLimit: models.DefaultRateLimit(),
	})
	require.NoError(t, err)
	require.Len(t, evs, len(variants))
	return evs
}

func state(t *testing.T, srv *agentatest.Server, id string) string {
	t.Helper()
	ev, ok := srv.Evaluation(id)
	require.True(t, ok, "evaluation %s", id)
	return ev.State()
}

// createRaw posts a NewEvaluation and returns the answer.
func createRaw(t *testing.T, srv *agentatest.Server, appID, testsetID string, variants, evaluators []string, maxRetries int) rawResponse {
	t.Helper()
	list := func(ids []string) string {
		if ids == nil {
			ids = []string{}
		}
		b, _ := json.Marshal(ids)
		return string(b)
	}
	body := fmt.Sprintf(`{"app_id":%q,"variant_ids":%s,"evaluators_configs":%s,"testset_id":%q,
		"rate_limit":{"batch_size":10,"max_retries":%d,"retry_delay":3,"delay_between_batches":5}}`,
		appID, list(variants), list(evaluators), testsetID, maxRetries)
	return post(t, srv.URL()+"/evaluations", "application/json", body)
}

// created returns the evaluations of a 200 create answer.
func created(t *testing.T, r rawResponse) []map[string]any {
	t.Helper()
	require.Equal(t, 200, r.status, "create: %s", r.body)
	var out []map[string]any
	require.NoError(t, json.Unmarshal(r.body, &out), "create: %s", r.body)
	return out
}

// statusOf reads GET /evaluations/{id}/status and returns the Result.
func statusOf(t *testing.T, srv *agentatest.Server, id string) map[string]any {
	t.Helper()
	r := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+id+"/status")
	require.Equal(t, 200, r.status, "status: %s", r.body)
	doc := r.json(t).(map[string]any)
	require.Len(t, doc, 1, `the answer is {"status": <Result>}: %s`, r.body)
	return doc["status"].(map[string]any)
}

func statusValue(t *testing.T, srv *agentatest.Server, id string) string {
	t.Helper()
	v, _ := statusOf(t, srv, id)["value"].(string)
	return v
}

func evaluationOf(t *testing.T, srv *agentatest.Server, id string) map[string]any {
	t.Helper()
	r := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+id)
	require.Equal(t, 200, r.status, "evaluation: %s", r.body)
	return r.json(t).(map[string]any)
}

func scenariosOf(t *testing.T, srv *agentatest.Server, id string) []any {
	t.Helper()
	r := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+id+"/evaluation_scenarios")
	require.Equal(t, 200, r.status, "scenarios: %s", r.body)
	return r.json(t).([]any)
}

// newCapitals starts a fake holding seed.py's objects.
func newCapitals(t *testing.T, opts ...agentatest.Option) (*agentatest.Server, map[string]string) {
	t.Helper()
	srv := agentatest.NewTestServer(t, opts...)
	return srv, seedFake(srv, "capitals", "")
}
