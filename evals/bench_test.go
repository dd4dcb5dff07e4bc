package evals

// Benchmarks and the memory bound of issue 10: summarising 100,000 rows
// streamed from a loopback server, against streaming them alone in the same
// process; Compare of two runs at 10,000 and 100,000 rows. BENCHMARKS.md
// has the numbers.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/models"
)

var benchSink any

// cpuMetric starts counting the process's CPU time; the function it
// returns reports it as cpu-ns/op (and, with rows, cpu-ns/row). Call it
// just before the timed loop.
func cpuMetric(b *testing.B, rows int) func() {
	start := processCPU()
	return func() {
		if end := processCPU(); end > 0 && b.N > 0 {
			perOp := float64(end-start) / float64(b.N)
			b.ReportMetric(perOp, "cpu-ns/op")
			if rows > 0 {
				b.ReportMetric(perOp/float64(rows), "cpu-ns/row")
			}
		}
	}
}

// benchScenario returns row i of a generated run, shaped as the service
// sends it: three inputs (the question names the row, so that two runs
// pair), one output with cost (absent on a fifth of the rows) and latency,
// the expected answer, and three results: exact match (bool), edit distance
// (number), AI critique (text, or an error on one row in ten). A run's
// seed decides its answers; one row in fifty is an app error.
func benchScenario(rng *rand.Rand, i int) models.EvaluationScenario {
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	words := []string{"the", "capital", "of", "France", "is", "Paris", "évaluation", "München", "東京", "answer"}
	// The row's own generator draws its inputs and expected answer, the
	// same in every run; the run's draws the answers.
	row := rand.New(rand.NewPCG(uint64(i), 99))
	wordsFrom := func(rng *rand.Rand, n int) string {
		b := make([]byte, 0, 8*n)
		for k := 0; k < n; k++ {
			if k > 0 {
				b = append(b, ' ')
			}
			b = append(b, words[rng.IntN(len(words))]...)
		}
		return string(b)
	}
	text := func(n int) string { return wordsFrom(rng, n) }
	expected := wordsFrom(row, 2)
	s := models.EvaluationScenario{
		ID:           fmt.Sprintf("%024x", i),
		EvaluationID: "66a0c0de0000000000000001",
		Inputs: []models.Input{
			{Name: "country", Type: "text", Value: str(wordsFrom(row, 1))},
			{Name: "question", Type: "text", Value: str(fmt.Sprintf("question %d: %s", i, wordsFrom(row, 6)))},
			{Name: "max_tokens", Type: "text", Value: json.RawMessage(strconv.Itoa(64 + i%448))},
		},
		CorrectAnswers: []models.CorrectAnswer{{Key: "correct_answer", Value: expected}},
	}
	if rng.IntN(50) == 0 {
		failure := models.Result{Type: "error", Value: json.RawMessage("null"), Error: &models.Error{Message: "rate limited", Stacktrace: "Traceback …"}}
		s.Outputs = []models.Output{{Result: failure}}
		for _, id := range []string{"exact", "edit", "critique"} {
			s.Results = append(s.Results, models.ScenarioResult{EvaluatorConfig: id, Result: failure})
		}
		return s
	}
	output := expected
	if rng.IntN(3) == 0 {
		output = text(3 + rng.IntN(8))
	}
	latency := float64(rng.IntN(5000)) / 1000
	out := models.Output{Result: models.Result{Type: "text", Value: str(output)}, Latency: &latency}
	if rng.IntN(5) != 0 {
		cost := rng.Float64() / 1000
		out.Cost = &cost
	}
	s.Outputs = []models.Output{out}
	critique := models.Result{Type: "text", Value: str(text(4))}
	if rng.IntN(10) == 0 {
		critique = models.Result{Type: "error", Value: json.RawMessage("null"), Error: &models.Error{Message: "Missing LM provider Key"}}
	}
	s.Results = []models.ScenarioResult{
		{EvaluatorConfig: "exact", Result: models.Result{Type: "bool", Value: json.RawMessage(strconv.FormatBool(output == expected))}},
		{EvaluatorConfig: "edit", Result: models.Result{Type: "number", Value: json.RawMessage(strconv.Itoa(rng.IntN(20)))}},
		{EvaluatorConfig: "critique", Result: critique},
	}
	return s
}

// benchRun returns n generated rows of the run with the given seed.
func benchRun(seed uint64, n int) []models.EvaluationScenario {
	rng := rand.New(rand.NewPCG(seed, 10))
	rows := make([]models.EvaluationScenario, n)
	for i := range rows {
		rows[i] = benchScenario(rng, i)
	}
	return rows
}

// appendRows writes rows i, i+1, … of a run as a JSON array, calling flush
// when the buffer passes 32 kB; it stops early when flush reports false.
func writeRows(seed uint64, n int, flush func([]byte) bool) {
	rng := rand.New(rand.NewPCG(seed, 10))
	buf := append(make([]byte, 0, 64<<10), '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			buf = append(buf, ',')
		}
		row, _ := json.Marshal(benchScenario(rng, i))
		buf = append(buf, row...)
		if len(buf) > 32<<10 {
			if !flush(buf) {
				return
			}
			buf = buf[:0]
		}
	}
	flush(append(buf, ']'))
}

var (
	benchBodiesMu sync.Mutex
	benchBodies   = map[int][]byte{}
)

// benchBody returns the pre-encoded answer of n rows, built once.
func benchBody(n int) []byte {
	benchBodiesMu.Lock()
	defer benchBodiesMu.Unlock()
	if b, ok := benchBodies[n]; ok {
		return b
	}
	var body []byte
	writeRows(1, n, func(b []byte) bool { body = append(body, b...); return true })
	benchBodies[n] = body
	return body
}

// newLoopbackClient serves handler on 127.0.0.1 and returns a client of it.
func newLoopbackClient(tb testing.TB, handler http.HandlerFunc) *agenta.Client {
	tb.Helper()
	srv := httptest.NewServer(handler) // listens on 127.0.0.1
	tb.Cleanup(srv.Close)
	c, err := agenta.NewClient(srv.URL + "/api")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.CloseIdleConnections)
	return c
}

// BenchmarkSummarizeStream measures summarising rows as they stream from a
// loopback server (impl=summarize) against streaming them alone
// (impl=stream), on the same pre-encoded body.
func BenchmarkSummarizeStream(b *testing.B) {
	for _, rows := range []int{10_000, 100_000} {
		body := benchBody(rows)
		c := newLoopbackClient(b, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		})
		ctx := context.Background()
		b.Run(fmt.Sprintf("rows=%d/impl=stream", rows), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			defer cpuMetric(b, 0)()
			for b.Loop() {
				n := 0
				for s, err := range c.StreamEvaluationScenarios(ctx, "ev") {
					if err != nil {
						b.Fatal(err)
					}
					n += len(s.Results)
				}
				benchSink = n
			}
		})
		b.Run(fmt.Sprintf("rows=%d/impl=summarize", rows), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			defer cpuMetric(b, 0)()
			for b.Loop() {
				s, err := SummarizeStream(c.StreamEvaluationScenarios(ctx, "ev"))
				if err != nil || s.Rows != rows {
					b.Fatalf("summarised %d rows, %v; want %d", s.Rows, err, rows)
				}
				benchSink = s
			}
		})
	}
}

// BenchmarkCompare compares two runs of the same rows, the candidate's in
// another order, at 10,000 and 100,000 rows (impl=compare). Its baseline,
// impl=summarize, summarises both runs: one linear pass over the same rows
// and results, so that the per-row cost of the two can be set side by side
// as the rows outgrow the CPU caches. impl=interleaved feeds a Comparer one
// row of each run in turn, in the same order, as CompareStream does with
// two streams of one test set: rows pair at once and nothing waits.
func BenchmarkCompare(b *testing.B) {
	for _, rows := range []int{10_000, 100_000} {
		baseline := benchRun(1, rows)
		candidate := benchRun(2, rows)
		b.Run(fmt.Sprintf("rows=%d/impl=interleaved", rows), func(b *testing.B) {
			b.ReportAllocs()
			defer cpuMetric(b, rows)()
			for b.Loop() {
				var c Comparer
				for i := range baseline {
					c.AddBaseline(baseline[i])
					c.AddCandidate(candidate[i])
				}
				benchSink = c.Comparison()
			}
		})
		rand.New(rand.NewPCG(3, 3)).Shuffle(len(candidate), func(i, j int) {
			candidate[i], candidate[j] = candidate[j], candidate[i]
		})
		b.Run(fmt.Sprintf("rows=%d/impl=summarize", rows), func(b *testing.B) {
			b.ReportAllocs()
			defer cpuMetric(b, rows)()
			for b.Loop() {
				benchSink = [2]Summary{Summarize(baseline), Summarize(candidate)}
			}
		})
		b.Run(fmt.Sprintf("rows=%d/impl=compare", rows), func(b *testing.B) {
			b.ReportAllocs()
			defer cpuMetric(b, rows)()
			for b.Loop() {
				c := Compare(baseline, candidate)
				if c.Paired != rows {
					b.Fatalf("paired %d rows, want %d", c.Paired, rows)
				}
				benchSink = c
			}
		})
	}
}

// TestSummarizeStreamPeakHeap streams 100,000 generated rows (about 100 MB
// of JSON) from a loopback server that writes them one at a time, and
// summarises them with SummarizeStream, sampling the heap every 100 rows:
// the peak must stay under 16 MB, as for streaming alone. GC settings are
// fixed as in the root package's TestStreamingPeakHeap (GOGC=100, no memory
// limit, a collection first). Under -race or -short it streams 10,000 rows.
func TestSummarizeStreamPeakHeap(t *testing.T) {
	rows := 100_000
	if testing.Short() || raceEnabled {
		rows = 10_000
	}
	const limit = 16 << 20
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	var bodyBytes atomic.Int64
	c := newLoopbackClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		writeRows(7, rows, func(b []byte) bool {
			n, err := w.Write(b)
			bodyBytes.Add(int64(n))
			return err == nil
		})
	})
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	startInuse := ms.HeapInuse
	var peakInuse uint64
	n := 0
	sampled := func(yield func(models.EvaluationScenario, error) bool) {
		for s, err := range c.StreamEvaluationScenarios(context.Background(), "ev-big") {
			if n++; n%100 == 0 {
				runtime.ReadMemStats(&ms)
				peakInuse = max(peakInuse, ms.HeapInuse)
			}
			if !yield(s, err) {
				return
			}
		}
	}
	s, err := SummarizeStream(sampled)
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows != rows || len(s.Evaluators) != 3 {
		t.Fatalf("summarised %d rows and %d evaluators, want %d and 3", s.Rows, len(s.Evaluators), rows)
	}
	t.Logf("%d rows, %.1f MB of JSON: peak HeapInuse %.2f MB (%.2f MB at start)",
		rows, float64(bodyBytes.Load())/1e6, float64(peakInuse)/(1<<20), float64(startInuse)/(1<<20))
	if peakInuse >= limit {
		t.Errorf("peak HeapInuse while summarising %d streamed rows was %.2f MB, want under 16 MB", rows, float64(peakInuse)/(1<<20))
	}
}

// BenchmarkDistribution measures what exact percentiles cost the streaming
// summary: adding 100,000 latencies and reading P50 and P95, kept exact
// (impl=exact, the Accumulator's way up to 131,072 values) against the
// fixed histogram beyond that bound (impl=histogram), in the same process.
func BenchmarkDistribution(b *testing.B) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(5, 5))
	values := make([]float64, n)
	for i := range values {
		values[i] = math.Exp(rng.NormFloat64())
	}
	for _, impl := range []string{"exact", "histogram"} {
		b.Run("rows=100000/impl="+impl, func(b *testing.B) {
			b.ReportAllocs()
			defer cpuMetric(b, n)()
			for b.Loop() {
				var d distributionAccumulator
				if impl == "histogram" {
					d.buckets = make([]int, histogramBuckets)
				}
				for _, x := range values {
					d.add(x)
				}
				benchSink = d.distribution()
			}
		})
	}
}

// benchRepeats returns a generated run of cases test cases, each run
// repeats times in a row: the rows of a case share its inputs and expected
// answer (benchScenario's row generator), with answers of their own.
func benchRepeats(seed uint64, cases, repeats int) []models.EvaluationScenario {
	rng := rand.New(rand.NewPCG(seed, 10))
	rows := make([]models.EvaluationScenario, 0, cases*repeats)
	for i := range cases {
		for j := range repeats {
			s := benchScenario(rng, i)
			s.ID = fmt.Sprintf("%024x", i*repeats+j)
			rows = append(rows, s)
		}
	}
	return rows
}

// BenchmarkCompareRepeats compares 10,000 test cases run 3 times each
// (30,000 rows a side, Comparer.Repeats 3: rows grouped by case, each case
// compared once) beside today's comparison of 10,000 rows (repeats=1) and
// of the same 30,000 rows compared row by row (repeats=3/by-row), in the
// same process, a Comparer fed one row of each run in turn.
func BenchmarkCompareRepeats(b *testing.B) {
	const cases = 10_000
	for _, bench := range []struct {
		name        string
		rows, group int
	}{{"repeats=1", 1, 0}, {"repeats=3/by-row", 3, 0}, {"repeats=3/by-case", 3, 3}} {
		baseline, candidate := benchRepeats(1, cases, bench.rows), benchRepeats(2, cases, bench.rows)
		b.Run(bench.name, func(b *testing.B) {
			b.ReportAllocs()
			defer cpuMetric(b, len(baseline))()
			for b.Loop() {
				c := Comparer{Repeats: bench.group}
				for i := range baseline {
					c.AddBaseline(baseline[i])
					c.AddCandidate(candidate[i])
				}
				benchSink = c.Comparison()
			}
		})
	}
}

// BenchmarkCompareRepeatsRatio times, in each iteration, today's
// comparison of 10,000 rows and then that of 10,000 cases × 3 repeats
// (BenchmarkCompareRepeats' repeats=1 and repeats=3/by-case), each after a
// GC, and reports the median of the iterations' ratios (x-ratio) and the
// median time of each (base-ms, cases-ms): on a machine shared with other
// work, two runs timed back to back see the same load, where the
// benchmarks' blocks of iterations, one after the other, do not.
func BenchmarkCompareRepeatsRatio(b *testing.B) {
	const cases = 10_000
	rows := [2][2][]models.EvaluationScenario{
		{benchRepeats(1, cases, 1), benchRepeats(2, cases, 1)},
		{benchRepeats(1, cases, 3), benchRepeats(2, cases, 3)},
	}
	compare := func(runs [2][]models.EvaluationScenario, repeats int) time.Duration {
		runtime.GC()
		start := time.Now()
		c := Comparer{Repeats: repeats}
		for i := range runs[0] {
			c.AddBaseline(runs[0][i])
			c.AddCandidate(runs[1][i])
		}
		benchSink = c.Comparison()
		return time.Since(start)
	}
	var base, byCase, ratios []float64
	for b.Loop() {
		x, y := compare(rows[0], 0), compare(rows[1], 3)
		base, byCase = append(base, x.Seconds()*1e3), append(byCase, y.Seconds()*1e3)
		ratios = append(ratios, float64(y)/float64(x))
	}
	median := func(xs []float64) float64 {
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	b.ReportMetric(median(ratios), "x-ratio")
	b.ReportMetric(median(base), "base-ms")
	b.ReportMetric(median(byCase), "cases-ms")
}

// TestCompareRepeatsPeakHeap feeds a Comparer with Repeats 3 the rows of
// 20,000 cases a side (120,000 rows, generated one at a time, a case's
// repeats in a row, as a listing in test-set order gives them), sampling
// the heap every 100 rows: a case is settled once both sides have its 3
// rows, so the peak stays under 16 MB, as for streaming alone, with a few
// bytes a case kept to find a case listed more than 3 times.
func TestCompareRepeatsPeakHeap(t *testing.T) {
	cases := 20_000
	if testing.Short() || raceEnabled {
		cases = 2_000
	}
	const limit = 16 << 20
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	startInuse := ms.HeapInuse
	var peakInuse uint64
	c := Comparer{Repeats: 3}
	rngs := [2]*rand.Rand{rand.New(rand.NewPCG(1, 10)), rand.New(rand.NewPCG(2, 10))}
	n := 0
	for i := range cases {
		for j := range 3 {
			for side, add := range []func(models.EvaluationScenario){c.AddBaseline, c.AddCandidate} {
				s := benchScenario(rngs[side], i)
				s.ID = fmt.Sprintf("%024x", i*3+j)
				add(s)
				if n++; n%100 == 0 {
					runtime.ReadMemStats(&ms)
					peakInuse = max(peakInuse, ms.HeapInuse)
				}
			}
		}
	}
	cmp := c.Comparison()
	if cmp.Paired != cases || cmp.Unpaired != 0 || cmp.CandidateRepeats != 0 {
		t.Fatalf("paired %d cases, %d unpaired, %d repeats beyond 3; want %d, 0, 0", cmp.Paired, cmp.Unpaired, cmp.CandidateRepeats, cases)
	}
	t.Logf("%d cases × 3 repeats a side: peak HeapInuse %.2f MB (%.2f MB at start)", cases, float64(peakInuse)/(1<<20), float64(startInuse)/(1<<20))
	if peakInuse >= limit {
		t.Errorf("peak HeapInuse while comparing %d cases × 3 repeats was %.2f MB, want under 16 MB", cases, float64(peakInuse)/(1<<20))
	}
}
