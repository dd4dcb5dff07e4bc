package agenta

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/h2non/gock.v1"
)

// The gock tests serve under a path prefix, so a path built from the root
// (losing /api) fails to match.
const (
	gockHost = "agenta.test"
	gockBase = "https://" + gockHost + "/api"
)

// gockClient returns a fresh Client whose HTTP client is intercepted by gock,
// with the test API key and near-zero retry waits. It registers the cleanup
// that turns gock off and forgets unmatched requests.
func gockClient(t *testing.T, opts ...Option) *Client {
	t.Helper()
	return gockClientVia(t, nil, opts...)
}

// gockClientVia is gockClient with wrap, if not nil, placed in front of the
// gock transport, to inject faults that gock cannot express.
func gockClientVia(t *testing.T, wrap func(http.RoundTripper) http.RoundTripper, opts ...Option) *Client {
	t.Helper()
	c, err := gockClientAt(t, gockBase, wrap, opts...)
	require.NoError(t, err)
	return c
}

// gockClientAt is gockClientVia for any base URL; it returns NewClient's error.
func gockClientAt(t *testing.T, base string, wrap func(http.RoundTripper) http.RoundTripper, opts ...Option) (*Client, error) {
	t.Helper()
	gock.OffAll()
	gock.Intercept() // so a request without a mock is unmatched, never sent
	t.Cleanup(gock.OffAll)
	hc := &http.Client{}
	gock.InterceptClient(hc)
	t.Cleanup(func() { gock.RestoreClient(hc) })
	if wrap != nil {
		hc = &http.Client{Transport: wrap(hc.Transport)}
	}
	return NewClient(base, testOptions(append([]Option{WithHTTPClient(hc)}, opts...)...)...)
}

// sentRequest is what a mock saw of one request.
type sentRequest struct {
	Method string
	Path   string // escaped
	Query  string // raw
	Header http.Header
	Body   []byte
}

// expectation is a gock mock that matches the method, the escaped path and
// the raw query exactly, and records every request it matched.
type expectation struct {
	*gock.Request
	mu   sync.Mutex
	seen []sentRequest
}

// expect registers a mock for method, escapedPath and rawQuery. gock's own
// path matcher is an unanchored regexp on the decoded path, so it is replaced
// by an exact comparison of req.URL.EscapedPath() and RawQuery.
func expect(method, escapedPath, rawQuery string) *expectation {
	e := &expectation{Request: gock.New("https://" + gockHost)}
	e.Method = method
	m := gock.NewEmptyMatcher()
	m.Add(func(req *http.Request, _ *gock.Request) (bool, error) {
		if req.Method != method || req.URL.Host != gockHost ||
			req.URL.EscapedPath() != escapedPath || req.URL.RawQuery != rawQuery {
			return false, nil
		}
		var body []byte
		if req.Body != nil {
			var err error
			body, err = io.ReadAll(req.Body)
			if err != nil {
				return false, err
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		e.mu.Lock()
		e.seen = append(e.seen, sentRequest{
			Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.RawQuery,
			Header: req.Header.Clone(), Body: body,
		})
		e.mu.Unlock()
		return true, nil
	})
	e.SetMatcher(m)
	return e
}

// times lets the mock match n requests, as gock's Times does.
func (e *expectation) times(n int) *expectation {
	e.Times(n)
	return e
}

// requests returns what the mock matched so far.
func (e *expectation) requests() []sentRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]sentRequest(nil), e.seen...)
}

// only returns the single request the mock matched, failing otherwise.
func (e *expectation) only(t *testing.T) sentRequest {
	t.Helper()
	got := e.requests()
	require.Len(t, got, 1, "expected exactly one matched request, got %d", len(got))
	return got[0]
}

// replyJSON answers with status and a JSON body.
func (e *expectation) replyJSON(status int, body string) *gock.Response {
	return e.Reply(status).SetHeader("Content-Type", "application/json").BodyString(body)
}

// assertAllSent proves that every mock was used up and nothing else was sent.
func assertAllSent(t *testing.T) {
	t.Helper()
	var pending []string
	for _, m := range gock.Pending() {
		r := m.Request()
		pending = append(pending, fmt.Sprintf("%s (%d left)", r.Method, r.Counter))
	}
	assert.True(t, gock.IsDone(), "expected every mock to be used, still pending: %v", pending)
	assertNothingUnmatched(t)
}

// assertNothingUnmatched proves that no request was sent that no mock expected.
func assertNothingUnmatched(t *testing.T) {
	t.Helper()
	var unmatched []string
	for _, r := range gock.GetUnmatchedRequests() {
		unmatched = append(unmatched, r.Method+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery)
	}
	assert.False(t, gock.HasUnmatchedRequest(), "expected no unexpected request, got %v", unmatched)
}

// operation is one of the seven operations, called with valid arguments.
type operation struct {
	name   string
	method string
	path   string // escaped, with the /api prefix
	query  string
	call   func(ctx context.Context, c *Client) error
}

// validNewEvaluation is a complete create request.
func validNewEvaluation() models.NewEvaluation {
	return models.NewEvaluation{
		AppID:              "app-1",
		VariantIDs:         []string{"var-1", "var-2"},
		EvaluatorConfigIDs: []string{"ec-1"},
		TestsetID:          "ts-1",
		RateLimit:          models.DefaultRateLimit(),
		LMProvidersKeys:    models.NewProviderKeys(map[string]string{models.OpenAIAPIKey: testProviderKey}),
	}
}

func validAddVariant() models.AddVariantFromBase {
	return models.AddVariantFromBase{
		BaseID: "base-1", NewVariantName: "fork", NewConfigName: "cfg",
		Parameters: map[string]any{"temperature": 0.2},
	}
}

// operations lists the operations with the request each sends: the seven
// of the interface, then the two evaluation reads.
func operations() []operation {
	return []operation{
		{"FetchEvaluationScenarios", "GET", "/api/evaluations/ev-1/evaluation_scenarios", "",
			func(ctx context.Context, c *Client) error {
				_, err := c.FetchEvaluationScenarios(ctx, "ev-1")
				return err
			}},
		{"CreateEvaluation", "POST", "/api/evaluations", "",
			func(ctx context.Context, c *Client) error {
				_, err := c.CreateEvaluation(ctx, validNewEvaluation())
				return err
			}},
		{"GetVariantByEnvironment", "GET", "/api/apps/get_variant_by_env", "app_id=app-1&environment=production",
			func(ctx context.Context, c *Client) error {
				_, err := c.GetVariantByEnvironment(ctx, "app-1", "production")
				return err
			}},
		{"AddVariantFromBase", "POST", "/api/variants/from-base", "",
			func(ctx context.Context, c *Client) error {
				_, err := c.AddVariantFromBase(ctx, validAddVariant())
				return err
			}},
		{"GetVariant", "GET", "/api/variants/var-1", "",
			func(ctx context.Context, c *Client) error {
				_, err := c.GetVariant(ctx, "var-1")
				return err
			}},
		{"GetSpan", "GET", "/api/observability/spans/sp-1/", "",
			func(ctx context.Context, c *Client) error {
				_, err := c.GetSpan(ctx, "sp-1", nil)
				return err
			}},
		{"ListHumanEvaluations", "GET", "/api/human-evaluations", "app_id=app-1",
			func(ctx context.Context, c *Client) error {
				_, err := c.ListHumanEvaluations(ctx, "app-1")
				return err
			}},
		{"FetchEvaluation", "GET", "/api/evaluations/ev-1", "",
			func(ctx context.Context, c *Client) error {
				_, err := c.FetchEvaluation(ctx, "ev-1")
				return err
			}},
		{"FetchEvaluationStatus", "GET", "/api/evaluations/ev-1/status", "",
			func(ctx context.Context, c *Client) error {
				_, err := c.FetchEvaluationStatus(ctx, "ev-1")
				return err
			}},
	}
}
