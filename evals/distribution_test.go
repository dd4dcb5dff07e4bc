package evals

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// The type-7 P95 of 19,000 values of 1 and 1,000 of 1,000 is 50.95: with
// h = (n−1)·0.95 in floating point, the answer was 50.949999999273, and
// "latency.p95 < 50.95" held.
func TestPercentileExactAtTheLimit(t *testing.T) {
	rows := make([]models.EvaluationScenario, 20_000)
	for i := range rows {
		latency := 1.0
		if i%20 == 7 {
			latency = 1000
		}
		rows[i] = answered(fmt.Sprint(i), "x", "x", 0, latency)
	}
	streamed, _ := SummarizeStream(seqOf(rows))
	for _, s := range []Summary{Summarize(rows), streamed} {
		if s.Latency.P95 != 50.95 {
			t.Errorf("P95 = %.17g, want 50.95", s.Latency.P95)
		}
		if _, err := Check(s, nil, nil, Gate{Measure: MeasureLatencyP95, Op: Below, Limit: 50.95}); err == nil {
			t.Error("latency.p95 < 50.95 held where the P95 is 50.95")
		}
	}
	// n − 1 multiples of 20 and of 2 land on an order statistic.
	for _, n := range []int{1, 2, 3, 21, 41, 101} {
		var d distributionAccumulator
		for i := range n {
			d.add(float64(i))
		}
		got := d.distribution()
		if want := 0.95 * float64(n-1); got.P95 != want && !closeTo(got.P95, want, 1e-12) {
			t.Errorf("n=%d: P95 = %v, want %v", n, got.P95, want)
		}
		if want := 0.5 * float64(n-1); got.P50 != want {
			t.Errorf("n=%d: P50 = %v, want %v", n, got.P50, want)
		}
	}
}

// Past exactValues, an Accumulator estimates percentiles within 0.5%: a
// gate must not pass on the estimate when the exact value fails it. With
// 190,000 latencies of 1 s and 10,000 of 2 s the type-7 P95 is 1.05; the
// histogram's estimate was 1.045, and "latency.p95 <= 1.049" held.
func TestEstimatedPercentileNeverPassesAFailingGate(t *testing.T) {
	const n = 200_000
	streamed, err := SummarizeStream(func(yield func(models.EvaluationScenario, error) bool) {
		for i := range n {
			latency := 1.0
			if i%20 == 3 {
				latency = 2
			}
			if !yield(answered(fmt.Sprint(i), "x", "x", 0, latency), nil) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !streamed.Latency.Approximate || !closeTo(streamed.Latency.P95, 1.05, 0.005) {
		t.Fatalf("the streamed P95 of %d values = %v (approximate %v), want an estimate within 0.5%% of 1.05", n, streamed.Latency.P95, streamed.Latency.Approximate)
	}
	for _, c := range []struct {
		gate Gate
		pass bool
	}{
		{MaxP95Latency(1.049), false}, // the exact 1.05 fails it
		{Gate{Measure: MeasureLatencyP95, Op: Below, Limit: 1.05}, false},
		{MaxP95Latency(1.06), true}, // beyond the estimate's error
		{Gate{Measure: MeasureLatencyP95, Op: AtLeast, Limit: 1.051}, false},
		{Gate{Measure: MeasureLatencyP95, Op: AtLeast, Limit: 1.03}, true},
	} {
		results, _ := Check(streamed, nil, nil, c.gate)
		if r := results[0]; r.Passed != c.pass {
			t.Errorf("%s = %s, want passed %v", c.gate, r, c.pass)
		} else if !strings.Contains(r.Detail, "estimated") {
			t.Errorf("%s says %q, want it to say the percentile is estimated", c.gate, r)
		}
	}
}

func TestP95Of20000Rows(t *testing.T) {
	rows := make([]models.EvaluationScenario, 20_000)
	for i := range rows {
		latency := 1.0
		if i%20 == 7 {
			latency = 1000 // 5% of rows
		}
		rows[i] = answered(fmt.Sprint(i), "x", "x", 0, latency)
	}
	// R: quantile(c(rep(1, 19000), rep(1000, 1000)), 0.95) = 50.95.
	if got := Summarize(rows).Latency.P95; !closeTo(got, 50.95, 1e-9) {
		t.Errorf("Summarize P95 = %v, want 50.95", got)
	}
	streamed, err := SummarizeStream(seqOf(rows))
	if err != nil {
		t.Fatal(err)
	}
	if got := streamed.Latency.P95; !closeTo(got, 50.95, 1e-9) {
		t.Errorf("SummarizeStream P95 = %v, want 50.95", got)
	}
	if got := streamed.Latency.P50; got != 1 {
		t.Errorf("P50 = %v, want 1", got)
	}
}

// TestPercentilesPastTheExactBound: past exactValues the Accumulator
// folds its values into the histogram; every percentile stays within
// 0.5% of the exact type-7 one, interpolation included, and Summarize
// stays exact.
func TestPercentilesPastTheExactBound(t *testing.T) {
	n := exactValues + 68_928 // 200,000
	values := make([]float64, n)
	for i := range values {
		values[i] = 1
		if i%20 == 7 {
			values[i] = 1000
		}
	}
	var bounded, exact distributionAccumulator
	exact.unbounded = true
	for _, x := range values {
		bounded.add(x)
		exact.add(x)
	}
	if bounded.buckets == nil || exact.buckets != nil {
		t.Fatalf("after %d values the bounded accumulator has no histogram, or the exact one has", n)
	}
	// type 7 at h = 199999·0.95 = 189999.05: 1 + 0.05·999.
	if got := exact.distribution().P95; !closeTo(got, 50.95, 1e-9) {
		t.Errorf("exact P95 = %v, want 50.95", got)
	}
	if got := bounded.distribution().P95; !closeTo(got, 50.95, 0.005) {
		t.Errorf("histogram P95 = %v, want within 0.5%% of 50.95", got)
	}
}
