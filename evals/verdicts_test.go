package evals

// Tests of issue 16: absence of evidence is never success. Errored, missing
// and unpaired rows count against the candidate; the direction of a
// regression comes from the test itself; rows pair by inputs and expected
// answers; percentiles are exact.

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

var scoreConfig = models.EvaluatorConfig{ID: "ev-score", Name: "score", EvaluatorKey: "auto_similarity_score"}

// twentyRuns returns a baseline right on 20 rows (exact match true, score
// 1) and a candidate built by row: each row's results, or an app error.
func twentyRuns(candidateRow func(i int, country string) models.EvaluationScenario) (Run, Run) {
	var baseline, candidate Run
	for i := range 20 {
		country := fmt.Sprintf("C%02d", i+1)
		baseline.Scenarios = append(baseline.Scenarios, answered(country, "Capital of "+country, "Capital of "+country, 0.001, 1,
			boolResult(exactMatch.ID, true), numberResult(scoreConfig.ID, 1)))
		candidate.Scenarios = append(candidate.Scenarios, candidateRow(i, country))
	}
	baseline.Evaluation = evaluationOf("eval-base", "prod", exactMatch, scoreConfig)
	candidate.Evaluation = evaluationOf("eval-cand", "next", exactMatch, scoreConfig)
	return baseline, candidate
}

// issueGates are the gates of issue 16 that a broken candidate passed.
var issueGates = []Gate{
	MinMean("Exact match", 0.9),
	MaxWorseRows("Exact match", 0),
	NoSignificantRegression("Exact match", 0.05),
	MinMean("score", 0.5),
	MaxWorseRows("score", 0),
}

func TestErroredCandidateFailsEveryGate(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		if i >= 2 {
			return failedRow(country, "model overloaded", exactMatch.ID, scoreConfig.ID)
		}
		return answered(country, "Capital of "+country, "Capital of "+country, 0.001, 1,
			boolResult(exactMatch.ID, true), numberResult(scoreConfig.ID, 1))
	})
	r := NewReport(baseline, candidate)
	err := r.Check(issueGates...)
	var ge *GateError
	if !errors.As(err, &ge) || len(ge.Failed) != len(issueGates) || errors.Is(err, ErrInvalidGate) {
		t.Fatalf("Check = %v, want every one of the %d gates failed, none invalid", err, len(issueGates))
	}
	want := []struct {
		measured float64
		says     string
	}{
		{0.1, "18 of 20 rows without a value (18 errored), counted as fails"},
		{18, "18 rows without a candidate value counted as worse"},
		{math.NaN(), ""}, // p: checked below
		{math.NaN(), `18 of 20 rows without a value (18 errored); accept them with "allowing 18 failed rows"`},
		{18, "18 rows without a candidate value counted as worse"},
	}
	for i, w := range want {
		g := r.Gates[i]
		if !math.IsNaN(w.measured) && !closeTo(g.Measured, w.measured, 1e-12) {
			t.Errorf("%s measured %v, want %v", g.Gate, g.Measured, w.measured)
		}
		if !strings.Contains(g.String(), w.says) {
			t.Errorf("%s says %q, want it to say %q", g.Gate, g.String(), w.says)
		}
	}
	// 18 discordant pairs, all worse: P(X ≥ 18) = 2⁻¹⁸.
	if p := r.Gates[2].Measured; !closeTo(p, math.Pow(2, -18), 1e-9) {
		t.Errorf("regression p = %v, want 2^-18", p)
	}
	m := r.CandidateSummary.Evaluators[exactMatch.ID]
	if m.Errors != 18 || m.Count != 2 || m.Mean != 0.1 || m.Missing != 0 {
		t.Errorf("the candidate's exact match = %+v, want 2 values, 18 errors, pass rate 0.1", m)
	}
	// The one way to accept them: say so, per gate.
	if err := r.Check(MinMean("Exact match", 0.9).AllowingFailedRows(18), MinMean("score", 0.5).AllowingFailedRows(18),
		MaxWorseRows("score", 0).AllowingFailedRows(18), NoSignificantRegression("Exact match", 0.05).AllowingFailedRows(18)); err != nil {
		t.Errorf("gates allowing 18 failed rows = %v, want them to hold on the 2 rows that answered", err)
	}
	if err := r.Check(MinMean("score", 0.5).AllowingFailedRows(17)); err == nil {
		t.Error("a gate allowing 17 failed rows held with 18")
	}
}

func TestMissingResultsFailEveryGate(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		if i >= 2 {
			// The app answered; the evaluators gave no result.
			return answered(country, "Capital of "+country, "Capital of "+country, 0.001, 1)
		}
		return answered(country, "Capital of "+country, "Capital of "+country, 0.001, 1,
			boolResult(exactMatch.ID, true), numberResult(scoreConfig.ID, 1))
	})
	r := NewReport(baseline, candidate)
	err := r.Check(issueGates...)
	var ge *GateError
	if !errors.As(err, &ge) || len(ge.Failed) != len(issueGates) {
		t.Fatalf("Check = %v, want every gate failed", err)
	}
	if m := r.CandidateSummary.Evaluators[scoreConfig.ID]; m.Missing != 18 || m.Errors != 0 || m.Count != 2 {
		t.Errorf("the candidate's score = %+v, want 2 values and 18 missing", m)
	}
	if !strings.Contains(r.Gates[0].Detail, "18 missing") || !strings.Contains(r.Gates[3].Reason, "18 missing") {
		t.Errorf("the gates say %q and %q, want the 18 missing rows named", r.Gates[0].Detail, r.Gates[3].Reason)
	}
	d := r.Comparison.Evaluators[scoreConfig.ID]
	if d.CandidateLacks != 18 || d.Worse(HigherIsBetter) != 18 || d.Tied != 2 {
		t.Errorf("score delta = %+v, want 18 rows worse for lacking a value, 2 tied", d)
	}
	// Missing on both sides is a tie.
	both := Compare(candidate.Scenarios, candidate.Scenarios).Evaluators[scoreConfig.ID]
	if both.BothLack != 18 || both.Worse(HigherIsBetter) != 0 || both.Better(HigherIsBetter) != 0 || both.RegressionP(HigherIsBetter) != 1 {
		t.Errorf("a run with missing rows against itself = %+v, want 18 ties, nothing worse, p = 1", both)
	}
}

func TestEmptyRunFailsEveryGate(t *testing.T) {
	baseline, _ := capitalsRuns()
	empty := Run{Evaluation: evaluationOf("eval-empty", "empty")}
	r := NewReport(baseline, empty)
	err := r.Check(MaxAppErrors(0), MaxP95Latency(10), MaxWorseRows("Exact match", 0), NoMoreAppErrorsThanBaseline())
	var ge *GateError
	if !errors.As(err, &ge) || len(ge.Failed) != 4 {
		t.Fatalf("Check of an empty candidate = %v, want 4 failures", err)
	}
	for _, g := range r.Gates {
		if g.Reason != "the candidate run has no rows" {
			t.Errorf("%s: reason %q, want the empty run named", g.Gate, g.Reason)
		}
	}
	// Without rows the service names no evaluator: a gate naming one by
	// name fails on the empty run, not as an unknown evaluator.
	r = NewReport(Run{}, empty)
	err = r.Check(MinMean("Exact match", 0.5), MaxWorseRows("Exact match", 0))
	if errors.Is(err, ErrInvalidGate) || !errors.Is(err, ErrGateFailed) {
		t.Errorf("Check by name on an empty run = %v, want a gate failure, not an invalid gate", err)
	}
	for _, g := range r.Gates {
		if g.Invalid || g.Reason != "the candidate run has no rows" {
			t.Errorf("%s on an empty run without evaluator names = %+v, want the empty run named", g.Gate, g)
		}
	}
	// An empty baseline fails the gates that compare with it.
	_, candidate := capitalsRuns()
	r = NewReport(empty, candidate)
	_ = r.Check(MaxWorseRows("Exact match", 8), NoMoreAppErrorsThanBaseline().AllowingFailedRows(0))
	for _, g := range r.Gates {
		if g.Passed || g.Reason != "the baseline run has no rows" {
			t.Errorf("%s against an empty baseline = %s, want a failure naming the empty baseline", g.Gate, g)
		}
	}
}

func TestRegressionDirectionFromTheTest(t *testing.T) {
	// 21 paired rows: the candidate is lower on 20 of them and far higher
	// on one, so its mean is higher; the signed-rank test sees 20 of 21
	// differences negative.
	var baseline, candidate []models.EvaluationScenario
	for i := range 21 {
		country := fmt.Sprintf("R%02d", i)
		y := 10 - 0.1*float64(i+1)
		if i == 20 {
			y = 1000
		}
		baseline = append(baseline, answered(country, "x", "x", 0, 1, numberResult(scoreConfig.ID, 10)))
		candidate = append(candidate, answered(country, "x", "x", 0, 1, numberResult(scoreConfig.ID, y)))
	}
	c := Compare(baseline, candidate)
	d := c.Evaluators[scoreConfig.ID]
	if !(d.Diff > 0) {
		t.Fatalf("the candidate's mean moved by %v, want up: the case is one where means and ranks disagree", d.Diff)
	}
	// V = 21 (the one positive difference has the top rank); exact
	// P(V ≤ 21) over 2²¹ sign assignments: 447/2²¹, as scipy 1.10.1's
	// wilcoxon(d, alternative="less", method="exact") gives it.
	const want = 0.00021314620971679688
	if p := d.RegressionP(HigherIsBetter); !closeTo(p, want, 1e-12) {
		t.Errorf("regression p = %.17g, want %.17g", p, want)
	}
	r := NewReport(Run{Scenarios: baseline, Evaluation: evaluationOf("b", "b", scoreConfig)}, Run{Scenarios: candidate, Evaluation: evaluationOf("c", "c", scoreConfig)})
	if err := r.Check(NoSignificantRegression("score", 0.05)); err == nil {
		t.Error("regression_p(score) >= 0.05 held for a candidate lower on 20 of 21 rows")
	}
	// Read the other way (lower is better), the same rows are an
	// improvement: p near 1.
	if p := d.RegressionP(LowerIsBetter); !(p > 0.99) {
		t.Errorf("regression p, lower is better = %v, want near 1", p)
	}
}

func TestPairingByExpectedAnswers(t *testing.T) {
	row := func(question, expected string, pass bool) models.EvaluationScenario {
		return answered(question, expected, expected, 0, 1, boolResult("ev", pass))
	}
	// Two rows ask the same question with different expected answers; the
	// candidate's list has them the other way round.
	baseline := []models.EvaluationScenario{row("capital of Georgia?", "Tbilisi", true), row("capital of Georgia?", "Atlanta", false)}
	candidate := []models.EvaluationScenario{row("capital of Georgia?", "Atlanta", false), row("capital of Georgia?", "Tbilisi", true)}
	c := Compare(baseline, candidate)
	d := c.Evaluators["ev"]
	if c.Paired != 2 || d.Tied != 2 || d.Worse(HigherIsBetter) != 0 || d.Better(HigherIsBetter) != 0 {
		t.Errorf("swapped duplicate questions paired as %+v / %+v, want 2 pairs, both ties", c, d)
	}
	// The service writes no expected answers on a row whose app call
	// failed: it pairs by its inputs with the row left over, whichever
	// order they come in.
	failed := failedRow("capital of Georgia?", "timeout", "ev")
	for _, cand := range [][]models.EvaluationScenario{
		{failed, row("capital of Georgia?", "Tbilisi", true)},
		{row("capital of Georgia?", "Tbilisi", true), failed},
	} {
		c := Compare(baseline, cand)
		d := c.Evaluators["ev"]
		// Tbilisi pairs with Tbilisi (a tie); the failure with Atlanta,
		// where the baseline's false still beats no value.
		if c.Paired != 2 || c.Unpaired != 0 || d.Tied != 1 || d.CandidateLacks != 1 || d.Worse(HigherIsBetter) != 1 {
			t.Errorf("an errored duplicate: %+v / %+v, want 2 pairs, 1 tie, 1 worse", c, d)
		}
		if got := CompareStreamOf(t, baseline, cand); got.Paired != c.Paired || got.Evaluators["ev"] != d {
			t.Errorf("CompareStream = %+v, want what Compare gives: %+v", got, c)
		}
	}
	// Unpaired rows count as missing on the side that lacks them; a
	// candidate row without a baseline partner is no evidence of better.
	c = Compare(baseline, []models.EvaluationScenario{row("capital of Georgia?", "Tbilisi", true), row("capital of Peru?", "Lima", true)})
	d = c.Evaluators["ev"]
	if c.Paired != 1 || c.UnpairedBaseline != 1 || c.UnpairedCandidate != 1 || d.CandidateLacks != 1 || d.CandidateOnly != 1 || d.BaselineLacks != 0 || d.Better(HigherIsBetter) != 0 || d.Candidate.Missing != 1 || d.Baseline.Missing != 1 {
		t.Errorf("unpaired rows: %+v / %+v, want each counted as missing on the other side", c, d)
	}
	// Rows without expected answers on both sides pair by inputs, in order.
	plain := func(q string, pass bool) models.EvaluationScenario {
		s := row(q, "", pass)
		s.CorrectAnswers = nil
		return s
	}
	c = Compare([]models.EvaluationScenario{plain("q", true), plain("q", false)}, []models.EvaluationScenario{plain("q", true), plain("q", false)})
	if d := c.Evaluators["ev"]; c.Paired != 2 || d.Tied != 2 {
		t.Errorf("rows without answers: %+v / %+v, want 2 pairs in order, both ties", c, d)
	}
}

// CompareStreamOf runs CompareStream over two slices.
func CompareStreamOf(t *testing.T, baseline, candidate []models.EvaluationScenario) Comparison {
	t.Helper()
	c, err := CompareStream(seqOf(baseline), seqOf(candidate))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestComparisonLeavesTheComparerAsItWas: Comparison settles the rows
// without answers on copies, so a Comparer can go on.
func TestComparisonLeavesTheComparerAsItWas(t *testing.T) {
	baseline, candidate := capitalsRuns()
	var c Comparer
	for _, s := range baseline.Scenarios {
		c.AddBaseline(s)
	}
	for _, s := range candidate.Scenarios[:4] {
		c.AddCandidate(s)
	}
	first := c.Comparison()
	again := c.Comparison()
	if first.Paired != again.Paired || first.Evaluators[exactMatch.ID] != again.Evaluators[exactMatch.ID] {
		t.Errorf("two Comparisons of the same rows differ: %+v and %+v", first, again)
	}
	for _, s := range candidate.Scenarios[4:] {
		c.AddCandidate(s)
	}
	if got, want := c.Comparison(), Compare(baseline.Scenarios, candidate.Scenarios); got.Paired != want.Paired || got.Evaluators[exactMatch.ID] != want.Evaluators[exactMatch.ID] {
		t.Errorf("after more rows: %+v, want %+v", got, want)
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
