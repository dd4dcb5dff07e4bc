package evals

import (
	"math"
	"math/rand/v2"
	"testing"
)

// close reports whether got is within tol of want, relative to want when
// want is not 0.
func closeTo(got, want, tol float64) bool {
	if want == 0 {
		return math.Abs(got) <= tol
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

// The reference values below were published with their data, or computed
// by R 4.2.2 (Debian r-base-core 4.2.2) and R's exactRankTests 0.8-35 from
// the same data; each case says which.

func TestWilsonInterval(t *testing.T) {
	// Newcombe (1998), Statistics in Medicine 17:857–872, Table I, method 3
	// (Wilson's score interval without continuity correction), printed to 4
	// decimals; the digits here are R's prop.test(k, n, correct = FALSE).
	tests := []struct {
		k, n      int
		low, high float64
	}{
		{81, 263, 0.2552885199, 0.3662095770},
		{15, 148, 0.06238639953, 0.16048724172},
		{0, 20, 0, 0.1611251581},
		{1, 29, 0.006113214293, 0.171755218793},
	}
	for _, tt := range tests {
		low, high := WilsonInterval(tt.k, tt.n, 0.95)
		if !closeTo(low, tt.low, 1e-9) || !closeTo(high, tt.high, 1e-9) {
			t.Errorf("WilsonInterval(%d, %d, 0.95) = (%.10f, %.10f), want (%.10f, %.10f)", tt.k, tt.n, low, high, tt.low, tt.high)
		}
	}
	if low, high := WilsonInterval(5, 5, 0.95); high != 1 || !(low > 0.5 && low < 1) {
		t.Errorf("WilsonInterval(5, 5) = (%v, %v), want an upper bound of exactly 1", low, high)
	}
	for _, bad := range [][2]int{{0, 0}, {3, 2}, {-1, 4}} {
		if low, high := WilsonInterval(bad[0], bad[1], 0.95); !math.IsNaN(low) || !math.IsNaN(high) {
			t.Errorf("WilsonInterval(%d, %d) = (%v, %v), want NaN, NaN", bad[0], bad[1], low, high)
		}
	}
}

func TestStudentT(t *testing.T) {
	// Quantiles: NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2
	// (critical values of Student's t, 3 decimals), at R's qt precision.
	// df = 1 and 2 also have closed forms: tan(π(p−1/2)) and
	// (2p−1)/√(2p(1−p)).
	quantiles := []struct{ p, df, want float64 }{
		{0.975, 1, 12.706204736},
		{0.975, 2, 4.302652730},
		{0.975, 5, 2.570581836},
		{0.975, 10, 2.228138852},
		{0.975, 30, 2.042272456},
		{0.975, 100, 1.983971519},
		{0.975, 1000, 1.962339081},
		{0.995, 4, 4.604094871},
		{0.95, 7, 1.894578605},
		{0.025, 5, -2.570581836},
		{0.999999, 1, math.Tan(math.Pi * (0.999999 - 0.5))},
		{0.9, 2, 0.8 / math.Sqrt(2*0.9*0.1)},
	}
	for _, tt := range quantiles {
		if got := StudentTQuantile(tt.p, tt.df); !closeTo(got, tt.want, 1e-9) {
			t.Errorf("StudentTQuantile(%v, %v) = %.12f, want %.12f", tt.p, tt.df, got, tt.want)
		}
	}
	// CDF: R's pt(c(-3, 0.5, 2, 10), c(3, 1, 20, 5)).
	cdfs := []struct{ t, df, want float64 }{
		{-3, 3, 0.02883444281},
		{0.5, 1, 0.64758361765},
		{2, 20, 0.97036723228},
		{10, 5, 0.99991452621},
	}
	for _, tt := range cdfs {
		if got := StudentTCDF(tt.t, tt.df); !closeTo(got, tt.want, 1e-9) {
			t.Errorf("StudentTCDF(%v, %v) = %.12f, want %.12f", tt.t, tt.df, got, tt.want)
		}
	}
	if got := StudentTQuantile(0.5, 3); got != 0 {
		t.Errorf("StudentTQuantile(0.5, 3) = %v, want 0", got)
	}
	if got := StudentTQuantile(1, 3); !math.IsNaN(got) {
		t.Errorf("StudentTQuantile(1, 3) = %v, want NaN", got)
	}
}

func TestTInterval(t *testing.T) {
	// R's documented sleep example: t.test(extra ~ group, data = sleep,
	// paired = TRUE) gives the 95% interval (−2.4598857633, −0.7001142367)
	// for the mean of these ten differences (Cushny and Peebles' data, as
	// analysed by Student, 1908).
	d := []float64{-1.2, -2.4, -1.3, -1.3, 0.0, -1.0, -1.8, -0.8, -4.6, -1.4}
	var m moments
	for _, x := range d {
		m.add(x)
	}
	low, high := TInterval(m.average(), m.sd(), m.n, 0.95)
	if !closeTo(low, -2.4598857633, 1e-9) || !closeTo(high, -0.7001142367, 1e-9) {
		t.Errorf("TInterval over the sleep differences = (%.10f, %.10f), want (-2.4598857633, -0.7001142367)", low, high)
	}
	if low, high := TInterval(3, 0, 1, 0.95); !math.IsNaN(low) || !math.IsNaN(high) {
		t.Errorf("TInterval with n = 1 = (%v, %v), want NaN, NaN", low, high)
	}
}

func TestBinomialAndMcNemar(t *testing.T) {
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		// R's documented binom.test example (Conover 1971, p. 97f): 682 giant
		// and 243 dwarf plants against p = 3/4.
		{"binom.test(c(682, 243), p = 3/4)", BinomialTest(682, 925, 0.75), 0.3824915596},
		{"binom.test(3, 10)", BinomialTest(3, 10, 0.5), 0.34375}, // 2·176/1024
		{"binom.test(0, 5)", BinomialTest(0, 5, 0.5), 0.0625},    // 2/32
		{"binom.test(1, 13)", BinomialTest(1, 13, 0.5), 0.00341796875},
		// Agresti (1990), p. 350, R's documented mcnemar.test example: the
		// presidential approval table matrix(c(794, 86, 150, 570), 2) has
		// discordant pairs 86 and 150; the exact test is binom.test(86, 236).
		{"McNemarExact(86, 150)", McNemarExact(86, 150), 3.71593614e-05},
		{"McNemarExact(150, 86)", McNemarExact(150, 86), 3.71593614e-05},
		{"McNemarExact(0, 0)", McNemarExact(0, 0), 1},
		{"McNemarExact(7, 7)", McNemarExact(7, 7), 1},
		{"McNemarExact(0, 5)", McNemarExact(0, 5), 0.0625},
	}
	for _, tt := range tests {
		if !closeTo(tt.got, tt.want, 1e-8) {
			t.Errorf("%s = %.12g, want %.12g", tt.name, tt.got, tt.want)
		}
	}
	// 100,000 discordant pairs stay finite and match the normal
	// approximation to the binomial where it is excellent.
	p := McNemarExact(49_500, 50_500)
	z := (50_000 - 49_500 - 0.5) / math.Sqrt(100_000*0.25)
	if want := 2 * normalCDF(-z); !closeTo(p, want, 1e-3) {
		t.Errorf("McNemarExact(49500, 50500) = %g, want about %g", p, want)
	}
}

func TestWilcoxonSignedRank(t *testing.T) {
	// R's documented wilcox.test example (Hollander and Wolfe 1973, p. 29f):
	// Hamilton depression scale, first (x) and second (y) visit of 9
	// patients. wilcox.test(x, y, paired = TRUE, alternative = "greater")
	// gives V = 40, p = 0.01953125; the two-sided exact p is 0.0390625.
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	hamilton := make([]float64, len(x))
	for i := range x {
		hamilton[i] = x[i] - y[i]
	}
	// R's sleep data (as in TestTInterval): one zero, ties, all negative.
	// exactRankTests::wilcox.exact gives 0.00390625 = 2/2⁹ (only the
	// all-negative assignment is as extreme); wilcox.test's normal
	// approximation with corrections gives 0.009090698016.
	sleep := []float64{-1.2, -2.4, -1.3, -1.3, 0.0, -1.0, -1.8, -0.8, -4.6, -1.4}
	// Ties and a zero, 12 non-zero: exactRankTests::wilcox.exact gives
	// V = 65, p = 0.04052734375.
	tied := []float64{1.5, -0.5, 2, 2, -1, 3, 0.5, 1.5, -2, 2.5, 1, 0, 4}
	// R: set.seed(1); round(rnorm(60, 0.2, 1), 1): two zeros, many ties,
	// 58 non-zero. wilcox.exact(dd, exact = TRUE) gives 0.004104953173;
	// wilcox.test(dd) (normal, corrected) gives 0.004676649153.
	rnorm60 := []float64{-0.4, 0.4, -0.6, 1.8, 0.5, -0.6, 0.7, 0.9, 0.8, -0.1, 1.7, 0.6, -0.4, -2, 1.3, 0.2, 0.2, 1.1, 1, 0.8, 1.1, 1, 0.3, -1.8, 0.8, 0.1, 0, -1.3, -0.3, 0.6, 1.6, 0.1, 0.6, 0.1, -1.2, -0.2, -0.2, 0.1, 1.3, 1, 0, -0.1, 0.9, 0.8, -0.5, -0.5, 0.6, 1, 0.1, 1.1, 0.6, -0.4, 0.5, -0.9, 1.6, 2.2, -0.2, -0.8, 0.8, 0.1}

	tests := []struct {
		name string
		d    []float64
		v, p float64
	}{
		{"Hollander-Wolfe depression", hamilton, 40, 0.0390625},
		{"sleep", sleep, 0, 0.00390625},
		{"ties and a zero", tied, 65, 0.04052734375},
		{"rnorm 60", rnorm60, -1, 0.004104953173},
		{"all zero", []float64{0, 0, 0}, 0, 1},
		{"empty", nil, 0, 1},
		{"one", []float64{2}, 1, 1},
		{"symmetric", []float64{1, -1, 2, -2}, 5, 1}, // ranks 1.5, 1.5, 3.5, 3.5
	}
	for _, tt := range tests {
		v, p := WilcoxonSignedRank(tt.d)
		if (tt.v >= 0 && v != tt.v) || !closeTo(p, tt.p, 1e-9) {
			t.Errorf("%s: WilcoxonSignedRank = V %v, p %.12g; want V %v, p %.12g", tt.name, v, p, tt.v, tt.p)
		}
	}

	// The normal approximation, against wilcox.test(exact = FALSE).
	normal := []struct {
		name string
		d    []float64
		want float64
	}{
		{"Hollander-Wolfe depression", hamilton, 0.04401098401},
		{"sleep", sleep, 0.009090698016},
		{"rnorm 60", rnorm60, 0.004676649153},
	}
	for _, tt := range normal {
		abs, positive := signedRanksInput(tt.d)
		ranks2, ties := doubledRanks(abs)
		v := 0.0
		for i, r := range ranks2 {
			if positive[i] {
				v += float64(r) / 2
			}
		}
		if got := signedRankNormalP(len(abs), v, ties, TwoSided); !closeTo(got, tt.want, 1e-8) {
			t.Errorf("%s: normal approximation p = %.12g, want %.12g", tt.name, got, tt.want)
		}
	}
}

// TestSignedRankExactByEnumeration checks the dynamic programme against
// brute force over all 2ⁿ sign assignments, on random data with ties.
func TestSignedRankExactByEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(14)
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(rng.IntN(9) - 4) // small integers: many ties and zeros
		}
		abs, positive := signedRanksInput(d)
		if len(abs) == 0 {
			continue
		}
		ranks2, _ := doubledRanks(abs)
		observed, total := 0, 0
		for i, r := range ranks2 {
			total += r
			if positive[i] {
				observed += r
			}
		}
		extreme, below, above := 0, 0, 0
		for mask := 0; mask < 1<<len(ranks2); mask++ {
			s := 0
			for i, r := range ranks2 {
				if mask&(1<<i) != 0 {
					s += r
				}
			}
			if math.Abs(float64(2*s-total)) >= math.Abs(float64(2*observed-total)) {
				extreme++
			}
			if s <= observed {
				below++
			}
			if s >= observed {
				above++
			}
		}
		all := float64(int(1) << len(ranks2))
		for _, alt := range []struct {
			alt  Alternative
			want float64
		}{{TwoSided, float64(extreme) / all}, {Less, float64(below) / all}, {Greater, float64(above) / all}} {
			if _, got := WilcoxonSignedRankAlternative(d, alt.alt); !closeTo(got, alt.want, 1e-12) {
				t.Fatalf("differences %v: exact %s p = %.15g, enumeration gives %.15g", d, alt.alt, got, alt.want)
			}
		}
	}
}

func TestWilcoxonLargeNIsFinite(t *testing.T) {
	d := make([]float64, 100_000)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range d {
		d[i] = math.Round(rng.NormFloat64()*10) / 10
	}
	v, p := WilcoxonSignedRank(d)
	if math.IsNaN(v) || math.IsNaN(p) || p < 0 || p > 1 {
		t.Errorf("WilcoxonSignedRank over 100,000 differences = %v, %v; want a p in [0, 1]", v, p)
	}
}
