package agentatest_test

import (
	"context"
	"net/http"
	"net/http/httptrace"
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
