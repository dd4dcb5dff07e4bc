package agenta

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
) // The one test harness of the root package: one API key, one way to build a
// Client, one loopback server mounted under /api, and the assertions every
// test file shares. gock_test.go adds the gock mocks that issue 2 asked for;
// fault_test.go, stream_test.go and the benchmarks start their own servers
// for what they measure, and build their clients here.

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

// newTestClient is the one builder of the internal tests' Clients: a
// Client for baseURL (a test server's URL, usually under /api) built from
// testOptions, whose idle connections close when the test ends. What a
// test needs beyond that (its own transport, retries, timeouts, a logger)
// it passes as opts.
func newTestClient(tb testing.TB, baseURL string, opts ...Option) *Client {
	tb.Helper()
	c, err := NewClient(baseURL, testOptions(opts...)...)
	require.NoError(tb, err, "NewClient(%q)", baseURL)
	tb.Cleanup(c.CloseIdleConnections)
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

// The hostile servers' shared setup (issue 12, part A): a server that
// switches protocols, inflates a gzip bomb, holds back the end of a
// complete answer, loops on redirects, or echoes the key in ways a byte
// scrub misses. Each test asserts that the call returns (within generous
// bounds: these prove that a call ends instead of hanging, they are not
// timing assertions), that the heap grows near the limit at most, and that
// no secret and no more than a bounded excerpt of the answer reaches
// err.Error() or the log.

// hostileKey is the API key of every hostile test; the servers echo it.
const hostileKey = "hOsTiLe01.c2VjcmV0LWtleS1mb3ItdGVzdHM"

// hostileMaxError bounds err.Error() for any answer: the method, the path
// and a few hundred characters of what the server said (at most 800 for a
// 422's details), each up to 4 bytes of UTF-8.
const hostileMaxError = 4 << 10

// hostileClient returns a client for base (ending in /api) with the
// hostile key and near-zero retry waits. It logs every attempt; when the
// test ends, no log line may hold the key or be longer than an error.
func hostileClient(t *testing.T, base string, opts ...Option) *Client {
	t.Helper()
	logged := new(hostileLog)
	all := append([]Option{
		WithAPIKey(hostileKey),
		WithRetryWait(time.Millisecond, 5*time.Millisecond),
		WithLogger(slog.New(slog.NewTextHandler(logged, nil))),
	}, opts...)
	c := newTestClient(t, base, all...) // hostileKey overrides testKey
	t.Cleanup(func() {
		for _, line := range strings.Split(logged.String(), "\n") {
			if strings.Contains(line, hostileKey) {
				t.Errorf("a log line holds the API key: %.300q…", line)
			}
			if len(line) > hostileMaxError {
				t.Errorf("a log line is %d bytes, want at most %d: %.300q…", len(line), hostileMaxError, line)
			}
		}
	})
	return c
}

// hostileLog collects log output from any goroutine.
type hostileLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *hostileLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *hostileLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// hostileCheckError fails when err's text is unbounded or holds the key.
func hostileCheckError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if len(msg) > hostileMaxError {
		t.Errorf("err.Error() is %d bytes, want at most %d: %.300q…", len(msg), hostileMaxError, msg)
	}
	if strings.Contains(msg, hostileKey) {
		t.Errorf("err.Error() holds the API key: %.300q…", msg)
	}
}

// hostileOp is one operation of the SDK, run to completion.
type hostileOp struct {
	name string
	kind string // "single", "list" or "stream"
	run  func(ctx context.Context, c *Client) error
}

var (
	hostileGetVariant = hostileOp{"GetVariant", "single", func(ctx context.Context, c *Client) error {
		_, err := c.GetVariant(ctx, "v-1")
		return err
	}}
	hostileAddVariant = hostileOp{"AddVariantFromBase", "single", func(ctx context.Context, c *Client) error {
		_, err := c.AddVariantFromBase(ctx, models.AddVariantFromBase{
			BaseID: "b-1", NewVariantName: "precise", NewConfigName: "precise",
			Parameters: map[string]any{"temperature": 0},
		})
		return err
	}}
	hostileCreateEvaluation = hostileOp{"CreateEvaluation", "list", func(ctx context.Context, c *Client) error {
		_, err := c.CreateEvaluation(ctx, models.NewEvaluation{
			AppID: "a-1", VariantIDs: []string{"v-1"}, EvaluatorConfigIDs: []string{"c-1"},
			TestsetID: "t-1", RateLimit: models.DefaultRateLimit(), CorrectAnswerColumn: "expected",
		})
		return err
	}}
	hostileFetchScenarios = hostileOp{"FetchEvaluationScenarios", "list", func(ctx context.Context, c *Client) error {
		_, err := c.FetchEvaluationScenarios(ctx, "e-1")
		return err
	}}
	hostileListHuman = hostileOp{"ListHumanEvaluations", "list", func(ctx context.Context, c *Client) error {
		_, err := c.ListHumanEvaluations(ctx, "a-1")
		return err
	}}
	hostileStream = hostileOp{"StreamEvaluationScenarios", "stream", func(ctx context.Context, c *Client) error {
		for _, err := range c.StreamEvaluationScenarios(ctx, "e-1") {
			if err != nil {
				return err
			}
		}
		return nil
	}}
)

// hostileTCP listens on 127.0.0.1 and hands each request, read from a raw
// connection, to answer, which writes whatever bytes it likes. Connections
// stay open until the test ends.
func hostileTCP(t *testing.T, answer func(conn net.Conn, req *http.Request)) (base string, requests *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	requests = new(atomic.Int64)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			go func() {
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					requests.Add(1)
					answer(conn, req)
					select {
					case <-done:
						return
					default:
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		close(done)
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String() + "/api", requests
}

// hostileElapsed runs op and returns its error and how long it took.
func hostileElapsed(ctx context.Context, c *Client, op hostileOp) (time.Duration, error) {
	start := time.Now()
	err := op.run(ctx, c)
	return time.Since(start), err
}

// hostileServe answers every request with status, headers and body.
func hostileServe(t *testing.T, status int, header http.Header, body string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s.URL + "/api"
}

// hostileEscapeAll writes s as a JSON string body with every character
// \u-escaped.
func hostileEscapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(`\u`)
		h := strconv.FormatInt(int64(r), 16)
		b.WriteString(strings.Repeat("0", 4-len(h)) + h)
	}
	return b.String()
}
