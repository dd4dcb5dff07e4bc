package evals

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// casesRuns returns a baseline and a candidate of n cases, each run
// repeats times (0 for once), the verdict of case i's repeat j on each
// side from base and cand.
func casesRuns(n, repeats int, base, cand func(i, j int) bool) (Run, Run) {
	var b, c Run
	for i := range n {
		country := fmt.Sprintf("K%04d", i)
		for j := range max(repeats, 1) {
			row := func(pass bool, side string) models.EvaluationScenario {
				out := "wrong"
				if pass {
					out = country
				}
				s := answered(country, country, out, 0.001, 1, boolResult(exactMatch.ID, pass), numberResult(scoreConfig.ID, map[bool]float64{true: 1, false: 0}[pass]))
				s.ID = fmt.Sprintf("%s-%d-%d", side, i, j)
				return s
			}
			b.Scenarios = append(b.Scenarios, row(base(i, j), "b"))
			c.Scenarios = append(c.Scenarios, row(cand(i, j), "c"))
		}
	}
	b.Evaluation = evaluationOf("eval-base", "prod", exactMatch, scoreConfig)
	c.Evaluation = evaluationOf("eval-cand", "next", exactMatch, scoreConfig)
	b.Repeats, c.Repeats = repeats, repeats
	return b, c
}

// The done-when of issue 27: a candidate exactly as good as the baseline
// fails the release gate on 5 rows, as inconclusive, naming about how many
// cases it would take, and passes it on 500.
func TestDiffLowNeedsEvidence(t *testing.T) {
	gate, err := ParseGate("diff_low(Exact match) >= -0.05")
	if err != nil {
		t.Fatal(err)
	}
	same := func(i, j int) bool { return i%5 != 0 } // 80% pass, alike on both sides
	base, cand := casesRuns(5, 0, same, same)
	r := NewReport(base, cand)
	err = r.Check(gate)
	if !errors.Is(err, ErrGateFailed) || errors.Is(err, ErrInvalidGate) {
		t.Fatalf("5 alike rows: Check = %v, want the gate failed as inconclusive", err)
	}
	g := r.Gates[0]
	if !strings.Contains(g.Reason, "inconclusive: the bound is -0.35") || !strings.Contains(g.Reason, "paired cases would be needed") {
		t.Errorf("5 alike rows: %s, want inconclusive, naming the bound and the cases needed", g)
	}
	// −z²/(n+z²) reaches −0.05 at n = 19 z² ≈ 51.4.
	if !strings.Contains(g.Reason, "about 52 paired cases") {
		t.Errorf("5 alike rows: %s, want about 52 paired cases", g)
	}
	base, cand = casesRuns(500, 0, same, same)
	r = NewReport(base, cand)
	if err := r.Check(gate); err != nil {
		t.Fatalf("500 alike rows: %v", err)
	}
	if g := r.Gates[0]; g.Measured < -0.01 || g.Measured > 0 {
		t.Errorf("500 alike rows: bound %v, want −z²/(n+z²) ≈ −0.0054", g.Measured)
	}
}

// Absence of evidence never passes diff_low: without a baseline, with
// every candidate row errored, or where the candidate is worse.
func TestDiffLowAbsenceOfEvidence(t *testing.T) {
	gate, _ := ParseGate("diff_low(Exact match) >= -5%")
	pass := func(i, j int) bool { return true }
	base, cand := casesRuns(500, 0, pass, pass)
	for i := range cand.Scenarios {
		cand.Scenarios[i] = failedRow(fmt.Sprintf("K%04d", i), "down", exactMatch.ID, scoreConfig.ID)
	}
	r := NewReport(base, cand)
	if err := r.Check(gate); !errors.Is(err, ErrGateFailed) {
		t.Errorf("every candidate row errored: %v, want failed", r.Gates)
	}
	if g := r.Gates[0]; !strings.Contains(g.Reason, "not within the limit") {
		t.Errorf("every candidate row errored: %s, want the estimate named below the limit", g)
	}
	r = NewReport(Run{}, cand)
	if err := r.Check(gate); !errors.Is(err, ErrGateFailed) || !strings.Contains(r.Gates[0].Reason, "baseline") {
		t.Errorf("no baseline: %v", r.Gates)
	}
	// Number scores: a t bound, and a candidate case without a value
	// fails the gate unless allowed.
	score, _ := ParseGate("diff_low(score) >= -0.05")
	base, cand = casesRuns(30, 0, pass, func(i, j int) bool { return i != 3 })
	cand.Scenarios[7].Results = cand.Scenarios[7].Results[:1]
	r = NewReport(base, cand)
	if err := r.Check(score); !errors.Is(err, ErrGateFailed) || !strings.Contains(r.Gates[0].Reason, "allowing 1 failed row") {
		t.Errorf("a candidate case without a score: %v", r.Gates)
	}
}

// low(NAME) is the Wilson bound without repeats: 9 of 10 passes fails
// "low >= 85%" (the bound is about 0.65), where the mean passes.
func TestLowIsWilson(t *testing.T) {
	pass := func(i, j int) bool { return true }
	_, cand := casesRuns(10, 0, pass, func(i, j int) bool { return i != 0 })
	r := NewReport(Run{}, cand)
	low, _ := ParseGate("low(Exact match) >= 85%")
	mean, _ := ParseGate("Exact match >= 85%")
	if err := r.Check(mean); err != nil {
		t.Fatal(err)
	}
	err := r.Check(low)
	want := PassRateLow(append(make([]PassCount, 0, 10), PassCount{0, 1}, PassCount{1, 1}, PassCount{1, 1}, PassCount{1, 1}, PassCount{1, 1},
		PassCount{1, 1}, PassCount{1, 1}, PassCount{1, 1}, PassCount{1, 1}, PassCount{1, 1}), DefaultConfidence)
	if g := r.Gates[0]; !errors.Is(err, ErrGateFailed) || math.Abs(g.Measured-want) > 1e-12 || !strings.Contains(g.Reason, "inconclusive") {
		t.Errorf("%s (%v), want failed at %v as inconclusive", g, err, want)
	}
	// The package's Check, without the report's cases, reads rows as
	// cases alike.
	results, _ := Check(r.CandidateSummary, nil, r.Evaluators, low)
	if math.Abs(results[0].Measured-want) > 1e-12 {
		t.Errorf("Check from the summary: %v, want %v", results[0].Measured, want)
	}
	// high and the t bound of a score agree with MeanHigh.
	high, _ := ParseGate("high(score) <= 1")
	_ = r.Check(high)
	values := []float64{0, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	if g := r.Gates[0]; math.Abs(g.Measured-MeanHigh(values, 0.95)) > 1e-12 {
		t.Errorf("%s, want %v", g, MeanHigh(values, 0.95))
	}
	results, _ = Check(r.CandidateSummary, nil, r.Evaluators, high)
	if math.Abs(results[0].Measured-MeanHigh(values, 0.95)) > 1e-9 {
		t.Errorf("high from the summary: %v, want %v", results[0].Measured, MeanHigh(values, 0.95))
	}
}

// With repeats, the case is the unit: each case's value is its mean over
// its repeats, the bounds are cluster-aware, and the flaky cases are
// counted and listed.
func TestRepeatsGroupByCase(t *testing.T) {
	always := func(i, j int) bool { return true }
	// Case 0 passes 1 of 3 repeats, case 1 2 of 3, the others all 3.
	noisy := func(i, j int) bool { return !(i == 0 && j > 0 || i == 1 && j == 2) }
	base, cand := casesRuns(20, 3, always, noisy)
	// Out of order: repeats of a case need not be adjacent.
	cand.Scenarios[0], cand.Scenarios[5] = cand.Scenarios[5], cand.Scenarios[0]
	r := NewReport(base, cand)
	c := r.Comparison
	if c.Paired != 20 || c.Unpaired != 0 || c.CandidateRepeats != 0 || c.BaselineRepeats != 0 || c.Repeats != 3 {
		t.Fatalf("comparison: %d paired, %d unpaired, repeats %d/%d; want 20 cases paired, no broken listing", c.Paired, c.Unpaired, c.BaselineRepeats, c.CandidateRepeats)
	}
	d := c.Evaluators[exactMatch.ID]
	if d.Lower != 2 || d.Tied != 18 || d.Worse(HigherIsBetter) != 2 {
		t.Errorf("delta %+v: want 2 cases lower, 18 tied", d)
	}
	if want := (18 + 1.0/3 + 2.0/3) / 20; math.Abs(d.Candidate.Mean-want) > 1e-12 {
		t.Errorf("candidate mean %v, want the mean of the case means %v", d.Candidate.Mean, want)
	}
	gates := []string{"worse(Exact match) <= 2", "flaky(Exact match) <= 2", "pass_all(Exact match) >= 90%", "low(Exact match) >= 0.5", "diff_low(Exact match) >= -0.2"}
	for _, text := range gates {
		g, err := ParseGate(text)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Check(g); err != nil {
			t.Errorf("%s: %v", text, err)
		}
	}
	cases := make([]PassCount, 20)
	for i := range cases {
		cases[i] = PassCount{3, 3}
	}
	cases[0].Passed, cases[1].Passed = 1, 2
	low, _ := ParseGate("low(Exact match) >= 0.5")
	_ = r.Check(low)
	if got, want := r.Gates[0].Measured, PassRateLow(cases, 0.95); math.Abs(got-want) > 1e-12 {
		t.Errorf("low = %v, want PassRateLow's %v", got, want)
	}
	flaky := r.Flaky()
	if len(flaky) != 1 || flaky[0].Total != 2 || !slices.Contains(flaky[0].Cases, FlakyCase{Case: "country=K0000", Passed: 1, Repeats: 3}) {
		t.Errorf("Flaky = %+v, want the 2 flaky cases of Exact match", flaky)
	}
	// The candidate alone: the same cases.
	alone := NewReport(Run{}, cand)
	if f := alone.Flaky(); len(f) != 1 || f[0].Total != 2 {
		t.Errorf("Flaky without a baseline = %+v", f)
	}
	_ = alone.Check(low)
	if got, want := alone.Gates[0].Measured, PassRateLow(cases, 0.95); math.Abs(got-want) > 1e-12 {
		t.Errorf("low without a baseline = %v, want %v", got, want)
	}
	// Without repeats asked for, the same listing repeats cases: the
	// comparison gates fail (issue 28).
	base.Repeats, cand.Repeats = 0, 0
	r = NewReport(base, cand)
	if err := r.Check(MaxWorseRows("Exact match", 20)); !errors.Is(err, ErrGateFailed) || !strings.Contains(r.Gates[0].Reason, "more than once") {
		t.Errorf("repeats not asked for: %v", r.Gates)
	}
	// A case listed more than K times on a side is a broken listing; one
	// with fewer counts what is there.
	base.Repeats, cand.Repeats = 3, 3
	extra := cand.Scenarios[10]
	extra.ID = "c-extra"
	cand.Scenarios = append(cand.Scenarios, extra)
	base.Scenarios = base.Scenarios[1:]
	r = NewReport(base, cand)
	if c := r.Comparison; c.CandidateRepeats != 1 || c.BaselineCases.Short != 1 || c.Paired != 20 {
		t.Errorf("comparison %+v: want 1 candidate repeat beyond K, 1 short baseline case, 20 paired", c)
	}
	if err := r.Check(MaxWorseRows("Exact match", 20)); !errors.Is(err, ErrGateFailed) {
		t.Errorf("a case listed 4 times with 3 repeats passed: %v", r.Gates)
	}
}

// A flaky gate without repeats fails: one call per case shows nothing of
// flakiness.
func TestFlakyNeedsRepeats(t *testing.T) {
	pass := func(i, j int) bool { return true }
	base, cand := casesRuns(10, 0, pass, pass)
	r := NewReport(base, cand)
	flaky, _ := ParseGate("flaky(Exact match) <= 0")
	if err := r.Check(flaky); !errors.Is(err, ErrGateFailed) || !strings.Contains(r.Gates[0].Reason, "repeats") {
		t.Errorf("flaky without repeats: %v", r.Gates)
	}
	if f := r.Flaky(); len(f) != 0 {
		t.Errorf("Flaky without repeats = %v", f)
	}
}

func TestBoundGateGrammar(t *testing.T) {
	for text, want := range map[string]Gate{
		"low(Exact match) >= 90%":                                        {Measure: MeasureLow, Evaluator: "Exact match", Op: AtLeast, Limit: 0.9, Percent: true},
		"high(Hallucination) <= 0.05":                                    {Measure: MeasureHigh, Evaluator: "Hallucination", Op: AtMost, Limit: 0.05},
		"diff_low(Exact match) >= -0.05":                                 {Measure: MeasureDiffLow, Evaluator: "Exact match", Op: AtLeast, Limit: -0.05},
		"pass_all(Exact match) >= 80%":                                   {Measure: MeasurePassAll, Evaluator: "Exact match", Op: AtLeast, Limit: 0.8, Percent: true},
		"flaky(Exact match) <= 2":                                        {Measure: MeasureFlaky, Evaluator: "Exact match", Op: AtMost, Limit: 2},
		"low(score) >= 0.8 at 90% confidence":                            {Measure: MeasureLow, Evaluator: "score", Op: AtLeast, Limit: 0.8, Confidence: 0.9},
		"diff_low(score) >= -1 at 99% confidence allowing 2 failed rows": {Measure: MeasureDiffLow, Evaluator: "score", Op: AtLeast, Limit: -1, Confidence: 0.99, AllowFailedRows: 2},
	} {
		g, err := ParseGate(text)
		if err != nil || g != want {
			t.Errorf("ParseGate(%q) = %+v, %v; want %+v", text, g, err, want)
			continue
		}
		back, err := ParseGate(g.String())
		if err != nil || back != g {
			t.Errorf("%q wrote %q, which reads back as %+v, %v", text, g.String(), back, err)
		}
	}
	if !(Gate{Measure: MeasureDiffLow}).NeedsBaseline() || (Gate{Measure: MeasureLow}).NeedsBaseline() {
		t.Error("NeedsBaseline: want diff_low only")
	}
	for _, text := range []string{"flaky(X) <= 10%", "mean(X) >= 0.8 at 90% confidence", "low(X) >= 0.8 at 120% confidence"} {
		if _, err := ParseGate(text); err == nil {
			t.Errorf("ParseGate(%q) accepted", text)
		}
	}
	// Confidence out of range, on the gate or the report: invalid, named.
	base, cand := capitalsRuns()
	r := NewReport(base, cand)
	if err := r.Check(Gate{Measure: MeasureLow, Evaluator: "Exact match", Op: AtLeast, Limit: 0.5, Confidence: 1.5}); !errors.Is(err, ErrInvalidGate) || !strings.Contains(r.Gates[0].Reason, "Gate.Confidence") {
		t.Errorf("Gate.Confidence 1.5: %v", r.Gates)
	}
	r.Confidence = 0.4
	if err := r.Check(Gate{Measure: MeasureDiffLow, Evaluator: "Exact match", Op: AtLeast, Limit: -0.5}); !errors.Is(err, ErrInvalidGate) || !strings.Contains(r.Gates[0].Reason, "Report.Confidence") {
		t.Errorf("Report.Confidence 0.4: %v", r.Gates)
	}
	// A misspelt bound measure is suggested.
	r.Confidence = 0
	if err := r.Check(Gate{Measure: "diff_lo", Evaluator: "Exact match", Op: AtLeast}); !errors.Is(err, ErrInvalidGate) || !strings.Contains(r.Gates[0].Reason, "diff_low") {
		t.Errorf("diff_lo: %v", r.Gates)
	}
}

// Every report lists the flaky cases, bounded: Markdown, JUnit.
func TestReportsListFlakyCases(t *testing.T) {
	always := func(i, j int) bool { return true }
	noisy := func(i, j int) bool { return i >= 30 || j != 1 } // 30 flaky cases
	base, cand := casesRuns(40, 3, always, noisy)
	r := NewReport(base, cand)
	flaky, _ := ParseGate("flaky(Exact match) <= 0")
	_ = r.Check(flaky)
	if g := r.Gates[0]; g.Passed || g.Measured != 30 {
		t.Errorf("%s, want 30 flaky cases", g)
	}
	var md, junit strings.Builder
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"Markdown": md.String(), "JUnit": junit.String()} {
		if i := strings.Index(out, "Flaky cases"); i >= 0 {
			out = out[i:] // past the cases the candidate did worse on
		}
		if !strings.Contains(out, "30") || !strings.Contains(out, "K0019") || !strings.Contains(out, "and 10 more") ||
			strings.Count(out, "2 of 3 passed") != MaxFlakyListed {
			t.Errorf("%s lists the flaky cases wrong:\n%s", name, out)
		}
	}
	if !strings.Contains(md.String(), "Each test case ran 3 times") {
		t.Errorf("Markdown does not say the rows are cases of 3 repeats:\n%s", md.String())
	}
}

// Rows of a 2026 run name their test case: with repeats they group by it,
// and a repeat whose app call failed (no expected answers on a mid-2024
// server) joins its case as a fail, not a case of its own.
func TestRepeatsByTestcaseAndFailedRepeats(t *testing.T) {
	always := func(i, j int) bool { return true }
	base, cand := casesRuns(10, 3, always, always)
	for i := range cand.Scenarios {
		base.Scenarios[i].TestcaseID = fmt.Sprintf("tc-%d", i/3)
		cand.Scenarios[i].TestcaseID = fmt.Sprintf("tc-%d", i/3)
	}
	r := NewReport(base, cand)
	if c := r.Comparison; c.Paired != 10 || c.PairedByTestcase != 10 || c.Pairing() != "their test case" {
		t.Errorf("by test case: %d paired, %d by test case", c.Paired, c.PairedByTestcase)
	}
	// Mid-2024: the candidate's second repeat of case 4 failed.
	base, cand = casesRuns(10, 3, always, always)
	cand.Scenarios[13] = failedRow("K0004", "timeout", exactMatch.ID, scoreConfig.ID)
	cand.Scenarios[13].ID = "c-failed"
	r = NewReport(base, cand)
	c := r.Comparison
	if c.Paired != 10 || c.Unpaired != 0 || c.CandidateCases.Short != 0 {
		t.Fatalf("a failed repeat: %d paired, %d unpaired, %d short; want 10, 0, 0", c.Paired, c.Unpaired, c.CandidateCases.Short)
	}
	if d := c.Evaluators[exactMatch.ID]; d.Lower != 1 || d.Candidate.Min != 2.0/3 {
		t.Errorf("delta %+v: want case 4 at 2 of 3, lower than the baseline's", d)
	}
	if f := r.Flaky(); len(f) != 1 || f[0].Cases[0].Case != "country=K0004" {
		t.Errorf("Flaky = %+v: want case 4, 2 of 3 passed", f)
	}
}

func TestBoundGateConstructors(t *testing.T) {
	for gate, text := range map[Gate]string{
		NotWorseThanBaseline("Exact match", 0.05): "diff_low(Exact match) >= -0.05",
		MinLow("Exact match", 0.85):               "low(Exact match) >= 0.85",
	} {
		if got := gate.String(); got != text {
			t.Errorf("%+v is %q, want %q", gate, got, text)
		}
	}
}

// Absence of evidence passes no bound gate. A candidate whose rows mostly
// errored, with and without repeats, fails low, high, diff_low and
// pass_all: an errored row is a fail in a pass rate, and a score it lacks
// fails a bound on scores. An empty candidate fails every one, flaky too,
// whose limit is generous enough that only missing evidence can fail it.
func TestBoundGatesFailWithoutEvidence(t *testing.T) {
	var gates []Gate
	for _, text := range []string{"low(Exact match) >= 0.5", "high(score) <= 1", "diff_low(Exact match) >= -0.05",
		"pass_all(Exact match) >= 0.5", "flaky(Exact match) <= 1000"} {
		g, err := ParseGate(text)
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, g)
	}
	pass := func(i, j int) bool { return true }
	for _, repeats := range []int{0, 3} {
		base, cand := casesRuns(20, repeats, pass, pass)
		for i := range cand.Scenarios {
			if i%10 != 0 { // 9 rows in 10 errored
				cand.Scenarios[i] = failedRow(cand.Scenarios[i].Inputs[0].Name, "model overloaded", exactMatch.ID, scoreConfig.ID)
				cand.Scenarios[i].Inputs = base.Scenarios[i].Inputs
				cand.Scenarios[i].ID = fmt.Sprintf("e-%d", i)
			}
		}
		r := NewReport(base, cand)
		_ = r.Check(gates...)
		for _, g := range r.Gates {
			if g.Passed && g.Gate.Measure != MeasureFlaky {
				t.Errorf("repeats %d, 9 rows in 10 errored: %s passed (%v)", repeats, g.Gate, g.Measured)
			}
		}
		empty := Run{Evaluation: cand.Evaluation, Repeats: repeats}
		r = NewReport(base, empty)
		_ = r.Check(gates...)
		for _, g := range r.Gates {
			if g.Passed {
				t.Errorf("repeats %d, empty candidate: %s passed (%v)", repeats, g.Gate, g.Measured)
			}
		}
	}
}

// A case whose listing came back with fewer rows than the repeats asked
// for is a listing cut short: its one passing repeat must not read as a
// case that passed all three. Every gate on a candidate cut short fails,
// and every comparison on a baseline cut short, saying why, where the
// whole listing passes them all.
func TestGatesFailOnCasesShortOfRepeats(t *testing.T) {
	var gates []Gate
	for _, text := range []string{"low(Exact match) >= 0.5", "pass_all(Exact match) >= 0.5", "flaky(Exact match) <= 0",
		"diff_low(Exact match) >= -0.05", "worse(Exact match) <= 0", "mean(Exact match) >= 0.5", "app_errors <= 0"} {
		g, err := ParseGate(text)
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, g)
	}
	pass := func(i, j int) bool { return true }
	base, cand := casesRuns(300, 3, pass, pass)
	if r := NewReport(base, cand); r.Check(gates...) != nil {
		t.Fatalf("the whole listing fails: %+v", r.Gates)
	}
	// One repeat of every tenth case left: 30 cases short of two.
	shorten := func(run Run) Run {
		out := run
		out.Scenarios = nil
		for k, s := range run.Scenarios {
			if (k/3)%10 != 0 || k%3 == 0 {
				out.Scenarios = append(out.Scenarios, s)
			}
		}
		return out
	}
	for _, tc := range []struct {
		side       string
		base, cand Run
	}{{"candidate", base, shorten(cand)}, {"baseline", shorten(base), cand}} {
		r := NewReport(tc.base, tc.cand)
		_ = r.Check(gates...)
		for _, g := range r.Gates {
			if tc.side == "baseline" && !g.Gate.comparesWithBaseline() {
				if !g.Passed {
					t.Errorf("baseline short: %s reads the candidate alone, yet failed (%s)", g.Gate, g.Reason)
				}
				continue
			}
			want := "the " + tc.side + " run lists 30 test cases with fewer rows than the 3 repeats asked for"
			if g.Passed || !strings.Contains(g.Reason, want) {
				t.Errorf("%s short: %s passed=%v (%s), want it failed with %q", tc.side, g.Gate, g.Passed, g.Reason, want)
			}
		}
	}
}

// With repeats, the Markdown report lists the test cases whose mean over
// the repeats got worse, not repeat i against repeat i: a case that passed
// two of three times on both sides is not worse because its failing
// repeat came first in the candidate.
func TestMarkdownListsWorseCasesWithRepeats(t *testing.T) {
	base := func(i, j int) bool { return j != 2 }
	cand := func(i, j int) bool {
		if i == 3 {
			return j == 0 // case 3: 2 of 3 → 1 of 3
		}
		return j != 0 // the same 2 of 3, its fail on another repeat
	}
	b, c := casesRuns(6, 3, base, cand)
	var md strings.Builder
	if err := NewReport(b, c).WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	want := "| country=K0003 | Exact match | 2 of 3 passed | 1 of 3 passed |"
	if !strings.Contains(out, "#### Test cases the candidate did worse on") || !strings.Contains(out, want) ||
		strings.Count(out, "| country=K") != 1 || strings.Contains(out, "Rows the candidate did worse on") {
		t.Errorf("Markdown with repeats does not list case 3 alone, as %q:\n%s", want, out)
	}
	// Without repeats the rows are listed as before.
	b, c = casesRuns(6, 0, func(i, j int) bool { return true }, func(i, j int) bool { return i != 4 })
	md.Reset()
	if err := NewReport(b, c).WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "#### Rows the candidate did worse on") || strings.Contains(md.String(), "Test cases the candidate") {
		t.Errorf("Markdown without repeats:\n%s", md.String())
	}
}

// parseGates parses gates for a test.
func parseGates(t *testing.T, texts ...string) []Gate {
	t.Helper()
	var gates []Gate
	for _, text := range texts {
		g, err := ParseGate(text)
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, g)
	}
	return gates
}

// A mid-2024 listing with repeats whose every test case came back whole
// (K rows each) must not read as cut short. Two test cases of the test
// set share their inputs (the same question, two expected answers), and
// each had one repeat whose app call failed: the service writes no
// expected answers on such a row, so the two failed rows are keyed by
// the inputs alone and wait together for a case with room for both,
// which neither has (room 1 each). They stay a third "case" of 2 rows,
// and the two real cases count 2 rows each: three cases short, every
// gate failed as "a listing cut short", where nothing was cut.
func TestFailedRowsOfSameInputCasesAreNotShort(t *testing.T) {
	const k = 3
	var rows []models.EvaluationScenario
	id := 0
	add := func(s models.EvaluationScenario) {
		s.ID = fmt.Sprint("r", id)
		id++
		rows = append(rows, s)
	}
	// Two cases with distinct inputs, whole, to give the gates values.
	for _, country := range []string{"France", "Spain"} {
		for range k {
			add(answered(country, country, country, 0.001, 1, boolResult(exactMatch.ID, true)))
		}
	}
	// Repeat r of the test set: each evaluation lists every test case once.
	for r := range k {
		for _, expected := range []string{"Bern", "Zurich"} {
			if r == k-1 {
				add(failedRow("Switzerland", "timeout", exactMatch.ID))
				continue
			}
			add(answered("Switzerland", expected, "Bern", 0.001, 1, boolResult(exactMatch.ID, expected == "Bern")))
		}
	}
	cand := Run{Scenarios: rows, Repeats: k, Evaluation: evaluationOf("eval-cand", "next", exactMatch)}
	r := NewReport(Run{}, cand)
	cases := r.CandidateCases
	if cases == nil {
		t.Fatal("no CandidateCases")
	}
	if cases.Short != 0 || cases.Cases != 4 {
		t.Errorf("CandidateCases: %d cases, %d short; want 4 cases (each of its %d rows), none short", cases.Cases, cases.Short, k)
	}
	_ = r.Check(parseGates(t, "app_errors <= 2", "mean(Exact match) >= 0.1")...)
	for _, g := range r.Gates {
		if !g.Passed && strings.Contains(g.Reason, "fewer rows than") {
			t.Errorf("%s failed as a listing cut short: %s", g.Gate, g.Reason)
		}
	}
}

// Run.Repeats says NewReport takes the larger of the two runs' repeats:
// a baseline run once per test case compared with a candidate run three
// times (or the other way round) is a listing with every row there. Each
// case of the run with one repeat now counts as short of the other's
// three, and its gates fail as "a listing cut short".
func TestRunsOfDifferentRepeatsAreNotCutShort(t *testing.T) {
	pass := func(i, j int) bool { return true }
	once, _ := casesRuns(50, 1, pass, pass)
	_, thrice := casesRuns(50, 3, pass, pass)
	gates := parseGates(t, "mean(Exact match) >= 0.5", "app_errors <= 0", "worse(Exact match) <= 0")
	for _, tc := range []struct {
		name       string
		base, cand Run
	}{{"baseline once, candidate thrice", once, thrice}, {"baseline thrice, candidate once", thrice, once}} {
		r := NewReport(tc.base, tc.cand)
		_ = r.Check(gates...)
		for _, g := range r.Gates {
			if !g.Passed && strings.Contains(g.Reason, "fewer rows than") {
				t.Errorf("%s: %s failed as a listing cut short: %s", tc.name, g.Gate, g.Reason)
			}
		}
	}
}

// SummaryIntervalCases says how many test cases an evaluator's interval
// is over, so that the footnote can say when that is fewer than
// SummaryCases. A pass/fail evaluator absent from every row of a case
// (its config added to the evaluation later, or a result the service
// lost) has no value on that case: its interval, over its own cases
// (Rates + Lacking), is over fewer cases than SummaryCases, yet
// SummaryIntervalCases answers every case and the footnote stays silent.
func TestIntervalCasesOfAnEvaluatorMissingOnACase(t *testing.T) {
	const k = 2
	var rows []models.EvaluationScenario
	for i, country := range []string{"France", "Spain", "Italy", "Peru"} {
		for j := range k {
			results := []models.ScenarioResult{numberResult(scoreConfig.ID, 1)}
			if i < 3 {
				results = append(results, boolResult(exactMatch.ID, j == 0 || i == 0))
			}
			s := answered(country, country, country, 0.001, 1, results...)
			s.ID = fmt.Sprint(country, j)
			rows = append(rows, s)
		}
	}
	r := NewReport(Run{}, Run{Scenarios: rows, Repeats: k, Evaluation: evaluationOf("eval-cand", "next", exactMatch, scoreConfig)})
	cases, _ := r.SummaryCases()
	stats := r.CandidateCases.Evaluators[exactMatch.ID]
	over := stats.Rates + stats.Lacking
	if got := r.SummaryIntervalCases(exactMatch.ID); got != over {
		t.Errorf("SummaryIntervalCases(exact) = %d of %d cases; its interval is over %d (Rates %d + Lacking %d)", got, cases, over, stats.Rates, stats.Lacking)
	}
}
