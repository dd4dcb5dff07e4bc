package evals

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/agenta-go/agenta/models"
)

func TestCompare(t *testing.T) {
	baseline, candidate := capitalsRuns()
	c := Compare(baseline.Scenarios, candidate.Scenarios)
	if c.Paired != 8 || c.Unpaired != 0 {
		t.Fatalf("Paired, Unpaired = %d, %d; want 8, 0 (the candidate's rows are in reverse order)", c.Paired, c.Unpaired)
	}
	exact := c.Evaluators[exactMatch.ID]
	// Better on Brazil, Canada and Switzerland, worse on Australia, the same
	// on France, Japan and Türkiye; Nigeria failed on the candidate's side,
	// which counts as worse than the baseline's value.
	if exact.Higher != 3 || exact.Lower != 1 || exact.Tied != 3 || exact.CandidateLacks != 1 || exact.BaselineLacks != 0 || exact.BothLack != 0 {
		t.Errorf("exact match Higher/Lower/Tied/CandidateLacks = %d/%d/%d/%d, want 3/1/3/1", exact.Higher, exact.Lower, exact.Tied, exact.CandidateLacks)
	}
	// binom.test(2, 5): 3 discordant pairs one way, 2 the other.
	if exact.PValue != 1 {
		t.Errorf("exact match p = %v, want 1 (exact McNemar on 3 and 2 discordant pairs)", exact.PValue)
	}
	// Read as lower is better, Nigeria's missing value is worse than a
	// false: 1 pair better, 4 worse; binom.test(1, 5) = 12/32.
	if !closeTo(exact.PValueFor(LowerIsBetter), 0.375, 1e-12) {
		t.Errorf("exact match p, lower is better = %v, want 0.375", exact.PValueFor(LowerIsBetter))
	}
	// binom.test(2, 5, alternative = "greater"): 16/32 + 10/32.
	if !closeTo(exact.RegressionP(HigherIsBetter), 26.0/32, 1e-12) {
		t.Errorf("exact match regression p = %v, want 26/32", exact.RegressionP(HigherIsBetter))
	}
	if exact.Baseline.Mean != 0.5 || exact.Candidate.Mean != 0.75 || exact.Candidate.Errors != 1 || !closeTo(exact.Diff, 0.25, 1e-15) {
		t.Errorf("exact match means = %v → %v (diff %v), want 0.5 → 6/8 with one error", exact.Baseline.Mean, exact.Candidate.Mean, exact.Diff)
	}
	if exact.Worse(HigherIsBetter) != 2 || exact.Better(HigherIsBetter) != 3 {
		t.Errorf("exact match worse/better = %d/%d, want 2/3", exact.Worse(HigherIsBetter), exact.Better(HigherIsBetter))
	}

	edit := c.Evaluators[editDistance.ID]
	// Distances fall on Brazil, Canada and Switzerland and rise on Australia.
	if edit.Lower != 3 || edit.Higher != 1 || edit.Tied != 3 || edit.CandidateLacks != 1 {
		t.Errorf("edit distance Higher/Lower/Tied/CandidateLacks = %d/%d/%d/%d, want 1/3/3/1", edit.Higher, edit.Lower, edit.Tied, edit.CandidateLacks)
	}
	var diffs []float64
	for _, b := range baseline.Scenarios {
		country, _ := b.Input("country")
		for _, cand := range candidate.Scenarios {
			if got, _ := cand.Input("country"); got == country && !cand.Failed() {
				x, _ := b.Outputs[0].Result.Text()
				y, _ := cand.Outputs[0].Result.Text()
				capital := b.CorrectAnswers[0].Value
				diffs = append(diffs, float64(levenshtein(y, capital)-levenshtein(x, capital)))
			}
		}
	}
	// Nigeria's missing distance is worse than any: +Inf where lower is
	// better, −Inf where higher is.
	if _, p := WilcoxonSignedRank(append(slices.Clone(diffs), math.Inf(1))); edit.PValueFor(LowerIsBetter) != p {
		t.Errorf("edit distance p = %v, want Wilcoxon's %v on %v and +Inf", edit.PValueFor(LowerIsBetter), p, diffs)
	}
	if _, p := WilcoxonSignedRankAlternative(append(slices.Clone(diffs), math.Inf(1)), Greater); edit.RegressionP(LowerIsBetter) != p {
		t.Errorf("edit distance regression p = %v, want Wilcoxon's greater %v on %v and +Inf", edit.RegressionP(LowerIsBetter), p, diffs)
	}
	if _, p := WilcoxonSignedRank(append(slices.Clone(diffs), math.Inf(-1))); edit.PValue != p {
		t.Errorf("edit distance p when higher is better = %v, want Wilcoxon's %v on %v and -Inf", edit.PValue, p, diffs)
	}
	if edit.Worse(LowerIsBetter) != 2 || edit.Better(LowerIsBetter) != 3 {
		t.Errorf("edit distance (lower is better) worse/better = %d/%d, want 2/3", edit.Worse(LowerIsBetter), edit.Better(LowerIsBetter))
	}
}

func TestCompareWithItself(t *testing.T) {
	baseline, _ := capitalsRuns()
	c := Compare(baseline.Scenarios, baseline.Scenarios)
	if c.Paired != 8 || c.Unpaired != 0 {
		t.Fatalf("Paired, Unpaired = %d, %d; want 8, 0", c.Paired, c.Unpaired)
	}
	for id, d := range c.Evaluators {
		if d.PValue != 1 || d.Diff != 0 || d.Higher != 0 || d.Lower != 0 || d.Tied != 8 {
			t.Errorf("%s compared with itself = %+v, want p = 1, no difference, 8 ties", id, d)
		}
	}
}

func TestComparePairing(t *testing.T) {
	input := func(name string, raw string) models.Input {
		return models.Input{Name: name, Type: "text", Value: json.RawMessage(raw)}
	}
	row := func(pass bool, inputs ...models.Input) models.EvaluationScenario {
		// The app answered: a row without output would count as its error.
		answer := []models.Output{{Result: models.Result{Type: "text", Value: json.RawMessage(`"an answer"`)}}}
		return models.EvaluationScenario{Inputs: inputs, Outputs: answer, Results: []models.ScenarioResult{boolResult("ev", pass)}}
	}
	baseline := []models.EvaluationScenario{
		row(true, input("a", `"x"`), input("b", `"y"`)),
		row(true, input("q", `"dup"`)),  // first duplicate
		row(false, input("q", `"dup"`)), // second duplicate
		row(true, input("only", `"baseline"`)),
		row(true, input("n", `"3"`)),
	}
	candidate := []models.EvaluationScenario{
		row(false, input("b", `"y"`), input("a", `"x"`)), // the same inputs in another order
		row(false, input("q", `"dup"`)),                  // pairs with the first duplicate: true → false
		row(true, input("q", `"d\u0075p"`)),              // the same text, escaped: second duplicate, false → true
		row(true, input("only", `"candidate"`)),
		row(true, input("n", `3`)),                                         // the same text, sent as a number
		row(true, input("a", `"x"`), input("b", `"y"`), input("c", `"z"`)), // an extra input: another row
	}
	c := Compare(baseline, candidate)
	if c.Paired != 4 || c.Unpaired != 3 {
		t.Fatalf("Paired, Unpaired = %d, %d; want 4 and 3", c.Paired, c.Unpaired)
	}
	d := c.Evaluators["ev"]
	if d.Higher != 1 || d.Lower != 2 || d.Tied != 1 {
		t.Errorf("Higher/Lower/Tied = %d/%d/%d, want 1/2/1 (duplicates pair in order)", d.Higher, d.Lower, d.Tied)
	}

	// Keys cannot collide by concatenation.
	k1 := string(pairingKey(nil, []models.Input{input("a", `"bc"`)}))
	k2 := string(pairingKey(nil, []models.Input{input("ab", `"c"`)}))
	if k1 == k2 {
		t.Errorf("inputs a=bc and ab=c share the key %q", k1)
	}
}

func TestCompareEmptyAndOneSided(t *testing.T) {
	c := Compare(nil, nil)
	if c.Paired != 0 || c.Unpaired != 0 || len(c.Evaluators) != 0 {
		t.Errorf("Compare(nil, nil) = %+v, want nothing", c)
	}
	baseline, _ := capitalsRuns()
	c = Compare(baseline.Scenarios, nil)
	if c.Paired != 0 || c.Unpaired != 8 || c.UnpairedBaseline != 8 || c.BaselineRows != 8 || c.CandidateRows != 0 {
		t.Errorf("Compare(8 rows, nil) = %+v; want 0 paired and 8 baseline rows unpaired", c)
	}
	// Every baseline value faces a missing candidate row: worse.
	if d := c.Evaluators[exactMatch.ID]; d.CandidateLacks != 8 || d.Worse(HigherIsBetter) != 8 || d.Candidate.Missing != 8 || !(d.RegressionP(HigherIsBetter) < 0.01) {
		t.Errorf("exact match against an empty candidate = %+v, want 8 worse rows, all missing, a tiny regression p", d)
	}
	// A number evaluator where one side only errs: the baseline's error
	// makes the candidate's value better, and nothing worse.
	b := []models.EvaluationScenario{answered("France", "Paris", "Paris", 0, 1, errorResult("ev", "x"))}
	k := []models.EvaluationScenario{answered("France", "Paris", "Paris", 0, 1, numberResult("ev", 2))}
	d := Compare(b, k).Evaluators["ev"]
	if d.BaselineLacks != 1 || !math.IsNaN(d.Diff) || d.Baseline.Errors != 1 || d.Candidate.Count != 1 || d.Worse(HigherIsBetter) != 0 || d.Better(HigherIsBetter) != 1 || d.RegressionP(HigherIsBetter) != 1 {
		t.Errorf("one side erring = %+v, want the candidate better, Diff NaN, the error and the value counted", d)
	}
}

func TestCompareStream(t *testing.T) {
	baseline, candidate := capitalsRuns()
	got, err := CompareStream(seqOf(baseline.Scenarios), seqOf(candidate.Scenarios[:5]))
	if err != nil {
		t.Fatal(err)
	}
	want := Compare(baseline.Scenarios, candidate.Scenarios[:5])
	if got.Paired != want.Paired || got.Unpaired != want.Unpaired || got.Evaluators[exactMatch.ID] != want.Evaluators[exactMatch.ID] || got.Evaluators[editDistance.ID] != want.Evaluators[editDistance.ID] {
		t.Errorf("CompareStream = %+v, want what Compare gives: %+v", got, want)
	}
}

func seqOf(rows []models.EvaluationScenario) func(func(models.EvaluationScenario, error) bool) {
	return func(yield func(models.EvaluationScenario, error) bool) {
		for _, s := range rows {
			if !yield(s, nil) {
				return
			}
		}
	}
}

func TestCompareStreamError(t *testing.T) {
	baseline, candidate := capitalsRuns()
	boom := errors.New("connection reset")
	broken := func(yield func(models.EvaluationScenario, error) bool) {
		if yield(candidate.Scenarios[0], nil) {
			yield(models.EvaluationScenario{}, boom)
		}
	}
	c, err := CompareStream(seqOf(baseline.Scenarios), broken)
	if !errors.Is(err, boom) || c.Paired+c.Unpaired != 3 {
		t.Errorf("CompareStream with a broken candidate = %d paired, %d unpaired, %v; want the 3 rows read and the stream's error", c.Paired, c.Unpaired, err)
	}
}

// A run that lists a scenario twice is compared once per scenario: the
// baseline's repeated app error does not raise the limit of
// "app_errors <= baseline", and the candidate's repeated pass does not
// pair with a second baseline row of the same question.
func TestCompareCountsAScenarioOnce(t *testing.T) {
	baseline := []models.EvaluationScenario{
		withID(answered("France", "Paris", "Paris", 1, 1, boolResult("exact", true)), "b1"),
		withID(answered("France", "Paris", "Lyon", 1, 1, boolResult("exact", false)), "b2"), // the same question, a row of its own
		withID(failedRow("Peru", "boom", "exact"), "b3"),
		withID(failedRow("Peru", "boom", "exact"), "b3"),
	}
	candidate := []models.EvaluationScenario{
		withID(answered("France", "Paris", "Paris", 1, 1, boolResult("exact", true)), "c1"),
		withID(answered("France", "Paris", "Paris", 1, 1, boolResult("exact", true)), "c1"),
		withID(answered("Peru", "Lima", "Lima", 1, 1, boolResult("exact", true)), "c3"),
	}
	streamed, err := CompareStream(seqOf(baseline), seqOf(candidate))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Comparison{"Compare": Compare(baseline, candidate), "CompareStream": streamed} {
		if c.BaselineRows != 3 || c.CandidateRows != 2 || c.BaselineDuplicates != 1 || c.CandidateDuplicates != 1 || c.BaselineAppErrors != 1 {
			t.Errorf("%s: rows %d/%d, duplicates %d/%d, baseline app errors %d; want 3/2, 1/1, 1",
				name, c.BaselineRows, c.CandidateRows, c.BaselineDuplicates, c.CandidateDuplicates, c.BaselineAppErrors)
		}
		// France pairs once (a tie); the baseline's second France row has
		// no candidate partner (the candidate lacks it); Peru pairs by
		// its inputs with the baseline's failed row.
		d := c.Evaluators["exact"]
		if c.Paired != 2 || c.UnpairedBaseline != 1 || c.UnpairedCandidate != 0 || d.Tied != 1 || d.CandidateLacks != 1 || d.BaselineLacks != 1 {
			t.Errorf("%s: paired %d, unpaired %d/%d, delta %+v; want 2 pairs (a tie, Peru better), the second France lacking on the candidate's side",
				name, c.Paired, c.UnpairedBaseline, c.UnpairedCandidate, d)
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
	// A baseline row the candidate lacks counts as missing there; a
	// candidate row the baseline never ran is no evidence either way: it
	// counts on neither side (issue 26), only as CandidateOnly.
	c = Compare(baseline, []models.EvaluationScenario{row("capital of Georgia?", "Tbilisi", true), row("capital of Peru?", "Lima", true)})
	d = c.Evaluators["ev"]
	if c.Paired != 1 || c.UnpairedBaseline != 1 || c.UnpairedCandidate != 1 || d.CandidateLacks != 1 || d.CandidateOnly != 1 || d.BaselineLacks != 0 || d.Better(HigherIsBetter) != 0 || d.Candidate.Missing != 1 || d.Baseline.Missing != 0 || d.Baseline.Count != 2 || d.Candidate.Count != 1 {
		t.Errorf("unpaired rows: %+v / %+v, want the baseline's counted as missing in the candidate, the candidate's on neither side", c, d)
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

// Issue 26: one extra candidate row turned a paired +0.5 into +0.524. A
// row the baseline never ran counts on neither side of the Delta: the
// means are 0.25 and 0.75, the Diff +0.5; it is still counted.
func TestCandidateOnlyRowCountsOnNeitherSide(t *testing.T) {
	row := func(q string, pass bool) models.EvaluationScenario {
		return answered(q, "A "+q, "A "+q, 0.001, 1, boolResult(exactMatch.ID, pass))
	}
	baseline := []models.EvaluationScenario{row("a", true), row("b", false), row("c", false), row("d", false)}
	candidate := []models.EvaluationScenario{row("a", true), row("b", true), row("c", true), row("d", false), row("extra", false)}
	for _, c := range []Comparison{Compare(baseline, candidate), CompareStreamOf(t, baseline, candidate)} {
		d := c.Evaluators[exactMatch.ID]
		if d.Baseline.Mean != 0.25 || d.Candidate.Mean != 0.75 || d.Diff != 0.5 || d.CandidateOnly != 1 || c.UnpairedCandidate != 1 {
			t.Errorf("Delta %+v: want means 0.25 → 0.75, Diff +0.5, one candidate-only row", d)
		}
	}
}
