package evals

// The statistics behind Metric and Delta, each a small function with its
// formula and a reference. They take plain numbers, so they can be used on
// their own.

import (
	"math"
	"slices"
)

// normalQuantile returns Φ⁻¹(p), the quantile of the standard normal
// distribution: −√2·erfc⁻¹(2p), which keeps full precision in both tails.
func normalQuantile(p float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*p)
}

// normalCDF returns Φ(x) = erfc(−x/√2)/2.
func normalCDF(x float64) float64 {
	return 0.5 * math.Erfc(-x/math.Sqrt2)
}

// WilsonInterval returns Wilson's score interval for a proportion: with
// p̂ = k/n and z = Φ⁻¹((1+confidence)/2),
//
//	(p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n).
//
// Unlike the textbook p̂ ± z·√(p̂(1−p̂)/n), it stays inside [0, 1] and keeps
// its coverage for small n and for p̂ near 0 or 1, as pass rates often are.
// It returns NaN, NaN when n is 0 or k is outside [0, n]. It is R's
// prop.test(k, n, correct = FALSE)$conf.int.
//
// References: E. B. Wilson, "Probable inference, the law of succession, and
// statistical inference", JASA 22 (1927) 209–212; R. G. Newcombe, "Two-sided
// confidence intervals for the single proportion: comparison of seven
// methods", Statistics in Medicine 17 (1998) 857–872 (method 3).
func WilsonInterval(k, n int, confidence float64) (low, high float64) {
	if n <= 0 || k < 0 || k > n || !(confidence > 0 && confidence < 1) {
		return math.NaN(), math.NaN()
	}
	return wilsonBounds(float64(k)/float64(n), float64(n), normalQuantile((1+confidence)/2))
}

// TInterval returns Student's t confidence interval for a mean from the
// sample mean, the sample standard deviation sd (with n−1 in the
// denominator) and the sample size: mean ± t·sd/√n, with t the
// (1+confidence)/2 quantile of Student's t distribution with n−1 degrees of
// freedom. It returns NaN, NaN when n < 2, where no interval exists. It is
// R's t.test(x)$conf.int.
//
// Reference: "Student", "The probable error of a mean", Biometrika 6 (1908)
// 1–25; NIST/SEMATECH e-Handbook of Statistical Methods, 7.2.2.1.
func TInterval(mean, sd float64, n int, confidence float64) (low, high float64) {
	if n < 2 || !(confidence > 0 && confidence < 1) || math.IsNaN(mean) || math.IsNaN(sd) {
		return math.NaN(), math.NaN()
	}
	half := StudentTQuantile((1+confidence)/2, float64(n-1)) * sd / math.Sqrt(float64(n))
	return mean - half, mean + half
}

// StudentTCDF returns P(T ≤ t) for Student's t distribution with df > 0
// degrees of freedom, through the regularized incomplete beta function:
// for t ≥ 0, P(T > t) = I_x(df/2, 1/2)/2 with x = df/(df+t²), and the
// distribution is symmetric. It is R's pt(t, df).
//
// Reference: M. Abramowitz and I. A. Stegun, Handbook of Mathematical
// Functions (1964), 26.7.1 and 26.5.27.
func StudentTCDF(t, df float64) float64 {
	if math.IsNaN(t) || !(df > 0) {
		return math.NaN()
	}
	upper := studentTUpper(math.Abs(t), df)
	if t < 0 {
		return upper
	}
	return 1 - upper
}

// studentTCentral returns P(0 < T ≤ t) = I_y(1/2, df/2)/2 with
// y = t²/(df+t²), for t ≥ 0 (Abramowitz and Stegun 26.7.1).
func studentTCentral(t, df float64) float64 {
	return 0.5 * regularizedBeta(t*t/(df+t*t), 0.5, df/2)
}

// studentTUpper returns P(T > t) for t ≥ 0.
func studentTUpper(t, df float64) float64 {
	if math.IsInf(t, 1) {
		return 0
	}
	return 0.5 * regularizedBeta(df/(df+t*t), df/2, 0.5)
}

// StudentTQuantile returns the p quantile of Student's t distribution with
// df > 0 degrees of freedom: the t with StudentTCDF(t, df) = p. It solves
// by Newton's method from the normal quantile, which converges
// monotonically because the density falls on t > 0; the result agrees with
// R's qt(p, df) within 1e-9 relative, for p near 1/2 too (a grid of 70
// (p, df) pairs up to df = 99,999 was checked). It returns NaN outside 0 < p < 1.
//
// Reference: as for StudentTCDF; Newton's method on a CDF with its density
// as derivative (e.g. W. H. Press et al., Numerical Recipes, 3rd ed., 6.14).
func StudentTQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -StudentTQuantile(1-p, df)
	}
	// Near the centre, solve P(0 < T ≤ t) = p − 1/2 (exact in floating
	// point there) so that small quantiles keep their relative precision;
	// further out, solve the upper tail P(T > t) = 1 − p.
	central := p < 0.75
	target := 1 - p
	if central {
		target = p - 0.5
	}
	t := max(normalQuantile(p), 0) // never above the root: t has heavier tails
	for range 1000 {
		var gap float64 // positive while t is still below the root
		if central {
			gap = target - studentTCentral(t, df)
		} else {
			gap = studentTUpper(t, df) - target
		}
		if gap <= 0 || gap <= 1e-16*target {
			break
		}
		step := gap / studentTDensity(t, df)
		t += step
		if step <= 1e-16*t {
			break
		}
	}
	return t
}

// studentTDensity is the density Γ((ν+1)/2)/(√(νπ)·Γ(ν/2))·(1+t²/ν)^(−(ν+1)/2).
func studentTDensity(t, df float64) float64 {
	a, _ := math.Lgamma((df + 1) / 2)
	b, _ := math.Lgamma(df / 2)
	return math.Exp(a - b - 0.5*math.Log(df*math.Pi) - (df+1)/2*math.Log1p(t*t/df))
}

// regularizedBeta returns I_x(a, b) by the continued fraction of
// Numerical Recipes (Press et al., 3rd ed., 6.4, evaluated with the modified
// Lentz method), using the symmetry I_x(a,b) = 1 − I_{1−x}(b,a) where the
// fraction converges slowly.
func regularizedBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}
	return 1 - front*betaFraction(1-x, b, a)/b
}

func betaFraction(x, a, b float64) float64 {
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1/nonZero(1-qab*x/qap)
	h := d
	for m := 1; m <= 100000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		// The even and the odd step of the fraction (NR 6.4.6).
		even := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		c, d = lentzStep(even, c, d)
		h *= d * c
		odd := -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		c, d = lentzStep(odd, c, d)
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return h
}

// lentzStep advances the modified Lentz method by one partial numerator.
func lentzStep(aa, c, d float64) (float64, float64) {
	return nonZero(1 + aa/c), 1 / nonZero(1+aa*d)
}

// nonZero keeps Lentz's method off a division by zero.
func nonZero(x float64) float64 {
	const tiny = 1e-300
	if math.Abs(x) < tiny {
		return tiny
	}
	return x
}

// BinomialTest returns the two-sided p-value of the exact binomial test of
// k successes in n trials against the success probability p: the total
// probability, under Binomial(n, p), of every outcome no more likely than
// the one observed (with R's relative tolerance of 1e-7 for ties in
// likelihood), at most 1. It is R's binom.test(k, n, p)$p.value. It returns
// 1 when n is 0, and NaN for arguments out of range.
//
// Reference: C. J. Clopper and E. S. Pearson, Biometrika 26 (1934) 404–413;
// the two-sided rule is that of R's binom.test (R Core Team) and of
// W. J. Conover, Practical Nonparametric Statistics (1971), 3.1.
func BinomialTest(k, n int, p float64) float64 {
	if n < 0 || k < 0 || k > n || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	if n == 0 {
		return 1
	}
	pmf := binomialPMF(n, p)
	observed := pmf(k) * (1 + 1e-7)
	total := 0.0
	for i := 0; i <= n; i++ {
		if v := pmf(i); v <= observed {
			total += v
		}
	}
	return min(1, total)
}

// binomialPMF returns the probability mass function of Binomial(n, p),
// computed in logarithms so that large n neither overflows nor underflows
// before the end.
func binomialPMF(n int, p float64) func(int) float64 {
	lnN, _ := math.Lgamma(float64(n) + 1)
	lp, lq := math.Log(p), math.Log1p(-p)
	return func(i int) float64 {
		switch {
		case p == 0:
			return boolFloat(i == 0)
		case p == 1:
			return boolFloat(i == n)
		}
		a, _ := math.Lgamma(float64(i) + 1)
		b, _ := math.Lgamma(float64(n-i) + 1)
		return math.Exp(lnN - a - b + float64(i)*lp + float64(n-i)*lq)
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Alternative names the alternative hypothesis of a test: a difference
// either way, or one in a given direction. For paired comparisons the
// differences are candidate − baseline, so Less means the candidate tends
// to be lower. The names are those of R's alternative = "two.sided",
// "less" and "greater", and of scipy's.
type Alternative int8

const (
	// TwoSided tests for a difference in either direction.
	TwoSided Alternative = iota
	// Less tests for values (or differences) below the null.
	Less
	// Greater tests for values (or differences) above the null.
	Greater
)

// String returns "two-sided", "less" or "greater".
func (a Alternative) String() string {
	switch a {
	case Less:
		return "less"
	case Greater:
		return "greater"
	}
	return "two-sided"
}

// BinomialTestAlternative returns the p-value of the exact binomial test
// of k successes in n trials against the success probability p, for the
// given alternative: P(X ≤ k) for Less, P(X ≥ k) for Greater, and
// BinomialTest's two-sided value for TwoSided, with X ~ Binomial(n, p). It
// is R's binom.test(k, n, p, alternative)$p.value and scipy's
// binomtest(k, n, p, alternative).pvalue. It returns 1 when n is 0, and
// NaN for arguments out of range.
//
// Reference: as for BinomialTest.
func BinomialTestAlternative(k, n int, p float64, alt Alternative) float64 {
	if n < 0 || k < 0 || k > n || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	if n == 0 {
		return 1
	}
	pmf := binomialPMF(n, p)
	total := 0.0
	switch alt {
	case Less:
		for i := 0; i <= k; i++ {
			total += pmf(i)
		}
	case Greater:
		for i := k; i <= n; i++ {
			total += pmf(i)
		}
	default:
		return BinomialTest(k, n, p)
	}
	return min(1, total)
}

// McNemarExact returns the two-sided p-value of the exact McNemar test for
// paired pass/fail outcomes, from the discordant pairs alone: b pairs that
// passed only on one side and c that passed only on the other. Under no
// difference each discordant pair is equally likely either way, so this is
// the binomial test of b successes in b+c trials at p = 1/2:
// min(1, 2·P(X ≤ min(b, c))) with X ~ Binomial(b+c, 1/2). It is 1 when
// b = c, so a run compared with itself gives 1. It is R's
// binom.test(b, b + c)$p.value (mcnemar.test is the chi-squared
// approximation of the same test).
//
// Reference: Q. McNemar, "Note on the sampling error of the difference
// between correlated proportions or percentages", Psychometrika 12 (1947)
// 153–157; A. Agresti, Categorical Data Analysis, 2nd ed. (2002), 10.1.
func McNemarExact(b, c int) float64 {
	if b < 0 || c < 0 {
		return math.NaN()
	}
	if b == c {
		return 1
	}
	return BinomialTest(min(b, c), b+c, 0.5)
}

// McNemarExactAlternative is the exact McNemar test with an alternative:
// higher counts the pairs that passed only on the candidate's side, lower
// those that passed only on the baseline's. Less is the alternative that
// the candidate passes less often, with p = P(X ≥ lower) for
// X ~ Binomial(higher+lower, 1/2); Greater the reverse; TwoSided is
// McNemarExact. It is R's binom.test(lower, higher + lower, 0.5,
// alternative = "greater")$p.value for Less.
//
// Reference: as for McNemarExact.
func McNemarExactAlternative(higher, lower int, alt Alternative) float64 {
	if higher < 0 || lower < 0 {
		return math.NaN()
	}
	switch alt {
	case Less:
		return BinomialTestAlternative(lower, higher+lower, 0.5, Greater)
	case Greater:
		return BinomialTestAlternative(higher, higher+lower, 0.5, Greater)
	}
	return McNemarExact(higher, lower)
}

// signedRankExactMax is the largest number of non-zero differences for
// which WilcoxonSignedRank computes the exact distribution; its cost grows
// as n³ (one million steps at 100).
const signedRankExactMax = 100

// WilcoxonSignedRank returns Wilcoxon's signed-rank statistic V (the sum of
// the ranks of |d| over the positive differences) and its two-sided
// p-value, for paired differences d (candidate − baseline); it is
// WilcoxonSignedRankAlternative(d, TwoSided).
func WilcoxonSignedRank(d []float64) (v, p float64) {
	return WilcoxonSignedRankAlternative(d, TwoSided)
}

// WilcoxonSignedRankAlternative returns Wilcoxon's signed-rank statistic V
// (the sum of the ranks of |d| over the positive differences) and its
// p-value for the given alternative: Less when the differences d
// (candidate − baseline) tend to be negative, Greater when positive.
//
// NaN differences are dropped. An infinite difference ranks above every
// finite one (infinite differences tie among themselves): Compare uses
// ±Inf for a row where one side has no value. Zero differences are dropped
// before ranking (Wilcoxon's convention, as R's wilcox.test and scipy's
// zero_method="wilcox"; Pratt's alternative ranks them), and tied |d| get
// the mean of their ranks. For up to 100 non-zero differences, p is exact:
// the distribution of V over all 2ⁿ sign assignments of the observed
// ranks, ties included (the conditional test of R's
// exactRankTests::wilcox.exact, computed by dynamic programming over
// doubled ranks); without ties it is scipy's wilcoxon(method="exact").
// Above that, p uses the normal approximation with tie and continuity
// corrections,
//
//	z = (V − n(n+1)/4 − c) / √(n(n+1)(2n+1)/24 − Σ(t³−t)/48),
//
// t running over the sizes of the groups of tied ranks, with the
// continuity correction c = −1/2 for Less, +1/2 for Greater and
// sign(V − n(n+1)/4)/2 for TwoSided; p = Φ(z), 1 − Φ(z) or
// 2·min(Φ(z), 1 − Φ(z)). It is R's wilcox.test(d, exact = FALSE,
// alternative) and scipy's wilcoxon(d, method="approx", correction=True).
// With no non-zero difference, V is 0 and p is 1. The agreement with scipy
// is measured in TestWilcoxonAgainstScipy.
//
// References: F. Wilcoxon, "Individual comparisons by ranking methods",
// Biometrics Bulletin 1 (1945) 80–83; M. Hollander, D. A. Wolfe and
// E. Chicken, Nonparametric Statistical Methods, 3rd ed. (2014), 3.1 (the
// tie correction); J. W. Pratt, JASA 54 (1959) 655–667 (zeros).
func WilcoxonSignedRankAlternative(d []float64, alt Alternative) (v, p float64) {
	plus, minus := 0, 0
	for _, x := range d {
		switch {
		case math.IsInf(x, 1):
			plus++
		case math.IsInf(x, -1):
			minus++
		}
	}
	return rankDiffs(d).test(plus, minus, alt)
}

// rankedDiffs are the finite non-zero differences of a signed-rank test,
// ranked once so that the test can be run for several alternatives and
// with several counts of infinite differences.
type rankedDiffs struct {
	ranks2   []int  // twice the mid-ranks of |d|, ascending
	positive []bool // the sign of each
	ties     float64
}

// rankDiffs ranks the finite non-zero values of d.
func rankDiffs(d []float64) rankedDiffs {
	abs, positive := signedRanksInput(d)
	ranks2, ties := doubledRanks(abs)
	return rankedDiffs{ranks2, positive, ties}
}

// test returns V and the p-value for alt, with plus differences of +Inf
// and minus of −Inf added above every finite one.
func (r rankedDiffs) test(plus, minus int, alt Alternative) (v, p float64) {
	m, k := len(r.ranks2), plus+minus
	if m+k == 0 {
		return 0, 1
	}
	ranks2, ties := r.ranks2, r.ties
	v2, total := 0, 0 // 2V and the sum of the doubled ranks
	for i, x := range ranks2 {
		total += x
		if r.positive[i] {
			v2 += x
		}
	}
	if k > 0 {
		// Ranks m+1 … m+k tie: each is their mean, (2m+k+1)/2.
		top := 2*m + k + 1
		ranks2 = slices.Clip(ranks2)
		for range k {
			ranks2 = append(ranks2, top)
		}
		total += k * top
		v2 += plus * top
		t := float64(k)
		ties += t*t*t - t
	}
	v = float64(v2) / 2
	if m+k <= signedRankExactMax {
		switch alt {
		case Less:
			return v, min(1, signedRankCDF(ranks2, v2))
		case Greater:
			return v, min(1, signedRankCDF(ranks2, total-v2))
		}
		return v, min(1, 2*signedRankCDF(ranks2, min(v2, total-v2)))
	}
	return v, signedRankNormalP(m+k, v, ties, alt)
}

// signedDiff is a non-zero |d| with its sign.
type signedDiff struct {
	abs      float64
	positive bool
}

// signedRanksInput returns the finite non-zero |d|, sorted, with their
// signs.
func signedRanksInput(d []float64) ([]float64, []bool) {
	diffs := make([]signedDiff, 0, len(d))
	for _, x := range d {
		if x != 0 && !math.IsNaN(x) && !math.IsInf(x, 0) {
			diffs = append(diffs, signedDiff{math.Abs(x), x > 0})
		}
	}
	slices.SortFunc(diffs, func(a, b signedDiff) int {
		switch {
		case a.abs < b.abs:
			return -1
		case a.abs > b.abs:
			return 1
		}
		return 0
	})
	abs := make([]float64, len(diffs))
	positive := make([]bool, len(diffs))
	for i, x := range diffs {
		abs[i], positive[i] = x.abs, x.positive
	}
	return abs, positive
}

// doubledRanks returns twice the mid-ranks of sorted values (integers, since
// a mid-rank is a multiple of 1/2) and Σ(t³−t) over the groups of ties.
func doubledRanks(sorted []float64) (ranks2 []int, ties float64) {
	ranks2 = make([]int, len(sorted))
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		// Ranks i+1 … j share their mean (i+1+j)/2.
		for k := i; k < j; k++ {
			ranks2[k] = i + 1 + j
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	return ranks2, ties
}

// signedRankCDF returns P(S ≤ s2) for S the sum of a uniformly random
// subset of the doubled ranks: the null distribution of 2V. It is
// symmetric about half the sum of the ranks, so an upper tail is a lower
// tail of the reflected value.
func signedRankCDF(ranks2 []int, s2 int) float64 {
	if s2 < 0 {
		return 0
	}
	total := 0
	for _, r := range ranks2 {
		total += r
	}
	if s2 >= total {
		return 1
	}
	// dist[s] is P(S = s) over the ranks seen so far; only s ≤ s2 matters.
	dist := make([]float64, s2+1)
	dist[0] = 1
	for _, r := range ranks2 {
		for s := s2; s >= 0; s-- {
			moved := 0.0
			if s >= r {
				moved = dist[s-r]
			}
			dist[s] = 0.5*dist[s] + 0.5*moved
		}
	}
	cum := 0.0
	for _, x := range dist {
		cum += x
	}
	return cum
}

// signedRankNormalP is the normal approximation with tie and continuity
// corrections (see WilcoxonSignedRankAlternative).
func signedRankNormalP(n int, v, ties float64, alt Alternative) float64 {
	nf := float64(n)
	z := v - nf*(nf+1)/4
	sigma := math.Sqrt(nf*(nf+1)*(2*nf+1)/24 - ties/48)
	if sigma == 0 {
		return 1
	}
	switch alt {
	case Less:
		return min(1, normalCDF((z+0.5)/sigma))
	case Greater:
		return min(1, normalCDF(-(z-0.5)/sigma))
	}
	switch {
	case z > 0:
		z -= 0.5
	case z < 0:
		z += 0.5
	}
	z /= sigma
	return min(1, 2*math.Min(normalCDF(z), normalCDF(-z)))
}
