package agenta

// Contract tests: the SDK against a mock of the published OpenAPI document.
//
// A pinned @stoplight/prism-cli (tools/contract) serves
// ../shared/contract/openapi.json on 127.0.0.1. Prism validates every request
// against the document and answers 422 with an sl-violations header when one
// breaks it, so a passing run proves that what the SDK sends is what the
// service's contract accepts. Two modes:
//   - static: prism answers with the document's examples (or, as this
//     document has none, the values it derives from each schema);
//   - dynamic (-d): prism generates random valid answers; many rounds, and
//     every answer must decode and survive decoding without losing a field.
//
// Setup: (cd tools/contract && npm ci). Without ../shared or the prism
// install the tests skip, except with CI=true, where a missing prism fails.
// AGENTA_CONTRACT_ROUNDS sets the dynamic rounds; AGENTA_CONTRACT_SEED passes
// --seed to prism to replay a dynamic run.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	contractDocument      = "../shared/contract/openapi.json"
	contractPrism         = "tools/contract/node_modules/.bin/prism"
	contractProvider      = "sk-contract-test-provider-key-0000"
	contractDefaultRounds = 150
)

func TestContractStatic(t *testing.T) {
	p := startPrism(t, false)
	rec, client := contractClient(t, p)
	runContractRound(t, client, rec)
	contractCheckDetector(t, p)
	logContractCounts(t, "static (examples)", rec)
}

func TestContractDynamic(t *testing.T) {
	rounds := contractDefaultRounds
	if v := os.Getenv("AGENTA_CONTRACT_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.False(t, err != nil || n < 1, "AGENTA_CONTRACT_ROUNDS=%q: want a positive integer", v)
		rounds = n
	}
	p := startPrism(t, true)
	rec, client := contractClient(t, p)
	for i := 0; i < rounds && !t.Failed(); i++ {
		runContractRound(t, client, rec)
	}
	logContractCounts(t, fmt.Sprintf("dynamic (-d, %d rounds)", rounds), rec)
}

// TestContractFaithfulCheck proves the comparison behind contractCheckFaithful can
// fail: it must catch a changed or invented field, and accept only
// re-formatting (timestamps, numbers) and zero values the answer left out.
func TestContractFaithfulCheck(t *testing.T) {
	t.Parallel()
	answer := `{"a":"x","t":"2024-06-26T12:22:31.775000","n":1.50,"o":{"k":[1,2]},"extra":true}`
	for _, tc := range []struct {
		decoded string
		want    string // "" means they agree
	}{
		{`{"a":"x","t":"2024-06-26T12:22:31.775Z","n":1.5,"o":{"k":[1,2]}}`, ""},
		{`{"a":"x","zero":"","z":0,"f":false,"m":{},"l":[],"ts":"0001-01-01T00:00:00Z"}`, ""},
		{`{"a":"y"}`, "$.a"},
		{`{"t":"2024-06-26T12:22:31.776Z"}`, "$.t"},
		{`{"n":1.5000001}`, "$.n"},
		{`{"o":{"k":[1]}}`, "$.o.k (length)"},
		{`{"o":{"k":[1,3]}}`, "$.o.k[1]"},
		{`{"invented":"v"}`, "$.invented"},
	} {
		var got, want any
		if err := contractDecodeNumbers([]byte(tc.decoded), &got); err != nil {
			t.Fatal(err)
		}
		if err := contractDecodeNumbers([]byte(answer), &want); err != nil {
			t.Fatal(err)
		}
		if diff := contractSubset(got, want, "$"); diff != tc.want {
			t.Errorf("contractSubset(%s) = %q, want %q", tc.decoded, diff, tc.want)
		}
	}
}

// logContractCounts prints the line .ci/run looks for to prove the tests ran.
func logContractCounts(t *testing.T, mode string, rec *contractRecorder) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	ops := make([]string, 0, len(rec.perOp))
	for op, n := range rec.perOp {
		ops = append(ops, fmt.Sprintf("%s=%d", op, n))
	}
	sort.Strings(ops)
	t.Logf("contract %s: %d calls, 0 request violations, %d answers with response violations from prism itself; %s",
		mode, rec.calls, rec.responseViolations, strings.Join(ops, " "))
}

// runContractRound drives all seven operations and the two evaluation reads
// once, with every optional field set, plus GetSpan without options.
func runContractRound(t *testing.T, c *Client, rec *contractRecorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const (
		appID        = "6672a5d2e7b8c0f9a1b2c3d4"
		evaluationID = "6677e9a1f0c2d4b6a8e0c1f3"
		variantID    = "6672a5d2e7b8c0f9a1b2c3d5"
		baseID       = "6672a5d2e7b8c0f9a1b2c3d6"
		spanID       = "9f2c4e1a-7b3d-4c5e-8f6a-0b1c2d3e4f5a"
	)

	scenarios, err := c.FetchEvaluationScenarios(ctx, evaluationID)
	if contractCheckCall(t, rec, "FetchEvaluationScenarios", err) {
		contractCheckFaithful(t, rec, "FetchEvaluationScenarios", scenarios)
	}

	evaluation, err := c.FetchEvaluation(ctx, evaluationID)
	if contractCheckCall(t, rec, "FetchEvaluation", err) {
		contractCheckFaithful(t, rec, "FetchEvaluation", evaluation)
	}

	// The document gives the status read's answer no schema ({}), so prism
	// answers null or any JSON. The request must be right; the answer must
	// decode when it holds a status, and be a *DecodeError, never a status
	// that would keep a wait going, when it does not.
	status, err := c.FetchEvaluationStatus(ctx, evaluationID)
	var decodeErr *DecodeError
	if errors.As(err, &decodeErr) && !contractHoldsStatus(rec.last().responseBody) {
		err = nil // the documented outcome for an answer without a status
	}
	if contractCheckCall(t, rec, "FetchEvaluationStatus", err) && status != nil {
		contractCheckFaithful(t, rec, "FetchEvaluationStatus", map[string]any{"status": status})
	}

	created, err := c.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:               appID,
		VariantIDs:          []string{variantID, "6672a5d2e7b8c0f9a1b2c3d7"},
		EvaluatorConfigIDs:  []string{"6672a5d2e7b8c0f9a1b2c3e0", "6672a5d2e7b8c0f9a1b2c3e1"},
		TestsetID:           "6672a5d2e7b8c0f9a1b2c3f0",
		RateLimit:           models.DefaultRateLimit(),
		LMProvidersKeys:     models.NewProviderKeys(map[string]string{models.OpenAIAPIKey: contractProvider}),
		CorrectAnswerColumn: "expected_output",
	})
	if contractCheckCall(t, rec, "CreateEvaluation", err) {
		contractCheckFaithful(t, rec, "CreateEvaluation", created)
		body := rec.lastRequestBody()
		for _, field := range []string{`"lm_providers_keys":{"OPENAI_API_KEY":"` + contractProvider + `"}`,
			`"correct_answer_column":"expected_output"`, `"evaluators_configs":[`,
			`"rate_limit":{"batch_size":10,"max_retries":3,"retry_delay":3,"delay_between_batches":5}`} {
			assert.False(t, !strings.Contains(body, field), "CreateEvaluation: request body lacks %s; sent %s", field, body)
		}
	}

	byEnv, err := c.GetVariantByEnvironment(ctx, appID, models.EnvironmentProduction)
	if contractCheckCall(t, rec, "GetVariantByEnvironment", err) {
		contractCheckFaithful(t, rec, "GetVariantByEnvironment", byEnv)
		if q := rec.lastQuery(); q != "app_id="+appID+"&environment=production" {
			t.Errorf("GetVariantByEnvironment: query %q, want app_id and environment", q)
		}
	}

	added, err := c.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID:         baseID,
		NewVariantName: "app.gpt4o-mini-terse",
		NewConfigName:  "gpt4o-mini-terse",
		Parameters: map[string]any{
			"model":         "gpt-4o-mini",
			"temperature":   0.2,
			"max_tokens":    512,
			"prompt_system": "You are a terse assistant. Answer in one sentence.",
			"prompt_user":   "{question}",
			"stop":          []any{"\n\n"},
			"force_json":    false,
		},
	})
	if contractCheckCall(t, rec, "AddVariantFromBase", err) {
		contractCheckFaithful(t, rec, "AddVariantFromBase", added)
		if body := rec.lastRequestBody(); !strings.Contains(body, `"parameters":{`) {
			t.Errorf("AddVariantFromBase: parameters not sent as an object: %s", body)
		}
	}

	variant, err := c.GetVariant(ctx, variantID)
	if contractCheckCall(t, rec, "GetVariant", err) {
		contractCheckFaithful(t, rec, "GetVariant", variant)
	}

	span, err := c.GetSpan(ctx, spanID, &GetSpanOptions{Type: "generation"})
	if contractCheckCall(t, rec, "GetSpan", err) {
		contractCheckFaithful(t, rec, "GetSpan", span)
		if q := rec.lastQuery(); q != "type=generation" {
			t.Errorf("GetSpan: query %q, want type=generation", q)
		}
	}
	span, err = c.GetSpan(ctx, spanID, nil)
	if contractCheckCall(t, rec, "GetSpan(nil)", err) {
		contractCheckFaithful(t, rec, "GetSpan(nil)", span)
	}

	humans, err := c.ListHumanEvaluations(ctx, appID)
	if contractCheckCall(t, rec, "ListHumanEvaluations", err) {
		contractCheckFaithful(t, rec, "ListHumanEvaluations", humans)
	}
}

// contractHoldsStatus reports whether a status read's answer is an object
// with a "status" Result object or string, the shapes the SDK decodes.
func contractHoldsStatus(body []byte) bool {
	var answer map[string]json.RawMessage
	if json.Unmarshal(body, &answer) != nil {
		return false
	}
	s := bytes.TrimSpace(answer["status"])
	return len(s) > 0 && (s[0] == '{' || s[0] == '"')
}

// contractCheckCall fails the test on a request violation or an SDK error, and
// reports whether the answer is worth checking further.
func contractCheckCall(t *testing.T, rec *contractRecorder, op string, err error) bool {
	t.Helper()
	ex := rec.last()
	rec.countOp(op)
	if ex == nil {
		t.Errorf("%s: no request reached prism: %v", op, err)
		return false
	}
	if len(ex.requestViolations) > 0 {
		t.Errorf("%s: prism found request violations (%s %s, status %d):\n%s",
			op, ex.method, ex.url, ex.status, strings.Join(ex.requestViolations, "\n"))
		return false
	}
	if err != nil {
		t.Errorf("%s: %v\nanswer %d: %.2000s", op, err, ex.status, ex.responseBody)
		return false
	}
	return true
}

// contractCheckFaithful proves the decoded value kept what the answer said: every
// field the value marshals back to is in the raw answer with the same value
// (timestamps compared as instants, numbers as float64), and a field missing
// from the answer is the zero value.
func contractCheckFaithful(t *testing.T, rec *contractRecorder, op string, v any) {
	t.Helper()
	raw := rec.last().responseBody
	mine, err := json.Marshal(v)
	if err != nil {
		t.Errorf("%s: decoded value does not marshal: %v", op, err)
		return
	}
	var want, got any
	if err := contractDecodeNumbers(raw, &want); err != nil {
		t.Errorf("%s: answer is not JSON, yet the SDK decoded it: %v", op, err)
		return
	}
	if err := contractDecodeNumbers(mine, &got); err != nil {
		t.Errorf("%s: re-marshalled value is not JSON: %v", op, err)
		return
	}
	if diff := contractSubset(got, want, "$"); diff != "" {
		t.Errorf("%s: decoded value differs from the answer at %s\nanswer:  %.2000s\ndecoded: %.2000s", op, diff, raw, mine)
	}
}

func contractDecodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// contractSubset reports where got (the SDK's value, re-marshalled) says
// something the answer want does not. It returns "" when they agree.
func contractSubset(got, want any, path string) string {
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			if want == nil && len(g) == 0 {
				return ""
			}
			return path
		}
		for k, gv := range g {
			wv, present := w[k]
			if !present || wv == nil {
				if contractZero(gv) {
					continue
				}
				return path + "." + k
			}
			if d := contractSubset(gv, wv, path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		w, ok := want.([]any)
		if !ok {
			if want == nil && len(g) == 0 {
				return ""
			}
			return path
		}
		if len(g) != len(w) {
			return path + " (length)"
		}
		for i := range g {
			if d := contractSubset(g[i], w[i], path+"["+strconv.Itoa(i)+"]"); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		w, ok := want.(json.Number)
		if !ok {
			return path
		}
		gf, err1 := strconv.ParseFloat(string(g), 64)
		wf, err2 := strconv.ParseFloat(string(w), 64)
		if err1 != nil || err2 != nil || gf != wf && !(math.IsNaN(gf) && math.IsNaN(wf)) {
			return path
		}
		return ""
	case string:
		w, ok := want.(string)
		if !ok {
			return path
		}
		if g == w {
			return ""
		}
		gt, err1 := models.ParseTimestamp(g)
		wt, err2 := models.ParseTimestamp(w)
		if err1 == nil && err2 == nil && gt.Equal(wt) {
			return ""
		}
		return path
	case nil:
		if want == nil {
			return ""
		}
		return path
	default:
		if reflect.DeepEqual(got, want) {
			return ""
		}
		return path
	}
}

func contractZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == "" || x == "0001-01-01T00:00:00Z"
	case bool:
		return !x
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case map[string]any:
		for _, e := range x {
			if !contractZero(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	return false
}

// contractCheckDetector proves the test can fail: a request without the
// required app_id must come back as a 422 with a request violation.
func contractCheckDetector(t *testing.T, p *prismServer) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.baseURL+"/human-evaluations", nil)
	req.Header.Set("Authorization", testKey)
	// Its own transport: gock, used by other tests, may swap the default one.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err, "violation detector")
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if req, _ := contractViolations(resp.Header.Get("sl-violations")); resp.StatusCode != http.StatusUnprocessableEntity || len(req) == 0 {
		t.Fatalf("a request without app_id: got %d with violations %q; want 422 with a request violation, or the contract test proves nothing",
			resp.StatusCode, resp.Header.Get("sl-violations"))
	}
}

// contractClient returns a client whose transport records every exchange
// with prism.
func contractClient(t *testing.T, p *prismServer) (*contractRecorder, *Client) {
	t.Helper()
	rec := &contractRecorder{next: &http.Transport{}, perOp: map[string]int{}}
	t.Cleanup(rec.next.CloseIdleConnections)
	return rec, newTestClient(t, p.baseURL,
		WithHTTPClient(&http.Client{Transport: rec}),
		WithMaxRetries(0),
		WithTimeout(30*time.Second))
}

type contractExchange struct {
	method, url, query  string
	requestBody         []byte
	status              int
	responseBody        []byte
	requestViolations   []string
	responseViolations  []string
	rawViolationsHeader string
}

type contractRecorder struct {
	next               *http.Transport
	mu                 sync.Mutex
	calls              int
	responseViolations int
	perOp              map[string]int
	exchanges          []*contractExchange
}

func (r *contractRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := &contractExchange{method: req.Method, url: req.URL.String(), query: req.URL.RawQuery}
	if req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			ex.requestBody, _ = io.ReadAll(body)
			body.Close()
		}
	}
	r.mu.Lock()
	r.calls++
	r.exchanges = append(r.exchanges, ex)
	r.mu.Unlock()

	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	ex.status = resp.StatusCode
	ex.responseBody = body
	ex.rawViolationsHeader = resp.Header.Get("sl-violations")
	ex.requestViolations, ex.responseViolations = contractViolations(ex.rawViolationsHeader)
	if len(ex.responseViolations) > 0 {
		r.mu.Lock()
		r.responseViolations++
		r.mu.Unlock()
	}
	return resp, nil
}

func (r *contractRecorder) last() *contractExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.exchanges) == 0 {
		return nil
	}
	return r.exchanges[len(r.exchanges)-1]
}

func (r *contractRecorder) lastRequestBody() string { return string(r.last().requestBody) }
func (r *contractRecorder) lastQuery() string       { return r.last().query }

func (r *contractRecorder) countOp(op string) {
	r.mu.Lock()
	r.perOp[op]++
	r.mu.Unlock()
}

// contractViolations parses prism's sl-violations header into the violations
// of the request and those of prism's own answer.
func contractViolations(header string) (request, response []string) {
	if header == "" {
		return nil, nil
	}
	var list []struct {
		Location []any `json:"location"`
		Severity string
		Code     string
		Message  string
	}
	// Prism prefixes a long list with "Too many violations! " (the 2026
	// slice's recursive span schema makes its own answers break it).
	trimmed := strings.TrimPrefix(header, "Too many violations! ")
	if err := json.Unmarshal([]byte(trimmed), &list); err != nil {
		if trimmed != header && !strings.Contains(trimmed, `"location":["request"`) &&
			!strings.Contains(trimmed, `"location":["path"`) && !strings.Contains(trimmed, `"location":["body"`) {
			return nil, []string{"too many violations of prism's own answer"}
		}
		return []string{"unparsable sl-violations header: " + header}, nil
	}
	for _, v := range list {
		line := fmt.Sprintf("%v %s %s: %s", v.Location, v.Severity, v.Code, v.Message)
		if len(v.Location) > 0 && v.Location[0] == "response" {
			response = append(response, line)
		} else {
			request = append(request, line)
		}
	}
	return request, response
}

// prismServer is a running mock server.
type prismServer struct {
	baseURL string
	cmd     *exec.Cmd
	out     *contractLog
}

// startPrism starts the pinned prism on a free 127.0.0.1 port, waits until
// it listens, and stops it when the test ends.
func startPrism(t *testing.T, dynamic bool) *prismServer {
	t.Helper()
	return startPrismFor(t, contractDocument, dynamic)
}

// startPrismFor is startPrism for another document, such as the 2026 slice.
func startPrismFor(t *testing.T, contractDocument string, dynamic bool) *prismServer {
	t.Helper()
	// Read CI first, so that go test's result cache keys on it even when
	// the test skips.
	ci := os.Getenv("CI") == "true"
	doc, err := filepath.Abs(contractDocument)
	require.NoError(t, err)
	if _, err := os.Stat(doc); err != nil {
		t.Skipf("contract test skipped: %s is absent (the contract lives in ../shared beside the repository)", contractDocument)
	}
	missing := func(why string) {
		t.Helper()
		const install = "install it with (cd tools/contract && npm ci)"
		require.False(t, ci, "CI=true and ../shared is present, so the contract tests must run, but %s; %s", why, install)
		t.Skipf("contract test skipped: %s; %s", why, install)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH")
	}
	bin, err := filepath.Abs(contractPrism)
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		missing(contractPrism + " is absent")
	}

	var lastErr error
	for try := 0; try < 3; try++ {
		p, err := launchPrism(t, bin, doc, dynamic)
		if err == nil {
			return p
		}
		lastErr = err
	}
	t.Fatalf("prism did not start: %v", lastErr)
	return nil
}

func launchPrism(t *testing.T, bin, doc string, dynamic bool) (*prismServer, error) {
	port, err := contractFreePort()
	if err != nil {
		return nil, err
	}
	args := []string{"mock", "-h", "127.0.0.1", "-p", strconv.Itoa(port)}
	if dynamic {
		args = append(args, "-d")
		if seed := os.Getenv("AGENTA_CONTRACT_SEED"); seed != "" {
			args = append(args, "--seed", seed)
		}
	}
	args = append(args, doc)
	out := &contractLog{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		select {
		case <-exited:
			return
		default:
		}
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			return nil, fmt.Errorf("prism exited before listening:\n%s", out.tail(4000))
		default:
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			if strings.Contains(out.String(), "Prism is listening") {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("prism did not listen on %s within 60 s:\n%s", addr, out.tail(4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	p := &prismServer{baseURL: "http://" + addr, cmd: cmd, out: out}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("prism output (tail):\n%s", out.tail(8000))
		}
	})
	return p, nil
}

func contractFreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// contractLog collects a child process's output safely.
type contractLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *contractLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 4<<20 { // keep memory bounded on long dynamic runs
		rest := b.buf.Bytes()[b.buf.Len()-(1<<20):]
		b.buf = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return b.buf.Write(p)
}

func (b *contractLog) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *contractLog) tail(n int) string {
	s := b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}
