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
// it is Tango's score bound for paired proportions (T. Tango, "Equivalence
// test and confidence interval for the difference in proportions for the
// paired-sample design", Statistics in Medicine 17 (1998) 891–908; see
// TangoDiffLow). Unlike Newcombe's hybrid bound (method 10), which
// collapses onto the estimate when every pair agrees at a pass rate of one
// half, it keeps its width on ties: n cases that pass or fail alike on both
// sides give −z²/(n+z²), −0.35 for 5.
//
// With repeats each case's value is its pass rate over its repeats, and the
// bound is MeanDiffLow's t bound on the case differences; when every
// difference is the same (the t bound would have no width), it is Tango's
// bound on the differences' positive and negative parts, which bounds
// their variance from above. It returns NaN when the lists differ in
// length, are empty, or hold a case without repeats.
func PassRateDiffLow(candidate, baseline []PassCount, confidence float64) float64 {
	if len(candidate) != len(baseline) || len(candidate) == 0 || !(confidence > 0.5 && confidence < 1) {
		return math.NaN()
	}
	var d PairedCases
	for i := range candidate {
		c, b := candidate[i], baseline[i]
		if c.Repeats < 1 || b.Repeats < 1 || c.Passed < 0 || b.Passed < 0 || c.Passed > c.Repeats || b.Passed > b.Repeats {
			return math.NaN()
		}
		d.add(float64(c.Passed)/float64(c.Repeats), float64(b.Passed)/float64(b.Repeats), c.Repeats == 1 && b.Repeats == 1)
	}
	return d.Low(confidence)
}

// TangoDiffLow returns Tango's one-sided score lower bound of the
// difference of paired proportions p₁₀ − p₀₁ over n pairs, of which x
// passed on the candidate's side only and y on the baseline's only: the Δ
// below the estimate (x − y)/n where
//
//	(x − y − nΔ) / √(n(2q̃ + Δ(1−Δ))) = z,
//
// q̃ the maximum-likelihood estimate of p₀₁ under p₁₀ − p₀₁ = Δ and z the
// normal quantile of confidence. Counts may be fractional. It returns NaN
// for n ≤ 0, counts outside [0, n], or a confidence outside (0.5, 1).
func TangoDiffLow(x, y, n, confidence float64) float64 {
	if !(n > 0) || !(x >= 0) || !(y >= 0) || x+y > n*(1+1e-12) || !(confidence > 0.5 && confidence < 1) {
		return math.NaN()
	}
	return tangoLow(x, y, n, normalQuantile(confidence))
}

func tangoLow(x, y, n, z float64) float64 {
	est := (x - y) / n
	if est <= -1 {
		return -1
	}
	score := func(d float64) float64 {
		// q̃ is the root in [0, 1] of 2n q² + b q + c = 0, written so as
		// not to cancel.
		a, b, c := 2*n, -x-y+(2*n-x+y)*d, -y*d*(1-d)
		s := math.Sqrt(max(0, b*b-4*a*c))
		var q float64
		if b > 0 {
			q = -2 * c / (b + s)
		} else {
			q = (s - b) / (2 * a)
		}
		v := n * (2*q + d*(1-d))
		if v <= 0 {
			return math.Inf(1)
		}
		return (x - y - n*d) / math.Sqrt(v)
	}
	// The score falls as Δ rises: +Inf at −1, 0 at the estimate.
	lo, hi := -1.0, est
	for range 200 {
		mid := (lo + hi) / 2
		if mid <= lo || mid >= hi {
			break
		}
		if score(mid) > z {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// PairedCases is what the paired case differences of one evaluator,
// candidate − baseline, add up to, for diff_low: a few sums, whatever the
// number of cases. A case's value is its mean over its repeats.
type PairedCases struct {
	// N counts the pairs; Sum and SumSquares sum the differences and
	// their squares (compensated, so that the order of the pairs hardly
	// matters).
	N                 int
	Sum, SumSquares   float64
	sumCarry, sqCarry float64
	// Positive and Negative sum the differences' positive and negative
	// parts, Σ max(d, 0) and Σ max(−d, 0), as Tango's bound takes them.
	Positive, Negative float64
	// NotBinary is set by a pair that is not one pass/fail verdict on
	// each side, NotRate by a pair of number scores.
	NotBinary, NotRate bool
	// CandidateLacks counts the cases of number scores where the
	// baseline has a value and the candidate none.
	CandidateLacks int
}

// add adds a pair of case values; binary says both are single pass/fail
// verdicts.
func (p *PairedCases) add(cand, base float64, binary bool) {
	d := cand - base
	p.N++
	p.Sum, p.sumCarry = compensatedAdd(p.Sum, p.sumCarry, d)
	p.SumSquares, p.sqCarry = compensatedAdd(p.SumSquares, p.sqCarry, d*d)
	if d > 0 {
		p.Positive += d
	} else {
		p.Negative -= d
	}
	if !binary {
		p.NotBinary = true
	}
}

// addNumber adds a pair of number scores.
func (p *PairedCases) addNumber(cand, base float64) {
	p.add(cand, base, false)
	p.NotRate = true
}

// estimate returns the mean difference, NaN without pairs.
func (p PairedCases) estimate() float64 {
	if p.N == 0 {
		return math.NaN()
	}
	return (p.Sum + p.sumCarry) / float64(p.N)
}

// m2 returns the sum of squared deviations from the mean; 0 when every
// difference is the same, to rounding.
func (p PairedCases) m2() float64 {
	sum, sq := p.Sum+p.sumCarry, p.SumSquares+p.sqCarry
	m2 := sq - sum*sum/float64(p.N)
	if m2 <= 1e-12*sq {
		return 0
	}
	return m2
}

// Low returns the one-sided lower confidence bound of the mean difference:
// for pass rates Tango's bound (see PassRateDiffLow), for number scores
// MeanDiffLow's t bound; NaN when it can't tell.
func (p PairedCases) Low(confidence float64) float64 {
	return p.lowAt(confidence, 1)
}

// lowAt returns the bound that the same data scaled to scale times as many
// pairs would give, for casesNeeded.
func (p PairedCases) lowAt(confidence, scale float64) float64 {
	if p.N == 0 || !(confidence > 0.5 && confidence < 1) {
		return math.NaN()
	}
	n := float64(p.N) * scale
	m2 := 0.0
	if p.N > 1 {
		m2 = p.m2()
	}
	if !p.NotRate && (!p.NotBinary || m2 == 0) {
		return tangoLow(p.Positive*scale, p.Negative*scale, n, normalQuantile(confidence))
	}
	if p.N < 2 {
		return math.NaN()
	}
	sd := math.Sqrt(m2 / float64(p.N-1))
	return p.estimate() - tQuantile(confidence, n-1)*sd/math.Sqrt(n)
}

// casesNeeded returns about how many pairs, in the same proportions, would
// bring the bound to margin: +Inf when the estimate is not above it.
func (p PairedCases) casesNeeded(confidence, margin float64) float64 {
	est := p.estimate()
	if math.IsNaN(est) {
		return math.NaN()
	}
	if est <= margin {
		return math.Inf(1)
	}
	if p.lowAt(confidence, 1) >= margin {
		return float64(p.N)
	}
	lo, hi := 1.0, 2.0
	for p.lowAt(confidence, hi) < margin {
		lo, hi = hi, hi*2
		if hi > 1e9 {
			return math.Inf(1)
		}
	}
	for hi-lo > 1e-6*hi {
		mid := (lo + hi) / 2
		if p.lowAt(confidence, mid) >= margin {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Ceil(hi * float64(p.N))
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
