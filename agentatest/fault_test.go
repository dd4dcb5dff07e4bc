package agentatest_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

func TestFaultStatusThenRecovery(t *testing.T) {
	srv, d, c := newDemo(t)
	srv.InjectFault(agentatest.OpGetVariant, 2, agentatest.Fault{Status: 503, RetryAfter: "0"})

	v, err := c.GetVariant(context.Background(), d.VariantID)
	require.NoError(t, err, "the SDK retries a read through two 503s")
	assert.Equal(t, d.VariantID, v.VariantID)

	reqs := srv.RequestsFor(agentatest.OpGetVariant)
	require.Len(t, reqs, 3)
	for i, want := range []struct {
		status int
		fault  bool
	}{{503, true}, {503, true}, {200, false}} {
		assert.Equal(t, want.status, reqs[i].Status, "request %d", i)
		assert.Equal(t, want.fault, reqs[i].Fault, "request %d", i)
	}
}

func TestFaultAnswerHasRetryAfterAndDetail(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	srv.InjectFault(agentatest.OpListHumanEvaluations, 1, agentatest.Fault{Status: 429, RetryAfter: "7"})
	appID := "0190b5a2-0000-7000-8000-00000000a0a0"
	r := get(t, http.DefaultClient, srv.URL()+"/human-evaluations?app_id="+appID)
	assert.Equal(t, 429, r.status)
	assert.Equal(t, "7", r.header.Get("Retry-After"))
	assert.Equal(t, "Too Many Requests", detail(t, r))
	r = get(t, http.DefaultClient, srv.URL()+"/human-evaluations?app_id="+appID)
	assert.Equal(t, 200, r.status, "used up after one call")
}

func TestFaultHTMLBody(t *testing.T) {
	srv, d, c := newDemo(t, agentatest.Option(nil))
	srv.InjectFault(agentatest.OpGetSpan, agentatest.Always, agentatest.Fault{
		Status: 502, Body: "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
	})
	_, err := c.GetSpan(context.Background(), d.SpanID, nil)
	var apiErr *agenta.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 502, apiErr.StatusCode)
	assert.Equal(t, "502 Bad Gateway", apiErr.Message)
	assert.Len(t, srv.RequestsFor(agentatest.OpGetSpan), 4, "a read is retried three times by default")

	srv.ClearFaults()
	_, err = c.GetSpan(context.Background(), d.SpanID, nil)
	require.NoError(t, err)
}

func TestFaultCreateIsNotRepeated(t *testing.T) {
	srv, d, c := newDemo(t)
	ctx := context.Background()
	ev := newEvaluation(d, d.VariantID)

	// 429 is answered before any work: the SDK may retry, and one
	// evaluation is created.
	srv.InjectFault(agentatest.OpCreateEvaluation, 1, agentatest.Fault{Status: 429, RetryAfter: "0"})
	_, err := c.CreateEvaluation(ctx, ev)
	require.NoError(t, err)
	assert.Len(t, srv.RequestsFor(agentatest.OpCreateEvaluation), 2)
	assert.Len(t, srv.EvaluationIDs(), 1)

	// A 502 after the work was done must not be retried by a client, or
	// the evaluation would run twice.
	srv.ResetRequests()
	srv.InjectFault(agentatest.OpCreateEvaluation, 1, agentatest.Fault{Status: 502, AfterHandling: true})
	_, err = c.CreateEvaluation(ctx, ev)
	require.ErrorIs(t, err, agenta.ErrServer)
	assert.Len(t, srv.RequestsFor(agentatest.OpCreateEvaluation), 1)
	assert.Len(t, srv.EvaluationIDs(), 2, "the server did the work anyway")
}

func TestFaultDrop(t *testing.T) {
	srv, d, c := newDemo(t)
	ctx := context.Background()

	srv.InjectFault(agentatest.OpGetVariantByEnvironment, 1, agentatest.Fault{Drop: true})
	_, err := c.GetVariantByEnvironment(ctx, d.AppID, "production")
	require.NoError(t, err, "a read survives a dropped connection")
	reqs := srv.RequestsFor(agentatest.OpGetVariantByEnvironment)
	require.GreaterOrEqual(t, len(reqs), 2)
	assert.Equal(t, 0, reqs[0].Status, "dropped")
	assert.True(t, reqs[0].Fault)

	srv.InjectFault(agentatest.OpAddVariantFromBase, 1, agentatest.Fault{Drop: true})
	_, err = c.AddVariantFromBase(ctx, models.AddVariantFromBase{BaseID: d.BaseID, NewVariantName: "n", NewConfigName: "dropped"})
	require.Error(t, err, "a create sent in full is not retried after the connection drops")
	assert.Len(t, srv.RequestsFor(agentatest.OpAddVariantFromBase), 1)
	_, err = c.GetVariantByEnvironment(ctx, d.AppID, "production")
	require.NoError(t, err, "the server goes on serving")
}

func TestFaultStall(t *testing.T) {
	srv, d, _ := newDemo(t)
	c := newClient(t, srv, agenta.WithMaxRetries(0))
	srv.InjectFault(agentatest.OpGetVariant, 1, agentatest.Fault{Stall: agentatest.StallForever})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.GetVariant(ctx, d.VariantID)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// A finite stall then serves normally.
	srv.InjectFault(agentatest.OpGetVariant, 1, agentatest.Fault{Stall: time.Millisecond})
	_, err = c.GetVariant(context.Background(), d.VariantID)
	require.NoError(t, err)
}

func TestFaultStallEndsOnClose(t *testing.T) {
	srv := agentatest.NewServer()
	srv.InjectFault(agentatest.AnyOperation, agentatest.Always, agentatest.Fault{Stall: agentatest.StallForever})
	sent := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { close(sent) },
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/human-evaluations?app_id=a", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-sent
	// Close must end the stalled request rather than wait for it forever;
	// the test times out if it does not.
	srv.Close()
	<-done
}

func TestFaultAnyOperationAndOrder(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	srv.InjectFault(agentatest.AnyOperation, 1, agentatest.Fault{Status: 504})
	srv.InjectFault(agentatest.OpGetVariant, 1, agentatest.Fault{Status: 418})
	assert.Equal(t, 504, get(t, http.DefaultClient, srv.URL()+"/nothing").status, "any request, even unrouted")
	assert.Equal(t, 418, get(t, http.DefaultClient, srv.URL()+"/variants/x").status)
	assert.Equal(t, 500, get(t, http.DefaultClient, srv.URL()+"/variants/x").status, "the fake's own answer")

	srv.InjectFault(agentatest.OpGetVariant, 0, agentatest.Fault{Status: 418})
	assert.Equal(t, 500, get(t, http.DefaultClient, srv.URL()+"/variants/x").status, "zero calls inject nothing")
}

// "A self-hosted server of mid-2024 answers [the span operation] 404
// {"detail":"Not Found"}": the fault AddTrace's doc names gives exactly the
// answer of an unknown route.
func TestFaultSelfHostedSpanIsAnUnknownRoute(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	srv.InjectFault(agentatest.OpGetSpan, agentatest.Always, agentatest.Fault{Status: http.StatusNotFound})
	span := get(t, http.DefaultClient, srv.URL()+"/observability/spans/"+d.SpanID+"/")
	unknown := get(t, http.DefaultClient, srv.URL()+"/observability/nothing")
	assert.Equal(t, unknown.status, span.status)
	assert.JSONEq(t, string(unknown.body), string(span.body), "the span answer is an unknown route's")
	assert.JSONEq(t, `{"detail":"Not Found"}`, string(span.body))
}

// The fake never produces EVALUATION_AGGREGATION_FAILED; the fault the
// package doc names makes the status read answer it, and the SDK's wait
// then ends with ErrEvaluationFailed.
func TestFaultAnswersAnAggregationFailure(t *testing.T) {
	srv, d, c := newDemo(t, agentatest.WithManualEvaluations())
	evs, err := c.CreateEvaluation(context.Background(), newEvaluation(d, d.VariantID))
	require.NoError(t, err)
	srv.InjectFault(agentatest.OpFetchEvaluationStatus, agentatest.Always, agentatest.Fault{
		Status: 200, Body: `{"status":{"type":"status","value":"EVALUATION_AGGREGATION_FAILED","error":null}}`})
	r := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+evs[0].ID+"/status")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	_, err = c.WaitEvaluation(context.Background(), evs[0].ID, &agenta.WaitOptions{Interval: time.Millisecond})
	assert.ErrorIs(t, err, agenta.ErrEvaluationFailed, "an aggregation failure ends the wait as a failure")
}

// A window answers every matching request while it lasts, is never used
// up, holds back the faults injected after it, and ends by itself.
func TestFaultWindow(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	variant := srv.URL() + "/variants/x"
	srv.InjectFaultFor(agentatest.OpFetchEvaluationStatus, time.Hour, agentatest.Fault{Status: 418})
	srv.InjectFaultFor(agentatest.OpGetVariant, time.Hour, agentatest.Fault{Status: 503, RetryAfter: "1"})
	for i := 0; i < 3; i++ {
		r := get(t, http.DefaultClient, variant)
		assert.Equal(t, 503, r.status, "request %d during the window", i)
		assert.Equal(t, "1", r.header.Get("Retry-After"))
	}
	assert.Equal(t, 404, get(t, http.DefaultClient, srv.URL()+"/nothing").status, "another route is not in the window")
	for _, r := range srv.RequestsFor(agentatest.OpGetVariant) {
		assert.True(t, r.Fault, "the window answered")
	}
	srv.ClearFaults()
	assert.Equal(t, 500, get(t, http.DefaultClient, variant).status, "the fake's own answer once cleared")

	srv.InjectFaultFor(agentatest.OpGetVariant, 20*time.Millisecond, agentatest.Fault{Status: 503})
	srv.InjectFault(agentatest.OpGetVariant, 1, agentatest.Fault{Status: 418})
	assert.Equal(t, 503, get(t, http.DefaultClient, variant).status, "the window comes first")
	time.Sleep(40 * time.Millisecond) // past the window's end
	assert.Equal(t, 418, get(t, http.DefaultClient, variant).status, "the fault after the window, once it ended")
	assert.Equal(t, 500, get(t, http.DefaultClient, variant).status)

	srv.InjectFaultFor(agentatest.OpGetVariant, 0, agentatest.Fault{Status: 503})
	srv.InjectFaultFor(agentatest.OpGetVariant, -time.Second, agentatest.Fault{Status: 503})
	assert.Equal(t, 500, get(t, http.DefaultClient, variant).status, "an empty window injects nothing")
}

// The SDK rides out a window of 503s shorter than its retry wait.
func TestFaultWindowThroughTheSDK(t *testing.T) {
	srv, d, _ := newDemo(t)
	c := newClient(t, srv, agenta.WithRetryWait(400*time.Millisecond, 500*time.Millisecond))
	srv.InjectFaultFor(agentatest.OpGetVariant, 300*time.Millisecond, agentatest.Fault{Status: 503})
	v, err := c.GetVariant(context.Background(), d.VariantID)
	require.NoError(t, err, "the retry outlasts the window")
	assert.Equal(t, d.VariantID, v.VariantID)
	reqs := srv.RequestsFor(agentatest.OpGetVariant)
	require.GreaterOrEqual(t, len(reqs), 2)
	assert.Equal(t, 503, reqs[0].Status, "the first read met the window")
	assert.Equal(t, 200, reqs[len(reqs)-1].Status)
}

// dialRefused reports whether a connection to the Server is refused.
func dialRefused(t *testing.T, srv *agentatest.Server) bool {
	t.Helper()
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	if err == nil {
		conn.Close()
		return false
	}
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "the dial failed otherwise")
	return true
}

// Restart refuses connections while down, comes back on the same address
// with its data, and ends the connections of requests in flight.
func TestFaultRestart(t *testing.T) {
	srv, d, _ := newDemo(t)
	c := newClient(t, srv, agenta.WithMaxRetries(0))
	ctx := context.Background()
	_, err := c.GetVariant(ctx, d.VariantID)
	require.NoError(t, err, "before the restart; leaves a connection in the pool")

	// A request in flight when the server goes down gets no answer.
	srv.InjectFault(agentatest.OpGetVariant, 1, agentatest.Fault{Stall: agentatest.StallForever})
	failed := make(chan error, 1)
	go func() {
		_, err := c.GetVariant(ctx, d.VariantID)
		failed <- err
	}()
	for len(srv.RequestsFor(agentatest.OpGetVariant)) < 2 {
		time.Sleep(time.Millisecond)
	}
	srv.Restart(time.Hour)
	err = <-failed
	assert.ErrorIs(t, err, agenta.ErrNoResponse, "the request in flight loses its connection")

	assert.True(t, dialRefused(t, srv), "connections are refused while the server is down")
	_, err = c.GetVariant(ctx, d.VariantID)
	require.ErrorIs(t, err, agenta.ErrNoResponse, "the SDK sees connection refused")
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)

	srv.Restart(0) // a Restart while down moves the return to now
	deadline := time.Now().Add(30 * time.Second)
	for dialRefused(t, srv) {
		require.True(t, time.Now().Before(deadline), "the server did not come back")
		time.Sleep(5 * time.Millisecond)
	}
	v, err := c.GetVariant(ctx, d.VariantID)
	require.NoError(t, err, "after the restart, on the same address")
	assert.Equal(t, d.VariantID, v.VariantID, "the data survives the restart")

	// Close ends a Server that is down, at once.
	srv.Restart(time.Hour)
	srv.Close()
	assert.True(t, dialRefused(t, srv))
}

// A restart window ends by itself.
func TestFaultRestartWindowEnds(t *testing.T) {
	srv, d, c := newDemo(t)
	srv.Restart(20 * time.Millisecond)
	deadline := time.Now().Add(30 * time.Second)
	for dialRefused(t, srv) {
		require.True(t, time.Now().Before(deadline), "the server did not come back")
		time.Sleep(5 * time.Millisecond)
	}
	_, err := c.GetVariant(context.Background(), d.VariantID)
	require.NoError(t, err)
}

// finishedScenarios creates a finished evaluation and returns its scenario
// list's URL and its body as the fake writes it without faults.
func finishedScenarios(t *testing.T, srv *agentatest.Server, d agentatest.Demo, c *agenta.Client) (string, []byte) {
	t.Helper()
	evs, err := c.CreateEvaluation(context.Background(), newEvaluation(d, d.VariantID))
	require.NoError(t, err)
	waitRuns(t, srv)
	u := srv.URL() + "/evaluations/" + evs[0].ID + "/evaluation_scenarios"
	r := get(t, http.DefaultClient, u)
	require.Equal(t, http.StatusOK, r.status)
	require.Greater(t, len(r.body), 1000, "a body of several pieces")
	return u, r.body
}

// Trickle writes the whole answer, piece by piece.
func TestFaultTrickle(t *testing.T) {
	srv, d, c := newDemo(t)
	u, whole := finishedScenarios(t, srv, d, c)
	const piece, pause = 300, 2 * time.Millisecond
	srv.InjectFault(agentatest.OpFetchEvaluationScenarios, 1, agentatest.Fault{Trickle: pause, TrickleBytes: piece})
	start := time.Now()
	r := get(t, http.DefaultClient, u)
	took := time.Since(start)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, string(whole), string(r.body), "the same answer, slowly")
	// A lower bound only, which no load can break: the pauses were made.
	pauses := (len(whole) - 1) / piece
	assert.GreaterOrEqual(t, took, time.Duration(pauses)*pause, "%d pauses of %s", pauses, pause)
}

// StallAfter and CutAfter write the start of the answer, then hold the
// rest or close the connection.
func TestFaultStallAfterAndCutAfter(t *testing.T) {
	srv, d, c := newDemo(t)
	u, whole := finishedScenarios(t, srv, d, c)

	srv.InjectFault(agentatest.OpFetchEvaluationScenarios, 1, agentatest.Fault{StallAfter: 700})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.ErrorIs(t, err, context.DeadlineExceeded, "the rest never came")
	assert.Equal(t, string(whole[:700]), string(got), "the start of the answer, then nothing")

	srv.InjectFault(agentatest.OpFetchEvaluationScenarios, 1, agentatest.Fault{CutAfter: 900, Trickle: time.Millisecond, TrickleBytes: 256})
	resp, err = http.Get(u)
	require.NoError(t, err)
	got, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the announced length did not come")
	assert.Equal(t, string(whole[:900]), string(got))

	srv.InjectFault(agentatest.OpGetVariant, 1, agentatest.Fault{Status: 503, Body: `{"detail":"Service Unavailable, retry"}`, CutAfter: 10})
	resp, err = http.Get(srv.URL() + "/variants/" + d.VariantID)
	require.NoError(t, err)
	got, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, `{"detail":`, string(got), "a fault's own answer is cut too")

	r := get(t, http.DefaultClient, u)
	assert.Equal(t, string(whole), string(r.body), "the faults are used up")
}
