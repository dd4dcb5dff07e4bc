package evals

import "math"

// This file gives the summary tables their interval with repeats: the K
// repeats of a test case are not K independent rows, so the interval of
// a mean is over the cases (as the bound gates read them), never over
// the rows, which would make it too narrow.

// summaryConfidence is the two-sided level of a summary's intervals.
const summaryConfidence = 0.95

// SummaryCases returns the test cases the summary's intervals are over
// (see SummaryInterval) and the repeats of each: 0, 0 when the runs have
// no repeats or their cases are not known, and the intervals are over
// rows.
func (r *Report) SummaryCases() (cases, repeats int) {
	c := r.summaryCases()
	if c == nil {
		return 0, 0
	}
	return c.Cases, r.repeats()
}

// summaryCases returns the candidate's test cases when its runs have
// repeats: its side of the Comparison, else CandidateCases.
func (r *Report) summaryCases() *CaseSummary {
	switch {
	case r.repeats() <= 1:
		return nil
	case r.Comparison != nil:
		return &r.Comparison.CandidateCases
	}
	return r.CandidateCases
}

// SummaryInterval returns the two-sided 95% confidence interval of an
// evaluator's mean in CandidateSummary, as the summary tables show it.
// Without repeats it is the Metric's Low and High, over rows. With
// repeats (see SummaryCases) it is over the test cases, each case's
// value its mean over its repeats: for a pass rate, the Korn–Graubard
// interval of the pass rate over clusters (PassRateLow and PassRateHigh
// at 97.5%, a case without a value a fail, as in Metric.Mean); for
// numbers, Student's t interval of the mean of the case means (MeanLow
// and MeanHigh at 97.5%) over the cases with a value on every repeat.
// It is NaN where no interval exists (fewer than two cases).
func (r *Report) SummaryInterval(evaluatorID string) (low, high float64) {
	m, ok := r.CandidateSummary.Evaluators[evaluatorID]
	if !ok {
		return math.NaN(), math.NaN()
	}
	cases := r.summaryCases()
	if cases == nil {
		return m.Low, m.High
	}
	s, ok := cases.Evaluators[evaluatorID]
	if !ok || m.Count == 0 {
		return math.NaN(), math.NaN()
	}
	one := (1 + summaryConfidence) / 2 // each side's level
	if m.Bool {
		if !s.isRate() {
			return math.NaN(), math.NaN()
		}
		return s.rateBounds(0, false, false, one)
	}
	return s.numberBounds(one)
}

// SummaryIntervalCases returns how many test cases SummaryInterval's
// interval of an evaluator is over, with repeats: for a pass rate every
// case with a result of the evaluator, lacking ones included; for
// numbers only the cases with a value on every repeat (a case mean
// needs each repeat's value), so that a report can say when an interval
// covers fewer cases than SummaryCases. It is 0 without repeats or for an
// evaluator the candidate has no result for.
func (r *Report) SummaryIntervalCases(evaluatorID string) int {
	cases := r.summaryCases()
	if cases == nil {
		return 0
	}
	s, ok := cases.Evaluators[evaluatorID]
	switch {
	case !ok:
		return 0
	case s.isRate():
		return s.Cases // those with a result, lacking ones included
	}
	return s.Values
}
