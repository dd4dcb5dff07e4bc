package agenta

// Tests of StreamEvaluationScenarios as issue 5 asks: flat memory however
// many rows, an early break that closes the response at once, and errors
// that arrive as FetchEvaluationScenarios reports them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rowStreamServer serves an evaluation of rows scenarios generated on the
// fly, one at a time, so that the server's own memory stays small and does
// not blur the client's. rows < 0 means rows without end, until the client
// goes away (bounded at a million rows or 30 s).
type rowStreamServer struct {
	*httptest.Server
	written atomic.Int64  // rows written
	bytes   atomic.Int64  // body bytes written
	ended   chan string   // how the handler ended: "complete", "client gone"
	closed  chan struct{} // closed when a connection is closed
}

func newRowStreamServer(t *testing.T, rows int) *rowStreamServer {
	t.Helper()
	s := &rowStreamServer{ended: make(chan string, 16), closed: make(chan struct{})}
	var closedOnce atomic.Bool
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		src := newScenarioSource(42)
		buf := make([]byte, 0, 64<<10)
		buf = append(buf, '[')
		limit, deadline := rows, time.Now().Add(30*time.Second)
		if rows < 0 {
			limit = 1_000_000
		}
		flush := func() bool {
			n, err := w.Write(buf)
			s.bytes.Add(int64(n))
			buf = buf[:0]
			return err == nil && r.Context().Err() == nil && time.Now().Before(deadline)
		}
		for i := 0; i < limit; i++ {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = src.appendRow(buf)
			s.written.Add(1)
			if len(buf) > 32<<10 && !flush() {
				s.ended <- "client gone"
				return
			}
			if rows < 0 && i%16 == 15 { // an endless answer trickles
				w.(http.Flusher).Flush()
			}
		}
		buf = append(buf, ']')
		if !flush() {
			s.ended <- "client gone"
			return
		}
		s.ended <- "complete"
	}))
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateClosed && closedOnce.CompareAndSwap(false, true) {
			close(s.closed)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// TestStreamingPeakHeap proves that memory does not depend on the number of
// rows: 100,000 realistic rows (about 100 MB of JSON) stream through with a
// peak heap under 16 MB.
//
// GC settings: the test sets GOGC=100 (debug.SetGCPercent) and no memory
// limit, whatever the environment says, and collects before it starts. It
// samples runtime.MemStats every 100 rows; HeapInuse (bytes in in-use heap
// spans, which bounds HeapAlloc) is the measure. Between two samples the
// client allocates about 0.3 MB, which bounds what sampling can miss. Under
// -race or -short it streams 10,000 rows instead, with the same bound.
func TestStreamingPeakHeap(t *testing.T) {
	rows := 100_000
	if testing.Short() || raceEnabled {
		rows = 10_000
	}
	const limit = 16 << 20
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	srv := newRowStreamServer(t, rows)
	c := newTestClient(t, srv.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	startInuse, startAlloc, startTotal := ms.HeapInuse, ms.HeapAlloc, ms.TotalAlloc
	var peakInuse, peakAlloc uint64

	n, results := 0, 0
	for s, err := range c.StreamEvaluationScenarios(context.Background(), "ev-big") {
		require.NoError(t, err, "row %d", n)
		n++
		results += len(s.Results)
		if n%100 == 0 {
			runtime.ReadMemStats(&ms)
			peakInuse = max(peakInuse, ms.HeapInuse)
			peakAlloc = max(peakAlloc, ms.HeapAlloc)
		}
	}
	runtime.ReadMemStats(&ms)
	require.False(t, n != rows || results != 3*rows, "streamed %d rows with %d results, want %d and %d", n, results, rows, 3*rows)
	body := srv.bytes.Load()
	t.Logf("%d rows, %.1f MB of JSON: peak HeapInuse %.2f MB (%.2f MB at start), peak HeapAlloc %.2f MB (%.2f MB at start), %.1f MB allocated in all, %d GCs",
		rows, float64(body)/1e6, float64(peakInuse)/(1<<20), float64(startInuse)/(1<<20),
		float64(peakAlloc)/(1<<20), float64(startAlloc)/(1<<20), float64(ms.TotalAlloc-startTotal)/1e6, ms.NumGC)
	assert.False(t, peakInuse >= limit, "peak HeapInuse while streaming %d rows was %.2f MB, want under 16 MB", rows, float64(peakInuse)/(1<<20))
}

// TestStreamingBreakClosesResponse stops after a few rows of an endless
// answer: the loop must end at once, and the server must see its client go
// away rather than keep writing.
func TestStreamingBreakClosesResponse(t *testing.T) {
	srv := newRowStreamServer(t, -1)
	c := newTestClient(t, srv.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond))
	n := 0
	for _, err := range c.StreamEvaluationScenarios(context.Background(), "ev-endless") {
		require.NoError(t, err)
		if n++; n == 5 {
			break
		}
	}
	select {
	case how := <-srv.ended:
		require.EqualValues(t, "client gone", how, "the server's handler ended %q, want \"client gone\"", how)
	case <-time.After(10 * time.Second):
		t.Fatalf("10 s after the break the server was still writing (%d rows so far)", srv.written.Load())
	}
	select {
	case <-srv.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("10 s after the break the server had not seen the connection close")
	}
	if w := srv.written.Load(); w >= 1_000_000 {
		t.Errorf("the server wrote all %d rows: the break did not close the response", w)
	}
}

// TestStreamingErrorsMatchFetch checks that every failure reaches a range
// loop as FetchEvaluationScenarios reports it: a non-2xx answer as the
// first and only (zero, err) pair; a malformed element after the rows
// before it, as the last pair.
func TestStreamingErrorsMatchFetch(t *testing.T) {
	t.Parallel()
	good := func(i int) string {
		return string(newScenarioSource(uint64(i)).appendRow(nil))
	}
	tests := []struct {
		name   string
		status int
		body   string
		rows   int   // good rows before the error
		is     error // errors.Is target, if any
		as     func(error) bool
	}{
		{name: "404", status: 404, body: `{"detail":"Evaluation not found"}`, is: ErrNotFound,
			as: func(err error) bool { var e *APIError; return errors.As(err, &e) && e.StatusCode == 404 }},
		{name: "500 html", status: 500, body: "<html><body>Internal Server Error</body></html>", is: ErrServer},
		{name: "422", status: 422, body: `{"detail":[{"loc":["path","evaluation_id"],"msg":"bad id","type":"value_error"}]}`, is: ErrValidation,
			as: func(err error) bool { var e *ValidationError; return errors.As(err, &e) }},
		{name: "wrong type in third element", status: 200, body: "[" + good(1) + "," + good(2) + `,{"inputs":"oops"},` + good(3) + "]", rows: 2,
			as: func(err error) bool {
				var de *DecodeError
				var te *json.UnmarshalTypeError
				return errors.As(err, &de) && errors.As(err, &te)
			}},
		{name: "syntax error in second element", status: 200, body: "[" + good(1) + `,{"id": ]`, rows: 1,
			as: func(err error) bool { var se *json.SyntaxError; return errors.As(err, &se) }},
		{name: "cut short", status: 200, body: "[" + good(1) + "," + good(2)[:100], rows: 1,
			as: func(err error) bool { var de *DecodeError; return errors.As(err, &de) }},
		{name: "not an array", status: 200, body: `{"detail":"nope"}`,
			as: func(err error) bool { var de *DecodeError; return errors.As(err, &de) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c := newTestClient(t, srv.URL+"/api", WithMaxRetries(0))
			ctx := context.Background()
			_, fetchErr := c.FetchEvaluationScenarios(ctx, "ev-1")
			require.False(t, fetchErr == nil, "FetchEvaluationScenarios gave no error")

			var streamErr error
			rows := 0
			for s, err := range c.StreamEvaluationScenarios(ctx, "ev-1") {
				require.Nil(t, streamErr, "a pair came after the error %v", streamErr)
				if err != nil {
					if !reflect.DeepEqual(s, models.EvaluationScenario{}) {
						t.Errorf("the error came with a non-zero scenario %+v", s)
					}
					streamErr = err
					continue
				}
				rows++
			}
			assert.EqualValues(t, tt.rows, rows, "got %d rows before the error, want %d", rows, tt.rows)
			require.False(t, streamErr == nil, "the stream ended without an error")
			assert.False(t, streamErr.Error() != fetchErr.Error(), "stream error %q\ndiffers from fetch error %q", streamErr, fetchErr)
			assert.False(t, tt.is != nil && !errors.Is(streamErr, tt.is), "errors.Is(%v, %v) is false", streamErr, tt.is)
			assert.False(t, tt.as != nil && !tt.as(streamErr), "error %v (%T) is not of the expected kind", streamErr, streamErr)
		})
	}
}

// TestStreamingMatchesFetch checks that streaming yields exactly the values
// FetchEvaluationScenarios returns, in order, and that a loop may keep the
// rows it is given (no row shares memory with the next).
func TestStreamingMatchesFetch(t *testing.T) {
	srv := newBenchServer(t, scenariosBody(1000))
	c := newTestClient(t, srv.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond))
	ctx := context.Background()
	want, err := c.FetchEvaluationScenarios(ctx, "ev-1")
	require.NoError(t, err)
	var got []models.EvaluationScenario
	for s, err := range c.StreamEvaluationScenarios(ctx, "ev-1") {
		require.NoError(t, err)
		got = append(got, s)
	}
	if !reflect.DeepEqual(got, want) {
		for i := range min(len(got), len(want)) {
			require.False(t, !reflect.DeepEqual(got[i], want[i]), "row %d differs:\nstream %+v\nfetch  %+v", i, got[i], want[i])
		}
		t.Fatalf("stream gave %d rows, fetch %d", len(got), len(want))
	}
	var direct []models.EvaluationScenario
	if err := json.Unmarshal(scenariosBody(1000), &direct); err != nil {
		t.Fatal(err)
	}
	require.False(t, !reflect.DeepEqual(got, direct), "streamed rows differ from json.Unmarshal of the same body")
	assert.EqualValues(t, 1, srv.conns.Load(), "two calls opened the wrong number of connections, want 1")
}

// TestConnectionsReused checks the connection goals of issue 5 on loopback:
// 200 sequential calls use one connection, and 64 workers sharing a client
// use at most 64.
func TestConnectionsReused(t *testing.T) {
	ctx := context.Background()
	// net/http returns a connection to the pool from another goroutine just
	// after the body's last byte is read; on a loaded machine the next call
	// can start first and dial a spare connection (which it then does not
	// use). So the sequential case gets three tries, each on a fresh server:
	// one must use a single connection, and none more than two.
	t.Run("sequential", func(t *testing.T) {
		var counts []int64
		for try := 0; try < 3; try++ {
			srv := newBenchServer(t, variantBody)
			c := newTestClient(t, srv.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond))
			for i := 0; i < 200; i++ {
				if _, err := c.GetVariant(ctx, fmt.Sprint("v-", i)); err != nil {
					t.Fatal(err)
				}
			}
			got := srv.conns.Load()
			require.False(t, got > 2, "200 sequential calls opened %d connections, want 1", got)
			if got == 1 {
				return
			}
			counts = append(counts, got)
			c.CloseIdleConnections()
			srv.Close()
		}
		t.Errorf("200 sequential calls opened %v connections in three tries, want 1 in at least one", counts)
	})
	t.Run("64 workers", func(t *testing.T) {
		srv := newBenchServer(t, variantBody)
		c := newTestClient(t, srv.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond))
		errs := make(chan error, 64)
		for w := 0; w < 64; w++ {
			go func() {
				for i := 0; i < 50; i++ {
					if _, err := c.GetVariant(ctx, "v-1"); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for w := 0; w < 64; w++ {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		// The pool holds at most 64 at once (MaxConnsPerHost), but on a
		// loaded machine net/http may replace a connection it dropped, or
		// dial a spare while another is being returned: allow a few. One
		// connection per call would be 3,200.
		if got := srv.conns.Load(); got > 64+64/8 {
			t.Errorf("64 workers opened %d connections, want at most 64 and a few spares", got)
		}
	})
}
