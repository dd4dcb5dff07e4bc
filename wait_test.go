package agenta

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitEvalID is a UUIDv7 as mid-2024 servers give evaluations.
const waitEvalID = "0190b5a2-7c1e-7d3a-9f00-4b1d2c3e4f50"

// statusBody is the status read's answer for a status value, with the
// service's error document for the failed ones.
func statusBody(value string) string {
	return `{"status":` + statusResult(value) + `}`
}

func statusResult(value string) string {
	if value == models.EvaluationFailed || value == models.EvaluationAggregationFailed {
		return `{"type":"status","value":"` + value + `","error":{"message":"Evaluation Failed","stacktrace":"Traceback (most recent call last):\n  File \"tasks.py\""}}`
	}
	return `{"type":"status","value":"` + value + `","error":null}`
}

// evaluationBody is FetchEvaluation's answer in a status.
func evaluationBody(value string) string {
	return `{"id":"` + waitEvalID + `","app_id":"0190b5a1-0000-7000-8000-000000000001","user_id":"u-1","user_username":"ana",` +
		`"variant_ids":["v-1"],"variant_names":["capitals.default"],"variant_revision_ids":["r-1"],"revisions":["1"],` +
		`"testset_id":"t-1","testset_name":"capitals","status":` + statusResult(value) + `,` +
		`"aggregated_results":[{"evaluator_config":{"id":"c-1","name":"exact","evaluator_key":"auto_exact_match",` +
		`"settings_values":{"correct_answer_key":"correct_answer"},"created_at":"2024-07-15 10:52:51.123456+00:00",` +
		`"updated_at":"2024-07-15 10:52:51+00:00"},"result":{"type":"number","value":0.6666666666666666,"error":null}}],` +
		`"average_cost":{"type":"cost","value":0.0001,"error":null},"total_cost":{"type":"cost","value":0.0003,"error":null},` +
		`"average_latency":{"type":"latency","value":0.8,"error":null},` +
		`"created_at":"2024-07-15T10:52:51.123456Z","updated_at":"2024-07-15T10:52:52.5Z"}`
}

// answer is one scripted reply of the status route.
type answer struct {
	code int
	body string
}

// waitServer is a loopback service whose status route answers from a script
// (the last answer repeats) and whose evaluation route answers final.
type waitServer struct {
	*httptest.Server
	mu        sync.Mutex
	script    []answer
	final     string
	statuses  int // status reads that reached the server
	fetches   int // evaluation reads
	scenarios int // scenario list reads: WaitEvaluation must send none
	other     []string
}

func newWaitServer(t *testing.T, final string, script ...answer) *waitServer {
	t.Helper()
	s := &waitServer{script: script, final: final}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.EscapedPath() {
		case "/api/evaluations/" + waitEvalID + "/status":
			a := s.script[min(s.statuses, len(s.script)-1)]
			s.statuses++
			w.WriteHeader(a.code)
			fmt.Fprint(w, a.body)
		case "/api/evaluations/" + waitEvalID:
			s.fetches++
			fmt.Fprint(w, evaluationBody(s.final))
		case "/api/evaluations/" + waitEvalID + "/evaluation_scenarios":
			s.scenarios++
			fmt.Fprint(w, `[]`)
		default:
			s.other = append(s.other, r.Method+" "+r.URL.String())
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"detail":"Not Found"}`)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *waitServer) counts() (statuses, fetches, scenarios int, other []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statuses, s.fetches, s.scenarios, s.other
}

func ok(value string) answer { return answer{http.StatusOK, statusBody(value)} }

func TestWaitEvaluation(t *testing.T) {
	for _, tc := range []struct {
		name       string
		script     []answer
		final      string
		wantReads  int
		wantSeen   []models.EvaluationStatus // OnStatus calls: first read and each change
		wantFailed bool
	}{
		{
			name:      "finished",
			script:    []answer{ok(models.EvaluationInitialized), ok(models.EvaluationStarted), ok(models.EvaluationStarted), ok(models.EvaluationFinished)},
			final:     models.EvaluationFinished,
			wantReads: 4,
			wantSeen:  []models.EvaluationStatus{models.EvaluationInitialized, models.EvaluationStarted, models.EvaluationFinished},
		},
		{
			name:      "finished with errors is no failure",
			script:    []answer{ok(models.EvaluationStarted), ok(models.EvaluationFinishedWithErrors)},
			final:     models.EvaluationFinishedWithErrors,
			wantReads: 2,
			wantSeen:  []models.EvaluationStatus{models.EvaluationStarted, models.EvaluationFinishedWithErrors},
		},
		{
			name:       "failed",
			script:     []answer{ok(models.EvaluationInitialized), ok(models.EvaluationStarted), ok(models.EvaluationFailed)},
			final:      models.EvaluationFailed,
			wantReads:  3,
			wantSeen:   []models.EvaluationStatus{models.EvaluationInitialized, models.EvaluationStarted, models.EvaluationFailed},
			wantFailed: true,
		},
		{
			name:       "aggregation failed",
			script:     []answer{ok(models.EvaluationStarted), ok(models.EvaluationAggregationFailed)},
			final:      models.EvaluationAggregationFailed,
			wantReads:  2,
			wantSeen:   []models.EvaluationStatus{models.EvaluationStarted, models.EvaluationAggregationFailed},
			wantFailed: true,
		},
		{
			name:      "an unknown status does not end the wait",
			script:    []answer{ok("EVALUATION_QUEUED"), ok("EVALUATION_QUEUED"), ok(models.EvaluationFinished)},
			final:     models.EvaluationFinished,
			wantReads: 3,
			wantSeen:  []models.EvaluationStatus{"EVALUATION_QUEUED", models.EvaluationFinished},
		},
		{
			name: "a transient 503 is retried",
			script: []answer{
				ok(models.EvaluationStarted),
				{http.StatusServiceUnavailable, `<html><title>503 Service Temporarily Unavailable</title></html>`},
				ok(models.EvaluationFinished),
			},
			final:     models.EvaluationFinished,
			wantReads: 3,
			wantSeen:  []models.EvaluationStatus{models.EvaluationStarted, models.EvaluationFinished},
		},
		{
			name:      "a bare string status is read as its value",
			script:    []answer{{http.StatusOK, `{"status":"EVALUATION_STARTED"}`}, {http.StatusOK, `{"status":"EVALUATION_FINISHED"}`}},
			final:     models.EvaluationFinished,
			wantReads: 2,
			wantSeen:  []models.EvaluationStatus{models.EvaluationStarted, models.EvaluationFinished},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newWaitServer(t, tc.final, tc.script...)
			c := newTestClient(t, s.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond), WithTimeout(5*time.Second))
			var seen []models.EvaluationStatus
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			ev, err := c.WaitEvaluation(ctx, waitEvalID, &WaitOptions{
				Interval: time.Millisecond,
				OnStatus: func(r models.Result) { seen = append(seen, r.EvaluationStatus()) },
			})

			require.NotNil(t, ev, "expected the evaluation, got nil and error %v", err)
			assert.Equal(t, waitEvalID, ev.ID)
			assert.Equal(t, tc.final, ev.State(), "the evaluation as FetchEvaluation answered")
			require.Len(t, ev.AggregatedResults, 1, "aggregated results come with the evaluation")
			assert.Equal(t, tc.wantSeen, seen, "OnStatus calls")
			statuses, fetches, scenarios, other := s.counts()
			assert.Equal(t, tc.wantReads, statuses, "status reads (503 included)")
			assert.Equal(t, 1, fetches, "evaluation reads")
			assert.Zero(t, scenarios, "scenario list reads")
			assert.Empty(t, other, "unexpected requests")
			if !tc.wantFailed {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrEvaluationFailed), "expected ErrEvaluationFailed, got %v", err)
			var failed *EvaluationFailedError
			require.True(t, errors.As(err, &failed), "expected *EvaluationFailedError, got %T", err)
			assert.Equal(t, "Evaluation Failed", failed.Message)
			assert.Equal(t, models.EvaluationStatus(tc.final), failed.Status)
			assert.Equal(t, waitEvalID, failed.EvaluationID)
			assert.Contains(t, err.Error(), "Evaluation Failed")
			assert.True(t, ev.Failed(), "the evaluation says it failed")
			var apiErr *APIError
			assert.False(t, errors.As(err, &apiErr), "a failed run is not an API error")
		})
	}
}

// A run that never leaves INITIALIZED (no worker on the server) ends with
// the context, and the error says so.
func TestWaitEvaluationDeadlineWhileInitialized(t *testing.T) {
	s := newWaitServer(t, models.EvaluationFinished, ok(models.EvaluationInitialized))
	c := newTestClient(t, s.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond), WithTimeout(5*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()

	ev, err := c.WaitEvaluation(ctx, waitEvalID, &WaitOptions{Interval: 10 * time.Millisecond})

	assert.Less(t, time.Since(start), 5*time.Second, "the wait hung past its deadline")
	assert.Nil(t, ev)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "expected the context's error, got %v", err)
	var waitErr *WaitError
	require.True(t, errors.As(err, &waitErr), "expected *WaitError, got %T", err)
	assert.Equal(t, models.EvaluationStatus(models.EvaluationInitialized), waitErr.Status)
	assert.Equal(t, waitEvalID, waitErr.EvaluationID)
	assert.Greater(t, waitErr.Held, time.Duration(0), "how long the status held")
	assert.LessOrEqual(t, waitErr.Held, time.Since(start))
	assert.Contains(t, err.Error(), models.EvaluationInitialized)
	assert.Contains(t, err.Error(), "no worker may be running")
	assert.False(t, errors.Is(err, ErrEvaluationFailed))
	statuses, fetches, scenarios, _ := s.counts()
	assert.Greater(t, statuses, 1, "status reads")
	assert.Zero(t, fetches+scenarios, "no evaluation or scenario read for a run that never ended")
}

// A STARTED run that outlives the context gets no INITIALIZED hint; a
// context that ends before any read says so.
func TestWaitEvaluationContextEnds(t *testing.T) {
	s := newWaitServer(t, models.EvaluationFinished, ok(models.EvaluationStarted))
	c := newTestClient(t, s.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond), WithTimeout(5*time.Second))

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.WaitEvaluation(ctx, waitEvalID, &WaitOptions{Interval: 5 * time.Millisecond})
	var waitErr *WaitError
	require.True(t, errors.As(err, &waitErr), "expected *WaitError, got %T %v", err, err)
	assert.Equal(t, models.EvaluationStatus(models.EvaluationStarted), waitErr.Status)
	assert.NotContains(t, err.Error(), "worker")

	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	_, err = c.WaitEvaluation(cancelled, waitEvalID, nil)
	require.True(t, errors.As(err, &waitErr), "expected *WaitError, got %T %v", err, err)
	assert.True(t, errors.Is(err, context.Canceled), "expected context.Canceled, got %v", err)
	assert.Equal(t, models.EvaluationStatus(""), waitErr.Status)
	assert.Contains(t, err.Error(), "no status read yet")
}

// An answer that is not transient ends the wait with that error.
func TestWaitEvaluationPermanentError(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    answer
		want error
	}{
		{"500 unknown id", answer{http.StatusInternalServerError, `{"detail":"badly formed hexadecimal UUID string"}`}, ErrServer},
		{"401", answer{http.StatusUnauthorized, `{"detail":{"message":"Unauthorized"}}`}, ErrUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newWaitServer(t, models.EvaluationFinished, ok(models.EvaluationStarted), tc.a)
			c := newTestClient(t, s.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond), WithTimeout(5*time.Second))

			ev, err := c.WaitEvaluation(context.Background(), waitEvalID, &WaitOptions{Interval: time.Millisecond})

			assert.Nil(t, ev)
			assert.True(t, errors.Is(err, tc.want), "expected %v, got %v", tc.want, err)
			var apiErr *APIError
			require.True(t, errors.As(err, &apiErr), "expected *APIError, got %T", err)
			assert.Equal(t, "/api/evaluations/"+waitEvalID+"/status", apiErr.Path)
			statuses, fetches, _, _ := s.counts()
			assert.Equal(t, 2, statuses, "no read after a permanent error")
			assert.Zero(t, fetches)
		})
	}
}

// A status read without a status is a *DecodeError, not an endless wait.
func TestWaitEvaluationAnswerWithoutStatus(t *testing.T) {
	for _, body := range []string{`{}`, `{"status":null}`, `{"status":42}`, `{"state":"EVALUATION_FINISHED"}`} {
		t.Run(body, func(t *testing.T) {
			s := newWaitServer(t, models.EvaluationFinished, answer{http.StatusOK, body})
			c := newTestClient(t, s.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond), WithTimeout(5*time.Second))

			_, err := c.WaitEvaluation(context.Background(), waitEvalID, nil)

			var decodeErr *DecodeError
			require.True(t, errors.As(err, &decodeErr), "expected *DecodeError, got %T %v", err, err)
			assert.Equal(t, http.StatusOK, decodeErr.StatusCode)
		})
	}
}

// nil options work: a run already over needs no interval.
func TestWaitEvaluationNilOptions(t *testing.T) {
	s := newWaitServer(t, models.EvaluationFinished, ok(models.EvaluationFinished))
	c := newTestClient(t, s.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond), WithTimeout(5*time.Second))

	ev, err := c.WaitEvaluation(context.Background(), waitEvalID, nil)

	require.NoError(t, err)
	assert.True(t, ev.Terminal())
	statuses, fetches, _, _ := s.counts()
	assert.Equal(t, [2]int{1, 1}, [2]int{statuses, fetches}, "status reads, evaluation reads")
}

func TestWaitEvaluationRefusesBadArguments(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1/api")
	for _, tc := range []struct {
		name string
		id   string
		opts *WaitOptions
		arg  string
	}{
		{"empty id", "", nil, "evaluationID"},
		{"dot id", "..", nil, "evaluationID"},
		{"negative interval", waitEvalID, &WaitOptions{Interval: -time.Second}, "WaitOptions.Interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.WaitEvaluation(context.Background(), tc.id, tc.opts)
			requireArgumentError(t, err, tc.arg)
		})
	}
	//lint:ignore SA1012 a nil context is what is tested
	_, err := c.WaitEvaluation(nil, waitEvalID, nil) //nolint:staticcheck
	assert.True(t, errors.Is(err, ErrInvalidArgument), "expected ErrInvalidArgument for a nil ctx, got %v", err)
}

// WaitEvaluation leaves no goroutine behind, whether the run ends or the
// context does.
func TestWaitEvaluationLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		s := newWaitServer(t, models.EvaluationFinished, ok(models.EvaluationStarted), ok(models.EvaluationFinished))
		c := newTestClient(t, s.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond), WithTimeout(5*time.Second))
		_, err := c.WaitEvaluation(context.Background(), waitEvalID, &WaitOptions{Interval: time.Millisecond})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		s2 := newWaitServer(t, models.EvaluationFinished, ok(models.EvaluationInitialized))
		_, err = newTestClient(t, s2.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond), WithTimeout(5*time.Second)).WaitEvaluation(ctx, waitEvalID, &WaitOptions{Interval: time.Hour})
		require.True(t, errors.Is(err, context.DeadlineExceeded), "expected a deadline error, got %v", err)
		c.CloseIdleConnections()
		s.Close()
		s2.Close()
	}()
	// Closing connections ends their goroutines asynchronously: give them
	// time, then compare.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("expected at most %d goroutines, got %d:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// Error strings built from a server's status and message stay short,
// whatever the server sends.
func TestWaitErrorsAreBounded(t *testing.T) {
	huge := strings.Repeat("X", 1<<20)
	for _, err := range []error{
		&WaitError{EvaluationID: waitEvalID, Status: models.EvaluationStatus(huge), Held: time.Second, Err: context.DeadlineExceeded},
		&EvaluationFailedError{EvaluationID: waitEvalID, Status: models.EvaluationStatus(huge), Message: text.Clip(huge, maxMessage)},
	} {
		if n := len(err.Error()); n > 2*1024 {
			t.Errorf("%T: a %d-byte status gave a %d-byte error string; want at most 2 kB", err, len(huge), n)
		}
	}
}

// The failure's message is cut like every message from the server.
func TestWaitEvaluationFailureMessageIsBounded(t *testing.T) {
	long := strings.Repeat("Evaluation Failed ", 10_000)
	s := newWaitServer(t, "", answer{http.StatusOK, `{"status":{"type":"status","value":"EVALUATION_FAILED","error":{"message":"` + long + `"}}}`})
	c := newTestClient(t, s.URL+"/api", WithRetryWait(time.Millisecond, 2*time.Millisecond), WithTimeout(5*time.Second))

	ev, err := c.WaitEvaluation(context.Background(), waitEvalID, nil)

	require.NotNil(t, ev)
	var failed *EvaluationFailedError
	require.True(t, errors.As(err, &failed), "expected *EvaluationFailedError, got %T %v", err, err)
	assert.LessOrEqual(t, len([]rune(failed.Message)), maxMessage+1, "message runes")
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(failed.Message, "…")), "the message is the start of the service's")
}

// A run whose status echoes the key, in any encoding, and that never ends:
// the *WaitError names the status, scrubbed.
func TestWaitErrorScrubsStatus(t *testing.T) {
	for _, echo := range []string{hostileKey, hostileEscapeAll(hostileKey)} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"status":{"type":"status","value":"RUNNING `+echo+`","error":null}}`)
		}))
		c := hostileClient(t, s.URL+"/api")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := c.WaitEvaluation(ctx, "e-1", &WaitOptions{Interval: 20 * time.Millisecond})
		cancel()
		s.Close()
		var waitErr *WaitError
		if !errors.As(err, &waitErr) {
			t.Fatalf("got %v, want a *WaitError", err)
		}
		if strings.Contains(string(waitErr.Status), hostileKey) {
			t.Errorf("WaitError.Status holds the API key: %q", waitErr.Status)
		}
		hostileCheckError(t, err)
	}
}
