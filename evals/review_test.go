package evals

// Tests of the acceptance review of issue 16: ways a broken candidate still
// passed a gate after the first round.

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// rightRow is row i of twentyRuns' baseline: right on every evaluator.
func rightRow(i int) models.EvaluationScenario {
	country := fmt.Sprintf("C%02d", i+1)
	return answered(country, "Capital of "+country, "Capital of "+country, 0.001, 1,
		boolResult(exactMatch.ID, true), numberResult(scoreConfig.ID, 1))
}

// wrongRow is row i answered wrong: exact match false, score 0.
func wrongRow(i int) models.EvaluationScenario {
	country := fmt.Sprintf("C%02d", i+1)
	return answered(country, "Capital of "+country, "wrong", 0.001, 1,
		boolResult(exactMatch.ID, false), numberResult(scoreConfig.ID, 0))
}

// A candidate run that lacks rows the baseline has (a run cut short, a
// list the service sent short) measured its gates on the rows it has: 2
// right rows of 20 passed every gate on the candidate alone. The rows the
// baseline has and the candidate lacks count as missing for the candidate.
func TestTruncatedCandidateFailsItsOwnGates(t *testing.T) {
	baseline, _ := twentyRuns(func(i int, country string) models.EvaluationScenario { return rightRow(i) })
	candidate := Run{Evaluation: evaluationOf("eval-cand", "next", exactMatch, scoreConfig),
		Scenarios: []models.EvaluationScenario{rightRow(0), rightRow(1)}}
	r := NewReport(baseline, candidate)
	gates := []Gate{
		MinMean("Exact match", 0.9), MinMean("score", 0.5), MaxAppErrors(0), NoMoreAppErrorsThanBaseline(),
		MaxP95Latency(2), MaxMeanCost(1), {Measure: MeasureErrors, Evaluator: "Exact match", Op: AtMost, Limit: 0},
	}
	err := r.Check(gates...)
	var ge *GateError
	if !errors.As(err, &ge) || len(ge.Failed) != len(gates) {
		t.Fatalf("Check of a candidate with 2 of the baseline's 20 rows = %v, want all %d gates failed", err, len(gates))
	}
	for _, g := range r.Gates {
		if !strings.Contains(g.String(), "18") {
			t.Errorf("%s, want it to name the 18 rows the candidate lacks", g)
		}
	}
	if g := r.Gates[0]; g.Measured != 0.1 {
		t.Errorf("the pass rate over the baseline's 20 rows = %v, want 0.1", g.Measured)
	}
	// Accepting them takes saying so, as for failed rows.
	if err := r.Check(MinMean("Exact match", 0.9).AllowingFailedRows(18), MaxP95Latency(2).AllowingFailedRows(18)); err != nil {
		t.Errorf("the gates allowing 18 failed rows = %v, want them to hold on the 2 rows there are", err)
	}
	// The Go check without a report says the same.
	if _, err := Check(r.CandidateSummary, r.Comparison, r.Evaluators, MinMean("Exact match", 0.9)); err == nil {
		t.Error("Check(summary, comparison) passed a candidate that lacks 18 rows")
	}
}

// Rows of the candidate without a partner in the baseline (a list with
// rows twice, a run of another test set) are no evidence that the
// candidate did better: they once counted as better rows and pulled the
// regression p of a candidate worse on 6 rows up to 0.999.
func TestExtraCandidateRowsAreNoEvidence(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		if i < 6 {
			return wrongRow(i)
		}
		return rightRow(i)
	})
	for i := range 20 {
		candidate.Scenarios = append(candidate.Scenarios, rightRow(i))
	}
	r := NewReport(baseline, candidate)
	c := r.Comparison
	if c.UnpairedCandidate != 20 || c.Paired != 20 {
		t.Fatalf("paired %d, unpaired candidate rows %d, want 20 and 20", c.Paired, c.UnpairedCandidate)
	}
	for _, id := range []string{exactMatch.ID, scoreConfig.ID} {
		d := c.Evaluators[id]
		if d.Better(HigherIsBetter) != 0 || d.Worse(HigherIsBetter) != 6 || d.CandidateOnly != 20 || d.Baseline.Missing != 20 {
			t.Errorf("%s: better %d, worse %d, candidate-only %d, baseline missing %d; want 0, 6, 20, 20", id,
				d.Better(HigherIsBetter), d.Worse(HigherIsBetter), d.CandidateOnly, d.Baseline.Missing)
		}
		// The same p as the 20 paired rows alone give.
		alone := Compare(baseline.Scenarios, candidate.Scenarios[:20]).Evaluators[id]
		if d.RegressionP(HigherIsBetter) != alone.RegressionP(HigherIsBetter) || d.PValue != alone.PValue {
			t.Errorf("%s: regression p %v (two-sided %v), want %v (%v) as without the extra rows", id,
				d.RegressionP(HigherIsBetter), d.PValue, alone.RegressionP(HigherIsBetter), alone.PValue)
		}
	}
	if err := r.Check(NoSignificantRegression("Exact match", 0.05), NoSignificantRegression("score", 0.05)); err == nil {
		t.Error("regression_p >= 0.05 held for a candidate worse on 6 of 20 rows, better on none, with 20 rows twice")
	}
}

// A gate allowing as many failed rows as there are rows measured nothing:
// worse(...) and regression_p(...) passed on a candidate that failed on
// every row. A comparison without a row valued on both sides is no
// evidence.
func TestAllowingEveryRowLeavesNothingToCompare(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		return failedRow(country, "boom", exactMatch.ID, scoreConfig.ID)
	})
	r := NewReport(baseline, candidate)
	gates := []Gate{
		MaxWorseRows("Exact match", 0).AllowingFailedRows(20), NoSignificantRegression("Exact match", 0.05).AllowingFailedRows(20),
		MaxWorseRows("score", 0).AllowingFailedRows(25), NoSignificantRegression("score", 0.05).AllowingFailedRows(20),
	}
	err := r.Check(gates...)
	var ge *GateError
	if !errors.As(err, &ge) || len(ge.Failed) != len(gates) {
		t.Fatalf("Check = %v, want all %d gates failed", err, len(gates))
	}
	for _, g := range r.Gates {
		if !strings.Contains(g.Reason, "no row with a value on both sides") {
			t.Errorf("%s: reason %q, want it to say no row has a value on both sides", g.Gate, g.Reason)
		}
	}
	// One row left to compare is evidence, and the allowance applies.
	baseline, candidate = twentyRuns(func(i int, country string) models.EvaluationScenario {
		if i == 0 {
			return rightRow(i)
		}
		return failedRow(country, "boom", exactMatch.ID, scoreConfig.ID)
	})
	if err := NewReport(baseline, candidate).Check(MaxWorseRows("Exact match", 0).AllowingFailedRows(19)); err != nil {
		t.Errorf("worse(Exact match) <= 0 allowing 19 failed rows, with 1 row tied = %v, want it to hold", err)
	}
}

// The service names only the evaluators with a value on some row whose
// app call answered. When every call of a lone candidate failed, it names
// none: a gate by name then looked like a typo (exit 2 in the command),
// where the candidate is to blame.
func TestUnnamedEvaluatorIsNotATypo(t *testing.T) {
	_, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		return failedRow(country, "boom", exactMatch.ID, scoreConfig.ID)
	})
	candidate.Evaluation.AggregatedResults = nil // as the service sends it
	r := NewReport(Run{}, candidate)
	err := r.Check(MinMean("Exact match", 0.9))
	if !errors.Is(err, ErrGateFailed) || errors.Is(err, ErrInvalidGate) {
		t.Fatalf("Check by name with unnamed evaluators = %v, want a gate failure, not an invalid gate", err)
	}
	if g := r.Gates[0]; !strings.Contains(g.Reason, exactMatch.ID) || !strings.Contains(g.Reason, "no value") {
		t.Errorf("reason %q, want it to name the evaluators without a name and say why", g.Reason)
	}
	// A name close to a known one is still a typo, and so is any name
	// when every evaluator has a name.
	_, named := twentyRuns(func(i int, country string) models.EvaluationScenario { return rightRow(i) })
	if err := NewReport(Run{}, named).Check(MinMean("Exact mach", 0.9)); !errors.Is(err, ErrInvalidGate) {
		t.Errorf("a typo with every evaluator named = %v, want an invalid gate", err)
	}
	if err := NewReport(Run{}, named).Check(MinMean("Accuracy", 0.9)); !errors.Is(err, ErrInvalidGate) {
		t.Errorf("an unknown name with every evaluator named = %v, want an invalid gate", err)
	}
}

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

// A run still going has not written all its rows: judging the rows read
// so far (a Go caller who reads the scenarios without waiting) passed the
// two right rows of twenty as a pass rate of 1.
func TestRunStillGoingIsNotJudged(t *testing.T) {
	_, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario { return rightRow(i) })
	candidate.Scenarios = candidate.Scenarios[:2]
	for _, status := range []string{models.EvaluationInitialized, models.EvaluationStarted} {
		candidate.Evaluation.Status = models.Result{Type: models.ResultTypeStatus, Value: []byte(`"` + status + `"`)}
		r := NewReport(Run{}, candidate)
		err := r.Check(MinMean("Exact match", 0.9))
		if !errors.Is(err, ErrGateFailed) || !strings.Contains(r.Gates[0].Reason, "still "+status) {
			t.Errorf("a run %s: Check = %v, want the gate failed because the run is still going", status, err)
		}
	}
}
