package evals

import "math"

// This file holds the one-sided confidence bounds behind the low, high,
// diff_low, pass_all and flaky measures of issue 27. The test case is the
// unit: with repeats, a case's value is its mean over its repeats, and no
// bound treats repeats as independent rows. NaN means "can't tell".

// DefaultConfidence is the level of every bound unless --confidence says
// otherwise: a one-sided 95% bound.
const DefaultConfidence = 0.95

// PassCount is one test case of a pass/fail evaluator: how many of its
// Repeats passed.
type PassCount struct {
	Passed, Repeats int
}

// PassRateLow returns the one-sided lower confidence bound of the pass rate
// over cases. Without repeats (every Repeats 1) it is Wilson's score bound,
// the lower end of WilsonInterval at level 2·confidence−1, which keeps its
// coverage for small n and rates near 0 or 1 where Wald's does not (Newcombe
// 1998). With repeats it is Wilson's bound at the Korn–Graubard effective
// sample size n_eff = p̂(1−p̂)/v̂, v̂ the variance of p̂ estimated from the
// case means (the case the cluster), capped at the number of repeats, and
// with z replaced by Student's t on n−1 degrees of freedom (E. L. Korn and
// B. I. Graubard, "Confidence intervals for proportions with small expected
// number of positive counts estimated from survey data", Survey Methodology
// 24 (1998) 193–201). It returns NaN for no cases, a case without repeats,
// or a confidence outside (0.5, 1).
func PassRateLow(cases []PassCount, confidence float64) float64 {
	low, _ := passRateBound(cases, confidence)
	return low
}

// PassRateHigh returns the one-sided upper confidence bound of the pass
// rate over cases, the counterpart of PassRateLow for a rate that should
// stay small.
func PassRateHigh(cases []PassCount, confidence float64) float64 {
	_, high := passRateBound(cases, confidence)
	return high
}

func passRateBound(cases []PassCount, confidence float64) (low, high float64) {
	if len(cases) == 0 || !(confidence > 0.5 && confidence < 1) {
		return math.NaN(), math.NaN()
	}
	passed, total, repeated := 0, 0, false
	for _, c := range cases {
		if c.Repeats < 1 || c.Passed < 0 || c.Passed > c.Repeats {
			return math.NaN(), math.NaN()
		}
		passed += c.Passed
		total += c.Repeats
		repeated = repeated || c.Repeats > 1
	}
	if !repeated {
		return WilsonInterval(passed, total, 2*confidence-1)
	}
	n := len(cases)
	if n < 2 {
		return math.NaN(), math.NaN()
	}
	p := float64(passed) / float64(total)
	// Ratio estimator's variance over clusters of unequal size.
	meanSize := float64(total) / float64(n)
	var ss float64
	for _, c := range cases {
		r := float64(c.Passed) - p*float64(c.Repeats)
		ss += r * r
	}
	v := ss / (float64(n) * float64(n-1) * meanSize * meanSize)
	nEff := float64(total)
	if v > 0 && p > 0 && p < 1 {
		nEff = min(nEff, p*(1-p)/v)
	}
	z := tQuantile(confidence, float64(n-1))
	return wilsonBounds(p, nEff, z)
}

// wilsonBounds is Wilson's score interval for a rate p over n (not
// necessarily whole) trials at critical value z.
func wilsonBounds(p, n, z float64) (low, high float64) {
	z2 := z * z
	center := (p + z2/(2*n)) / (1 + z2/n)
	half := z / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	low, high = max(0, center-half), min(1, center+half)
	if p == 0 {
		low = 0 // exactly, where rounding would leave 1e-17
	}
	if p == 1 {
		high = 1
	}
	return low, high
}

// PassRateDiffLow returns the one-sided lower confidence bound of the
// paired difference of pass rates, candidate − baseline, over the cases of
// both (candidate[i] and baseline[i] are the same case). Without repeats
// it is Newcombe's hybrid score bound for paired proportions (R. G.
// Newcombe, "Improved confidence intervals for the difference between
// binomial proportions based on paired data", Statistics in Medicine 17
// (1998) 2635–2650, method 10): from the Wilson bounds of each rate and
// the phi correlation of the pairs,
//
//	D − √((p₁−l₁)² − 2φ(p₁−l₁)(u₂−p₂) + (u₂−p₂)²).
//
// With repeats each case's value is its pass rate over its repeats, and the
// bound is MeanDiffLow's t bound on the case differences. It returns NaN
// when the lists differ in length, are empty, or hold a case without
// repeats.
func PassRateDiffLow(candidate, baseline []PassCount, confidence float64) float64 {
	if len(candidate) != len(baseline) || len(candidate) == 0 || !(confidence > 0.5 && confidence < 1) {
		return math.NaN()
	}
	repeated := false
	for i := range candidate {
		c, b := candidate[i], baseline[i]
		if c.Repeats < 1 || b.Repeats < 1 || c.Passed < 0 || b.Passed < 0 || c.Passed > c.Repeats || b.Passed > b.Repeats {
			return math.NaN()
		}
		repeated = repeated || c.Repeats > 1 || b.Repeats > 1
	}
	if repeated {
		return MeanDiffLow(caseRates(candidate), caseRates(baseline), confidence)
	}
	// a: both pass; b: candidate only; c: baseline only; d: neither.
	var a, b, c, d float64
	for i := range candidate {
		switch cp, bp := candidate[i].Passed == 1, baseline[i].Passed == 1; {
		case cp && bp:
			a++
		case cp:
			b++
		case bp:
			c++
		default:
			d++
		}
	}
	n := a + b + c + d
	z := normalQuantile(confidence)
	p1, p2 := (a+b)/n, (a+c)/n
	l1, _ := wilsonBounds(p1, n, z)
	_, u2 := wilsonBounds(p2, n, z)
	phi := 0.0
	if denom := (a + b) * (c + d) * (a + c) * (b + d); denom > 0 {
		phi = (a*d - b*c) / math.Sqrt(denom)
	}
	x, y := p1-l1, u2-p2
	return p1 - p2 - math.Sqrt(max(0, x*x-2*phi*x*y+y*y))
}

func caseRates(cases []PassCount) []float64 {
	out := make([]float64, len(cases))
	for i, c := range cases {
		out[i] = float64(c.Passed) / float64(c.Repeats)
	}
	return out
}

// MeanLow returns the one-sided lower confidence bound of the mean of the
// case values (each case's mean over its repeats): mean − t·sd/√n with t
// Student's quantile on n−1 degrees of freedom ("Student", Biometrika 6
// (1908) 1–25). It returns NaN for fewer than two cases or a NaN value.
func MeanLow(values []float64, confidence float64) float64 {
	m, half := tHalf(values, confidence)
	return m - half
}

// MeanHigh returns the one-sided upper confidence bound of the mean of the
// case values, for lower-is-better scores, cost and latency.
func MeanHigh(values []float64, confidence float64) float64 {
	m, half := tHalf(values, confidence)
	return m + half
}

// MeanDiffLow returns the one-sided lower confidence bound of the mean
// paired difference candidate[i] − baseline[i] over cases: MeanLow of the
// differences. It returns NaN when the lists differ in length.
func MeanDiffLow(candidate, baseline []float64, confidence float64) float64 {
	if len(candidate) != len(baseline) {
		return math.NaN()
	}
	diffs := make([]float64, len(candidate))
	for i := range candidate {
		diffs[i] = candidate[i] - baseline[i]
	}
	return MeanLow(diffs, confidence)
}

func tHalf(values []float64, confidence float64) (mean, half float64) {
	n := len(values)
	if n < 2 || !(confidence > 0.5 && confidence < 1) {
		return math.NaN(), math.NaN()
	}
	for _, x := range values {
		mean += x
	}
	mean /= float64(n)
	var ss float64
	for _, x := range values {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return mean, tQuantile(confidence, float64(n-1)) * sd / math.Sqrt(float64(n))
}

// PassAll returns the share of cases whose repeats all passed (pass^k), NaN
// for no cases.
func PassAll(cases []PassCount) float64 {
	if len(cases) == 0 {
		return math.NaN()
	}
	all := 0
	for _, c := range cases {
		if c.Repeats > 0 && c.Passed == c.Repeats {
			all++
		}
	}
	return float64(all) / float64(len(cases))
}

// FlakyCases returns the indexes of the cases whose repeats disagree: some
// passed and some failed.
func FlakyCases(cases []PassCount) []int {
	var out []int
	for i, c := range cases {
		if c.Passed > 0 && c.Passed < c.Repeats {
			out = append(out, i)
		}
	}
	return out
}

// CasesNeeded returns about how many paired cases a bound would need to
// reach margin when n cases gave the estimate and the bound: the bound's
// distance from the estimate shrinks as 1/√n, so n·((estimate − bound) /
// (estimate − margin))². It returns +Inf when the estimate itself is not
// above margin (no number of cases shows it) and NaN when it can't tell.
func CasesNeeded(n int, estimate, bound, margin float64) float64 {
	if n < 1 || math.IsNaN(estimate) || math.IsNaN(bound) || math.IsNaN(margin) {
		return math.NaN()
	}
	if estimate <= margin {
		return math.Inf(1)
	}
	if bound >= margin {
		return float64(n)
	}
	r := (estimate - bound) / (estimate - margin)
	return math.Ceil(float64(n) * r * r)
}

// tQuantile polishes StudentTQuantile (1e-9 relative, stopping at its
// first overshoot) with Newton steps from both sides, for bounds that
// agree with scipy's t.ppf to 1e-9 absolute.
func tQuantile(p, df float64) float64 {
	t := StudentTQuantile(p, df)
	for range 3 {
		if step := (StudentTCDF(t, df) - p) / studentTDensity(t, df); step != 0 && !math.IsNaN(step) {
			t -= step
		}
	}
	return t
}
