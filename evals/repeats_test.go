package evals

import (
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// A baseline whose listing shifted a page repeats one row and loses
// another. Counted once, the repeat hid the lost row: the candidate's row
// of that test case was left without a partner (CandidateOnly, no
// evidence either way), so a candidate that regressed on it passed
// worse(...) <= 0 and regression_p, where before the repeat left a
// baseline row unpaired and failed them. A baseline listing that repeats
// rows is no evidence that it holds them all: a gate that compares with
// it fails.
func TestBaselineRepeatsFailTheGatesThatCompare(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		if i == 7 {
			return wrongRow(i) // the regression, on the row the baseline's listing lost
		}
		return rightRow(i)
	})
	for i := range 20 {
		baseline.Scenarios[i].ID = fmt.Sprintf("b%d", i)
		candidate.Scenarios[i].ID = fmt.Sprintf("c%d", i)
	}
	// The baseline's page shifted: row 6 listed twice, row 7 lost.
	baseline.Scenarios[7] = baseline.Scenarios[6]
	gates := []Gate{MaxWorseRows("Exact match", 0), NoSignificantRegression("Exact match", 0.99)}
	streamed := func(rows []models.EvaluationScenario) Run {
		return Run{Rows: func() iter.Seq2[models.EvaluationScenario, error] { return seqOf(rows) }}
	}
	for name, runs := range map[string][2]Run{
		"in memory": {baseline, candidate},
		"streamed":  {{Evaluation: baseline.Evaluation, Rows: streamed(baseline.Scenarios).Rows}, {Evaluation: candidate.Evaluation, Rows: streamed(candidate.Scenarios).Rows}},
	} {
		r := NewReport(runs[0], runs[1])
		if r.Comparison == nil || r.Comparison.BaselineDuplicates != 1 {
			t.Fatalf("%s: comparison %+v, want 1 baseline duplicate", name, r.Comparison)
		}
		err := r.Check(gates...)
		if !errors.Is(err, ErrGateFailed) || errors.Is(err, ErrInvalidGate) {
			t.Fatalf("%s: Check = %v, want the gates that compare with the baseline to fail (not as invalid)", name, err)
		}
		for _, g := range r.Gates {
			if g.Passed || !strings.Contains(g.Reason, "baseline run lists scenario \"b6\" more than once") {
				t.Errorf("%s: %s, want it failed for the baseline's repeated scenario", name, g)
			}
		}
		// A gate on the candidate alone still judges it: its rows are
		// all there.
		if err := r.Check(MinMean("Exact match", 0.9)); err != nil {
			t.Errorf("%s: mean(Exact match) >= 0.9 on a candidate with 19 of 20 right: %v", name, err)
		}
	}
	// Compare, CompareStream and the Comparer fed in any order agree.
	want := Compare(baseline.Scenarios, candidate.Scenarios)
	got, err := CompareStream(seqOf(baseline.Scenarios), seqOf(candidate.Scenarios))
	if err != nil {
		t.Fatal(err)
	}
	var c Comparer
	for i := range candidate.Scenarios {
		c.AddCandidate(candidate.Scenarios[i])
		c.AddBaseline(baseline.Scenarios[i])
	}
	for name, cmp := range map[string]Comparison{"CompareStream": got, "Comparer": c.Comparison()} {
		if cmp.Paired != want.Paired || cmp.UnpairedCandidate != want.UnpairedCandidate || cmp.BaselineDuplicates != want.BaselineDuplicates ||
			cmp.Evaluators[exactMatch.ID].Worse(HigherIsBetter) != want.Evaluators[exactMatch.ID].Worse(HigherIsBetter) {
			t.Errorf("%s: %+v, Compare: %+v", name, cmp, want)
		}
	}
}

// A baseline that repeats its failed rows counts each once: the limit of
// "app_errors <= baseline" is not raised by the repeats, and that gate
// still judges (a row the baseline lost can only lower the limit).
func TestBaselineRepeatedAppErrorsRaiseNoLimit(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		if i < 2 {
			return failedRow(country, "boom", exactMatch.ID, scoreConfig.ID)
		}
		return rightRow(i)
	})
	baseline.Scenarios[0] = failedRow("C01", "boom", exactMatch.ID, scoreConfig.ID)
	for i := range 20 {
		baseline.Scenarios[i].ID = fmt.Sprintf("b%d", i)
		candidate.Scenarios[i].ID = fmt.Sprintf("c%d", i)
	}
	// The baseline's one app error listed three times, over rows it lost.
	baseline.Scenarios[1], baseline.Scenarios[2] = baseline.Scenarios[0], baseline.Scenarios[0]
	r := NewReport(baseline, candidate)
	if c := r.Comparison; c.BaselineAppErrors != 1 || c.BaselineDuplicates != 2 || c.BaselineDuplicateID != "b0" {
		t.Fatalf("comparison: %d baseline app errors, %d duplicates (first %q); want 1, 2, b0", c.BaselineAppErrors, c.BaselineDuplicates, c.BaselineDuplicateID)
	}
	err := r.Check(NoMoreAppErrorsThanBaseline())
	if !errors.Is(err, ErrGateFailed) || errors.Is(err, ErrInvalidGate) {
		t.Fatalf("Check = %v, want app_errors <= baseline to fail: 2 app errors against the baseline's 1", err)
	}
	if g := r.Gates[0]; g.Reason != "" || g.Measured != 2 || g.Limit != 1 {
		t.Errorf("%s: want measured 2 against a limit of 1", g)
	}
}

// A baseline row without any output (outputs [], or an output of null) is
// no evidence, on the baseline's side too: counted as the baseline's app
// error, it raised the limit of "app_errors <= baseline", and a candidate
// whose app failed on every row passed against a baseline listed without
// its outputs. The limit counts the baseline's failed calls only.
func TestBaselineRowsWithoutOutputRaiseNoLimit(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		return failedRow(country, "the app is down", exactMatch.ID, scoreConfig.ID)
	})
	for i := range baseline.Scenarios {
		if i < 18 {
			baseline.Scenarios[i].Outputs = nil
		} else {
			baseline.Scenarios[i] = failedRow(fmt.Sprintf("C%02d", i+1), "timeout", exactMatch.ID, scoreConfig.ID)
		}
	}
	r := NewReport(baseline, candidate)
	if c := r.Comparison; c.CandidateAppErrors != 20 || c.BaselineAppErrors != 20 {
		t.Fatalf("comparison: %d candidate and %d baseline app errors, want 20 and 20 (the rows without output counted as such)", c.CandidateAppErrors, c.BaselineAppErrors)
	}
	err := r.Check(NoMoreAppErrorsThanBaseline())
	if !errors.Is(err, ErrGateFailed) {
		t.Fatalf("Check = %v: a candidate whose app failed on all 20 rows passed app_errors <= baseline, against a baseline with 2 failed calls and 18 rows without output", err)
	}
	if g := r.Gates[0]; g.Measured != 20 || g.Limit != 2 || !strings.Contains(g.Detail, "18 rows of the baseline without output") {
		t.Errorf("%s: want measured 20 against a limit of 2, saying why", g)
	}
}

// A baseline row without output ranked below the candidate's value, as a
// failed call does: the candidate "did better" there. So a candidate that
// answered all 20 rows wrong passed regression_p against a baseline with
// 10 rows right and 10 listed without output (p 0.59: 10 rows better, 10
// worse). Such a row is no evidence either way, like a candidate row
// without partner: it is left out of Better and the tests.
func TestBaselineRowWithoutOutputIsNoImprovement(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario { return wrongRow(i) })
	for i := 10; i < 20; i++ {
		baseline.Scenarios[i].Outputs = nil
	}
	r := NewReport(baseline, candidate)
	d := r.Comparison.Evaluators[exactMatch.ID]
	if d.BaselineLacks != 0 || d.BaselineWithoutOutput != 10 || d.Better(HigherIsBetter) != 0 || d.Worse(HigherIsBetter) != 10 {
		t.Errorf("delta %+v: want 10 rows worse, none better, 10 with a baseline row without output", d)
	}
	for _, g := range []Gate{NoSignificantRegression("Exact match", 0.05), NoSignificantRegression("Score", 0.05)} {
		if err := r.Check(g); !errors.Is(err, ErrGateFailed) {
			t.Errorf("%v passed (%v): a candidate with every row wrong, against 10 right baseline rows", g, r.Gates)
		}
	}
	// A baseline row whose app call failed is evidence: the candidate
	// that answers it did better.
	for i := 10; i < 20; i++ {
		baseline.Scenarios[i] = failedRow(fmt.Sprintf("C%02d", i+1), "down", exactMatch.ID, scoreConfig.ID)
		candidate.Scenarios[i] = rightRow(i)
	}
	if d := Compare(baseline.Scenarios, candidate.Scenarios).Evaluators[exactMatch.ID]; d.BaselineLacks != 10 || d.Better(HigherIsBetter) != 10 {
		t.Errorf("delta %+v: want the 10 rows the baseline's app failed on better", d)
	}
}

// A baseline row whose evaluator failed is a fail for a pass/fail
// evaluator (issue 16), not a row the candidate beats whatever it
// answers: a candidate wrong on all 20 rows, against a baseline right on
// 2 and judged on no other (18 evaluator errors), passed regression_p at
// p = 1, every pair counted for it. Now only the 2 rows the baseline
// passed are evidence, both against the candidate: p = 1/4.
func TestBaselineEvaluatorErrorsAreNoWinForTheCandidate(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario { return wrongRow(i) })
	for i := 2; i < 20; i++ {
		baseline.Scenarios[i].Results[0] = errorResult(exactMatch.ID, "the judge timed out")
	}
	r := NewReport(baseline, candidate)
	d := r.Comparison.Evaluators[exactMatch.ID]
	if d.BaselineLacks != 18 {
		t.Fatalf("BaselineLacks = %d, want 18", d.BaselineLacks)
	}
	if got := d.RegressionP(HigherIsBetter); got != 0.25 {
		t.Errorf("regression_p = %v, want 0.25 (2 of 2 discordant pairs against the candidate)", got)
	}
	// The candidate's passes still count against a failed baseline row.
	for i := 2; i < 20; i++ {
		candidate.Scenarios[i] = rightRow(i)
	}
	d = NewReport(baseline, candidate).Comparison.Evaluators[exactMatch.ID]
	if got := d.RegressionP(HigherIsBetter); got <= 0.99 {
		t.Errorf("regression_p = %v with 18 passes against 18 baseline fails and 2 fails against passes, want near 1", got)
	}
}

// Better agrees with RegressionP on a pass/fail evaluator: a baseline row
// the judge failed on is beaten only by a candidate's pass.
func TestBetterCountsOnlyPassesAgainstAFailedBaselineRow(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		if i < 5 {
			return rightRow(i)
		}
		return wrongRow(i)
	})
	for i := range 20 {
		baseline.Scenarios[i].Results[0] = errorResult(exactMatch.ID, "the judge timed out")
	}
	d := NewReport(baseline, candidate).Comparison.Evaluators[exactMatch.ID]
	if d.BaselineLacks != 20 || d.Better(HigherIsBetter) != 5 || d.Better(LowerIsBetter) != 15 {
		t.Errorf("BaselineLacks %d, Better %d (higher is better) and %d (lower), want 20, 5 and 15",
			d.BaselineLacks, d.Better(HigherIsBetter), d.Better(LowerIsBetter))
	}
}
