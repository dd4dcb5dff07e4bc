package evals

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// 5 test cases × 3 identical repeats: the rows' interval (15 rows taken as
// independent) is narrower than the cases' (5 cases), and the summary
// shows the cases'.
func TestSummaryIntervalOverCases(t *testing.T) {
	byCase := func(i, j int) bool { return i%2 == 0 } // 3 of 5 cases pass, every repeat alike
	_, cand := casesRuns(5, 3, byCase, byCase)
	r := NewReport(Run{}, cand)
	if cases, repeats := r.SummaryCases(); cases != 5 || repeats != 3 {
		t.Fatalf("SummaryCases = %d, %d; want 5 cases of 3 repeats", cases, repeats)
	}
	m := r.CandidateSummary.Evaluators[exactMatch.ID]
	low, high := r.SummaryInterval(exactMatch.ID)
	passes := []PassCount{{3, 3}, {0, 3}, {3, 3}, {0, 3}, {3, 3}}
	if wl, wh := PassRateLow(passes, 0.975), PassRateHigh(passes, 0.975); math.Abs(low-wl) > 1e-12 || math.Abs(high-wh) > 1e-12 {
		t.Errorf("pass rate over cases: %v – %v, want Korn–Graubard's %v – %v", low, high, wl, wh)
	}
	if !(low < m.Low && high > m.High) {
		t.Errorf("cases' interval %v – %v is not wider than the rows' %v – %v", low, high, m.Low, m.High)
	}
	nLow, nHigh := r.SummaryInterval(scoreConfig.ID)
	scores := []float64{1, 0, 1, 0, 1}
	if wl, wh := MeanLow(scores, 0.975), MeanHigh(scores, 0.975); math.Abs(nLow-wl) > 1e-12 || math.Abs(nHigh-wh) > 1e-12 {
		t.Errorf("score over cases: %v – %v, want t's %v – %v", nLow, nHigh, wl, wh)
	}
	if s := r.CandidateSummary.Evaluators[scoreConfig.ID]; !(nLow < s.Low && nHigh > s.High) {
		t.Errorf("score: cases' interval %v – %v is not wider than the rows' %v – %v", nLow, nHigh, s.Low, s.High)
	}

	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	cell := "| " + formatPercent(low) + " – " + formatPercent(high) + " |"
	if !strings.Contains(out, cell) || strings.Contains(out, formatPercent(m.Low)+" – "+formatPercent(m.High)) {
		t.Errorf("Markdown does not show the cases' interval %s (rows' %v – %v):\n%s", cell, m.Low, m.High, out)
	}
	if !strings.Contains(out, "the 95% confidence intervals over the 5 test cases, each its mean over its repeats") {
		t.Errorf("Markdown does not say the intervals are over the 5 cases:\n%s", out)
	}

	// Without repeats: the rows' interval, and no word of cases.
	_, once := casesRuns(5, 0, byCase, byCase)
	r = NewReport(Run{}, once)
	m = r.CandidateSummary.Evaluators[exactMatch.ID]
	if low, high := r.SummaryInterval(exactMatch.ID); low != m.Low || high != m.High {
		t.Errorf("without repeats: %v – %v, want the rows' %v – %v", low, high, m.Low, m.High)
	}
	if cases, repeats := r.SummaryCases(); cases != 0 || repeats != 0 {
		t.Errorf("without repeats: SummaryCases = %d, %d", cases, repeats)
	}
	md.Reset()
	_ = r.WriteMarkdown(&md)
	if strings.Contains(md.String(), "test case") {
		t.Errorf("Markdown without repeats speaks of test cases:\n%s", md.String())
	}
}

// A score that errored on one repeat of a case leaves that case out of
// the score's interval (a case mean needs every repeat's value), and the
// report says over how many cases that interval is, while the pass rate's
// stays over all of them.
func TestSummaryIntervalSaysWhenFewerCases(t *testing.T) {
	byCase := func(i, j int) bool { return i%2 == 0 }
	_, cand := casesRuns(5, 3, byCase, byCase)
	for k, res := range cand.Scenarios[4].Results { // case 1, its second repeat
		if res.EvaluatorConfig == scoreConfig.ID {
			cand.Scenarios[4].Results[k] = errorResult(scoreConfig.ID, "judge timed out")
		}
	}
	r := NewReport(Run{}, cand)
	if got := r.SummaryIntervalCases(exactMatch.ID); got != 5 {
		t.Errorf("pass rate's interval over %d cases, want 5", got)
	}
	if got := r.SummaryIntervalCases(scoreConfig.ID); got != 4 {
		t.Errorf("score's interval over %d cases, want the 4 with a value on every repeat", got)
	}
	low, high := r.SummaryInterval(scoreConfig.ID)
	if wl, wh := MeanLow([]float64{1, 1, 0, 1}, 0.975), MeanHigh([]float64{1, 1, 0, 1}, 0.975); math.Abs(low-wl) > 1e-12 || math.Abs(high-wh) > 1e-12 {
		t.Errorf("score's interval %v – %v, want t's over the 4 whole cases %v – %v", low, high, wl, wh)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "is over the 4 of them with a value on every repeat.") || strings.Count(md.String(), "with a value on every repeat") != 1 {
		t.Errorf("Markdown does not say, for the score alone, that its interval is over 4 cases:\n%s", md.String())
	}
	if _, once := casesRuns(5, 0, byCase, byCase); NewReport(Run{}, once).SummaryIntervalCases(scoreConfig.ID) != 0 {
		t.Error("without repeats: SummaryIntervalCases is not 0")
	}
}
