package evals

import (
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

func TestParseGate(t *testing.T) {
	tests := []struct {
		text string
		want Gate
	}{
		{"Exact match >= 0.8", Gate{Measure: MeasureMean, Evaluator: "Exact match", Op: AtLeast, Limit: 0.8}},
		{"Exact match>=80%", Gate{Measure: MeasureMean, Evaluator: "Exact match", Op: AtLeast, Limit: 0.8, Percent: true}},
		{"  ev-123 > 0.5 ", Gate{Measure: MeasureMean, Evaluator: "ev-123", Op: Above, Limit: 0.5}},
		{"worse(Exact match) <= 3", Gate{Measure: MeasureWorseRows, Evaluator: "Exact match", Op: AtMost, Limit: 3}},
		{"regression_p( Edit distance )>=0.05", Gate{Measure: MeasureRegressionP, Evaluator: "Edit distance", Op: AtLeast, Limit: 0.05}},
		{"errors(critique) < 1", Gate{Measure: MeasureErrors, Evaluator: "critique", Op: Below, Limit: 1}},
		{"mean(latency.p95) >= 1", Gate{Measure: MeasureMean, Evaluator: "latency.p95", Op: AtLeast, Limit: 1}},
		{"latency.p95 <= 2.5", Gate{Measure: MeasureLatencyP95, Op: AtMost, Limit: 2.5}},
		{"cost.mean<=1e-3", Gate{Measure: MeasureCostMean, Op: AtMost, Limit: 0.001}},
		{"app_errors <= 0", Gate{Measure: MeasureAppErrors, Op: AtMost, Limit: 0}},
		{"a -> b >= -1", Gate{Measure: MeasureMean, Evaluator: "a -> b", Op: AtLeast, Limit: -1}},
		{"Score (v2) >= 0.5", Gate{Measure: MeasureMean, Evaluator: "Score (v2)", Op: AtLeast, Limit: 0.5}},
		{"median(x) >= 1", Gate{Measure: MeasureMean, Evaluator: "median(x)", Op: AtLeast, Limit: 1}},
		{"app_errors <= baseline", Gate{Measure: MeasureAppErrors, Op: AtMost, RelativeToBaseline: true}},
		{"app_errors<=baseline+2", Gate{Measure: MeasureAppErrors, Op: AtMost, Limit: 2, RelativeToBaseline: true}},
		{"app_errors < Baseline - 1", Gate{Measure: MeasureAppErrors, Op: Below, Limit: -1, RelativeToBaseline: true}},
		{"Exact match >= 90% allowing 2 failed rows", Gate{Measure: MeasureMean, Evaluator: "Exact match", Op: AtLeast, Limit: 0.9, AllowFailedRows: 2, Percent: true}},
		{"worse(Exact match) <= 0 allowing 1 failed row", Gate{Measure: MeasureWorseRows, Evaluator: "Exact match", Op: AtMost, AllowFailedRows: 1}},
		{"latency.p95 <= 3  ALLOWING 5 FAILED ROWS ", Gate{Measure: MeasureLatencyP95, Op: AtMost, Limit: 3, AllowFailedRows: 5}},
		{"allowing >= 0.5", Gate{Measure: MeasureMean, Evaluator: "allowing", Op: AtLeast, Limit: 0.5}},
		{"baseline >= 0.5", Gate{Measure: MeasureMean, Evaluator: "baseline", Op: AtLeast, Limit: 0.5}},
		// % where the measure is a rate: a mean, a p-value.
		{"mean(Similarity) >= 75%", Gate{Measure: MeasureMean, Evaluator: "Similarity", Op: AtLeast, Limit: 0.75, Percent: true}},
		{"regression_p(Exact match) >= 5%", Gate{Measure: MeasureRegressionP, Evaluator: "Exact match", Op: AtLeast, Limit: 0.05, Percent: true}},
		{"Exact match >= 57%", Gate{Measure: MeasureMean, Evaluator: "Exact match", Op: AtLeast, Limit: 0.57, Percent: true}},
		{"Exact match >= 0.5e-1%", Gate{Measure: MeasureMean, Evaluator: "Exact match", Op: AtLeast, Limit: 0.0005, Percent: true}},
		{"x < -1e30%", Gate{Measure: MeasureMean, Evaluator: "x", Op: Below, Limit: -1e28, Percent: true}},
	}
	for _, tt := range tests {
		got, err := ParseGate(tt.text)
		if err != nil || got != tt.want {
			t.Errorf("ParseGate(%q) = %+v, %v; want %+v", tt.text, got, err, tt.want)
			continue
		}
		again, err := ParseGate(got.String())
		if err != nil || again != got {
			t.Errorf("ParseGate(%q).String() = %q, which parses as %+v, %v", tt.text, got.String(), again, err)
		}
	}

	bad := []struct{ text, says string }{
		{"Exact match 0.8", "no operator"},
		{">= 0.8", "no measure or evaluator"},
		{"Exact match >=", "no number"},
		{"Exact match >= high", "not a finite number"},
		{"Exact match >= NaN", "not a finite number"},
		{"Exact match >= Inf", "not a finite number"},
		{"Exact match == 0.8", "unknown operator"},
		{"Exact match => 0.8", "unknown operator"},
		{"worse() <= 1", "no evaluator name"},
		{"Exact match >= baseline", "only app_errors takes a limit relative to the baseline"},
		{"app_errors <= baseline * 2", "want baseline, baseline + NUMBER or baseline - NUMBER"},
		{"app_errors <= baselines", "not a finite number"},
		// % on a count of rows would be a fraction of one row, and on a
		// cost or a latency means nothing.
		{"worse(Exact match) <= 80%", "worse(Exact match) counts rows, and a limit in % would be a fraction of one row: write a number of rows"},
		{"errors(Exact match) < 10 %", "errors(Exact match) counts rows"},
		{"app_errors <= 5%", "app_errors counts rows"},
		{"app_errors <= baseline + 10%", "app_errors counts rows"},
		{"latency.p95 <= 50%", "latency.p95 is in seconds, not a rate"},
		{"cost.total < 1% allowing 2 failed rows", "cost.total is a cost, not a rate"},
	}
	for _, tt := range bad {
		_, err := ParseGate(tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.text)) {
			t.Errorf("ParseGate(%q) error = %v; want one quoting the gate and saying %q", tt.text, err, tt.says)
		}
	}
}

func TestInvalidGates(t *testing.T) {
	baseline, candidate := capitalsRuns()
	r := NewReport(baseline, candidate)
	tests := []struct {
		gate Gate
		says string
	}{
		{MinMean("Exact matsh", 0.5), `no evaluator named "Exact matsh"; did you mean "Exact match"?`},
		{MinMean("exact MATCH", 0.5), `did you mean "Exact match"?`},
		{MinMean("wrose(Edit distance)", 0), `did you mean worse(Edit distance)?`},
		{MinMean("latncy.p95", 2), `did you mean "latency.p95"?`},
		{MinMean("Nothing like it", 0.5), `no evaluator named "Nothing like it" (known: "Edit distance", "Exact match")`},
		{Gate{Measure: "wrose", Evaluator: "Exact match", Op: AtMost}, `unknown measure "wrose"; did you mean "worse"?`},
		{Gate{Measure: MeasureMean, Evaluator: "Exact match", Op: "=>"}, "unknown operator"},
		{Gate{Measure: MeasureMean, Evaluator: "Exact match", Op: AtLeast, RelativeToBaseline: true}, "only app_errors"},
		{MinMean("Exact match", 0.5).AllowingFailedRows(-1), "negative"},
		{Gate{Measure: MeasureLatencyP95, Op: AtMost, Limit: 0.5, Percent: true}, "latency.p95 is in seconds, not a rate"},
		{Gate{Measure: MeasureWorseRows, Evaluator: "Exact match", Op: AtMost, Limit: 0.5, Percent: true}, "counts rows"},
	}
	for _, tt := range tests {
		err := r.Check(tt.gate)
		if !errors.Is(err, ErrInvalidGate) || !r.Gates[0].Invalid || !strings.Contains(r.Gates[0].Reason, tt.says) {
			t.Errorf("Check(%s) = %v (reason %q), want an invalid gate saying %q", tt.gate, err, r.Gates[0].Reason, tt.says)
		}
	}
	// A gate by id of an evaluator the runs have no value of is valid: it
	// fails on the missing values.
	r.Evaluators = append(r.Evaluators, Evaluator{ID: "ev-silent"})
	if err := r.Check(MinMean("ev-silent", 0)); errors.Is(err, ErrInvalidGate) || err == nil || !strings.Contains(r.Gates[0].Reason, "no result for this evaluator") {
		t.Errorf("a gate on a known evaluator without results = %v, want a failure that is not invalid", err)
	}
}

func TestGateText(t *testing.T) {
	var g Gate
	if err := g.UnmarshalText([]byte("worse(Exact match) <= 2")); err != nil || g != MaxWorseRows("Exact match", 2) {
		t.Errorf("UnmarshalText = %+v, %v; want MaxWorseRows(\"Exact match\", 2)", g, err)
	}
	text, _ := NoSignificantRegression("Exact match", 0.05).MarshalText()
	if string(text) != "regression_p(Exact match) >= 0.05" {
		t.Errorf("MarshalText = %q, want %q", text, "regression_p(Exact match) >= 0.05")
	}
	if err := g.UnmarshalText([]byte("nonsense")); err == nil {
		t.Error("UnmarshalText accepted a gate without operator")
	}
}

func TestReportCheck(t *testing.T) {
	baseline, candidate := capitalsRuns()
	r := NewReport(baseline, candidate)
	gates := []Gate{
		MinMean("Exact match", 0.7),                  // 6/8, Nigeria's error a fail: passes
		MinMean("Exact match", 0.9),                  // fails
		MaxWorseRows("Edit distance", 0),             // Australia got worse, Nigeria errored: fails
		NoSignificantRegression("Exact match", 0.05), // 3 better, 2 worse: p = P(X ≥ 2 | 5) = 0.8125
		MaxAppErrors(0),                              // Nigeria: fails
		MaxP95Latency(5).AllowingFailedRows(1),       // Nigeria has no latency, as allowed: passes
		MinMean("Exact matsh", 0.1),                  // a typo: fails, invalid
	}
	err := r.Check(gates...)
	if !errors.Is(err, ErrGateFailed) || !errors.Is(err, ErrInvalidGate) {
		t.Fatalf("Check error = %v, want one matching ErrGateFailed and ErrInvalidGate", err)
	}
	var ge *GateError
	if !errors.As(err, &ge) || len(ge.Failed) != 4 || ge.Total != 7 || len(ge.Invalid()) != 1 {
		t.Fatalf("Check error = %#v, want a *GateError with 4 of 7 gates failed, 1 invalid", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"4 of 7 gates failed",
		"Exact match >= 0.9 failed: measured 0.75, limit >= 0.9 (1 of 8 rows without a value (1 errored), counted as fails)",
		"worse(Edit distance) <= 0 failed: measured 2, limit <= 0 (1 row without a candidate value counted as worse)",
		"app_errors <= 0 failed: measured 1, limit <= 0",
		`Exact matsh >= 0.1 failed: no evaluator named "Exact matsh"; did you mean "Exact match"? (known: "Edit distance", "Exact match")`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	wantPassed := []bool{true, false, false, true, false, true, false}
	for i, g := range r.Gates {
		if g.Passed != wantPassed[i] {
			t.Errorf("gate %s passed = %v, want %v (%s)", g.Gate, g.Passed, wantPassed[i], g)
		}
	}
	if !closeTo(r.Gates[3].Measured, 26.0/32, 1e-12) {
		t.Errorf("regression p = %v, want P(X ≥ 2) = 26/32 for X ~ Binomial(5, 1/2)", r.Gates[3].Measured)
	}
	if err := r.Check(gates[0], gates[3], gates[5]); err != nil || len(r.Gates) != 3 {
		t.Errorf("Check of passing gates = %v with %d results, want nil and 3", err, len(r.Gates))
	}
	if err := r.Check(gates[1]); errors.Is(err, ErrInvalidGate) {
		t.Errorf("a failing but valid gate matches ErrInvalidGate: %v", err)
	}
}

func TestCheckWithoutBaseline(t *testing.T) {
	_, candidate := capitalsRuns()
	r := NewReport(Run{}, candidate)
	err := r.Check(MaxWorseRows("Exact match", 5), MaxMeanCost(1).AllowingFailedRows(1), Gate{Measure: "median", Op: AtMost, Limit: 1}, Gate{Evaluator: "Exact match", Op: "~", Limit: 1})
	var ge *GateError
	if !errors.As(err, &ge) || len(ge.Failed) != 3 {
		t.Fatalf("Check = %v, want 3 failures", err)
	}
	for i, want := range []string{"needs a baseline", "unknown measure", "unknown operator"} {
		if !strings.Contains(ge.Failed[i].Reason, want) || !math.IsNaN(ge.Failed[i].Measured) {
			t.Errorf("failure %d = %+v, want a NaN measure and a reason saying %q", i, ge.Failed[i], want)
		}
	}
	// Without costs or values, a gate cannot pass.
	results, err := Check(Summary{}, nil, nil, MaxMeanCost(1), MinMean("x", 0))
	if err == nil || results[0].Passed || results[1].Passed {
		t.Errorf("Check on an empty summary = %+v, %v; want both gates failed", results, err)
	}
}

// fakeTB records what RequireGates does to a test.
type fakeTB struct {
	helper bool
	failed string
}

func (f *fakeTB) Helper()                           { f.helper = true }
func (f *fakeTB) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

func TestRequireGates(t *testing.T) {
	baseline, candidate := capitalsRuns()
	r := NewReport(baseline, candidate)
	var tb fakeTB
	RequireGates(&tb, r, MinMean("Exact match", 0.5))
	if tb.failed != "" || !tb.helper {
		t.Errorf("a passing gate failed the test (%q) or did not mark a helper (%v)", tb.failed, tb.helper)
	}
	RequireGates(&tb, r, MinMean("Exact match", 0.99), MaxAppErrors(0))
	want := r.Check(MinMean("Exact match", 0.99), MaxAppErrors(0)).Error()
	if tb.failed != want {
		t.Errorf("RequireGates failed the test with %q, want the check's error %q", tb.failed, want)
	}
	RequireGates(t, r, MinMean("Exact match", 0.5)) // *testing.T satisfies TB
}

func FuzzParseGate(f *testing.F) {
	for _, seed := range []string{"Exact match >= 0.8", "worse(x)<=3", "latency.p95 <= 2", "a<b<=3%", "(>=)", "mean(() >= 1",
		"low(x) >= 0.8 at 90% confidence", "diff_low(y)>=-5% at 99.5% confidence allowing 2 failed rows", "flaky(z) <= 2"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ParseGate(text)
		if err != nil {
			if len(err.Error()) > 600 {
				t.Fatalf("error of %d bytes: unbounded", len(err.Error()))
			}
			return
		}
		if len(g.Evaluator) > 0 && len(g.Evaluator) <= 120 {
			again, err := ParseGate(g.String())
			if err != nil || again != g {
				t.Fatalf("ParseGate(%q) = %+v, whose String %q parses as %+v, %v", text, g, g.String(), again, err)
			}
		}
	})
}

// A limit in % fits a rate only. "Edit distance <= 10%" on a mid-2024 edit
// distance (a count of edits) was accepted as 0.1 edits: the parser knows
// no evaluator, so Check finds it invalid, from the evaluator's key or
// from values beyond [0, 1]. A pass rate, a score on [0, 1] and today's
// (2026) Levenshtein, a similarity, keep their %.
func TestPercentOnlyOnRates(t *testing.T) {
	// The values of a run of 20 rows: i is the row.
	runOf := func(config models.EvaluatorConfig, value func(i int) models.ScenarioResult) *Report {
		var run Run
		for i := range 20 {
			country := fmt.Sprintf("C%02d", i+1)
			run.Scenarios = append(run.Scenarios, answered(country, "Capital of "+country, "Capital of "+country, 0.001, 1, value(i)))
		}
		run.Evaluation = evaluationOf("eval-cand", "next", config)
		return NewReport(Run{}, run)
	}
	distance := func(max int) func(int) models.ScenarioResult {
		return func(i int) models.ScenarioResult { return numberResult(editDistance.ID, float64(i%(max+1))) }
	}
	webhook := models.EvaluatorConfig{ID: "ev-hook", Name: "Helpfulness", EvaluatorKey: "auto_webhook_test"}
	levenshtein2026 := models.EvaluatorConfig{ID: "ev-lev", Name: "Edit distance", Slug: "edit-distance",
		EvaluatorKey: "auto_levenshtein_distance", URI: "agenta:builtin:auto_levenshtein_distance:v0"}
	baseline, candidate := capitalsRuns()
	capitals := NewReport(baseline, candidate)

	invalid := []struct {
		name   string
		report *Report
		gate   string
		says   string
	}{
		{"edit distances up to 7", capitals, "Edit distance <= 10%", `"Edit distance" is an edit distance, a count of edits, not a rate: write the limit without %`},
		{"edit distances of 0 and 1 only", runOf(editDistance, distance(1)), "Edit distance <= 50%", "write the limit without %"},
		{"a webhook's score up to 10", runOf(webhook, func(i int) models.ScenarioResult { return numberResult(webhook.ID, float64(i%11)) }),
			"Helpfulness >= 70%", `the values of "Helpfulness" go from 0 to 10, beyond [0, 1]: its mean is not a rate; write the limit without %`},
		{"a negative score", runOf(webhook, func(i int) models.ScenarioResult { return numberResult(webhook.ID, float64(i%2)-0.5) }),
			"Helpfulness >= 10%", "go from -0.5 to 0.5"},
	}
	for _, tt := range invalid {
		gate, err := ParseGate(tt.gate)
		if err != nil {
			t.Fatalf("ParseGate(%q): %v", tt.gate, err)
		}
		err = tt.report.Check(gate)
		r := tt.report.Gates[0]
		if !errors.Is(err, ErrInvalidGate) || !r.Invalid || !strings.Contains(r.Reason, tt.says) || !strings.HasPrefix(r.String(), tt.gate+" failed: ") {
			t.Errorf("%s: Check(%q) = %v (%s), want an invalid gate, named as written, saying %q", tt.name, tt.gate, err, r, tt.says)
		}
	}

	valid := []struct {
		name     string
		report   *Report
		gate     string
		measured float64
		passed   bool
	}{
		{"a pass rate", capitals, "Exact match >= 70%", 0.75, true},
		{"a pass rate below its limit", capitals, "Exact match >= 90%", 0.75, false},
		{"a score on [0, 1]", runOf(scoreConfig, func(i int) models.ScenarioResult { return numberResult(scoreConfig.ID, float64(i%2)) }), "score >= 50%", 0.5, true},
		{"a 2026 Levenshtein similarity", runOf(levenshtein2026, func(i int) models.ScenarioResult { return numberResult(levenshtein2026.ID, 0.9) }), "Edit distance >= 80%", 0.9, true},
		{"an edit distance without %", runOf(editDistance, distance(1)), "Edit distance <= 0.5", 0.5, true},
		{"a p-value", capitals, "regression_p(Exact match) >= 5%", 26.0 / 32, true},
	}
	for _, tt := range valid {
		gate, err := ParseGate(tt.gate)
		if err != nil {
			t.Fatalf("ParseGate(%q): %v", tt.gate, err)
		}
		err = tt.report.Check(gate)
		r := tt.report.Gates[0]
		if errors.Is(err, ErrInvalidGate) || r.Passed != tt.passed || !closeTo(r.Measured, tt.measured, 1e-12) {
			t.Errorf("%s: Check(%q) = %v (%s), want measured %v, passed %v", tt.name, tt.gate, err, r, tt.measured, tt.passed)
		}
	}
}

// "57%" is exactly 0.57: 57 * 0.01 is 0.5700000000000001, and 57 right
// rows of 100 failed ">= 57%".
func TestPercentIsExact(t *testing.T) {
	var run Run
	for i := range 100 {
		country := fmt.Sprintf("C%03d", i)
		run.Scenarios = append(run.Scenarios, answered(country, "x", "x", 0.001, 1, boolResult(exactMatch.ID, i < 57)))
	}
	run.Evaluation = evaluationOf("eval-cand", "next", exactMatch)
	r := NewReport(Run{}, run)
	for _, text := range []string{"Exact match >= 57%", "Exact match >= 57.0 %", "Exact match >= 5.7e1%", "Exact match >= 0.57"} {
		gate, err := ParseGate(text)
		if err != nil || gate.Limit != 0.57 {
			t.Errorf("ParseGate(%q) = %+v, %v; want the limit 0.57", text, gate, err)
			continue
		}
		if err := r.Check(gate); err != nil {
			t.Errorf("%q on 57 right rows of 100: %v", text, err)
		}
	}
}

// A limit in % reads back as the same float64 from String, whatever its
// digits: String writes the shortest decimal of the limit, times 100.
func TestPercentRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		x := math.Float64frombits(rng.Uint64())
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e306 {
			continue
		}
		if rng.IntN(2) == 0 {
			x = float64(rng.IntN(10001)) / 10000 // a rate's usual limits
		}
		g := Gate{Measure: MeasureMean, Evaluator: "Exact match", Op: AtLeast, Limit: x, Percent: true}
		again, err := ParseGate(g.String())
		if err != nil || again != g {
			t.Fatalf("Gate{Limit: %v, Percent: true}.String() = %q, which parses as %+v, %v", x, g.String(), again, err)
		}
	}
}

// A candidate that lists a scenario twice is judged on each scenario once,
// and no gate holds on it: a listing that repeats rows may have lost
// others. Its reports list the rows counted, once each. A baseline's
// repeats are counted once and fail nothing.
func TestDuplicateScenarioFailsTheGates(t *testing.T) {
	baseline, candidate := capitalsRuns()
	for i := range baseline.Scenarios {
		baseline.Scenarios[i].ID = fmt.Sprintf("b%d", i)
		candidate.Scenarios[i].ID = fmt.Sprintf("c%d", i)
	}
	gates := []Gate{MinMean("Exact match", 0.7), MaxAppErrors(1)}
	clean := NewReport(baseline, candidate)
	if err := clean.Check(gates...); err != nil {
		t.Fatalf("the runs without repeats: %v, want every gate to hold", err)
	}
	baseline.Scenarios = append(baseline.Scenarios, baseline.Scenarios[0])
	if err := NewReport(baseline, candidate).Check(gates...); err != nil {
		t.Errorf("a baseline that repeats a row: %v, want every gate to hold", err)
	}
	// Brasília, a pass, listed three times more.
	passed := slices.IndexFunc(candidate.Scenarios, func(s models.EvaluationScenario) bool { return s.OutputText() == "Brasília" })
	candidate.Scenarios = append(candidate.Scenarios, candidate.Scenarios[passed], candidate.Scenarios[passed], candidate.Scenarios[passed])
	for name, run := range map[string]Run{"in memory": candidate, "streamed": {Evaluation: candidate.Evaluation, Rows: func() iter.Seq2[models.EvaluationScenario, error] { return seqOf(candidate.Scenarios) }}} {
		r := NewReport(baseline, run)
		if s := r.CandidateSummary; s.Rows != 8 || s.Duplicates != 3 || s.Evaluators[exactMatch.ID].Mean != 6.0/8 {
			t.Errorf("%s: candidate summary %d rows, %d duplicates, pass rate %v; want 8, 3, 6/8", name, s.Rows, s.Duplicates, s.Evaluators[exactMatch.ID].Mean)
		}
		err := r.Check(gates...)
		if !errors.Is(err, ErrGateFailed) || errors.Is(err, ErrInvalidGate) {
			t.Fatalf("%s: Check = %v, want the gates to fail (not as invalid)", name, err)
		}
		for _, g := range r.Gates {
			if g.Passed || !strings.Contains(g.Reason, `lists scenario "c`) || !strings.Contains(g.Reason, "3 rows repeating") {
				t.Errorf("%s: %s, want it failed for the repeated scenario", name, g)
			}
		}
		var csv, junit, md strings.Builder
		if err := r.WriteCSV(&csv); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJUnit(&junit); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(csv.String(), "Brasília"); n != 3 { // the expected answer of each run's row, the candidate's output
			t.Errorf("%s: the CSV names Brasília %d times, want 3 (one row a run):\n%s", name, n, csv.String())
		}
		if !strings.Contains(junit.String(), `name="capitals.precise" tests="8"`) {
			t.Errorf("%s: JUnit's candidate suite is not of 8 rows:\n%s", name, junit.String())
		}
		if !strings.Contains(md.String(), "| Rows repeating a scenario id (left out) | 1 | 3 |") {
			t.Errorf("%s: Markdown does not count the repeats:\n%s", name, md.String())
		}
	}
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
		if d.Better(HigherIsBetter) != 0 || d.Worse(HigherIsBetter) != 6 || d.CandidateOnly != 20 || d.Baseline.Missing != 0 {
			t.Errorf("%s: better %d, worse %d, candidate-only %d, baseline missing %d; want 0, 6, 20, 0", id,
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

// Issue 28 case 2: a candidate listing each row twice with ids of their
// own, the first copy passing and the second failing, passed worse(...)
// and regression_p(...) while half its rows failed inputs the baseline
// passed. It is held to the baseline's rule: the comparison gates fail,
// naming the case; the Delta's rates count real rows (baseline 100%).
func TestCandidateRepeatingCasesFailsTheComparison(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario { return rightRow(i) })
	candidate.Scenarios = nil
	for i := range 8 {
		first, second := rightRow(i), wrongRow(i)
		first.ID, second.ID = fmt.Sprintf("c-%d-a", i), fmt.Sprintf("c-%d-b", i)
		candidate.Scenarios = append(candidate.Scenarios, first, second)
	}
	baseline.Scenarios = baseline.Scenarios[:8]
	r := NewReport(baseline, candidate)
	if got := r.Comparison.CandidateRepeats; got != 8 {
		t.Fatalf("CandidateRepeats = %d, want 8", got)
	}
	if d := r.Comparison.Evaluators[exactMatch.ID]; d.Baseline.Mean != 1 {
		t.Errorf("the baseline's rate is %v, want 1 (its real rows)", d.Baseline.Mean)
	}
	err := r.Check(MaxWorseRows("Exact match", 0), NoSignificantRegression("Exact match", 0.05))
	if !errors.Is(err, ErrGateFailed) {
		t.Fatalf("Check = %v, want both gates failed", err)
	}
	for _, g := range r.Gates {
		if g.Passed || !strings.Contains(g.Reason, `lists the test case "country=C01" more than once (8 rows`) {
			t.Errorf("%s: passed %v, reason %q; want a failure naming the repeated case", g.Gate, g.Passed, g.Reason)
		}
	}
	// The same listing as the baseline fails too.
	r = NewReport(candidate, baseline)
	if err := r.Check(MaxWorseRows("Exact match", 0)); err == nil || !strings.Contains(r.Gates[0].Reason, "the baseline run lists the test case") {
		t.Errorf("a baseline repeating cases: %v, want the comparison gate failed, naming it", err)
	}
}
