//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
)

// Benchmarks of agenta scenarios, run as the built binary against a
// loopback server that sends a pre-encoded evaluation, so the server's own
// cost is small and the same for every case. The baseline is
// StreamEvaluationScenarios alone, in this process, reading the same body.
// Each CLI case reports the child's peak RSS (VmHWM, read from /proc).
//
//	go test -run '^$' -bench BenchmarkScenarios -benchtime 3x ./cmd/agenta

const benchEvaluationID = "0190b5a2-7c1e-7b52-a0a7-3c3f2b1d9e01"

var benchEvaluators = [3]string{"0190547f-5e5f-7de0-8000-000000000e01", "0190547f-5e5f-7de0-8000-000000000e02", "0190547f-5e5f-7de0-8000-000000000e03"}

// benchScenarios returns the JSON array of n scenarios as the mid-2024
// service sends them: one input, one output with cost and latency, three
// evaluator results (bool, number, bool), correct_answers. Rows are about
// 700 bytes.
func benchScenarios(n int) []byte {
	countries := []string{"France", "Japan", "Brazil", "Australia", "Canada", "Nigeria", "Switzerland", "Türkiye"}
	b := make([]byte, 0, n*720)
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		country := countries[i%len(countries)]
		b = fmt.Appendf(b, `{"id":"0190b5a2-%04x-7000-8000-%012x","evaluation_id":%q,`+
			`"inputs":[{"name":"country","type":"text","value":%q}],`+
			`"outputs":[{"result":{"type":"text","value":"The capital of %s is a city of some size, row %d.","error":null},"cost":%g,"latency":%g}],`+
			`"correct_answers":[{"key":"correct_answer","value":"Answer %d"}],"is_pinned":false,"note":"",`+
			`"results":[{"evaluator_config":%q,"result":{"type":"bool","value":%t,"error":null}},`+
			`{"evaluator_config":%q,"result":{"type":"number","value":%d,"error":null}},`+
			`{"evaluator_config":%q,"result":{"type":"bool","value":true,"error":null}}]}`,
			i>>16&0xffff, i, benchEvaluationID, country, country, i, 0.000014+float64(i%7)/1e6, 0.5+float64(i%100)/1000, i,
			benchEvaluators[0], i%3 != 0, benchEvaluators[1], i%11, benchEvaluators[2])
	}
	return append(b, ']')
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

var (
	benchBodies   = map[int][]byte{}
	benchBodiesMu sync.Mutex
	benchBinary   struct {
		once sync.Once
		path string
		err  error
	}
)

// benchServer serves an evaluation of n scenarios on 127.0.0.1.
func benchServer(b *testing.B, n int) *httptest.Server {
	benchBodiesMu.Lock()
	body, ok := benchBodies[n]
	if !ok {
		body = benchScenarios(n)
		benchBodies[n] = body
	}
	benchBodiesMu.Unlock()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/evaluations/" + benchEvaluationID:
			w.Write([]byte(benchEvaluation))
		case "/api/evaluations/" + benchEvaluationID + "/evaluation_scenarios":
			w.Write(body)
		default:
			http.Error(w, `{"detail":"Not Found"}`, http.StatusNotFound)
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}

// buildAgenta builds the command once per benchmark run.
func buildAgenta(b *testing.B) string {
	benchBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "agenta-bench")
		if err != nil {
			benchBinary.err = err
			return
		}
		benchBinary.path = filepath.Join(dir, "agenta")
		out, err := exec.Command("go", "build", "-o", benchBinary.path, ".").CombinedOutput()
		if err != nil {
			benchBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if benchBinary.err != nil {
		b.Skip(benchBinary.err)
	}
	return benchBinary.path
}

func BenchmarkScenarios(b *testing.B) {
	for _, rows := range []int{10_000, 100_000} {
		b.Run("rows="+strconv.Itoa(rows)+"/StreamEvaluationScenarios", func(b *testing.B) {
			srv := benchServer(b, rows)
			client, err := agenta.NewClient(srv.URL + "/api")
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(benchBodies[rows])))
			b.ResetTimer()
			for range b.N {
				n := 0
				for _, err := range client.StreamEvaluationScenarios(context.Background(), benchEvaluationID) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != rows {
					b.Fatalf("streamed %d rows, want %d", n, rows)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		for _, format := range []string{"csv", "jsonl"} {
			b.Run("rows="+strconv.Itoa(rows)+"/agenta-scenarios-"+format, func(b *testing.B) {
				bin := buildAgenta(b)
				srv := benchServer(b, rows)
				b.SetBytes(int64(len(benchBodies[rows])))
				b.ResetTimer()
				var peak int64
				for range b.N {
					cmd := exec.Command(bin, "scenarios", benchEvaluationID, "--format", format)
					cmd.Env = []string{"AGENTA_HOST=" + srv.URL}
					var stdout countingWriter
					var stderr strings.Builder
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					if err := cmd.Start(); err != nil {
						b.Fatal(err)
					}
					hwm := watchPeakRSS(cmd.Process.Pid)
					err := cmd.Wait()
					if err != nil {
						b.Fatalf("agenta scenarios: %v: %s", err, stderr.String())
					}
					if want := int64(rows); format == "jsonl" && stdout.lines != want || format == "csv" && stdout.lines != want+1 {
						b.Fatalf("agenta scenarios --format %s wrote %d lines for %d rows", format, stdout.lines, rows)
					}
					peak = max(peak, hwm())
				}
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				if peak == 0 {
					b.Fatal("no peak RSS was read from /proc")
				}
				b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
			})
		}
	}
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

// countingWriter counts the lines written to it and keeps nothing.
type countingWriter struct{ lines int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}
