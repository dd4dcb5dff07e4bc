package main

// What the tests of the command share: a Factory on buffers, a command
// run in-process, servers to run it against (a fake behind a proxy that
// answers a missing route; the fixture evaluation of the benchmarks and
// of the memory script: a large evaluation shaped as the mid-2024 service
// sends it, served by a loopback server whose own cost is small), and the
// peak RSS of a child process.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

const benchEvaluationID = "0190b5a2-7c1e-7b52-a0a7-3c3f2b1d9e01"

var benchEvaluators = [3]string{"0190547f-5e5f-7de0-8000-000000000e01", "0190547f-5e5f-7de0-8000-000000000e02", "0190547f-5e5f-7de0-8000-000000000e03"}

// benchScenarios returns the JSON array of n scenarios as the mid-2024
// service sends them (see appendBenchScenario).
func benchScenarios(n int) []byte {
	b := make([]byte, 0, n*720)
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendBenchScenario(b, i)
	}
	return append(b, ']')
}

// writeBenchScenarios writes the same array as benchScenarios, row by row,
// so that a server can send a large evaluation without holding it.
func writeBenchScenarios(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteByte('[')
	row := make([]byte, 0, 1024)
	for i := range n {
		if i > 0 {
			bw.WriteByte(',')
		}
		row = appendBenchScenario(row[:0], i)
		if _, err := bw.Write(row); err != nil {
			return err
		}
	}
	bw.WriteByte(']')
	return bw.Flush()
}

var benchCountries = []string{"France", "Japan", "Brazil", "Australia", "Canada", "Nigeria", "Switzerland", "Türkiye"}

// appendBenchScenario appends row i of the fixture evaluation: one input,
// one output with cost and latency, three evaluator results (bool, number,
// bool) and correct_answers, about 700 bytes.
func appendBenchScenario(b []byte, i int) []byte {
	country := benchCountries[i%len(benchCountries)]
	return fmt.Appendf(b, `{"id":"0190b5a2-%04x-7000-8000-%012x","evaluation_id":%q,`+
		`"inputs":[{"name":"country","type":"text","value":%q}],`+
		`"outputs":[{"result":{"type":"text","value":"The capital of %s is a city of some size, row %d.","error":null},"cost":%g,"latency":%g}],`+
		`"correct_answers":[{"key":"correct_answer","value":"Answer %d"}],"is_pinned":false,"note":"",`+
		`"results":[{"evaluator_config":%q,"result":{"type":"bool","value":%t,"error":null}},`+
		`{"evaluator_config":%q,"result":{"type":"number","value":%d,"error":null}},`+
		`{"evaluator_config":%q,"result":{"type":"bool","value":true,"error":null}}]}`,
		i>>16&0xffff, i, benchEvaluationID, country, country, i, 0.000014+float64(i%7)/1e6, 0.5+float64(i%100)/1000, i,
		benchEvaluators[0], i%3 != 0, benchEvaluators[1], i%11, benchEvaluators[2])
}

// benchEvaluation is the evaluation's own answer, naming the evaluators.
var benchEvaluation = `{"id":"` + benchEvaluationID + `","app_id":"a","user_id":"u","user_username":"u",
"variant_ids":["v"],"variant_names":["capitals.default"],"variant_revision_ids":["r"],"revisions":["1"],
"testset_id":"t","testset_name":"capitals","status":{"type":"status","value":"EVALUATION_FINISHED","error":null},
"aggregated_results":[
{"evaluator_config":{"id":"` + benchEvaluators[0] + `","name":"Exact match","evaluator_key":"auto_exact_match","settings_values":{},"created_at":"2024-07-15 10:52:51+00:00","updated_at":"2024-07-15 10:52:51+00:00"},"result":{"type":"number","value":0.66,"error":null}},
{"evaluator_config":{"id":"` + benchEvaluators[1] + `","name":"Edit distance","evaluator_key":"auto_levenshtein_distance","settings_values":{},"created_at":"2024-07-15 10:52:51+00:00","updated_at":"2024-07-15 10:52:51+00:00"},"result":{"type":"number","value":5,"error":null}},
{"evaluator_config":{"id":"` + benchEvaluators[2] + `","name":"Terse answer","evaluator_key":"auto_regex_test","settings_values":{},"created_at":"2024-07-15 10:52:51+00:00","updated_at":"2024-07-15 10:52:51+00:00"},"result":{"type":"number","value":1,"error":null}}],
"average_cost":null,"total_cost":null,"average_latency":null,
"created_at":"2024-07-15T10:52:51.123456Z","updated_at":"2024-07-15T10:52:51.123456Z"}`

// scenarioServer serves the fixture evaluation (for its evaluator names)
// and its scenarios, written by scenarios.
func scenarioServer(scenarios func(io.Writer) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/evaluations/" + benchEvaluationID:
			io.WriteString(w, benchEvaluation)
		case "/api/evaluations/" + benchEvaluationID + "/evaluation_scenarios":
			scenarios(w)
		default:
			http.Error(w, `{"detail":"Not Found"}`, http.StatusNotFound)
		}
	})
}

// watchPeakRSS polls a process's VmHWM (its peak resident set since exec)
// until it exits, and returns a function giving the last value read, in
// KiB. getrusage's ru_maxrss cannot be used: Go starts children with
// CLONE_VM, so a child's ru_maxrss counts this process's memory, which
// holds the pre-encoded bodies.
func watchPeakRSS(pid int) func() int64 {
	var (
		mu   sync.Mutex
		peak int64
		done = make(chan struct{})
	)
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	go func() {
		defer close(done)
		for {
			data, err := os.ReadFile(path)
			if err != nil {
				return // the process is gone
			}
			for _, line := range strings.Split(string(data), "\n") {
				if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
					mu.Lock()
					peak = max(peak, kib)
					mu.Unlock()
				}
			}
			if strings.Contains(string(data), "State:\tZ") {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return func() int64 {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// The size of HUGE_RUN_HOST's evaluations: 50,000 rows of about 6.7 KB,
// 319 MiB of scenarios each, more than the SDK's 256 MiB limit on an
// answer read whole.
const (
	hugeRows    = 50_000
	hugePadding = 6000
)

// runServer is a service whose evaluations of any variants finish at once,
// each with the fixture evaluation's rows (see appendBenchScenario),
// written one at a time as they are sent, each row's note padded with
// padding bytes: eval run on it reads runs of any size without the server
// holding them.
func runServer(rows, padding int) http.Handler {
	return runServerOf(rows, padding, func(b []byte, i int, _ string) []byte { return appendBenchScenario(b, i) })
}

// runServerOf is runServer with the rows of each variant written by row.
func runServerOf(rows, padding int, row func(b []byte, i int, variant string) []byte) http.Handler {
	const prefix = "/api/evaluations"
	evaluation := func(id, variant string) string {
		ev := strings.Replace(benchEvaluation, benchEvaluationID, id, 1)
		ev = strings.Replace(ev, `"variant_ids":["v"]`, `"variant_ids":[`+strconv.Quote(variant)+`]`, 1)
		return strings.Replace(ev, `"variant_names":["capitals.default"]`, `"variant_names":[`+strconv.Quote("capitals."+variant)+`]`, 1)
	}
	note := strings.Repeat("x", padding)
	var variants sync.Map // evaluation id → variant id
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		rest, _ := strings.CutPrefix(r.URL.Path, prefix)
		switch {
		case r.Method == http.MethodPost && (rest == "" || rest == "/"):
			var req struct {
				VariantIDs []string `json:"variant_ids"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, `{"detail":"bad request"}`, http.StatusBadRequest)
				return
			}
			var created []string
			for i, v := range req.VariantIDs {
				id := fmt.Sprintf("0190b5a2-7c1e-7b52-a0a7-3c3f2b1d9f%02x", i)
				variants.Store(id, v)
				created = append(created, evaluation(id, v))
			}
			io.WriteString(w, "["+strings.Join(created, ",")+"]")
		case strings.HasSuffix(rest, "/status"):
			io.WriteString(w, `{"status":{"type":"status","value":"EVALUATION_FINISHED","error":null}}`)
		case strings.HasSuffix(rest, "/evaluation_scenarios"):
			variant, _ := variants.Load(strings.TrimSuffix(strings.TrimPrefix(rest, "/"), "/evaluation_scenarios"))
			name, _ := variant.(string)
			bw := bufio.NewWriterSize(w, 64<<10)
			bw.WriteByte('[')
			buf := make([]byte, 0, 1024+padding)
			for i := range rows {
				if i > 0 {
					bw.WriteByte(',')
				}
				buf = row(buf[:0], i, name)
				if padding > 0 {
					buf = bytes.Replace(buf, []byte(`"note":""`), []byte(`"note":"`+note+`"`), 1)
				}
				if _, err := bw.Write(buf); err != nil {
					return
				}
			}
			bw.WriteByte(']')
			bw.Flush()
		case r.Method == http.MethodGet && strings.Count(rest, "/") == 1:
			id := strings.TrimPrefix(rest, "/")
			v, ok := variants.Load(id)
			if !ok {
				http.Error(w, `{"detail":"Not Found"}`, http.StatusNotFound)
				return
			}
			io.WriteString(w, evaluation(id, v.(string)))
		default:
			http.Error(w, `{"detail":"Not Found"}`, http.StatusNotFound)
		}
	})
}

// missingResultsRow is row i of the fixture evaluation, except that the
// variant "missing" has no evaluator result on any row but the first two:
// its app answered, and its evaluators gave nothing, which the fake
// service cannot do; the variant "repeats" lists its first 5 rows again,
// with their scenario ids, in place of rows 16 to 20; and the variant
// "nooutput" has no output on its last 2 rows ("outputs": []), and no
// app error, its evaluators' results as they are.
func missingResultsRow(b []byte, i int, variant string) []byte {
	start := len(b)
	if variant == "repeats" && i >= 15 {
		return appendBenchScenario(b, i-15)
	}
	b = appendBenchScenario(b, i)
	if variant == "nooutput" && i >= 18 {
		from := bytes.Index(b[start:], []byte(`"outputs":[`))
		to := bytes.Index(b[start:], []byte(`,"correct_answers"`))
		return append(b[:start+from], append([]byte(`"outputs":[]`), b[start+to:]...)...)
	}
	if variant != "missing" || i < 2 {
		return b
	}
	at := bytes.Index(b[start:], []byte(`"results":[`))
	return append(b[:start+at], `"results":[]}`...)
}

// testFactory returns a Factory on buffers, with an empty environment.
func testFactory() (*Factory, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := newFactory(&IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	f.getenv = func(string) string { return "" }
	return f, out, errOut
}

// execute runs a command built by NewCmdX with args, as cobra would.
func execute(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.Execute()
}

// syncBuffer is a bytes.Buffer that a goroutine may write while the test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runCommand runs the agenta command in this process, with the
// environment set by t.Setenv, and returns its exit code, stdout and
// stderr.
func runCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// notFoundOn serves srv through a proxy that answers FastAPI's 404 Not
// Found on the paths ending in suffix, and counts the requests whose path
// ends in count.
func notFoundOn(t *testing.T, srv *agentatest.Server, suffix, count string) (string, *atomic.Int32) {
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	p := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	var n atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, count) {
			n.Add(1)
		}
		if strings.HasSuffix(r.URL.Path, suffix) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"detail":"Not Found"}`)
			return
		}
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL + u.Path, &n
}

// echoServer is a fake whose app echoes the provider key in its output, in
// its error, and writes hostile text, row by row.
func echoServer(t *testing.T) (srv *agentatest.Server, app, testset, variant, evaluator string) {
	t.Helper()
	srv = agentatest.NewTestServer(t, agentatest.WithEvaluationPace(time.Millisecond))
	demo := agentatest.SeedDemo(srv)
	base := srv.AddBase(agentatest.Base{AppID: demo.AppID, Name: "echo", Application: func(_ map[string]any, in map[string]string) (string, error) {
		switch in["country"] {
		case "echo":
			return "Your key is " + echoKey + ", split: " + echoKey[:30] + "…", nil
		case "fail":
			return "", errors.New("Incorrect API key provided: " + echoKey + ". You can find your API key at https://platform.openai.com")
		case "encoded":
			return base64.StdEncoding.EncodeToString([]byte(echoKey)) + " " + hex.EncodeToString([]byte(echoKey)), nil
		}
		return hostile, nil
	}})
	variant = srv.AddVariant(agentatest.Variant{BaseID: base, ConfigName: "default"})
	testset = srv.AddTestset(agentatest.Testset{AppID: demo.AppID, Name: "echo", Rows: []map[string]string{
		{"country": "echo", "correct_answer": hostile},
		{"country": "fail", "correct_answer": "x"},
		{"country": "encoded", "correct_answer": "x"},
		{"country": hostile, "correct_answer": "-1+1"},
	}})
	return srv, demo.AppID, testset, variant, demo.ExactMatchID
}

// fake2026 starts a fake that speaks the 2026 API and takes the API key
// k26 (see fake2026KeyFile), closed when the test ends.
func fake2026(t *testing.T) *agentatest.Server {
	t.Helper()
	srv := agentatest.NewServer(agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey("k26"))
	t.Cleanup(srv.Close)
	return srv
}

// fake2026KeyFile writes fake2026's key to a file for --api-key-file and
// returns its path.
func fake2026KeyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(path, []byte("k26\n"), 0o600))
	return path
}
