package agenta

// Hostile answers (issue 12, part A): a server that switches protocols,
// inflates a gzip bomb, holds back the end of a complete answer, loops on
// redirects, or echoes the key in ways a byte scrub misses. Each test
// asserts that the call returns (within generous bounds: these prove that
// a call ends instead of hanging, they are not timing assertions), that
// the heap grows near the limit at most, and that no secret and no more
// than a bounded excerpt of the answer reaches err.Error() or the log.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
)

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
	c, err := NewClient(base, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
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

// Item 1: a 101 then silence must not hang the call past its timeout or
// its context's deadline.
func TestHostileSwitchingProtocols(t *testing.T) {

	base, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
		// Then silence: the connection stays open until the test ends.
	})
	const attempt = 300 * time.Millisecond
	cases := []struct {
		name    string
		opts    []Option
		ctxWait time.Duration
		bound   time.Duration
	}{
		{"attempt timeout, no retries", []Option{WithTimeout(attempt), WithMaxRetries(0)}, time.Minute, 3 * attempt},
		{"attempt timeout, retries", []Option{WithTimeout(attempt)}, time.Minute, 3 * 4 * attempt},
		{"context deadline", []Option{WithTimeout(0)}, attempt, 3 * attempt},
		{"both", []Option{WithTimeout(time.Second)}, 2 * attempt, 3 * 2 * attempt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, base, tc.opts...)
			for _, op := range []hostileOp{hostileGetVariant, hostileAddVariant, hostileStream} {
				ctx, cancel := context.WithTimeout(context.Background(), tc.ctxWait)
				took, err := hostileElapsed(ctx, c, op)
				cancel()
				if err == nil {
					t.Errorf("%s: a 101 answer succeeded, want an error", op.name)
				}
				if took > tc.bound {
					t.Errorf("%s: returned after %s, want within %s (err: %v)", op.name, took, tc.bound, err)
				}
				var apiErr *APIError
				if errors.As(err, &apiErr) && apiErr.StatusCode != http.StatusSwitchingProtocols {
					t.Errorf("%s: *APIError status %d, want 101", op.name, apiErr.StatusCode)
				}
				hostileCheckError(t, err)
			}
		})
	}
}

// hostileGzip returns the gzip members of prefix, n MiB of fill, and
// suffix, concatenated: net/http's transparent gzip inflates them as one
// stream. A 1 MiB member of one repeated byte is about 1 KiB.
func hostileGzip(prefix string, fill byte, mib int, suffix string) []byte {
	member := func(data []byte) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		return b.Bytes()
	}
	one := member(bytes.Repeat([]byte{fill}, 1<<20))
	var out bytes.Buffer
	out.Write(member([]byte(prefix)))
	for range mib {
		out.Write(one)
	}
	out.Write(member([]byte(suffix)))
	return out.Bytes()
}

// hostilePeakHeap runs fn and returns how far the heap grew above where it
// was before, sampled every half millisecond. The GC runs more often than
// by default while fn runs, so the peak follows live memory closely.
func hostilePeakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	before := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	<-sampled
	if p := peak.Load(); p > before {
		return p - before
	}
	return 0
}

// hostileBombServer answers every request with body, gzip-encoded.
func hostileBombServer(t *testing.T, body []byte) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s.URL + "/api"
}

// Item 2: a gzip bomb in a 2xx answer is refused at the default limit of
// its kind, with an error that names the limit and how to raise it, and the
// heap grows near that limit, not with the bomb.
func TestHostileGzipBombDefaults(t *testing.T) {

	cases := []struct {
		name  string
		op    hostileOp
		body  []byte
		limit int64
		// growth is how many times the limit the heap may grow by: the
		// SDK's buffer grows to the limit and no further, and the heap
		// holds it and the one it replaced.
		growth int64
	}{
		{"single answer, one huge string", hostileGetVariant,
			hostileGzip(`{"app_id":"`, 'a', 256, `"}`), 32 << 20, 2},
		{"streamed element, one endless row", hostileStream,
			hostileGzip(`[{"id":"`, 'a', 256, `"}]`), 16 << 20, 2},
		{"streamed element, endless whitespace after [", hostileStream,
			hostileGzip(`[`, ' ', 256, `]`), 16 << 20, 2},
		{"list element, one endless row", hostileListHuman,
			hostileGzip(`[{"id":"`, 'a', 256, `"}]`), 16 << 20, 2},
		{"list element, endless whitespace after [", hostileCreateEvaluation,
			hostileGzip(`[`, ' ', 256, `]`), 16 << 20, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, hostileBombServer(t, tc.body), WithTimeout(time.Minute))
			var err error
			grew := hostilePeakHeap(func() { err = tc.op.run(context.Background(), c) })
			if !errors.Is(err, ErrAnswerTooLarge) {
				t.Fatalf("%s: got %v, want an error matching ErrAnswerTooLarge", tc.op.name, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "WithResponseLimits") || !strings.Contains(msg, "MiB") {
				t.Errorf("the error should name the limit and WithResponseLimits, got %q", msg)
			}
			t.Logf("the heap grew by %d MiB for a %d MiB limit and 256 MiB inflated", grew>>20, tc.limit>>20)
			if max := uint64(tc.growth*tc.limit + 16<<20); grew > max {
				t.Errorf("the heap grew by %d MiB for a %d MiB limit, want at most %d MiB", grew>>20, tc.limit>>20, max>>20)
			}
			hostileCheckError(t, err)
		})
	}
}

// hostileHoldBack answers with the whole value, then holds back the end of
// the body: the terminating chunk (after plain or gzip-encoded JSON), the
// last byte of a Content-Length, or the trailer of a gzip stream. The connection stays open until the
// test ends.
func hostileHoldBack(t *testing.T, framing string) string {
	t.Helper()
	answer := func(path string) string {
		switch {
		case strings.HasSuffix(path, "/evaluation_scenarios"):
			return `[{"id":"s-1","evaluation_id":"e-1","inputs":[],"outputs":[],"is_pinned":false,"note":"","results":[]}]`
		case strings.HasSuffix(path, "/evaluations"):
			return `[{"id":"e-1","app_id":"a-1","variant_ids":["v-1"],"status":{"type":"status","value":"EVALUATION_STARTED","error":null},` +
				`"aggregated_results":[],"created_at":"2024-06-26T12:22:31.775000+00:00","updated_at":"2024-06-26T12:22:31.775000+00:00"}]`
		case strings.HasSuffix(path, "/human-evaluations"):
			return `[{"id":"h-1","app_id":"a-1","evaluation_type":"human_a_b_testing","status":"EVALUATION_FINISHED",` +
				`"created_at":"2024-06-26T12:22:31.775000","updated_at":"2024-06-26T12:22:31.775000"}]`
		}
		return `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default","base_id":"b-1","revision":1}`
	}
	base, _ := hostileTCP(t, func(conn net.Conn, req *http.Request) {
		body := answer(req.URL.Path)
		head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		switch framing {
		case "chunked":
			io.WriteString(conn, head+"Transfer-Encoding: chunked\r\n\r\n"+
				strconv.FormatInt(int64(len(body)), 16)+"\r\n"+body+"\r\n")
			// The terminating "0\r\n\r\n" never comes.
		case "gzip":
			// A whole gzip stream in one chunk; the terminating chunk
			// never comes.
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			io.WriteString(zw, body)
			zw.Close()
			io.WriteString(conn, head+"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"+
				strconv.FormatInt(int64(b.Len()), 16)+"\r\n"+b.String()+"\r\n")
		case "gzip trailer":
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			io.WriteString(zw, body)
			zw.Close()
			zipped := b.Bytes()
			// Everything but the 8-byte trailer (CRC-32 and size).
			io.WriteString(conn, head+"Content-Encoding: gzip\r\nContent-Length: "+strconv.Itoa(len(zipped))+"\r\n\r\n")
			conn.Write(zipped[:len(zipped)-8])
		case "content-length":
			io.WriteString(conn, head+"Content-Length: "+strconv.Itoa(len(body)+1)+"\r\n\r\n"+body)
			// The final "\n" never comes.
		}
	})
	return base
}

// Item 3: a complete answer whose body never ends returns at once: the
// call does not wait for the end, and a stream loop ends.
func TestHostileHeldBackEnd(t *testing.T) {

	const wait = 6 * time.Second // the context's deadline; the attempt has none
	const bound = 2 * time.Second
	ops := []hostileOp{hostileGetVariant, hostileAddVariant, hostileCreateEvaluation,
		hostileFetchScenarios, hostileListHuman, hostileStream}
	for _, framing := range []string{"chunked", "content-length", "gzip", "gzip trailer"} {
		t.Run(framing, func(t *testing.T) {
			c := hostileClient(t, hostileHoldBack(t, framing), WithTimeout(0))
			for _, op := range ops {
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				took, err := hostileElapsed(ctx, c, op)
				cancel()
				if err != nil {
					t.Errorf("%s: %v, want the complete answer", op.name, err)
				}
				if took > bound {
					t.Errorf("%s: returned after %s, want within %s: a complete answer must not wait for the body to end", op.name, took, bound)
				}
			}
		})
	}
}

// Item 4: the creating operations follow at most one 307 or 308, only to
// the same origin, and never 301, 302 or 303; the error names Location.
func TestHostileRedirectCreates(t *testing.T) {

	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(other.Close)

	cases := []struct {
		name     string
		status   int
		location string // "" means the other server
		maxSent  int64
	}{
		{"307 loop", http.StatusTemporaryRedirect, "/api/evaluations", 2},
		{"308 loop", http.StatusPermanentRedirect, "/api/evaluations", 2},
		{"307 to another origin", http.StatusTemporaryRedirect, "", 1},
		{"301", http.StatusMovedPermanently, "/api/evaluations", 1},
		{"302", http.StatusFound, "/api/evaluations", 1},
		{"303", http.StatusSeeOther, "/api/evaluations", 1},
	}
	for _, tc := range cases {
		for _, op := range []hostileOp{hostileCreateEvaluation, hostileAddVariant} {
			t.Run(tc.name+"/"+op.name, func(t *testing.T) {
				var sent atomic.Int64
				location := tc.location
				if location == "" {
					location = other.URL + "/api/evaluations"
				}
				s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					sent.Add(1)
					w.Header().Set("Location", location)
					w.WriteHeader(tc.status)
				}))
				t.Cleanup(s.Close)
				elsewhere.Store(0)
				c := hostileClient(t, s.URL+"/api", WithTimeout(5*time.Second))
				err := op.run(context.Background(), c)
				if n := sent.Load() + elsewhere.Load(); n > tc.maxSent {
					t.Errorf("the create was sent %d times, want at most %d", n, tc.maxSent)
				}
				if elsewhere.Load() != 0 {
					t.Errorf("the create was sent to another origin %d times, want never", elsewhere.Load())
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status {
					t.Fatalf("got %v (%T), want an *APIError with status %d", err, err, tc.status)
				}
				if !strings.Contains(err.Error(), location) {
					t.Errorf("the error should name the Location %q, got %q", location, err)
				}
				hostileCheckError(t, err)
			})
		}
	}
}

// A single same-origin 307 on a create is still followed: the body is
// sent again once, to where the server asked.
func TestHostileRedirectCreateFollowedOnce(t *testing.T) {
	var sent atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		if r.URL.Path == "/api/variants/from-base" {
			w.Header().Set("Location", "/api/v2/variants/from-base")
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, `{"app_id":"a-1","variant_id":"v-2","variant_name":"bot.precise","base_id":"b-1","revision":1}`)
	}))
	t.Cleanup(s.Close)
	c := hostileClient(t, s.URL+"/api")
	if err := hostileAddVariant.run(context.Background(), c); err != nil {
		t.Fatalf("AddVariantFromBase after one 307: %v, want success", err)
	}
	if n := sent.Load(); n != 2 {
		t.Errorf("the server saw %d requests, want 2 (the 307 and the one it pointed to)", n)
	}
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

// Item 5: every string built from server data is bounded and scrubbed
// after decoding; Body is scrubbed before it is cut.
func TestHostileErrorStrings(t *testing.T) {

	mib := strings.Repeat("x", 1<<20)
	cases := []struct {
		name   string
		op     hostileOp
		status int
		header http.Header
		body   string
	}{
		{"JSON string for a list (encoding/json path)", hostileListHuman, 200, nil,
			`"` + mib + hostileKey + mib + `"`},
		{"JSON string for a list (scenario path)", hostileFetchScenarios, 200, nil,
			`"` + mib + hostileKey + mib + `"`},
		{"JSON string for a stream", hostileStream, 200, nil, `"` + hostileKey + `"`},
		{"key in created_at", hostileListHuman, 200, nil,
			`[{"id":"h-1","created_at":"` + hostileKey + `"}]`},
		{"key in a long created_at", hostileListHuman, 200, nil,
			`[{"id":"h-1","created_at":"2024-06-26T12:22:31` + hostileKey + strings.Repeat("9", 5000) + `"}]`},
		{"key in created_at, escaped", hostileListHuman, 200, nil,
			`[{"id":"h-1","created_at":"` + hostileEscapeAll(hostileKey) + `"}]`},
		{"422 msg with the key escaped", hostileAddVariant, 422, nil,
			`{"detail":[{"loc":["body","parameters"],"msg":"bad key ` + hostileEscapeAll(hostileKey) + `","type":"value_error"}]}`},
		{"404 detail with the key escaped", hostileGetVariant, 404, nil,
			`{"detail":"no variant for ` + hostileEscapeAll(hostileKey) + `"}`},
		{"bad Location header", hostileGetVariant, 302,
			http.Header{"Location": {"http://[::1%" + hostileKey + "/"}}, ""},
		{"long bad Location header", hostileGetVariant, 302,
			http.Header{"Location": {"http://[::1%" + strings.Repeat("y", 60<<10) + hostileKey}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logged bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logged, nil))
			c := hostileClient(t, hostileServe(t, tc.status, tc.header, tc.body),
				WithMaxRetries(0), WithLogger(logger))
			err := tc.op.run(context.Background(), c)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tc.op.name)
			}
			hostileCheckError(t, err)
			if strings.Contains(logged.String(), hostileKey) {
				t.Errorf("the log holds the API key: %.300q…", logged.String())
			}
			if n := logged.Len(); n > 2*hostileMaxError {
				t.Errorf("the log is %d bytes for one failed call, want at most %d", n, 2*hostileMaxError)
			}
			var apiErr *APIError
			if errors.As(err, &apiErr) && bytes.Contains(apiErr.Body, []byte(hostileKey)) {
				t.Errorf("APIError.Body holds the API key")
			}
		})
	}
}

// Item 5: the 1 MiB cut of an error body never leaves a part of a key.
func TestHostileErrorBodyCut(t *testing.T) {

	for _, kept := range []int{1, 8, 14, len(hostileKey) - 1} {
		t.Run(strconv.Itoa(kept), func(t *testing.T) {
			body := strings.Repeat("x", maxErrorBody-kept) + hostileKey + strings.Repeat("z", 100)
			c := hostileClient(t, hostileServe(t, 400, http.Header{"Content-Type": {"text/plain"}}, body), WithMaxRetries(0))
			err := hostileGetVariant.run(context.Background(), c)
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("got %v, want an *APIError", err)
			}
			if len(apiErr.Body) > maxErrorBody {
				t.Errorf("Body is %d bytes, want at most %d", len(apiErr.Body), maxErrorBody)
			}
			tail := apiErr.Body[max(0, len(apiErr.Body)-len(hostileKey)):]
			for n := 4; n < len(hostileKey); n++ {
				if bytes.HasSuffix(tail, []byte(hostileKey[:n])) {
					t.Errorf("Body ends with the first %d bytes of the key: %q", n, tail)
					break
				}
			}
			hostileCheckError(t, err)
		})
	}
}

// Item 10: the sentinels tell "no answer came", "the attempt's timeout
// expired" and "the caller's context ended" apart, the message says which
// limit expired, and the cause stays wrapped.
func TestHostileFailureSentinels(t *testing.T) {

	stall, _ := hostileTCP(t, func(net.Conn, *http.Request) {}) // reads the request, never answers
	drop, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) { conn.Close() })
	partial, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"app_id\":")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/api"
	ln.Close()

	const attempt = 200 * time.Millisecond
	cases := []struct {
		name     string
		base     string
		opts     []Option
		ctxWait  time.Duration
		want     error
		notWant  []error
		mentions string
	}{
		{"attempt timeout, no retries", stall, []Option{WithTimeout(attempt), WithMaxRetries(0)}, time.Minute,
			ErrAttemptTimeout, []error{ErrNoResponse}, "WithTimeout"},
		{"attempt timeout, retries", stall, []Option{WithTimeout(attempt), WithMaxRetries(2)}, time.Minute,
			ErrAttemptTimeout, []error{ErrNoResponse}, "WithTimeout"},
		{"attempt timeout reading the body", partial, []Option{WithTimeout(attempt), WithMaxRetries(0)}, time.Minute,
			ErrAttemptTimeout, []error{ErrNoResponse}, "WithTimeout"},
		{"caller's context", stall, []Option{WithTimeout(0)}, attempt,
			context.DeadlineExceeded, []error{ErrAttemptTimeout, ErrNoResponse}, "context"},
		{"caller's context reading the body", partial, []Option{WithTimeout(0)}, attempt,
			context.DeadlineExceeded, []error{ErrAttemptTimeout, ErrNoResponse}, "context"},
		{"dropped connection", drop, []Option{WithTimeout(5 * time.Second)}, time.Minute,
			ErrNoResponse, []error{ErrAttemptTimeout, context.DeadlineExceeded}, ""},
		{"connection refused", refused, []Option{WithTimeout(5 * time.Second)}, time.Minute,
			ErrNoResponse, []error{ErrAttemptTimeout, context.DeadlineExceeded}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, tc.base, tc.opts...)
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctxWait)
			defer cancel()
			err := hostileGetVariant.run(ctx, c)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want an error matching %v", err, tc.want)
			}
			for _, other := range tc.notWant {
				if errors.Is(err, other) {
					t.Errorf("%v also matches %v; the sentinels must tell them apart", err, other)
				}
			}
			if tc.mentions != "" && !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("the message should say which limit expired (%q), got %q", tc.mentions, err)
			}
			var netErr net.Error
			if !errors.As(err, &netErr) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
				!errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%v: the cause (a net.Error, EOF or a deadline) is not wrapped", err)
			}
			hostileCheckError(t, err)
		})
	}
}

// WithResponseLimits sets each limit; the error names the one exceeded.
func TestHostileResponseLimitsOption(t *testing.T) {
	variant := `{"app_id":"a-1","variant_id":"v-1","variant_name":"` + strings.Repeat("v", 3000) + `"}`
	row := `{"id":"h-1","app_id":"` + strings.Repeat("a", 3000) + `"}`
	rows := "[" + strings.Repeat(row+",", 9) + row + "]"
	scenario := `{"id":"s-1","evaluation_id":"` + strings.Repeat("e", 3000) + `"}`
	scenarios := "[" + strings.Repeat(scenario+",", 9) + scenario + "]"
	cases := []struct {
		name   string
		limits ResponseLimits
		op     hostileOp
		body   string
		field  string // "" for success
	}{
		{"single under", ResponseLimits{Single: 4000}, hostileGetVariant, variant, ""},
		{"single over", ResponseLimits{Single: 2000}, hostileGetVariant, variant, "Single"},
		{"list under", ResponseLimits{List: 40000, Element: 4000}, hostileListHuman, rows, ""},
		{"list over", ResponseLimits{List: 20000, Element: 4000}, hostileListHuman, rows, "List"},
		{"list element over", ResponseLimits{Element: 2000}, hostileListHuman, rows, "Element"},
		{"scenario list over", ResponseLimits{List: 20000, Element: 4000}, hostileFetchScenarios, scenarios, "List"},
		{"scenario element over", ResponseLimits{Element: 2000}, hostileFetchScenarios, scenarios, "Element"},
		{"stream has no whole limit", ResponseLimits{List: 1000, Element: 4000}, hostileStream, scenarios, ""},
		{"stream element over", ResponseLimits{Element: 2000}, hostileStream, scenarios, "Element"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, hostileServe(t, 200, nil, tc.body), WithResponseLimits(tc.limits))
			err := tc.op.run(context.Background(), c)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("%s: %v, want success under the limits %+v", tc.op.name, err, tc.limits)
				}
				return
			}
			var limit *LimitError
			if !errors.As(err, &limit) || !errors.Is(err, ErrAnswerTooLarge) {
				t.Fatalf("%s: got %v, want a *LimitError matching ErrAnswerTooLarge", tc.op.name, err)
			}
			if limit.Field != tc.field {
				t.Errorf("the limit exceeded is %q, want %q", limit.Field, tc.field)
			}
			var decodeErr *DecodeError
			if !errors.As(err, &decodeErr) || decodeErr.StatusCode != 200 {
				t.Errorf("got %T, want it inside a *DecodeError with status 200", err)
			}
			if !strings.Contains(err.Error(), "ResponseLimits{"+tc.field) {
				t.Errorf("the message should say how to raise ResponseLimits.%s, got %q", tc.field, err)
			}
		})
	}
	if _, err := NewClient("http://127.0.0.1:1/api", WithResponseLimits(ResponseLimits{Element: -1})); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a negative limit: got %v, want ErrInvalidArgument", err)
	}
}

// Item 5: an evaluation's failure message is server data too: WaitEvaluation
// scrubs it, whether the key comes raw or escaped.
func TestHostileEvaluationFailureScrubbed(t *testing.T) {
	for _, echo := range []string{hostileKey, hostileEscapeAll(hostileKey)} {
		failed := `{"type":"status","value":"EVALUATION_FAILED","error":{"message":"provider refused key ` + echo + `"}}`
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/status") {
				io.WriteString(w, `{"status":`+failed+`}`)
				return
			}
			io.WriteString(w, `{"id":"e-1","app_id":"a-1","status":`+failed+`}`)
		}))
		c := hostileClient(t, s.URL+"/api")
		_, err := c.WaitEvaluation(context.Background(), "e-1", nil)
		s.Close()
		var failure *EvaluationFailedError
		if !errors.As(err, &failure) {
			t.Fatalf("got %v, want an *EvaluationFailedError", err)
		}
		if strings.Contains(failure.Message, hostileKey) {
			t.Errorf("Message holds the API key: %q", failure.Message)
		}
		hostileCheckError(t, err)
	}
}

// gzipBody reads what net/http's transparent gzip reads: members one after
// another, an empty body as no bytes, and a corrupt stream as an error.
func TestHostileGzipBody(t *testing.T) {
	members := hostileGzip(`{"a":`, ' ', 1, `1}`)
	cases := []struct {
		name    string
		body    []byte
		want    string
		wantErr bool
	}{
		{"members", members, `{"a":` + strings.Repeat(" ", 1<<20) + `1}`, false},
		{"empty", nil, "", false},
		{"header fields", hostileGzipHeader(`{"a":1}`), `{"a":1}`, false},
		{"bad checksum", hostileBadChecksum(`{"a":1}`), "", true},
		{"not gzip", []byte("plain"), "", true},
		{"cut", members[:len(members)-3], "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{Header: http.Header{"Content-Encoding": {"gzip"}}, Body: io.NopCloser(bytes.NewReader(tc.body))}
			inflate(resp)
			got, err := io.ReadAll(resp.Body)
			if tc.wantErr != (err != nil) {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if !tc.wantErr && string(got) != tc.want {
				t.Errorf("read %d bytes, want %d", len(got), len(tc.want))
			}
			if resp.Header.Get("Content-Encoding") != "" || !resp.Uncompressed {
				t.Errorf("the header still says gzip, or Uncompressed is false")
			}
		})
	}
}

// hostileGzipHeader is data as one member whose header has a name, a
// comment and an extra field.
func hostileGzipHeader(data string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Name, zw.Comment, zw.Extra = "answer.json", "from a proxy", []byte("xx")
	io.WriteString(zw, data)
	zw.Close()
	return b.Bytes()
}

// hostileBadChecksum is data as one member whose CRC-32 is wrong.
func hostileBadChecksum(data string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, data)
	zw.Close()
	out := b.Bytes()
	out[len(out)-8] ^= 0xff
	return out
}

// FuzzGzipBody checks the SDK's gzip reader against compress/gzip, which
// net/http uses: the same bytes for any stream compress/gzip reads, and an
// error for any it refuses.
func FuzzGzipBody(f *testing.F) {
	f.Add(append(hostileGzipHeader(`{"a":`), hostileGzipHeader(`1}`)...)) // two members
	f.Add(hostileGzipHeader(`{"a":1}`))
	f.Add(hostileBadChecksum(`{"a":1}`))
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b, 8, 0x1f, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := func() ([]byte, error) {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err == io.EOF {
				return nil, nil // an empty body
			}
			if err != nil {
				return nil, err
			}
			return io.ReadAll(zr)
		}()
		resp := &http.Response{Header: http.Header{"Content-Encoding": {"gzip"}}, Body: io.NopCloser(bytes.NewReader(data))}
		inflate(resp)
		got, err := io.ReadAll(resp.Body)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, compress/gzip says %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes, compress/gzip %d", len(got), len(want))
		}
	})
}
