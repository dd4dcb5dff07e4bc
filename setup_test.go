package agenta

// The one test harness of the root package: one API key, one way to build a
// Client, one loopback server mounted under /api, and the assertions every
// test file shares. gock_test.go adds the gock mocks that issue 2 asked for;
// fault_test.go, stream_test.go and the benchmarks start their own servers
// for what they measure, and build their clients here.

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	// testKey is the one API key of the root package's tests. It looks like
	// an Agenta key; tests assert it never leaks.
	testKey = "xK9sQ2vB.f00dfacecafe1234SECRET"
	// testProviderKey is an lm_providers_keys value; it must never leak either.
	testProviderKey = "sk-proj-LIVEOPENAIKEY0123456789"
)

// testOptions returns the options every test Client starts from, the test
// key and near-zero retry waits, followed by opts, which override them.
func testOptions(opts ...Option) []Option {
	return append([]Option{WithAPIKey(testKey), WithRetryWait(0, time.Millisecond)}, opts...)
}

// newTestClient returns a Client for baseURL built from testOptions.
func newTestClient(tb testing.TB, baseURL string, opts ...Option) *Client {
	tb.Helper()
	c, err := NewClient(baseURL, testOptions(opts...)...)
	require.NoError(tb, err, "NewClient(%q)", baseURL)
	return c
}

// setup starts a server on 127.0.0.1 that serves mux under /api only, and
// returns mux and a Client for it. A request outside /api, such as one whose
// path was built from the root and so lost the base URL's prefix, fails the
// test at once.
func setup(t *testing.T, opts ...Option) (*http.ServeMux, *Client) {
	t.Helper()
	mux := http.NewServeMux()
	outer := http.NewServeMux()
	outer.Handle("/api/", http.StripPrefix("/api", mux))
	outer.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request for %s %s, outside /api: the path lost the base URL's prefix", r.Method, r.URL.EscapedPath())
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(outer)
	t.Cleanup(srv.Close)
	return mux, newTestClient(t, srv.URL+"/api", opts...)
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

// requireArgumentError asserts err is an argument refused before anything
// was sent: an *ArgumentError matching ErrInvalidArgument, naming the Go
// argument name in its Name and its message. It returns the error.
func requireArgumentError(t *testing.T, err error, name string) *ArgumentError {
	t.Helper()
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrInvalidArgument), "expected ErrInvalidArgument, got %v", err)
	var argErr *ArgumentError
	require.True(t, errors.As(err, &argErr), "expected an *ArgumentError, got %T: %v", err, err)
	assert.Equal(t, name, argErr.Name, "the argument named")
	assert.Contains(t, err.Error(), name, "the message names the argument")
	var apiErr *APIError
	assert.False(t, errors.As(err, &apiErr), "an argument error is not an answer: %v", err)
	return argErr
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

// assertNoSecret fails when s contains a credential.
func assertNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{testKey, testProviderKey, "SECRET", "LIVEOPENAIKEY"} {
		assert.False(t, strings.Contains(s, secret), "%s leaks %q: %s", what, secret, s)
	}
}
