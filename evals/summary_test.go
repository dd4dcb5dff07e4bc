package evals

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

func TestSummarize(t *testing.T) {
	_, candidate := capitalsRuns()
	s := Summarize(candidate.Scenarios)
	if s.Rows != 8 || s.AppErrors != 1 {
		t.Fatalf("Rows, AppErrors = %d, %d; want 8, 1", s.Rows, s.AppErrors)
	}
	exact := s.Evaluators[exactMatch.ID]
	// Nigeria's error counts as a fail: the pass rate is over all 8 rows.
	if exact.Count != 7 || exact.Errors != 1 || exact.Missing != 0 || !exact.Bool || exact.Mean != 6.0/8 || exact.Passed() != 6 || exact.Rows() != 8 {
		t.Errorf("exact match = %+v, want 7 bool values and 1 error, pass rate 6/8", exact)
	}
	if low, high := WilsonInterval(6, 8, 0.95); exact.Low != low || exact.High != high {
		t.Errorf("exact match interval = (%v, %v), want Wilson's (%v, %v)", exact.Low, exact.High, low, high)
	}
	edit := s.Evaluators[editDistance.ID]
	// Sydney against Canberra is 7 edits; every other answer is right.
	if edit.Count != 7 || edit.Bool || edit.Mean != 1 {
		t.Errorf("edit distance = %+v, want 7 numbers with mean 1", edit)
	}
	// sd of {7,0,0,0,0,0,0} is √7; t(0.975, 6) = 2.446911851 (R's qt).
	half := 2.446911851 * math.Sqrt(7) / math.Sqrt(7)
	if !closeTo(edit.Low, 1-half, 1e-9) || !closeTo(edit.High, 1+half, 1e-9) {
		t.Errorf("edit distance interval = (%v, %v), want (%v, %v)", edit.Low, edit.High, 1-half, 1+half)
	}
	if got := s.EvaluatorIDs; !slices.Equal(got, []string{editDistance.ID, exactMatch.ID}) && !slices.Equal(got, []string{exactMatch.ID, editDistance.ID}) {
		t.Errorf("EvaluatorIDs = %v, want both evaluators once", got)
	}
	// Latencies 0.4 … 1.1 without Nigeria's row (0.9).
	if s.Latency.Count != 7 || !closeTo(s.Latency.Max, 1.1, 1e-12) {
		t.Errorf("Latency = %+v, want 7 values up to 1.1", s.Latency)
	}
}

func TestSummarizeEdgeCases(t *testing.T) {
	empty := Summarize(nil)
	if empty.Rows != 0 || len(empty.Evaluators) != 0 || empty.Cost != (Distribution{}) {
		t.Errorf("Summarize(nil) = %+v, want zeros", empty)
	}
	rows := []models.EvaluationScenario{
		answered("France", "Paris", "Paris", 0, 1, textResult("critique", "8/10"), errorResult("broken", "boom")),
		answered("Japan", "Tokyo", "Tokyo", 0, 1, numberResult("one", 3)),
	}
	s := Summarize(rows)
	if m := s.Evaluators["critique"]; m.Count != 0 || m.Other != 1 || !math.IsNaN(m.Mean) || !math.IsNaN(m.Low) {
		t.Errorf("a text-only evaluator = %+v, want Count 0, Other 1 and NaN mean and interval", m)
	}
	if m := s.Evaluators["broken"]; m.Count != 0 || m.Errors != 1 {
		t.Errorf("an error-only evaluator = %+v, want Count 0, Errors 1", m)
	}
	if m := s.Evaluators["one"]; m.Count != 1 || m.Mean != 3 || !math.IsNaN(m.Low) || !math.IsNaN(m.High) {
		t.Errorf("a number evaluator with one value = %+v, want mean 3 and no interval", m)
	}
	if s.Cost.Count != 2 || s.Cost.Sum != 0 || s.Cost.P95 != 0 {
		t.Errorf("zero costs = %+v, want 2 values summing to 0", s.Cost)
	}
}

func TestDistributionExact(t *testing.T) {
	// R: quantile(1:10, c(0.5, 0.95)) gives 5.5 and 9.55 (type 7).
	var d distributionAccumulator
	for _, x := range []float64{7, 3, 10, 1, 9, 2, 8, 4, 6, 5} {
		d.add(x)
	}
	got := d.distribution()
	want := Distribution{Count: 10, Sum: 55, Mean: 5.5, P50: 5.5, P95: 9.55, Max: 10}
	if got.Count != want.Count || got.Sum != want.Sum || got.Mean != want.Mean || got.P50 != want.P50 || !closeTo(got.P95, want.P95, 1e-12) || got.Max != want.Max {
		t.Errorf("distribution of 1…10 = %+v, want %+v", got, want)
	}
	var one distributionAccumulator
	one.add(0.25)
	if got := one.distribution(); got.P50 != 0.25 || got.P95 != 0.25 || got.Max != 0.25 {
		t.Errorf("distribution of one value = %+v, want every statistic 0.25", got)
	}
}

// TestDistributionBounded feeds 200,000 values: past the exact range the
// percentiles stay within 0.5% and the memory stops growing.
func TestDistributionBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var d distributionAccumulator
	values := make([]float64, 200_000)
	for i := range values {
		values[i] = math.Exp(rng.NormFloat64()) // log-normal latencies
		if i%1000 == 0 {
			values[i] = 0 // some free rows
		}
		d.add(values[i])
	}
	if d.values != nil || len(d.buckets) != histogramBuckets {
		t.Fatalf("after 200,000 values the accumulator holds %d values and %d buckets, want 0 and %d", len(d.values), len(d.buckets), histogramBuckets)
	}
	got := d.distribution()
	slices.Sort(values)
	for _, q := range []struct {
		name string
		got  float64
		p    float64
	}{{"P50", got.P50, 0.5}, {"P95", got.P95, 0.95}} {
		h := float64(len(values)-1) * q.p
		exact := values[int(h)]
		if !closeTo(q.got, exact, 0.005) {
			t.Errorf("%s = %v, exact order statistic %v: more than 0.5%% off", q.name, q.got, exact)
		}
	}
	if got.Max != values[len(values)-1] {
		t.Errorf("Max = %v, want %v", got.Max, values[len(values)-1])
	}
}

func TestSummarizeStream(t *testing.T) {
	_, candidate := capitalsRuns()
	seq := func(yield func(models.EvaluationScenario, error) bool) {
		for _, s := range candidate.Scenarios {
			if !yield(s, nil) {
				return
			}
		}
	}
	got, err := SummarizeStream(seq)
	if err != nil {
		t.Fatal(err)
	}
	want := Summarize(candidate.Scenarios)
	if got.Rows != want.Rows || got.Evaluators[exactMatch.ID] != want.Evaluators[exactMatch.ID] || got.Latency != want.Latency {
		t.Errorf("SummarizeStream = %+v, want what Summarize gives: %+v", got, want)
	}

	boom := errors.New("connection reset")
	broken := iter.Seq2[models.EvaluationScenario, error](func(yield func(models.EvaluationScenario, error) bool) {
		if yield(candidate.Scenarios[0], nil) {
			yield(models.EvaluationScenario{}, boom)
		}
	})
	partial, err := SummarizeStream(broken)
	if !errors.Is(err, boom) || partial.Rows != 1 {
		t.Errorf("SummarizeStream of a broken stream = %d rows, %v; want 1 row and the stream's error", partial.Rows, err)
	}
}

// TestQuantileMatchesSorting checks the type-7 percentiles of kept values
// against sorting, on random data with ties, at every size up to 300.
func TestQuantileMatchesSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	for n := 1; n <= 300; n++ {
		var d distributionAccumulator
		values := make([]float64, n)
		for i := range values {
			values[i] = float64(rng.IntN(1+n/3)) / 4
			d.add(values[i])
		}
		slices.Sort(values)
		for _, percent := range []int{0, 5, 50, 95, 99, 100} {
			q := float64(percent) / 100
			h := float64(n-1) * q
			lo := int(math.Floor(h))
			want := values[lo]
			if lo+1 < n {
				want += (h - float64(lo)) * (values[lo+1] - values[lo])
			}
			if got := d.quantile(percent); !closeTo(got, want, 1e-12) {
				t.Fatalf("n = %d, q = %v: quantile %v, sorting gives %v", n, q, got, want)
			}
		}
	}
}

// withID gives a row its scenario id.
func withID(s models.EvaluationScenario, id string) models.EvaluationScenario {
	s.ID = id
	return s
}

// A run that lists a scenario twice counts it once, as its first row: a
// repeated pass inflates neither the pass rate nor the mean, and a
// repeated app error not the app errors; rows without an id (a 2026 test
// case no scenario ran) are each a row of their own.
func TestSummarizeCountsAScenarioOnce(t *testing.T) {
	rows := []models.EvaluationScenario{
		withID(answered("France", "Paris", "Paris", 1, 1, boolResult("exact", true), numberResult("score", 1)), "s1"),
		withID(answered("Japan", "Tokyo", "Kyoto", 1, 1, boolResult("exact", false), numberResult("score", 0)), "s2"),
		withID(answered("France", "Paris", "Paris", 1, 1, boolResult("exact", true), numberResult("score", 1)), "s1"),
		withID(answered("France", "Paris", "Paris", 1, 1, boolResult("exact", true), numberResult("score", 1)), "s1"),
		withID(failedRow("Peru", "boom", "exact", "score"), "s3"),
		withID(failedRow("Peru", "boom", "exact", "score"), "s3"),
		answered("Chad", "N'Djamena", "N'Djamena", 1, 1, boolResult("exact", true), numberResult("score", 1)),
		answered("Chad", "N'Djamena", "N'Djamena", 1, 1, boolResult("exact", true), numberResult("score", 1)),
	}
	var a Accumulator
	for _, r := range rows {
		a.Add(r)
	}
	streamed, err := SummarizeStream(seqOf(rows))
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Summary{"Summarize": Summarize(rows), "Accumulator": a.Summary(), "SummarizeStream": streamed} {
		if s.Rows != 5 || s.Duplicates != 3 || s.DuplicateID != "s1" || s.AppErrors != 1 {
			t.Errorf("%s: Rows %d, Duplicates %d (first %q), AppErrors %d; want 5 rows, 3 duplicates (first s1), 1 app error",
				name, s.Rows, s.Duplicates, s.DuplicateID, s.AppErrors)
		}
		if m := s.Evaluators["exact"]; m.Mean != 3.0/5 || m.Passed() != 3 || m.Errors != 1 {
			t.Errorf("%s: exact = %+v, want 3 passes of 5 rows, 1 error", name, m)
		}
		if m := s.Evaluators["score"]; m.Mean != 3.0/4 || m.Count != 4 {
			t.Errorf("%s: score = %+v, want mean 3/4 over 4 values", name, m)
		}
		if s.Cost.Count != 4 || s.Cost.Sum != 4 {
			t.Errorf("%s: cost = %+v, want 4 rows costing 4", name, s.Cost)
		}
	}
}

// A row that holds no answer of the app and no error (the 2024 shape with
// "outputs": [], an output without a value, or a 2026 row whose trace
// gave null) is no evidence that the app answered: it counts as an app
// error, and its evaluators' results, whatever they say, as errors; in a
// comparison the candidate lacks a value there.
func TestRowWithoutOutputCountsAgainst(t *testing.T) {
	pass := []models.ScenarioResult{boolResult("exact", true)}
	withOutputs := func(outputs ...models.Output) models.EvaluationScenario {
		s := answered("France", "Paris", "Paris", 1, 1, pass...)
		s.Outputs = outputs
		return s
	}
	tests := []struct {
		name string
		row  models.EvaluationScenario
	}{
		{"no outputs (2024)", withOutputs()},
		{"an output without a value", withOutputs(models.Output{Result: models.Result{Type: "text"}})},
		{"an output of null (2026 trace)", withOutputs(models.Output{Result: models.Result{Type: "json", Value: json.RawMessage("null")}})},
		{"a missing output (2026, no trace)", withOutputs(models.Output{Result: models.Result{Type: models.ResultTypeMissing, Error: &models.Error{Message: "output missing"}}})},
	}
	baseline := []models.EvaluationScenario{answered("France", "Paris", "Paris", 1, 1, pass...), answered("Japan", "Tokyo", "Tokyo", 1, 1, pass...)}
	for _, tt := range tests {
		rows := []models.EvaluationScenario{tt.row, answered("Japan", "Tokyo", "Tokyo", 1, 1, pass...)}
		s := Summarize(rows)
		if m := s.Evaluators["exact"]; s.AppErrors != 1 || m.Errors != 1 || m.Mean != 0.5 {
			t.Errorf("%s: %d app errors, exact %+v; want 1 app error, and a pass rate of 1/2 with the row an error", tt.name, s.AppErrors, m)
		}
		c := Compare(baseline, rows)
		if d := c.Evaluators["exact"]; c.CandidateAppErrors != 1 || d.CandidateLacks != 1 || d.Worse(HigherIsBetter) != 1 {
			t.Errorf("%s: compared, %d candidate app errors, delta %+v; want 1, and the row worse", tt.name, c.CandidateAppErrors, d)
		}
		r := NewReport(Run{Scenarios: baseline}, Run{Scenarios: rows})
		if err := r.Check(MaxAppErrors(0)); !errors.Is(err, ErrGateFailed) {
			t.Errorf("%s: app_errors <= 0 = %v, want it failed", tt.name, err)
		}
		var jsonl strings.Builder
		if err := r.WriteJSONLines(&jsonl); err != nil {
			t.Fatal(err)
		}
		if tt.row.Failed() == false && !strings.Contains(jsonl.String(), `"app_error":"no output`) {
			t.Errorf("%s: the JSON Lines do not say the row has no output:\n%s", tt.name, jsonl.String())
		}
	}
}

// The set of scenario ids keeps every id through its growth: each of
// 100,000 ids is new once, and a repeat after that.
func TestScenarioIDs(t *testing.T) {
	var ids scenarioIDs
	const n = 100000
	for round, want := range []bool{true, false} {
		for i := range n {
			if got := ids.first(fmt.Sprintf("0190b5a2-%04x-7000-8000-%012x", i>>16, i)); got != want {
				t.Fatalf("round %d, id %d: first = %v, want %v", round, i, got, want)
			}
		}
	}
	for range 2 {
		if !ids.first("") {
			t.Error("a row without an id is not always new")
		}
	}
	if ids.n != n || len(ids.slots) != 262144 {
		t.Errorf("%d ids in %d slots, want %d in 262144 (at most 3/4 full)", ids.n, len(ids.slots), n)
	}
}
