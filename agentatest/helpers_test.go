package agentatest_test

// Helpers the tests of several files share.

import (
	"context"
	"encoding/json"
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
