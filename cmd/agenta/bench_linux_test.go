//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
	srv := httptest.NewServer(scenarioServer(func(w io.Writer) error {
		_, err := w.Write(body)
		return err
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
		// jsonl-keyed runs with an API key set, so that stdout goes
		// through the scrub of the key.
		for _, name := range []string{"csv", "jsonl", "jsonl-keyed"} {
			format, keyed := strings.CutSuffix(name, "-keyed")
			b.Run("rows="+strconv.Itoa(rows)+"/agenta-scenarios-"+name, func(b *testing.B) {
				bin := buildAgenta(b)
				srv := benchServer(b, rows)
				b.SetBytes(int64(len(benchBodies[rows])))
				b.ResetTimer()
				var peak int64
				for range b.N {
					cmd := exec.Command(bin, "scenarios", benchEvaluationID, "--format", format)
					cmd.Env = []string{"AGENTA_HOST=" + srv.URL}
					if keyed {
						cmd.Env = append(cmd.Env, "AGENTA_API_KEY=bench-key-0123456789abcdef")
					}
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

// countingWriter counts the lines written to it and keeps nothing.
type countingWriter struct{ lines int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// BenchmarkEvalRun runs the built binary's eval run of two variants against
// a loopback service whose evaluations finish at once with n rows each
// (runServer: about 700 bytes a row, written as they are sent), without
// reports and with all four (--junit, --csv, --json, --markdown, written
// to a temporary directory), and reports the child's peak RSS. The
// baseline, in this process and against the same server, is
// StreamEvaluationScenarios reading both runs, one after the other, doing
// nothing with the rows. AGENTA_BIN runs another build of the command (an
// earlier one, to compare) instead of building this one.
//
//	go test -run '^$' -bench BenchmarkEvalRun -benchtime 3x ./cmd/agenta
func BenchmarkEvalRun(b *testing.B) {
	variants := []string{"0190547f-5e5f-7de0-8000-000000000c01", "0190547f-5e5f-7de0-8000-000000000c02"}
	for _, rows := range []int{10_000, 50_000} {
		b.Run("rows="+strconv.Itoa(rows)+"x2/StreamEvaluationScenarios", func(b *testing.B) {
			srv := httptest.NewServer(runServer(rows, 0))
			b.Cleanup(srv.Close)
			client, err := agenta.NewClient(srv.URL + "/api")
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				for _, id := range []string{"0190b5a2-7c1e-7b52-a0a7-3c3f2b1d9f00", "0190b5a2-7c1e-7b52-a0a7-3c3f2b1d9f01"} {
					n := 0
					for _, err := range client.StreamEvaluationScenarios(context.Background(), id) {
						if err != nil {
							b.Fatal(err)
						}
						n++
					}
					if n != rows {
						b.Fatalf("streamed %d rows, want %d", n, rows)
					}
				}
			}
			b.ReportMetric(float64(2*rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		for _, reports := range []bool{false, true} {
			name := "agenta-eval-run"
			if reports {
				name += "-reports"
			}
			b.Run("rows="+strconv.Itoa(rows)+"x2/"+name, func(b *testing.B) {
				bin := os.Getenv("AGENTA_BIN")
				if bin == "" {
					bin = buildAgenta(b)
				}
				srv := httptest.NewServer(runServer(rows, 0))
				b.Cleanup(srv.Close)
				dir := b.TempDir()
				var peak int64
				var cpu time.Duration
				b.ResetTimer()
				for range b.N {
					args := []string{"eval", "run", "--app", "0190547f-5e5f-7de0-8000-000000000a01", "--testset", "0190547f-5e5f-7de0-8000-000000000d01",
						"--variant", variants[0], "--variant", variants[1], "--evaluator", benchEvaluators[0],
						"--gate", "Exact match >= 0.5", "--gate", "worse(Exact match) <= 0", "--interval", "100ms"}
					if reports {
						for _, r := range []string{"junit", "csv", "json", "markdown"} {
							args = append(args, "--"+r, filepath.Join(dir, "report."+r))
						}
					}
					cmd := exec.Command(bin, args...)
					cmd.Env = []string{"AGENTA_HOST=" + srv.URL, "TMPDIR=" + dir}
					var stdout, stderr strings.Builder
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					if err := cmd.Start(); err != nil {
						b.Fatal(err)
					}
					hwm := watchPeakRSS(cmd.Process.Pid)
					if err := cmd.Wait(); err != nil {
						b.Fatalf("agenta eval run: %v: %s", err, stderr.String())
					}
					if want := fmt.Sprintf(": %d rows paired", rows); !strings.Contains(stdout.String(), want) {
						b.Fatalf("agenta eval run printed no %q:\n%s", want, stdout.String())
					}
					peak = max(peak, hwm())
					cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				}
				b.ReportMetric(float64(2*rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				if peak == 0 {
					b.Fatal("no peak RSS was read from /proc")
				}
				b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
				// The child's own CPU time: on a loaded machine, a steadier
				// measure of its cost than the wall clock.
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
				// The child's own CPU time: on a loaded machine, a steadier
				// measure of its cost than the wall clock.
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}
