package agentatest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createBody is a create of one run of the demo's production variant.
func createBody(d agentatest.Demo) string {
	return fmt.Sprintf(`{"app_id":%q,"variant_ids":[%q],"evaluators_configs":[%q],"testset_id":%q,`+
		`"rate_limit":{"batch_size":10,"max_retries":1,"retry_delay":0,"delay_between_batches":0}}`,
		d.AppID, d.VariantID, d.ExactMatchID, d.TestsetID)
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// slowConnection opens a connection that sends the start of a request and
// then nothing more: its headers (body false), or its headers and the
// first bytes of a body it announced (body true).
func slowConnection(t *testing.T, addr, path string, body bool) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	head := "POST " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n"
	if body {
		head += "Content-Length: 100000\r\n\r\n{\"app_id\":"
	} else {
		head += "X-Slow: " // the headers never end
	}
	_, err = io.WriteString(c, head)
	require.NoError(t, err)
	return c
}

// TestBoundedUnderLoad runs a bounded hostile load against the fake: 200
// connections that send part of a request and stall, and 10,000 creates.
// The fake stores no more evaluations than its limit and answers the
// rest 429, cuts the slow connections off by its read timeouts (408 for a
// body), keeps its request log within its limits, and its heap stays flat
// once it holds all it will: bounds asserted with a wide margin (see the
// note in the test for what the same load costs without limits); nothing
// here measures time.
func TestBoundedUnderLoad(t *testing.T) {
	creates := 10_000
	if testing.Short() {
		creates = 2_000
	}
	limits := agentatest.Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, IdleTimeout: 5 * time.Second}
	srv := agentatest.NewTestServer(t, agentatest.WithEvaluationPace(time.Millisecond), agentatest.WithLimits(limits))
	d := agentatest.SeedDemo(srv)
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	before := heapInUse()

	var slow []net.Conn
	for i := range 200 {
		slow = append(slow, slowConnection(t, u.Host, u.Path+"/evaluations", i%2 == 0))
	}

	body := createBody(d)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: time.Minute}
	t.Cleanup(client.CloseIdleConnections)
	statuses := map[int]int{}
	var lost []string // the transport errors, for the failure message
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				resp, err := client.Post(srv.URL()+"/evaluations", "application/json", strings.NewReader(body))
				status := 0
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				mu.Lock()
				statuses[status]++
				if err != nil && len(lost) < 5 {
					lost = append(lost, err.Error())
				}
				mu.Unlock()
			}
		}()
	}
	// Half the creates, then the other half: by the half way the fake
	// holds all it will, and the second half must leave the heap flat.
	var middle uint64
	for i := range creates {
		if i == creates/2 {
			middle = heapInUse()
		}
		work <- struct{}{}
	}
	close(work)
	wg.Wait()

	max := srv.Limits().Evaluations
	assert.LessOrEqual(t, statuses[http.StatusOK], max, "creates answered 200: %v", statuses)
	assert.GreaterOrEqual(t, statuses[http.StatusOK], max-statuses[0], "creates answered 200: %v", statuses)
	// A create the client never got an answer to (status 0) is no answer
	// of the fake's: a loaded machine can hold a request past the 300ms
	// header timeout this test sets. A few are allowed, never as a 200.
	assert.LessOrEqual(t, statuses[0], creates/200, "creates with no answer: %v %q", statuses, lost)
	assert.Equal(t, creates-max-statuses[0], statuses[http.StatusTooManyRequests], "creates answered 429: %v %q", statuses, lost)
	assert.Equal(t, creates, statuses[0]+statuses[http.StatusOK]+statuses[http.StatusTooManyRequests], "creates answered otherwise: %v", statuses)
	assert.Equal(t, max, len(srv.EvaluationIDs()), "evaluations stored")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, srv.WaitEvaluations(ctx))

	// Every slow connection was cut off: a stalled body with a 408, stalled
	// headers with the connection closed (net/http may answer 408 too).
	for i, c := range slow {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if i%2 == 0 {
			if assert.NoError(t, err, "a stalled body got no answer") {
				assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
				resp.Body.Close()
			}
			continue
		}
		if err == nil {
			assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
			resp.Body.Close()
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("stalled headers: the connection is still open after 30 s")
		}
	}

	log := srv.Requests()
	assert.LessOrEqual(t, len(log), srv.Limits().LoggedRequests)
	if creates > srv.Limits().LoggedRequests {
		assert.Positive(t, srv.RequestsDropped(), "the log must drop its oldest entries")
	}
	// Measured: with the limits, the heap grew by 18 MiB over the whole
	// load and by 5 MiB over its second half (the log filling to its
	// 10,000 entries); without them (every evaluation and request kept),
	// by 66 and 32 MiB.
	after := heapInUse()
	grew, second := int64(after)-int64(before), int64(after)-int64(middle)
	t.Logf("heap grew by %.1f MiB under %d creates and 200 slow connections, %.1f MiB of it in the second half",
		float64(grew)/(1<<20), creates, float64(second)/(1<<20))
	assert.Less(t, grew, int64(48<<20), "the heap grew by %d MiB", grew>>20)
	assert.Less(t, second, int64(12<<20), "the heap grew by %d MiB in the second half: it is not flat", second>>20)
}

// Each limit answers clearly: a fork over the stored variants, too many
// requests at once, too many body bytes at once, headers over their size.
func TestLimitsAnswerClearly(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithLimits(agentatest.Limits{Variants: 1, InFlight: 2, BodyBudget: 1 << 10, HeaderBytes: 4 << 10}))
	d := agentatest.SeedDemo(srv) // more variants than that: seeding is not refused
	fork := fmt.Sprintf(`{"base_id":%q,"new_variant_name":"n","new_config_name":"more","parameters":{}}`, d.BaseID)
	r := post(t, srv.URL()+"/variants/from-base", "application/json", fork)
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Contains(t, detail(t, r), "Limits.Variants")

	big := fmt.Sprintf(`{"base_id":%q,"new_variant_name":"n","new_config_name":"more","parameters":{"pad":%q}}`, d.BaseID, strings.Repeat("x", 2<<10))
	r = post(t, srv.URL()+"/variants/from-base", "application/json", big)
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Contains(t, detail(t, r), "Limits.BodyBudget")

	req, err := http.NewRequest(http.MethodGet, srv.URL()+"/variants/"+d.VariantID, nil)
	require.NoError(t, err)
	req.Header.Set("X-Huge", strings.Repeat("h", 8<<10))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)

	// Two requests whose bodies stall hold both slots: a third is refused.
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	slowConnection(t, u.Host, u.Path+"/evaluations", true)
	slowConnection(t, u.Host, u.Path+"/evaluations", true)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r = get(t, http.DefaultClient, srv.URL()+"/variants/"+d.VariantID)
		if r.status == http.StatusTooManyRequests || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // the slow requests are not yet in their handlers
	}
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Contains(t, detail(t, r), "Limits.InFlight")

	assert.Equal(t, agentatest.DefaultLimits().Evaluations, srv.Limits().Evaluations, "a zero field keeps its default")
}

// The log keeps the latest requests, within its count and size.
func TestRequestLogBounded(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithLimits(agentatest.Limits{LoggedRequests: 10, LoggedBytes: 64 << 10}))
	d := agentatest.SeedDemo(srv)
	for i := range 25 {
		get(t, http.DefaultClient, srv.URL()+"/variants/"+d.VariantID+"?n="+fmt.Sprint(i))
	}
	log := srv.Requests()
	require.Len(t, log, 10)
	assert.Equal(t, "n=24", log[9].RawQuery, "the latest are kept")
	assert.Equal(t, 15, srv.RequestsDropped())
	for range 3 {
		post(t, srv.URL()+"/variants/from-base", "application/json", fmt.Sprintf(`{"base_id":%q,"pad":%q}`, d.BaseID, strings.Repeat("x", 30<<10)))
	}
	total := 0
	for _, r := range srv.Requests() {
		total += len(r.Body)
	}
	assert.LessOrEqual(t, total, 64<<10, "the log holds %d bytes of bodies", total)
}

// One request cannot pass the stored limits by what it holds: a create
// that names one variant over and over is as many evaluations, a create of
// more evaluator configs than Limits.EvaluatorConfigs is refused whole,
// and the bytes that forks and runs store (forked parameters, the app's
// answers) stay within Limits.StoredBytes.
func TestOneRequestStaysWithinTheLimits(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithEvaluationPace(time.Millisecond),
		agentatest.WithLimits(agentatest.Limits{Evaluations: 10, EvaluatorConfigs: 3, StoredBytes: 4 << 20}))
	d := agentatest.SeedDemo(srv)
	create := func(variants, configs []string) rawResponse {
		return post(t, srv.URL()+"/evaluations", "application/json", fmt.Sprintf(`{"app_id":%q,"variant_ids":[%s],"evaluators_configs":[%s],"testset_id":%q,`+
			`"rate_limit":{"batch_size":10,"max_retries":1,"retry_delay":0,"delay_between_batches":0}}`, d.AppID, quoted(variants), quoted(configs), d.TestsetID))
	}

	r := create(repeat(d.VariantID, 11), []string{d.ExactMatchID})
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Contains(t, detail(t, r), "Limits.Evaluations")
	assert.Empty(t, srv.EvaluationIDs(), "a refused create stores nothing")

	r = create([]string{d.VariantID}, repeat(d.ExactMatchID, 4))
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	assert.Contains(t, detail(t, r), "Limits.EvaluatorConfigs")
	assert.Empty(t, srv.EvaluationIDs())
	require.Equal(t, http.StatusOK, create([]string{d.VariantID}, repeat(d.ExactMatchID, 3)).status)

	// A variant whose prompt is 1.5 MiB answers 1.5 MiB a row: its first
	// run passes the budget part-way, its rows past it answer an error
	// naming the limit, and forks and creates are refused after it.
	base := srv.AddBase(agentatest.Base{AppID: d.AppID, Name: "template"}) // its app answers the prompt, filled in
	srv.AddVariant(agentatest.Variant{BaseID: base})
	fork := func(name string, size int) rawResponse {
		return post(t, srv.URL()+"/variants/from-base", "application/json", fmt.Sprintf(`{"base_id":%q,"new_variant_name":%q,"new_config_name":%q,"parameters":{"prompt_user":"%s {country}"}}`,
			base, name, name, strings.Repeat("p", size)))
	}
	r = fork("big", 3<<19)
	require.Equal(t, http.StatusOK, r.status)
	var forked struct {
		ID string `json:"variant_id"`
	}
	require.NoError(t, json.Unmarshal(r.body, &forked))
	require.Equal(t, http.StatusOK, create([]string{forked.ID}, []string{d.ExactMatchID}).status)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, srv.WaitEvaluations(ctx))
	ids := srv.EvaluationIDs()
	scenarios := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+ids[len(ids)-1]+"/evaluation_scenarios")
	require.Equal(t, http.StatusOK, scenarios.status)
	assert.Contains(t, string(scenarios.body), "Limits.StoredBytes", "rows past the budget say why they have no answer")
	assert.Less(t, len(scenarios.body), 8<<20, "the run stored more than its budget allows")

	r = fork("more", 10)
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Contains(t, detail(t, r), "Limits.StoredBytes")
	r = create([]string{d.VariantID}, []string{d.ExactMatchID})
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Contains(t, detail(t, r), "Limits.StoredBytes")
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func quoted(ids []string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Quote(id)
	}
	return strings.Join(parts, ",")
}

// TestStalledReaderFreezesNothing: a client asks for a large answer and
// never reads it. Other clients, seeding and Close go on regardless.
func TestStalledReaderFreezesNothing(t *testing.T) {
	srv := agentatest.NewServer()
	d := agentatest.SeedDemo(srv)
	// A variant whose answer (8 MiB) is larger than the server's socket
	// buffer (at most 4 MiB on Linux) and the client's, kept small.
	big := srv.AddVariant(agentatest.Variant{BaseID: d.BaseID, ConfigName: "big",
		Parameters: map[string]any{"blob": strings.Repeat("x", 8<<20)}})

	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(srv.URL(), "/api"), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
	_, err = fmt.Fprintf(conn, "GET /api/variants/%s HTTP/1.1\r\nHost: fake\r\n\r\n", big)
	require.NoError(t, err)
	// Read the status line only, so the handler is surely writing.
	status, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, status, "200")

	c := newClient(t, srv)
	within(t, "another client's read", func() {
		v, err := c.GetVariant(context.Background(), d.VariantID)
		assert.NoError(t, err)
		assert.Equal(t, "capitals.default", v.VariantName)
	})
	within(t, "seeding", func() { srv.AddApp(agentatest.App{Name: "more"}) })
	within(t, "Close", srv.Close)
}

// TestBodyOverTheLimitIs413: a body over MaxBodyBytes is refused as a
// whole, never cut short and read as if it were complete.
func TestBodyOverTheLimitIs413(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	padding := strings.Repeat(" ", agentatest.MaxBodyBytes)
	body := fmt.Sprintf(`{"base_id":%q,"new_variant_name":"n","new_config_name":"huge","parameters":{}}%s`, d.BaseID, padding)
	r := post(t, srv.URL()+"/variants/from-base", "application/json", body)
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status, "%.200s", r.body)
	assert.Contains(t, detail(t, r), "over 16777216 bytes")
	reqs := srv.RequestsFor(agentatest.OpAddVariantFromBase)
	require.Len(t, reqs, 1)
	assert.Equal(t, http.StatusRequestEntityTooLarge, reqs[0].Status)

	// Exactly at the limit the body is read and the request served (by a
	// route that ignores it, to keep the test quick).
	req, err := http.NewRequest(http.MethodGet, srv.URL()+"/variants/"+d.VariantID, strings.NewReader(padding))
	require.NoError(t, err)
	r = do(t, http.DefaultClient, req)
	assert.Equal(t, http.StatusOK, r.status, "%.200s", r.body)
	assert.Len(t, srv.RequestsFor(agentatest.OpGetVariant)[0].Body, agentatest.MaxBodyBytes)
}
