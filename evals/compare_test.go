package evals

import (
	"encoding/json"
	"errors"
	"math"
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
	// on France, Japan and Türkiye; Nigeria failed on the candidate's side.
	if exact.Higher != 3 || exact.Lower != 1 || exact.Tied != 3 {
		t.Errorf("exact match Higher/Lower/Tied = %d/%d/%d, want 3/1/3", exact.Higher, exact.Lower, exact.Tied)
	}
	// binom.test(1, 4): 2·(1+4)/16.
	if !closeTo(exact.PValue, 0.625, 1e-12) {
		t.Errorf("exact match p = %v, want 0.625 (exact McNemar on 3 and 1 discordant pairs)", exact.PValue)
	}
	if exact.Baseline.Mean != 0.5 || exact.Candidate.Mean != 6.0/7 || exact.Candidate.Errors != 1 || !closeTo(exact.Diff, 6.0/7-0.5, 1e-15) {
		t.Errorf("exact match means = %v → %v (diff %v), want 0.5 → 6/7 with one error", exact.Baseline.Mean, exact.Candidate.Mean, exact.Diff)
	}
	if exact.Worse(HigherIsBetter) != 1 || exact.Better(HigherIsBetter) != 3 {
		t.Errorf("exact match worse/better = %d/%d, want 1/3", exact.Worse(HigherIsBetter), exact.Better(HigherIsBetter))
	}

	edit := c.Evaluators[editDistance.ID]
	// Distances fall on Brazil, Canada and Switzerland and rise on Australia.
	if edit.Lower != 3 || edit.Higher != 1 || edit.Tied != 3 {
		t.Errorf("edit distance Higher/Lower/Tied = %d/%d/%d, want 1/3/3", edit.Higher, edit.Lower, edit.Tied)
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
	if _, p := WilcoxonSignedRank(diffs); edit.PValue != p {
		t.Errorf("edit distance p = %v, want Wilcoxon's %v on %v", edit.PValue, p, diffs)
	}
	if edit.Worse(LowerIsBetter) != 1 || edit.Better(LowerIsBetter) != 3 {
		t.Errorf("edit distance (lower is better) worse/better = %d/%d, want 1/3", edit.Worse(LowerIsBetter), edit.Better(LowerIsBetter))
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
		return models.EvaluationScenario{Inputs: inputs, Results: []models.ScenarioResult{boolResult("ev", pass)}}
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
	if c.Paired != 0 || c.Unpaired != 8 {
		t.Errorf("Compare(8 rows, nil) paired %d, unpaired %d; want 0 and 8", c.Paired, c.Unpaired)
	}
	// A number evaluator where one side only errs: no pairs to test.
	b := []models.EvaluationScenario{answered("France", "Paris", "Paris", 0, 1, errorResult("ev", "x"))}
	k := []models.EvaluationScenario{answered("France", "Paris", "Paris", 0, 1, numberResult("ev", 2))}
	d := Compare(b, k).Evaluators["ev"]
	if d.PValue != 1 || !math.IsNaN(d.Diff) || d.Baseline.Errors != 1 || d.Candidate.Count != 1 {
		t.Errorf("one side erring = %+v, want p = 1, Diff NaN, the error and the value counted", d)
	}
}

func TestCompareStream(t *testing.T) {
	baseline, candidate := capitalsRuns()
	got, err := CompareStream(seqOf(baseline.Scenarios), seqOf(candidate.Scenarios[:5]))
	if err != nil {
		t.Fatal(err)
	}
	want := Compare(baseline.Scenarios, candidate.Scenarios[:5])
	if got.Paired != want.Paired || got.Unpaired != want.Unpaired || got.Evaluators[exactMatch.ID] != want.Evaluators[exactMatch.ID] {
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
