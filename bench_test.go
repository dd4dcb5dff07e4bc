package agenta

// Benchmarks of the SDK against the floor for the same work in Go: a
// hand-written net/http + encoding/json client (baseline, in
// bench_fixtures_test.go) run in the same process against the same loopback
// server and the same pre-encoded body. Each benchmark has the sub-benchmarks
// impl=baseline and impl=sdk, so that
//
//	go test -run '^$' -bench . -count 6 > bench.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl bench.txt
//
// prints the two side by side. BENCHMARKS.md has the method and the numbers.

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenta-go/agenta/models"
)

var benchSink any

// cpuMetric starts counting the process's CPU time; the function it
// returns reports it as cpu-ns/op. Call it just before the timed loop.
func cpuMetric(b *testing.B) func() {
	start := processCPU()
	return func() {
		if end := processCPU(); end > 0 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// benchImpls runs fn as the sub-benchmarks impl=baseline and impl=sdk.
func benchImpls(b *testing.B, fn func(b *testing.B, sdk bool)) {
	b.Run("impl=baseline", func(b *testing.B) { fn(b, false) })
	b.Run("impl=sdk", func(b *testing.B) { fn(b, true) })
}

// BenchmarkGetVariant is the small call: one GET, a 0.8 kB object.
func BenchmarkGetVariant(b *testing.B) {
	benchImpls(b, func(b *testing.B, sdk bool) {
		srv := newBenchServer(b, variantBody)
		get := benchVariantGetter(b, srv, sdk)
		b.SetBytes(int64(len(variantBody)))
		b.ReportAllocs()
		defer cpuMetric(b)()
		for b.Loop() {
			v, err := get()
			if err != nil {
				b.Fatal(err)
			}
			benchSink = v
		}
		b.ReportMetric(float64(srv.conns.Load()), "conns")
	})
}

func benchVariantGetter(b *testing.B, srv *benchServer, sdk bool) func() (*models.AppVariantResponse, error) {
	get, _ := benchVariantClient(b, srv, sdk)
	return get
}

// benchVariantClient returns a GetVariant call of a new client for srv, and
// a function that closes the client's idle connections.
func benchVariantClient(b *testing.B, srv *benchServer, sdk bool) (get func() (*models.AppVariantResponse, error), closeIdle func()) {
	ctx := context.Background()
	if sdk {
		c := newBenchClient(b, srv)
		return func() (*models.AppVariantResponse, error) { return c.GetVariant(ctx, "6679c09ce3b1f0c8d4a5b6a3") }, c.CloseIdleConnections
	}
	bl := newBaseline(srv)
	b.Cleanup(bl.close)
	return func() (*models.AppVariantResponse, error) { return bl.getVariant(ctx, "6679c09ce3b1f0c8d4a5b6a3") }, bl.close
}

var benchRowCounts = []int{100, 1_000, 10_000, 100_000}

// BenchmarkFetchScenarios decodes whole evaluations of realistic rows
// (about 800 bytes each) into []models.EvaluationScenario.
func BenchmarkFetchScenarios(b *testing.B) {
	for _, rows := range benchRowCounts {
		body := scenariosBody(rows)
		b.Run("rows="+strconv.Itoa(rows), func(b *testing.B) {
			benchImpls(b, func(b *testing.B, sdk bool) {
				srv := newBenchServer(b, body)
				ctx := context.Background()
				var fetch func() ([]models.EvaluationScenario, error)
				if sdk {
					c := newBenchClient(b, srv)
					fetch = func() ([]models.EvaluationScenario, error) { return c.FetchEvaluationScenarios(ctx, "ev1") }
				} else {
					bl := newBaseline(srv)
					b.Cleanup(bl.close)
					fetch = func() ([]models.EvaluationScenario, error) { return bl.fetchScenarios(ctx, "ev1") }
				}
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				defer cpuMetric(b)()
				for b.Loop() {
					list, err := fetch()
					if err != nil {
						b.Fatal(err)
					}
					if len(list) != rows {
						b.Fatalf("got %d rows, want %d", len(list), rows)
					}
					benchSink = list
				}
				benchSink = nil
			})
		})
	}
}

// BenchmarkStreamScenarios iterates over the rows without keeping them: the
// SDK's StreamEvaluationScenarios against a hand-written json.Decoder
// Token/More/Decode loop.
func BenchmarkStreamScenarios(b *testing.B) {
	for _, rows := range []int{10_000, 100_000} {
		body := scenariosBody(rows)
		b.Run("rows="+strconv.Itoa(rows), func(b *testing.B) {
			benchImpls(b, func(b *testing.B, sdk bool) {
				srv := newBenchServer(b, body)
				ctx := context.Background()
				var stream func(yield func(models.EvaluationScenario, error) bool)
				if sdk {
					stream = newBenchClient(b, srv).StreamEvaluationScenarios(ctx, "ev1")
				} else {
					bl := newBaseline(srv)
					b.Cleanup(bl.close)
					stream = bl.streamScenarios(ctx, "ev1")
				}
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				defer cpuMetric(b)()
				for b.Loop() {
					n := 0
					for s, err := range stream {
						if err != nil {
							b.Fatal(err)
						}
						n += len(s.Results)
					}
					if n != 3*rows {
						b.Fatalf("got %d results, want %d", n, 3*rows)
					}
				}
			})
		})
	}
}

// BenchmarkParallel is throughput: 1, 16 and 64 goroutines sharing one
// client, each making small calls. The conns metric is the number of
// connections the server accepted.
func BenchmarkParallel(b *testing.B) {
	for _, workers := range []int{1, 16, 64} {
		b.Run("goroutines="+strconv.Itoa(workers), func(b *testing.B) {
			benchImpls(b, func(b *testing.B, sdk bool) {
				srv := newBenchServer(b, variantBody)
				get := benchVariantGetter(b, srv, sdk)
				b.SetBytes(int64(len(variantBody)))
				b.ReportAllocs()
				var next atomic.Int64
				var wg sync.WaitGroup
				n := int64(b.N)
				b.ResetTimer()
				reportCPU := cpuMetric(b)
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= n {
							if _, err := get(); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				reportCPU()
				b.ReportMetric(float64(srv.conns.Load()), "conns")
			})
		})
	}
}

// BenchmarkGetSpan decodes a trace of 200 spans nested four to a node.
func BenchmarkGetSpan(b *testing.B) {
	const nodes = 200
	body := spanTreeBody(nodes)
	b.Run("nodes="+strconv.Itoa(nodes), func(b *testing.B) {
		benchImpls(b, func(b *testing.B, sdk bool) {
			srv := newBenchServer(b, body)
			ctx := context.Background()
			var get func() (*models.Span, error)
			if sdk {
				c := newBenchClient(b, srv)
				get = func() (*models.Span, error) { return c.GetSpan(ctx, "span1", nil) }
			} else {
				bl := newBaseline(srv)
				b.Cleanup(bl.close)
				get = func() (*models.Span, error) { return bl.getSpan(ctx, "span1") }
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			defer cpuMetric(b)()
			for b.Loop() {
				s, err := get()
				if err != nil {
					b.Fatal(err)
				}
				count := 0
				s.Walk(func(*models.Span, int) bool { count++; return true })
				if count != nodes {
					b.Fatalf("got %d spans, want %d", count, nodes)
				}
			}
		})
	})
}

// BenchmarkConnections reports how many connections a client opens: for 200
// sequential calls (the goal is 1) and for 64 concurrent workers making 200
// calls each (the goal is at most 64). Each op is the whole batch, against a
// fresh server.
func BenchmarkConnections(b *testing.B) {
	b.Run("sequential=200", func(b *testing.B) {
		benchImpls(b, func(b *testing.B, sdk bool) {
			var conns int64
			for b.Loop() {
				srv := newBenchServer(b, variantBody)
				get, closeIdle := benchVariantClient(b, srv, sdk)
				for i := 0; i < 200; i++ {
					if _, err := get(); err != nil {
						b.Fatal(err)
					}
				}
				conns = max(conns, srv.conns.Load())
				closeIdle()
				srv.Close()
			}
			b.ReportMetric(float64(conns), "conns")
		})
	})
	b.Run("workers=64", func(b *testing.B) {
		benchImpls(b, func(b *testing.B, sdk bool) {
			var conns int64
			for b.Loop() {
				srv := newBenchServer(b, variantBody)
				get, closeIdle := benchVariantClient(b, srv, sdk)
				var wg sync.WaitGroup
				for w := 0; w < 64; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 200; i++ {
							if _, err := get(); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				conns = max(conns, srv.conns.Load())
				closeIdle()
				srv.Close()
			}
			b.ReportMetric(float64(conns), "conns")
		})
	})
}
