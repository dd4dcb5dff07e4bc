package agenta

// Fixtures for the benchmarks and the streaming tests: realistic bodies,
// pre-encoded once, served by loopback servers whose own cost is small and
// the same for the SDK and for the hand-written baseline.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
)

var benchWords = []string{
	"the", "capital", "of", "France", "is", "Paris", "answer", "model", "quickly",
	"évaluation", "question", "context", "retrieval", "token", "output", "because",
	"therefore", "summary", "user", "assistant", "München", "東京", "data", "set",
}

// benchText returns n pseudo-random words, sometimes with characters that
// JSON must escape, as realistic model output has.
func benchText(rng *rand.Rand, n int) string {
	b := make([]byte, 0, n*8)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, benchWords[rng.IntN(len(benchWords))]...)
	}
	switch rng.IntN(8) {
	case 0:
		b = append(b, "\nSources: \"wiki\"\t[1]"...)
	case 1:
		b = append(b, " <b>ok</b> & done"...)
	}
	return string(b)
}

func benchObjectID(rng *rand.Rand) string {
	return fmt.Sprintf("%08x%016x", rng.Uint32(), rng.Uint64())
}

// appendScenario appends one realistic evaluation scenario as the service
// sends it: 3 inputs, 1 output, 3 evaluator results of mixed types, and
// explicit nulls in optional fields. Rows average about 800 bytes.
func appendScenario(b []byte, rng *rand.Rand, evaluationID string, evaluators [3]string) []byte {
	str := func(s string) {
		q, _ := json.Marshal(s)
		b = append(b, q...)
	}
	b = append(b, `{"id":`...)
	str(benchObjectID(rng))
	b = append(b, `,"evaluation_id":`...)
	str(evaluationID)
	b = append(b, `,"inputs":[{"name":"country","type":"text","value":`...)
	str(benchText(rng, 1+rng.IntN(2)))
	b = append(b, `},{"name":"question","type":"text","value":`...)
	str(benchText(rng, 3+rng.IntN(6)))
	b = append(b, `},{"name":"max_tokens","type":"number","value":`...)
	if rng.IntN(10) == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(64+rng.IntN(448)), 10)
	}
	b = append(b, `}],"outputs":[{"result":{"type":"text","value":`...)
	str(benchText(rng, 3+rng.IntN(8)))
	b = append(b, `,"error":null},"cost":`...)
	if rng.IntN(5) == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendFloat(b, rng.Float64()/1000, 'g', -1, 64)
	}
	b = append(b, `,"latency":`...)
	b = strconv.AppendFloat(b, float64(rng.IntN(5000))/1000, 'f', 3, 64)
	b = append(b, `}],"evaluation":null,"correct_answer":`...)
	answer := benchText(rng, 1+rng.IntN(3))
	str(answer)
	if rng.IntN(4) == 0 { // newer servers
		b = append(b, `,"correct_answers":[{"key":"correct_answer","value":`...)
		str(answer)
		b = append(b, `}]`...)
	}
	b = append(b, `,"is_pinned":`...)
	b = strconv.AppendBool(b, rng.IntN(20) == 0)
	b = append(b, `,"note":`...)
	if rng.IntN(3) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, `""`...)
	}
	b = append(b, `,"results":[`...)
	for i, ev := range evaluators {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"evaluator_config":`...)
		str(ev)
		b = append(b, `,"result":`...)
		switch (i + rng.IntN(5)) % 5 {
		case 0:
			b = append(b, `{"type":"number","value":`...)
			b = strconv.AppendFloat(b, rng.Float64(), 'g', -1, 64)
			b = append(b, `,"error":null}`...)
		case 1:
			b = append(b, `{"type":"bool","value":`...)
			b = strconv.AppendBool(b, rng.IntN(2) == 0)
			b = append(b, `,"error":null}`...)
		case 2:
			b = append(b, `{"type":"text","value":`...)
			str(benchText(rng, 1+rng.IntN(4)))
			b = append(b, `,"error":null}`...)
		case 3:
			b = append(b, `{"type":"error","value":null,"error":{"message":"Evaluator auto_ai_critique failed","stacktrace":"Traceback:\n  File \"evaluators.py\", line 42\nTimeoutError"}}`...)
		case 4:
			b = append(b, `{"type":"object","value":{"score":`...)
			b = strconv.AppendFloat(b, float64(rng.IntN(100))/100, 'f', 2, 64)
			b = append(b, `,"reason":`...)
			str(benchText(rng, 3))
			b = append(b, `,"tags":["a","b"]},"error":null}`...)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// scenarioSource generates rows deterministically, one at a time.
type scenarioSource struct {
	rng          *rand.Rand
	evaluationID string
	evaluators   [3]string
}

func newScenarioSource(seed uint64) *scenarioSource {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	s := &scenarioSource{rng: rng, evaluationID: benchObjectID(rng)}
	for i := range s.evaluators {
		s.evaluators[i] = benchObjectID(rng)
	}
	return s
}

func (s *scenarioSource) appendRow(b []byte) []byte {
	return appendScenario(b, s.rng, s.evaluationID, s.evaluators)
}

var (
	scenarioBodiesMu sync.Mutex
	scenarioBodies   = map[int][]byte{}
)

// scenariosBody returns the pre-encoded JSON array of n scenarios, built
// once per size.
func scenariosBody(n int) []byte {
	scenarioBodiesMu.Lock()
	defer scenarioBodiesMu.Unlock()
	if b, ok := scenarioBodies[n]; ok {
		return b
	}
	src := newScenarioSource(uint64(n))
	b := make([]byte, 0, n*850+2)
	b = append(b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = src.appendRow(b)
	}
	b = append(b, ']')
	scenarioBodies[n] = b
	return b
}

// variantBody is a GetVariant answer as the service sends it.
var variantBody = []byte(`{"app_id":"6679c09ae3b1f0c8d4a5b6a1","app_name":"capitals","variant_id":"6679c09ce3b1f0c8d4a5b6a3","variant_name":"app.default","parameters":{"temperature":0.7,"model":"gpt-3.5-turbo","max_tokens":-1,"prompt_system":"You are an expert in geography.","prompt_user":"What is the capital of {country}?","top_p":1,"inputs":[{"name":"country"}],"force_json":false},"previous_variant_name":null,"user_id":"6679c090e3b1f0c8d4a5b690","base_name":"app","base_id":"6679c09be3b1f0c8d4a5b6a2","config_name":"default","uri":"http://agenta-capitals-app:80","revision":3,"organization_id":"6679c08fe3b1f0c8d4a5b68f","workspace_id":"6679c08fe3b1f0c8d4a5b68e"}`)

// spanTreeBody returns a span with n-1 descendants, as the span operation
// sends it: the root with config, children without, nulls in optional
// fields, naive timestamps.
func spanTreeBody(n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	traceID := benchObjectID(rng)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = benchObjectID(rng)
	}
	// Node i's children are 4i+1 … 4i+4: a 4-ary tree, depth about log4(n).
	var node func(b []byte, i int) []byte
	node = func(b []byte, i int) []byte {
		str := func(s string) {
			q, _ := json.Marshal(s)
			b = append(b, q...)
		}
		b = append(b, `{"id":`...)
		str(ids[i])
		b = append(b, `,"name":`...)
		str([]string{"generate", "retrieve", "embed", "chat", "tool_call"}[i%5])
		b = append(b, `,"parent_span_id":`...)
		if i == 0 {
			b = append(b, "null"...)
		} else {
			str(ids[(i-1)/4])
		}
		b = append(b, `,"created_at":"2024-06-26T12:22:31.`...)
		b = strconv.AppendInt(b, int64(100000+i), 10)
		b = append(b, `","variant":{"variant_id":"6679c09ce3b1f0c8d4a5b6a3","variant_name":"app.default","revision":3},"environment":"production","spankind":`...)
		str([]string{"LLM", "RETRIEVER", "EMBEDDING", "TOOL", "CHAIN", "WORKFLOW"}[i%6])
		b = append(b, `,"status":"OK","metadata":{"cost":`...)
		b = strconv.AppendFloat(b, rng.Float64()/100, 'g', -1, 64)
		b = append(b, `,"latency":`...)
		b = strconv.AppendFloat(b, rng.Float64()*3, 'g', -1, 64)
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(rng.IntN(2000)), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(rng.IntN(500)), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(rng.IntN(2500)), 10)
		b = append(b, `}},"trace_id":`...)
		str(traceID)
		b = append(b, `,"user_id":null,"content":{"inputs":{"country":`...)
		str(benchText(rng, 2))
		b = append(b, `},"internals":{},"outputs":[`...)
		str(benchText(rng, 12))
		b = append(b, "]}"...)
		if i == 0 {
			b = append(b, `,"config":{"temperature":0.7,"model":"gpt-3.5-turbo","max_tokens":-1}`...)
		}
		b = append(b, `,"children":`...)
		first := 4*i + 1
		if first >= n {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for c := first; c < first+4 && c < n; c++ {
				if c > first {
					b = append(b, ',')
				}
				b = node(b, c)
			}
			b = append(b, ']')
		}
		return append(b, '}')
	}
	return node(nil, 0)
}

// benchServer is a loopback server answering every request with one
// pre-encoded body, and counting the connections clients open to it.
type benchServer struct {
	*httptest.Server
	conns atomic.Int64 // connections accepted
}

func newBenchServer(tb testing.TB, body []byte) *benchServer {
	tb.Helper()
	s := &benchServer{}
	length := strconv.Itoa(len(body))
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{length}
		_, _ = w.Write(body)
	})
	s.Server = httptest.NewUnstartedServer(handler)
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	tb.Cleanup(s.Close)
	return s
}

// newBenchClient returns an SDK client for srv, with the pooled transport
// every client gets by default.
func newBenchClient(tb testing.TB, srv *benchServer) *Client {
	tb.Helper()
	return newTestClient(tb, srv.URL+"/api")
}

// baseline is the floor the SDK is measured against: what a careful Go
// programmer writes by hand with net/http and encoding/json, with a pooled
// transport configured like the SDK's, and streaming decoding.
type baseline struct {
	hc   *http.Client
	base string
}

func newBaseline(srv *benchServer) *baseline {
	return &baseline{
		base: srv.URL + "/api",
		// The same transport settings as the SDK, so that a ratio measures
		// the SDK's code and not its configuration.
		hc: &http.Client{Timeout: 60 * time.Second, Transport: newTransport()},
	}
}

func (bl *baseline) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, bl.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agenta-go/"+Version)
	req.Header.Set("Authorization", testKey)
	resp, err := bl.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body) // let the connection be reused
	return nil
}

func (bl *baseline) getVariant(ctx context.Context, id string) (*models.AppVariantResponse, error) {
	var v models.AppVariantResponse
	if err := bl.get(ctx, "/variants/"+id, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func (bl *baseline) fetchScenarios(ctx context.Context, id string) ([]models.EvaluationScenario, error) {
	var v []models.EvaluationScenario
	err := bl.get(ctx, "/evaluations/"+id+"/evaluation_scenarios", &v)
	return v, err
}

// streamScenarios is the hand-written streaming loop: json.Decoder's
// Token, More and Decode, one element at a time.
func (bl *baseline) streamScenarios(ctx context.Context, id string) func(yield func(models.EvaluationScenario, error) bool) {
	return func(yield func(models.EvaluationScenario, error) bool) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, bl.base+"/evaluations/"+id+"/evaluation_scenarios", nil)
		if err != nil {
			yield(models.EvaluationScenario{}, err)
			return
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", "agenta-go/"+Version)
		req.Header.Set("Authorization", testKey)
		resp, err := bl.hc.Do(req)
		if err != nil {
			yield(models.EvaluationScenario{}, err)
			return
		}
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		if _, err := dec.Token(); err != nil {
			yield(models.EvaluationScenario{}, err)
			return
		}
		for dec.More() {
			var s models.EvaluationScenario
			if err := dec.Decode(&s); err != nil {
				yield(models.EvaluationScenario{}, err)
				return
			}
			if !yield(s, nil) {
				return
			}
		}
		if _, err := dec.Token(); err != nil {
			yield(models.EvaluationScenario{}, err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	}
}

func (bl *baseline) getSpan(ctx context.Context, id string) (*models.Span, error) {
	var v models.Span
	if err := bl.get(ctx, "/observability/spans/"+id+"/", &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func (bl *baseline) close() { bl.hc.CloseIdleConnections() }
