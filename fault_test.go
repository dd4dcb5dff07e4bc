package agenta

// The fault-injection suite: real loopback servers on 127.0.0.1 that
// misbehave the way networks, proxies and servers do, one test per fault,
// each asserting exactly what the SDK does. Waits are kept near zero with
// WithRetryWait so the suite runs in seconds; bounds on elapsed time only
// prove that a call ended instead of hanging.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	faultCookie  = "sAccessToken=fault-session-cookie"
	faultVariant = "6672a5d2e7b8c0f9a1b2c3d5"
	// faultHungBound is how long a call may take before it counts as hung. The
	// timeouts under test are 100 to 300 ms; this is a generous ceiling,
	// not a timing assertion.
	faultHungBound = 5 * time.Second
)

var (
	faultVariantBody = `{"app_id":"6672a5d2e7b8c0f9a1b2c3d4","app_name":"support-bot","variant_id":"` + faultVariant + `",` +
		`"variant_name":"support-bot.default","parameters":{"model":"gpt-4o-mini","temperature":0.2},` +
		`"previous_variant_name":null,"user_id":"u-1","base_name":"support-bot","base_id":"b-1",` +
		`"config_name":"default","uri":"http://localhost/support-bot","revision":3,` +
		`"organization_id":null,"workspace_id":null}` + "\n"
	faultEvaluationsBody = `[{"id":"e-1","app_id":"6672a5d2e7b8c0f9a1b2c3d4","user_id":"u-1","user_username":"ana",` +
		`"variant_ids":["` + faultVariant + `"],"variant_names":["support-bot.default"],"variant_revision_ids":["r-1"],` +
		`"revisions":["3"],"testset_id":"t-1","testset_name":"faq","status":{"type":"status","value":"EVALUATION_STARTED","error":null},` +
		`"aggregated_results":[],"average_cost":null,"total_cost":null,"average_latency":null,` +
		`"created_at":"2024-06-26T12:22:31.775000+00:00","updated_at":"2024-06-26T12:22:31.775000+00:00"}]` + "\n"
	faultScenariosBody = `[{"id":"s-1","evaluation_id":"e-1","inputs":[{"name":"question","type":"text","value":"What is the capital of France?"}],` +
		`"outputs":[{"result":{"type":"text","value":"Paris","error":null},"cost":0.00012,"latency":0.8}],` +
		`"evaluation":null,"correct_answer":"Paris","is_pinned":false,"note":"",` +
		`"results":[{"evaluator_config":"c-1","result":{"type":"bool","value":true,"error":null}}]}]` + "\n"
	faultHumanBody = `[{"id":"h-1","app_id":"6672a5d2e7b8c0f9a1b2c3d4","user_id":"u-1","user_username":"ana",` +
		`"evaluation_type":"human_a_b_testing","variant_ids":["v-1","v-2"],"variant_names":["a","b"],` +
		`"variants_revision_ids":["r-1","r-2"],"revisions":["1","2"],"testset_id":"t-1","testset_name":"faq",` +
		`"status":"EVALUATION_FINISHED","created_at":"2024-06-26T12:22:31.775000","updated_at":"2024-06-26T12:22:31.775000"}]` + "\n"
	faultSpanBody = `{"id":"sp-1","name":"generate","parent_span_id":null,"created_at":"2024-06-26T12:22:31.775000",` +
		`"variant":{"variant_id":"v-1","variant_name":"a","revision":1},"environment":"production","spankind":"LLM",` +
		`"status":"OK","metadata":{"cost":0.0002,"latency":0.9,"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}},` +
		`"trace_id":"tr-1","user_id":"u-1","content":{"inputs":{},"internals":{},"outputs":{}},"children":null,"config":{}}` + "\n"
)

// faultServer is a loopback test server that counts what reaches it.
type faultServer struct {
	*httptest.Server
	requests atomic.Int64 // requests that reached the handler
	posts    atomic.Int64 // of which POSTs
	conns    atomic.Int64 // TCP connections accepted
	release  chan struct{}
}

// newFaultServer starts h on 127.0.0.1. Handlers that stall must also
// return when release is closed, which happens before the server closes.
func newFaultServer(t *testing.T, h func(s *faultServer, w http.ResponseWriter, r *http.Request)) *faultServer {
	t.Helper()
	s := &faultServer{release: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if r.Method == http.MethodPost {
			s.posts.Add(1)
		}
		h(s, w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) }) // runs before Close
	return s
}

// faultClient returns a client for s under the /api prefix, with near-zero
// retry waits and both kinds of credential.
func faultClient(t *testing.T, s *faultServer, opts ...Option) *Client {
	t.Helper()
	return newTestClient(t, s.URL+"/api", append([]Option{
		WithHeader("Cookie", faultCookie),
		WithRetryWait(time.Millisecond, 5*time.Millisecond),
		WithTimeout(5 * time.Second),
	}, opts...)...)
}

// faultServeAll answers every operation with a realistic body.
func faultServeAll(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch p := r.URL.Path; {
	case r.Method == http.MethodPost && p == "/api/evaluations":
		io.WriteString(w, faultEvaluationsBody)
	case r.Method == http.MethodPost && p == "/api/variants/from-base":
		io.WriteString(w, faultVariantBody)
	case strings.HasSuffix(p, "/evaluation_scenarios"):
		io.WriteString(w, faultScenariosBody)
	case p == "/api/human-evaluations":
		io.WriteString(w, faultHumanBody)
	case strings.HasPrefix(p, "/api/observability/spans/"):
		io.WriteString(w, faultSpanBody)
	case p == "/api/apps/get_variant_by_env", strings.HasPrefix(p, "/api/variants/"):
		io.WriteString(w, faultVariantBody)
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"detail":"Not Found"}`)
	}
}

// faultHijack takes over the connection, after reading the request body so that
// the server has seen the whole request.
func faultHijack(t *testing.T, w http.ResponseWriter, r *http.Request) (net.Conn, *bufio.ReadWriter) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, rw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("faultHijack: %v", err)
		panic(http.ErrAbortHandler)
	}
	return conn, rw
}

// faultReset closes conn with a TCP RST instead of a FIN.
func faultReset(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	conn.Close()
}

func faultNewEvaluation() models.NewEvaluation {
	return models.NewEvaluation{
		AppID:               "6672a5d2e7b8c0f9a1b2c3d4",
		VariantIDs:          []string{faultVariant},
		EvaluatorConfigIDs:  []string{"c-1"},
		TestsetID:           "t-1",
		RateLimit:           models.DefaultRateLimit(),
		LMProvidersKeys:     models.NewProviderKeys(map[string]string{models.OpenAIAPIKey: "sk-fault-provider-key"}),
		CorrectAnswerColumn: "expected",
	}
}

func faultAddVariant() models.AddVariantFromBase {
	return models.AddVariantFromBase{
		BaseID: "b-1", NewVariantName: "support-bot.terse", NewConfigName: "terse",
		Parameters: map[string]any{"temperature": 0.1},
	}
}

// faultContext bounds every call of the suite, so a hang fails instead of
// blocking the test binary.
func faultContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// faultEnded fails the test when a call took longer than faultHungBound.
func faultEnded(t *testing.T, start time.Time, what string) {
	t.Helper()
	if d := time.Since(start); d > faultHungBound {
		t.Errorf("%s took %s: the call hung instead of ending", what, d)
	}
}

func faultWantNoAPIError(t *testing.T, err error) {
	t.Helper()
	var apiErr *APIError
	assert.False(t, errors.As(err, &apiErr), "got an *APIError (%v) for a transport failure", err)
}

func TestFaultConnectionDroppedBeforeAnswerGETRetries(t *testing.T) {
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		if s.requests.Load() == 1 {
			conn, _ := faultHijack(t, w, r)
			conn.Close()
			return
		}
		faultServeAll(w, r)
	})
	v, err := faultClient(t, s).GetVariant(faultContext(t), faultVariant)
	require.NoError(t, err, "GetVariant after one dropped connection; want the retry's answer")
	t.Logf("outcome: success after %d requests", s.requests.Load())
	assert.False(t, v.VariantID != faultVariant || v.Revision != 3, "got variant %q revision %d, want %q revision 3", v.VariantID, v.Revision, faultVariant)
	assert.EqualValues(t, 2, s.requests.Load(), "server saw the wrong number of requests, want 2 (the dropped one and one retry)")
}

func TestFaultConnectionDroppedBeforeAnswerPOSTDoesNotRetry(t *testing.T) {
	for _, op := range faultCreates {
		t.Run(op.name, func(t *testing.T) {
			s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
				conn, _ := faultHijack(t, w, r)
				conn.Close()
			})
			err := op.call(faultContext(t), faultClient(t, s, WithMaxRetries(3)))
			t.Logf("outcome: %v", err)
			require.Error(t, err, "create succeeded although the server dropped the connection")
			assert.False(t, !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET), "error %v does not wrap EOF or ECONNRESET", err)
			faultWantNoAPIError(t, err)
			assert.EqualValues(t, 1, s.posts.Load(), "server saw the wrong number of POSTs, want exactly 1: a create that may have arrived is never resent")
		})
	}
}

func TestFaultResetMidBody(t *testing.T) {
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		conn, rw := faultHijack(t, w, r)
		fmt.Fprintf(rw, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(faultScenariosBody))
		rw.WriteString(faultScenariosBody[:len(faultScenariosBody)/2])
		rw.Flush()
		time.Sleep(20 * time.Millisecond) // let the client start reading the body
		faultReset(conn)
	})
	start := time.Now()
	_, err := faultClient(t, s).FetchEvaluationScenarios(faultContext(t), "e-1")
	faultEnded(t, start, "FetchEvaluationScenarios")
	t.Logf("outcome: %v", err)
	var derr *DecodeError
	require.ErrorAs(t, err, &derr, "got %v (%T), want a *DecodeError: the answer started and then broke", err, err)
	assert.EqualValues(t, http.StatusOK, derr.StatusCode, "DecodeError.StatusCode = %d, want 200", derr.StatusCode)
	assert.False(t, !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.ErrUnexpectedEOF), "error %v wraps neither ECONNRESET nor unexpected EOF", err)
	// The answer had begun, so the SDK does not retry, even for a GET.
	assert.EqualValues(t, 1, s.requests.Load(), "server saw the wrong number of requests, want 1")
}

func TestFaultTruncatedJSONBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		call func(context.Context, *Client) error
	}{
		{"object", faultVariantBody[:60], func(ctx context.Context, c *Client) error {
			_, err := c.GetVariant(ctx, faultVariant)
			return err
		}},
		{"list", faultHumanBody[:len(faultHumanBody)-3], func(ctx context.Context, c *Client) error {
			_, err := c.ListHumanEvaluations(ctx, "a-1")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body) // a complete HTTP answer whose JSON stops short
			})
			err := tc.call(faultContext(t), faultClient(t, s))
			t.Logf("outcome: %v", err)
			var derr *DecodeError
			require.ErrorAs(t, err, &derr, "got %v (%T), want a *DecodeError", err, err)
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "error %v does not wrap io.ErrUnexpectedEOF", err)
			assert.False(t, derr.StatusCode != 200 || derr.Method != http.MethodGet || !strings.HasPrefix(derr.Path, "/api/"), "DecodeError = %d %s %s, want 200 GET /api/...", derr.StatusCode, derr.Method, derr.Path)
			assert.EqualValues(t, 1, s.requests.Load(), "server saw the wrong number of requests, want 1: a bad body is not retried")
		})
	}
}

func TestFaultWrongJSONType(t *testing.T) {
	var typeErr *json.UnmarshalTypeError
	for _, tc := range []struct {
		name, body string
		call       func(context.Context, *Client) error
		want       func(error) bool
	}{
		{"array for an object", faultHumanBody, func(ctx context.Context, c *Client) error {
			_, err := c.GetVariant(ctx, faultVariant)
			return err
		}, func(err error) bool { return errors.As(err, &typeErr) }},
		{"string for an object", `"App Variant not found"`, func(ctx context.Context, c *Client) error {
			_, err := c.GetSpan(ctx, "sp-1", nil)
			return err
		}, func(err error) bool { return errors.As(err, &typeErr) }},
		{"object for a list", faultVariantBody, func(ctx context.Context, c *Client) error {
			_, err := c.FetchEvaluationScenarios(ctx, "e-1")
			return err
		}, func(err error) bool { return strings.Contains(err.Error(), "expected a JSON array") }},
		{"string for a number field", `{"app_id":"a","revision":"three"}`, func(ctx context.Context, c *Client) error {
			_, err := c.GetVariant(ctx, faultVariant)
			return err
		}, func(err error) bool { return errors.As(err, &typeErr) && typeErr.Field == "revision" }},
		{"null for an object", `null`, func(ctx context.Context, c *Client) error {
			_, err := c.GetVariantByEnvironment(ctx, "a-1", "production")
			return err
		}, func(err error) bool { return strings.Contains(err.Error(), "null") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
			})
			err := tc.call(faultContext(t), faultClient(t, s))
			t.Logf("outcome: %v", err)
			var derr *DecodeError
			require.ErrorAs(t, err, &derr, "got %v (%T), want a *DecodeError", err, err)
			assert.False(t, derr.StatusCode != 200 || !tc.want(err), "got %v (status %d), want a 200 *DecodeError saying what type was wrong", err, derr.StatusCode)
			assert.EqualValues(t, 1, s.requests.Load(), "server saw the wrong number of requests, want 1")
		})
	}
}

func TestFaultEmptyBody200(t *testing.T) {
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	c := faultClient(t, s)
	ctx := faultContext(t)
	_, errOne := c.GetVariant(ctx, faultVariant)
	_, errList := c.ListHumanEvaluations(ctx, "a-1")
	t.Logf("outcome: %v; %v", errOne, errList)
	for name, err := range map[string]error{"GetVariant": errOne, "ListHumanEvaluations": errList} {
		var derr *DecodeError
		assert.False(t, !errors.As(err, &derr) || !errors.Is(err, io.ErrUnexpectedEOF) || derr.StatusCode != 200, "%s on an empty 200: got %v, want a *DecodeError wrapping io.ErrUnexpectedEOF", name, err)
	}
	assert.EqualValues(t, 2, s.requests.Load(), "server saw the wrong number of requests, want 2 (no retries)")
}

const faultProxyPage = `<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx/1.25.3</center>
</body>
</html>
`

func TestFaultHTMLErrorPageFromProxy(t *testing.T) {
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, faultProxyPage)
	})
	c := faultClient(t, s, WithMaxRetries(2))
	ctx := faultContext(t)

	_, err := c.GetVariant(ctx, faultVariant)
	t.Logf("outcome: %v", err)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr, "got %v (%T), want an *APIError", err, err)
	if apiErr.StatusCode != 502 || apiErr.Message != "502 Bad Gateway" || string(apiErr.Body) != faultProxyPage {
		t.Errorf("APIError = %d %q with body %q, want 502 with the page title as message and the page as body",
			apiErr.StatusCode, apiErr.Message, apiErr.Body)
	}
	assert.ErrorIs(t, err, ErrServer, "errors.Is(%v, ErrServer) = false", err)
	assert.EqualValues(t, 3, s.requests.Load(), "GET: server saw the wrong number of requests, want 3 (a 502 is retried twice)")

	_, err = c.CreateEvaluation(ctx, faultNewEvaluation())
	assert.False(t, !errors.As(err, &apiErr) || apiErr.StatusCode != 502 || apiErr.Method != http.MethodPost, "CreateEvaluation: got %v, want a POST *APIError with status 502", err)
	assert.EqualValues(t, 1, s.posts.Load(), "POST: server saw the wrong number of creates, want 1 (a create is never retried on 502)")
}

func TestFaultHugeErrorBody(t *testing.T) {
	const size = 8 << 20
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		chunk := []byte(strings.Repeat("boom ", 1024))
		for written := 0; written < size; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the client stopped reading, as it should
			}
		}
	})
	start := time.Now()
	_, err := faultClient(t, s).GetVariant(faultContext(t), faultVariant)
	faultEnded(t, start, "GetVariant with an 8 MiB error body")
	t.Logf("outcome: %.120v", err)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr, "got %v (%T), want an *APIError", err, err)
	assert.EqualValues(t, 1<<20, len(apiErr.Body), "kept %d bytes of an 8 MiB body, want exactly 1 MiB (%d)", len(apiErr.Body), 1<<20)
	if n := len([]rune(apiErr.Message)); n == 0 || n > 201 {
		t.Errorf("message has %d runes, want a short readable excerpt (at most 200 and a mark)", n)
	}
	assert.False(t, len(err.Error()) > 400, "error string is %d bytes long; it must stay readable", len(err.Error()))
	assert.EqualValues(t, 1, s.requests.Load(), "server saw the wrong number of requests, want 1 (500 is not retried)")
}

// faultStallHandler writes nothing, or a first part of the body, then waits until
// the client goes away or the test ends.
func faultStallHandler(midBody bool) func(s *faultServer, w http.ResponseWriter, r *http.Request) {
	return func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		if midBody {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(faultVariantBody)))
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, faultVariantBody[:40])
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
	}
}

func faultTestStall(t *testing.T, midBody bool) {
	t.Run("per-attempt timeout", func(t *testing.T) {
		s := newFaultServer(t, faultStallHandler(midBody))
		c := faultClient(t, s, WithTimeout(150*time.Millisecond), WithMaxRetries(2))
		start := time.Now()
		_, err := c.GetVariant(faultContext(t), faultVariant)
		faultEnded(t, start, "GetVariant against a stalled server")
		t.Logf("outcome after %s: %v", time.Since(start).Round(time.Millisecond), err)
		var netErr net.Error
		require.False(t, !errors.As(err, &netErr) || !netErr.Timeout(), "got %v, want a timeout error", err)
		faultWantNoAPIError(t, err)
		want := int64(3) // a timeout before the headers is a transport error: retried
		if midBody {
			want = 1 // the answer had begun: not retried
		}
		assert.EqualValues(t, want, s.requests.Load(), "server saw the wrong number of requests, want %d", want)
	})
	t.Run("context deadline", func(t *testing.T) {
		s := newFaultServer(t, faultStallHandler(midBody))
		c := faultClient(t, s, WithTimeout(0), WithMaxRetries(3))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.GetVariant(ctx, faultVariant)
		faultEnded(t, start, "GetVariant against a stalled server")
		t.Logf("outcome after %s: %v", time.Since(start).Round(time.Millisecond), err)
		require.ErrorIs(t, err, context.DeadlineExceeded, "got %v, want an error wrapping context.DeadlineExceeded", err)
		// At most one: on a loaded machine the deadline can pass before the
		// first request reaches the handler, and nothing is retried after.
		assert.LessOrEqual(t, s.requests.Load(), int64(1), "server saw more than one request: nothing is retried once the context is over")
	})
}

func TestFaultStallBeforeHeaders(t *testing.T) { faultTestStall(t, false) }

func TestFaultStallMidBody(t *testing.T) { faultTestStall(t, true) }

// faultWaitLog is an slog handler that records the waits the client plans.
type faultWaitLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (h *faultWaitLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *faultWaitLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *faultWaitLog) WithGroup(string) slog.Handler            { return h }
func (h *faultWaitLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "wait" {
			h.mu.Lock()
			h.waits = append(h.waits, a.Value.Duration())
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

func (h *faultWaitLog) all() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.waits...)
}

// faultRetryAfterOnce answers 429 with the given Retry-After once, then serves.
func faultRetryAfterOnce(t *testing.T, value func() string, min, max time.Duration) (time.Duration, *faultServer) {
	t.Helper()
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		if s.requests.Load() == 1 {
			w.Header().Set("Retry-After", value())
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"detail":"Too many requests"}`)
			return
		}
		faultServeAll(w, r)
	})
	log := &faultWaitLog{}
	c := faultClient(t, s, WithRetryWait(min, max), WithLogger(slog.New(log)))
	start := time.Now()
	if _, err := c.GetVariant(faultContext(t), faultVariant); err != nil {
		t.Fatalf("GetVariant after a 429: %v", err)
	}
	faultEnded(t, start, "GetVariant after a 429")
	require.EqualValues(t, 2, s.requests.Load(), "server saw the wrong number of requests, want 2")
	waits := log.all()
	require.EqualValues(t, 1, len(waits), "logged waits %v, want exactly one", waits)
	t.Logf("outcome: success, planned wait %s", waits[0])
	return waits[0], s
}

func TestFaultRetryAfterSeconds(t *testing.T) {
	wait, _ := faultRetryAfterOnce(t, func() string { return "1" }, time.Millisecond, 3*time.Second)
	assert.EqualValues(t, time.Second, wait, "Retry-After: 1 gave a wait of %s, want exactly 1s", wait)
}

func TestFaultRetryAfterHTTPDate(t *testing.T) {
	wait, _ := faultRetryAfterOnce(t, func() string {
		return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)
	}, time.Millisecond, 3*time.Second)
	// The date has one-second resolution, so the wait is at most 2 s and,
	// unless the machine is very slow, about 1 to 2 s; ignoring the header
	// would give the exponential wait of 1 to 2 ms.
	assert.False(t, wait <= 100*time.Millisecond || wait > 2*time.Second, "Retry-After two seconds ahead gave a wait of %s, want (100ms, 2s]", wait)
}

func TestFaultRetryAfterHuge(t *testing.T) {
	for _, v := range []string{"86400000", "99999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT"} {
		t.Run(v, func(t *testing.T) {
			wait, _ := faultRetryAfterOnce(t, func() string { return v }, time.Millisecond, 50*time.Millisecond)
			assert.EqualValues(t, 50*time.Millisecond, wait, "Retry-After: %s gave a wait of %s, want the 50ms maximum", v, wait)
		})
	}
}

func TestFaultRetryAfterGarbage(t *testing.T) {
	// Each value, if wrongly honoured, would give a wait outside the
	// exponential backoff's first step: 0 for "-5", "0" or a date in the
	// past (which would send every client back at once, without jitter),
	// the 1 s maximum for "1.5" or a far date.
	for _, v := range []string{"soon", "-5", "0", "1.5", "Tomorrow, 25 Foo 2099", "Mon, 01 Jan 2001 00:00:00 PST", "Mon, 01 Jan 2001 00:00:00 GMT"} {
		t.Run(v, func(t *testing.T) {
			const min = 20 * time.Millisecond
			wait, _ := faultRetryAfterOnce(t, func() string { return v }, min, time.Second)
			assert.False(t, wait < min/2 || wait > 4*min, "Retry-After: %q gave a wait of %s, want the exponential backoff's first step, within [%s, %s]", v, wait, min/2, 4*min)
		})
	}
}

func TestFaultRetriesExhaustedKeepsLastAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		call   func(context.Context, *Client) error
		tries  int64
	}{
		{"GET 503", http.StatusServiceUnavailable, func(ctx context.Context, c *Client) error {
			_, err := c.GetVariant(ctx, faultVariant)
			return err
		}, 3},
		{"POST 429", http.StatusTooManyRequests, func(ctx context.Context, c *Client) error {
			_, err := c.CreateEvaluation(ctx, faultNewEvaluation())
			return err
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, `{"detail":"busy, answer %d"}`, s.requests.Load())
			})
			err := tc.call(faultContext(t), faultClient(t, s, WithMaxRetries(2)))
			t.Logf("outcome: %v", err)
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr, "got %v (%T), want an *APIError, never a bare giving-up error", err, err)
			want := fmt.Sprintf("busy, answer %d", tc.tries)
			assert.False(t, apiErr.StatusCode != tc.status || apiErr.Message != want, "APIError %d %q, want %d %q (the last answer)", apiErr.StatusCode, apiErr.Message, tc.status, want)
			assert.EqualValues(t, tc.tries, s.requests.Load(), "server saw the wrong number of requests, want %d", tc.tries)
		})
	}
}

func TestFaultContextCancelledDuringBackoff(t *testing.T) {
	answered := make(chan struct{}, 1)
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"detail":"restarting"}`)
		select {
		case answered <- struct{}{}:
		default:
		}
	})
	c := faultClient(t, s, WithRetryWait(time.Millisecond, time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-answered
		time.Sleep(50 * time.Millisecond) // the client is now waiting 30 s
		cancel()
	}()
	start := time.Now()
	_, err := c.GetVariant(ctx, faultVariant)
	faultEnded(t, start, "GetVariant cancelled during a 30 s backoff")
	t.Logf("outcome after %s: %v", time.Since(start).Round(time.Millisecond), err)
	require.ErrorIs(t, err, context.Canceled, "got %v, want an error wrapping context.Canceled", err)
	var apiErr *APIError
	assert.False(t, !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Message != "restarting", "got %v, want the last answer (503 restarting) kept in the error", err)
	assert.EqualValues(t, 1, s.requests.Load(), "server saw the wrong number of requests, want 1")
}

func TestFaultRedirectToAnotherHost(t *testing.T) {
	type seen struct{ auth, cookie, ua string }
	var mu sync.Mutex
	var atTarget []seen
	target := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		atTarget = append(atTarget, seen{r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Header.Get("User-Agent")})
		mu.Unlock()
		faultServeAll(w, r)
	})
	port := target.Listener.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name, host string
		keep       bool
	}{
		{"another port", "127.0.0.1:" + strconv.Itoa(port), false},
		{"another host name", "localhost:" + strconv.Itoa(port), false},
		{"same origin (control)", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			atTarget = nil
			mu.Unlock()
			var origin *faultServer
			origin = newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("moved") == "1" { // the same-origin target
					mu.Lock()
					atTarget = append(atTarget, seen{r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Header.Get("User-Agent")})
					mu.Unlock()
					faultServeAll(w, r)
					return
				}
				assert.False(t, r.Header.Get("Authorization") != testKey || r.Header.Get("Cookie") != faultCookie, "the origin itself did not get the credentials")
				host := tc.host
				if host == "" {
					host = origin.Listener.Addr().String()
				}
				http.Redirect(w, r, "http://"+host+"/api/variants/"+faultVariant+"?moved=1", http.StatusTemporaryRedirect)
			})
			v, err := faultClient(t, origin).GetVariant(faultContext(t), "old-id")
			require.NoError(t, err, "GetVariant through a redirect")
			assert.EqualValues(t, faultVariant, v.VariantID, "got variant %q, want %q", v.VariantID, faultVariant)
			mu.Lock()
			defer mu.Unlock()
			require.EqualValues(t, 1, len(atTarget), "the redirect target saw %d requests, want 1", len(atTarget))
			got := atTarget[0]
			if tc.keep {
				assert.False(t, got.auth != testKey || got.cookie != faultCookie, "a same-origin redirect lost the credentials: %+v", got)
				return
			}
			assert.False(t, got.auth != "" || got.cookie != "", "credentials followed the redirect to %s: Authorization %q, Cookie %q", tc.host, got.auth, got.cookie)
			assert.False(t, !strings.HasPrefix(got.ua, "agenta-go/"), "User-Agent %q lost on redirect; only credentials should be dropped", got.ua)
		})
	}
}

func TestFaultSharedClient64Goroutines(t *testing.T) {
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) { faultServeAll(w, r) })
	c := faultClient(t, s)
	ctx := faultContext(t)
	const workers, calls = 64, 7
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				var err error
				switch (g + i) % 7 {
				case 0:
					var v *models.AppVariantResponse
					if v, err = c.GetVariant(ctx, faultVariant); err == nil && v.Revision != 3 {
						err = fmt.Errorf("GetVariant revision %d, want 3", v.Revision)
					}
				case 1:
					var v *models.AppVariantResponse
					if v, err = c.GetVariantByEnvironment(ctx, "a-1", "production"); err == nil && v.VariantID != faultVariant {
						err = fmt.Errorf("GetVariantByEnvironment id %q", v.VariantID)
					}
				case 2:
					var l []models.EvaluationScenario
					if l, err = c.FetchEvaluationScenarios(ctx, "e-"+strconv.Itoa(g)); err == nil && (len(l) != 1 || l[0].Results[0].Result.String() != "true") {
						err = fmt.Errorf("FetchEvaluationScenarios got %+v", l)
					}
				case 3:
					var l []models.Evaluation
					if l, err = c.CreateEvaluation(ctx, faultNewEvaluation()); err == nil && (len(l) != 1 || l[0].State() != models.EvaluationStarted) {
						err = fmt.Errorf("CreateEvaluation got %+v", l)
					}
				case 4:
					_, err = c.AddVariantFromBase(ctx, faultAddVariant())
				case 5:
					var sp *models.Span
					if sp, err = c.GetSpan(ctx, "sp-1", &GetSpanOptions{Type: "generation"}); err == nil && sp.SpanKind != models.SpanKindLLM {
						err = fmt.Errorf("GetSpan kind %q", sp.SpanKind)
					}
				case 6:
					var l []models.HumanEvaluation
					if l, err = c.ListHumanEvaluations(ctx, "a-1"); err == nil && (len(l) != 1 || l[0].VariantsRevisionIDs[1] != "r-2") {
						err = fmt.Errorf("ListHumanEvaluations got %+v", l)
					}
				}
				if err != nil {
					errs <- err
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.EqualValues(t, workers*calls, s.requests.Load(), "server saw the wrong number of requests, want %d", workers*calls)
}

func TestFaultConnectionReuseSequential(t *testing.T) {
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"detail":"Not found"}`)
			return
		}
		faultServeAll(w, r)
	})
	c := faultClient(t, s)
	ctx := faultContext(t)
	for i := 0; i < 200; i++ {
		var err error
		switch i % 8 {
		case 0:
			_, err = c.GetVariant(ctx, faultVariant)
		case 1:
			_, err = c.FetchEvaluationScenarios(ctx, "e-1")
		case 2:
			_, err = c.ListHumanEvaluations(ctx, "a-1")
		case 3:
			_, err = c.GetSpan(ctx, "sp-1", nil)
		case 4:
			_, err = c.CreateEvaluation(ctx, faultNewEvaluation())
		case 5:
			_, err = c.AddVariantFromBase(ctx, faultAddVariant())
		case 6:
			_, err = c.GetVariantByEnvironment(ctx, "a-1", "staging")
		case 7: // error answers are read and closed too
			_, err = c.GetVariant(ctx, "missing")
			require.ErrorIs(t, err, ErrNotFound, "call %d: got %v, want ErrNotFound", i, err)
			err = nil
		}
		require.NoError(t, err, "call %d", i)
	}
	assert.EqualValues(t, 1, s.conns.Load(), "200 sequential calls opened the wrong number of connections, want 1")
}

func TestFaultConnectionReuseConcurrent(t *testing.T) {
	const workers, calls = 16, 25
	// The first requests of all workers meet in the handler, so that all 16
	// connections are dialled while none is idle. After that a worker always
	// finds an idle connection (net/http returns a connection to the pool
	// before the caller sees the end of its body), so a dial beyond a few
	// spares would mean connections are not reused.
	var arrived atomic.Int64
	allIn := make(chan struct{})
	s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
		if n := arrived.Add(1); n == workers {
			close(allIn)
		}
		select {
		case <-allIn:
		case <-time.After(faultHungBound):
			t.Errorf("only %d of %d first requests arrived together", arrived.Load(), workers)
		case <-s.release:
		}
		faultServeAll(w, r)
	})
	c := faultClient(t, s)
	ctx := faultContext(t)
	var wg sync.WaitGroup
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				var err error
				switch i % 3 {
				case 0:
					_, err = c.GetVariant(ctx, faultVariant)
				case 1:
					_, err = c.FetchEvaluationScenarios(ctx, "e-1")
				case 2:
					_, err = c.CreateEvaluation(ctx, faultNewEvaluation())
				}
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, workers*calls, s.requests.Load(), "server saw the wrong number of requests, want %d", workers*calls)
	// One connection per worker, and a few spares: on a loaded machine
	// net/http may replace a connection dropped while its end was being
	// read, or dial one while another is being returned. One connection
	// per call would be 400.
	if n := s.conns.Load(); n < 1 || n > workers+workers/2 {
		t.Errorf("%d concurrent workers opened %d connections, want at most %d and a few spares", workers, n, workers)
	}
}

// faultCreates are the two non-idempotent operations.
var faultCreates = []struct {
	name string
	call func(context.Context, *Client) error
}{
	{"CreateEvaluation", func(ctx context.Context, c *Client) error {
		_, err := c.CreateEvaluation(ctx, faultNewEvaluation())
		return err
	}},
	{"AddVariantFromBase", func(ctx context.Context, c *Client) error {
		_, err := c.AddVariantFromBase(ctx, faultAddVariant())
		return err
	}},
}

// TestFaultPOSTNeverSentTwice proves the POST rule: whatever the fault, a
// create reaches the server at most once. Only a 429, which the server sends
// before doing any work, is followed by another attempt.
func TestFaultPOSTNeverSentTwice(t *testing.T) {
	status := func(code int, body string) func(*faultServer, http.ResponseWriter, *http.Request) {
		return func(s *faultServer, w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			io.WriteString(w, body)
		}
	}
	raw := func(answer func(conn net.Conn, rw *bufio.ReadWriter)) func(*faultServer, http.ResponseWriter, *http.Request) {
		return func(s *faultServer, w http.ResponseWriter, r *http.Request) {
			conn, rw := faultHijack(t, w, r)
			answer(conn, rw)
		}
	}
	faults := []struct {
		name    string
		handler func(*faultServer, http.ResponseWriter, *http.Request)
		warmup  bool // make one GET first, so the POST rides a reused connection
		timeout time.Duration
		ok      bool // the call succeeds
		posts   int64
	}{
		{name: "dropped before the answer", handler: raw(func(c net.Conn, _ *bufio.ReadWriter) { c.Close() }), posts: 1},
		{name: "dropped on a reused connection", handler: raw(func(c net.Conn, _ *bufio.ReadWriter) { c.Close() }), warmup: true, posts: 1},
		{name: "faultReset before the answer", handler: raw(func(c net.Conn, _ *bufio.ReadWriter) { faultReset(c) }), posts: 1},
		{name: "faultReset mid-body", handler: raw(func(c net.Conn, rw *bufio.ReadWriter) {
			rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n[{\"id\":\"e-1\",")
			rw.Flush()
			time.Sleep(20 * time.Millisecond)
			faultReset(c)
		}), posts: 1},
		{name: "headers then close", handler: raw(func(c net.Conn, rw *bufio.ReadWriter) {
			rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n")
			rw.Flush()
			c.Close()
		}), posts: 1},
		{name: "garbage instead of HTTP", handler: raw(func(c net.Conn, rw *bufio.ReadWriter) {
			rw.WriteString("SSH-2.0-OpenSSH_9.6\r\n")
			rw.Flush()
			c.Close()
		}), posts: 1},
		{name: "stall before headers", handler: faultStallHandler(false), timeout: 150 * time.Millisecond, posts: 1},
		{name: "stall mid-body", handler: faultStallHandler(true), timeout: 150 * time.Millisecond, posts: 1},
		{name: "500", handler: status(500, `{"detail":"App Variant not found"}`), posts: 1},
		{name: "502 HTML", handler: status(502, faultProxyPage), posts: 1},
		{name: "503", handler: status(503, `{"detail":"unavailable"}`), posts: 1},
		{name: "504", handler: status(504, `{"detail":"gateway timeout"}`), posts: 1},
		{name: "408", handler: status(408, `{"detail":"request timeout"}`), posts: 1},
		{name: "truncated body", handler: status(200, `[{"id":"e-1",`), posts: 1},
		{name: "empty 200", handler: status(200, ``), posts: 1},
		{name: "429 then 200", handler: func(s *faultServer, w http.ResponseWriter, r *http.Request) {
			if s.posts.Load() == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			faultServeAll(w, r)
		}, ok: true, posts: 2},
	}
	for _, f := range faults {
		for _, op := range faultCreates {
			t.Run(f.name+"/"+op.name, func(t *testing.T) {
				s := newFaultServer(t, func(s *faultServer, w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet {
						faultServeAll(w, r)
						return
					}
					f.handler(s, w, r)
				})
				opts := []Option{WithMaxRetries(3)}
				if f.timeout > 0 {
					opts = append(opts, WithTimeout(f.timeout))
				}
				c := faultClient(t, s, opts...)
				ctx := faultContext(t)
				if f.warmup {
					if _, err := c.GetVariant(ctx, faultVariant); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Now()
				err := op.call(ctx, c)
				faultEnded(t, start, op.name)
				t.Logf("outcome: %d POSTs, %v", s.posts.Load(), err)
				assert.False(t, f.ok && err != nil, "got %v, want success", err)
				assert.False(t, !f.ok && err == nil, "succeeded, want an error")
				assert.EqualValues(t, f.posts, s.posts.Load(), "server saw the wrong number of POSTs, want %d", f.posts)
			})
		}
	}
}

// TestFaultPOSTRetriedAfterDialFailure shows the one transport failure a
// create is retried on: the connection was refused, so nothing was sent.
// The server comes up while the client backs off, and the create arrives
// exactly once.
func TestFaultPOSTRetriedAfterDialFailure(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close() // nothing listens: connections are refused

	var posts atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		faultServeAll(w, r)
	})}
	t.Cleanup(func() { srv.Close() })
	go func() {
		time.Sleep(100 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("re-listen on %s: %v", addr, err)
			return
		}
		_ = srv.Serve(l)
	}()

	c := newTestClient(t, "http://"+addr+"/api",
		WithRetryWait(50*time.Millisecond, 50*time.Millisecond), WithMaxRetries(40))
	start := time.Now()
	evs, err := c.CreateEvaluation(faultContext(t), faultNewEvaluation())
	faultEnded(t, start, "CreateEvaluation while the server starts")
	require.NoError(t, err, "CreateEvaluation after refused connections; want the retry to succeed")
	assert.False(t, len(evs) != 1 || evs[0].ID != "e-1", "got %+v, want the one evaluation e-1", evs)
	assert.EqualValues(t, 1, posts.Load(), "server saw the wrong number of creates, want exactly 1")
}
