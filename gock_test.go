package agenta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

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
	// gockKey looks like an Agenta key; tests assert it never leaks.
	gockKey = "xK9sQ2vB.f00dfacecafe1234SECRET"
	// gockProviderKey is an lm_providers_keys value; it must never leak either.
	gockProviderKey = "sk-proj-LIVEOPENAIKEY0123456789"
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
	all := append([]Option{
		WithHTTPClient(hc),
		WithAPIKey(gockKey),
		WithRetryWait(0, time.Millisecond),
	}, opts...)
	return NewClient(base, all...)
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
		LMProvidersKeys:    map[string]string{models.OpenAIAPIKey: gockProviderKey},
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

// logRecorder is a slog handler, at LevelDebug, that keeps every record as
// text and as attributes.
type logRecorder struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	records []map[string]any
	onWait  func() // called for a record that plans a retry wait
}

func newLogRecorder() (*logRecorder, *slog.Logger) {
	r := &logRecorder{}
	return r, slog.New(r)
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }

func (r *logRecorder) Handle(ctx context.Context, rec slog.Record) error {
	attrs := map[string]any{"level": rec.Level, "msg": rec.Message}
	rec.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.Resolve().Any()
		return true
	})
	r.mu.Lock()
	h := slog.NewTextHandler(&r.buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	_ = h.Handle(ctx, rec)
	r.records = append(r.records, attrs)
	onWait := r.onWait
	r.mu.Unlock()
	if _, ok := attrs["wait"]; ok && onWait != nil {
		onWait()
	}
	return nil
}

func (r *logRecorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

func (r *logRecorder) lines() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.records...)
}

// requireAPIError asserts err is an *APIError with the given status, method
// and path, and returns it.
func requireAPIError(t *testing.T, err error, status int, method, path string) *APIError {
	t.Helper()
	require.Error(t, err)
	var apiErr *APIError
	require.True(t, errors.As(err, &apiErr), "expected an *APIError, got %T: %v", err, err)
	assert.Equal(t, status, apiErr.StatusCode, "status")
	assert.Equal(t, method, apiErr.Method, "method")
	assert.Equal(t, path, apiErr.Path, "path")
	return apiErr
}

// assertNoSecret fails when s contains a credential.
func assertNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{gockKey, gockProviderKey, "SECRET", "LIVEOPENAIKEY"} {
		assert.False(t, strings.Contains(s, secret), "%s leaks %q: %s", what, secret, s)
	}
}
