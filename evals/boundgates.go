package evals

import (
	"fmt"
	"math"
)

// This file measures the bound gates: low, high, pass_all and flaky on the
// candidate's cases, diff_low on the paired cases.

// checkOptions carries what a Report adds to a check: the candidate's
// cases when there is no comparison, and the confidence of the bounds.
type checkOptions struct {
	cases      *CaseSummary
	confidence float64
}

// short says why a run whose listing has test cases with fewer rows than
// the repeats asked for is no evidence, or "" when none is short: the one
// repeat that came back of a case would read as the case, so a case that
// passed once in three would count as passing all three. The baseline is
// read for a gate that compares with it; a baseline cut short can only
// lower the limit of app_errors <= baseline, which still judges.
func (o checkOptions) short(g Gate, candidate Summary, c *Comparison) string {
	side, cases := "candidate", o.candidateCases(candidate, c)
	if cases.Short == 0 && c != nil && g.comparesWithBaseline() && !g.RelativeToBaseline {
		side, cases = "baseline", c.BaselineCases
	}
	if cases.Short == 0 {
		return ""
	}
	return fmt.Sprintf("the %s run lists %s with fewer rows than the %d repeats asked for: a listing cut short is no evidence", side, plural(cases.Short, "test case"), cases.Repeats)
}

// level returns the confidence of a bound gate, or why there is none.
func (o checkOptions) level(g Gate) (float64, string) {
	switch c := o.confidence; {
	case g.Confidence != 0: // checked by malformed
		return g.Confidence, ""
	case c == 0:
		return DefaultConfidence, ""
	case !(c > 0.5 && c < 1):
		return 0, fmt.Sprintf("Report.Confidence %v is outside (0.5, 1): it is the level of a one-sided bound, such as 0.95", c)
	default:
		return c, ""
	}
}

// candidateCases returns the candidate's cases: the comparison's, else
// the report's, else the summary's rows, each a case.
func (o checkOptions) candidateCases(s Summary, c *Comparison) CaseSummary {
	switch {
	case c != nil && c.CandidateCases.Evaluators != nil:
		return c.CandidateCases
	case o.cases != nil:
		return *o.cases
	}
	return casesOfRows(s)
}

// casesOfRows reads a Summary as cases of one row each, for a report
// filled by hand: a pass rate from its passes, the t bound of numbers
// from the spread their 95% interval shows.
func casesOfRows(s Summary) CaseSummary {
	out := CaseSummary{Cases: s.Rows, Evaluators: make(map[string]CaseStats, len(s.Evaluators))}
	for id, m := range s.Evaluators {
		st := CaseStats{Cases: m.Rows(), Lacking: m.WithoutValue(), LackingRepeats: m.WithoutValue(), LackingRepeats2: float64(m.WithoutValue()), MaxRepeats: 1}
		if m.Bool {
			p := m.Passed()
			st.Rates, st.Passed, st.Trials, st.PassAll = m.Count, p, m.Count, p
			st.SumPassed2, st.SumPassedRepeats, st.SumRepeats2 = float64(p), float64(p), float64(m.Count)
		} else if m.Count > 0 {
			n := float64(m.Count)
			st.Numbers, st.Values, st.Sum = m.Count, m.Count, m.Mean*n
			st.SumSquares = m.Mean * m.Mean * n
			if m.Count > 1 && !math.IsNaN(m.Low) {
				sd := (m.Mean - m.Low) * math.Sqrt(n) / tQuantile(0.975, n-1)
				st.SumSquares += sd * sd * (n - 1)
			}
		}
		out.Evaluators[id] = st
	}
	return out
}

// measureCases measures low, high, pass_all or flaky on the candidate's
// cases. A case without a value is a fail of a pass rate (or a pass, where
// true is the worse verdict), and fails a bound on numbers unless allowed.
func measureCases(r GateResult, ev Evaluator, candidate Summary, comparison *Comparison, opts checkOptions) GateResult {
	g, m := r.Gate, r.Gate.measure()
	fail := func(format string, args ...any) GateResult {
		r.Reason = fmt.Sprintf(format, args...)
		return r
	}
	confidence, reason := opts.level(g)
	if reason != "" && boundMeasures[m] {
		r.Reason, r.Invalid = reason, true
		return r
	}
	cs := opts.candidateCases(candidate, comparison)
	unpaired := 0
	if comparison != nil {
		unpaired = comparison.UnpairedBaseline
	}
	st, ok := cs.Evaluators[ev.ID]
	if !ok {
		return fail("the candidate has no result for this evaluator on any of its %s", plural(cs.Cases, "case"))
	}
	missing := cs.Cases - st.Cases + unpaired
	lacking := st.Lacking + missing
	allowed := lacking > 0 && lacking <= g.AllowFailedRows
	cases := cs.Cases + unpaired
	rate := st.isRate()
	if st.Rates > 0 && st.Numbers > 0 {
		return fail("its values mix pass/fail verdicts and numbers: no bound fits both")
	}
	lackingDetail := ""
	if lacking > 0 {
		lackingDetail = fmt.Sprintf("%d of %s without a value", lacking, plural(cases, "case"))
		if unpaired > 0 {
			lackingDetail += fmt.Sprintf(" (%d of them cases of the baseline without a candidate row)", unpaired)
		}
		switch {
		case allowed:
			lackingDetail += ", left out as allowed"
		case rate && ev.Direction == LowerIsBetter:
			lackingDetail += ", counted as passes (the worse verdict)"
		case rate:
			lackingDetail += ", counted as fails"
		}
	}
	if (m == MeasurePassAll || m == MeasureFlaky) && !rate {
		return fail("%s needs a pass/fail evaluator, and this one scores numbers", m)
	}
	switch m {
	case MeasureFlaky:
		if st.MaxRepeats < 2 {
			return fail("no case was run more than once, so nothing shows whether its verdict holds: flakiness needs repeats (eval run --repeats K)")
		}
		r.Measured, r.Detail = float64(st.Flaky), lackingDetail
		return r
	case MeasurePassAll:
		denominator := cases
		if allowed {
			denominator -= lacking
		}
		if denominator == 0 {
			return fail("no case with a value")
		}
		r.Measured, r.Detail = float64(st.PassAll)/float64(denominator), lackingDetail
		if ev.Direction == LowerIsBetter && !allowed {
			r.Measured = float64(st.PassAll+lacking) / float64(denominator)
		}
		return r
	}
	var low, high, estimate float64
	var n int
	method := ""
	if rate {
		lackingMissing := missing
		low, high = st.rateBounds(lackingMissing, ev.Direction == LowerIsBetter, allowed, confidence)
		n = cases
		passed, total := st.Passed, st.Trials
		if !allowed {
			total += st.LackingRepeats + missing
			if ev.Direction == LowerIsBetter {
				passed += st.LackingRepeats + missing
			}
		} else {
			n -= lacking
		}
		if total > 0 {
			estimate = float64(passed) / float64(total)
		}
		method = "Wilson's score bound"
		if st.MaxRepeats > 1 {
			method = "Korn and Graubard's cluster-aware bound"
		}
	} else {
		if lacking > 0 && !allowed {
			return fail("%s; %s", lackingDetail, acceptText(lacking))
		}
		if st.Values < 2 {
			return fail("%s with a value: a t bound needs two", plural(st.Values, "case"))
		}
		low, high = st.numberBounds(confidence)
		n, estimate, method = st.Values, (st.Sum+st.sumCarry)/float64(st.Values), "Student's t bound"
	}
	r.Measured = low
	if m == MeasureHigh {
		r.Measured = high
	}
	if math.IsNaN(r.Measured) {
		return fail("can't tell on %s: %s needs more", plural(n, "case"), method)
	}
	r.Detail = fmt.Sprintf("%s at %s%%, estimate %s over %s", method, percentText(confidence), formatNumber(estimate), plural(n, "case"))
	if lackingDetail != "" {
		r.Detail += "; " + lackingDetail
	}
	if !g.Op.holds(r.Measured, r.Limit) {
		r.Reason = inconclusive(m == MeasureLow, g.Op, n, estimate, r.Measured, r.Limit, "cases", func() float64 {
			if m == MeasureHigh {
				return CasesNeeded(n, -estimate, -r.Measured, -r.Limit)
			}
			return CasesNeeded(n, estimate, r.Measured, r.Limit)
		})
	}
	return r
}

// inconclusive says why a bound missed its limit where more cases could
// move it there (a lower bound held to a minimum, an upper one to a
// maximum), or "" where they could not.
func inconclusive(lower bool, op Op, n int, estimate, bound, limit float64, unit string, needed func() float64) string {
	towards := op == AtLeast || op == Above
	if lower != towards {
		return ""
	}
	cases := needed()
	switch {
	case math.IsInf(cases, 1):
		return fmt.Sprintf("the estimate itself, %s, is not within the limit %s: no number of %s would show it (the bound is %s)",
			formatNumber(estimate), formatNumber(limit), unit, formatNumber(bound))
	case math.IsNaN(cases):
		return fmt.Sprintf("inconclusive: the bound is %s", formatNumber(bound))
	}
	return fmt.Sprintf("inconclusive: the bound is %s; about %d %s would be needed", formatNumber(bound), int64(max(cases, float64(n)+1)), unit)
}

// flipped returns the differences the other way round, baseline −
// candidate, for an evaluator whose lower values are better.
func (p PairedCases) flipped() PairedCases {
	p.Sum, p.sumCarry = -p.Sum, -p.sumCarry
	p.Positive, p.Negative = p.Negative, p.Positive
	return p
}

// measureDiff measures diff_low: the lower bound of the paired case
// difference in the evaluator's better direction.
func measureDiff(r GateResult, ev Evaluator, comparison *Comparison, opts checkOptions) GateResult {
	g := r.Gate
	fail := func(format string, args ...any) GateResult {
		r.Reason = fmt.Sprintf(format, args...)
		return r
	}
	confidence, reason := opts.level(g)
	if reason != "" {
		r.Reason, r.Invalid = reason, true
		return r
	}
	delta, ok := comparison.Evaluators[ev.ID]
	if !ok {
		return fail("no values for this evaluator on either side")
	}
	if delta.Baseline.Count == 0 {
		return fail("the baseline has no value for this evaluator on any case: nothing to compare with")
	}
	p := delta.Pairs
	if ev.Direction == LowerIsBetter {
		p = p.flipped()
	}
	if lacking := p.CandidateLacks; lacking > 0 && lacking > g.AllowFailedRows {
		return fail("%s where the baseline has a value and the candidate none; %s", plural(lacking, "case"), acceptText(lacking))
	}
	if p.N == 0 {
		return fail("no paired case with a value: nothing shows the difference")
	}
	method := "Tango's score bound"
	if p.NotRate || p.NotBinary && p.m2() > 0 {
		method = "Student's t bound"
	}
	r.Measured = p.Low(confidence)
	if math.IsNaN(r.Measured) {
		return fail("can't tell on %s: %s needs two", plural(p.N, "paired case"), method)
	}
	r.Detail = fmt.Sprintf("%s at %s%%, estimate %s over %s", method, percentText(confidence), formatNumber(p.estimate()), plural(p.N, "paired case"))
	if n := delta.CandidateLacks; n > 0 && !p.NotRate {
		r.Detail += fmt.Sprintf("; %s without a candidate value counted as fails", plural(n, "case"))
	}
	if !g.Op.holds(r.Measured, r.Limit) {
		r.Reason = inconclusive(true, g.Op, p.N, p.estimate(), r.Measured, r.Limit, "paired cases", func() float64 {
			return p.casesNeeded(confidence, r.Limit)
		})
	}
	return r
}
