package evals

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// boundsCase is one line of testdata/bounds_reference.jsonl.gz, written by
// testdata/gen/bounds_reference.py with scipy, statsmodels and mpmath, and
// for Tango's bound a likelihood maximised numerically.
type boundsCase struct {
	Kind      string    `json:"kind"`
	C         float64   `json:"c"`
	K         int       `json:"k"`
	N         int       `json:"n"`
	Cases     [][2]int  `json:"cases"`
	Cand      []int     `json:"cand"`
	Base      []int     `json:"base"`
	X         []float64 `json:"x"`
	Low, High float64
}

func TestBoundsAgreeWithScipy(t *testing.T) {
	f, err := os.Open("testdata/bounds_reference.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	scanner := bufio.NewScanner(gz)
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		var c boundsCase
		if err := json.Unmarshal(scanner.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		var low, high float64
		hasHigh := true
		switch c.Kind {
		case "wilson":
			cases := make([]PassCount, c.N)
			for i := range cases {
				cases[i] = PassCount{Passed: boolInt(i < c.K), Repeats: 1}
			}
			low, high = PassRateLow(cases, c.C), PassRateHigh(cases, c.C)
		case "cluster":
			cases := make([]PassCount, len(c.Cases))
			for i, pc := range c.Cases {
				cases[i] = PassCount{pc[0], pc[1]}
			}
			low, high = PassRateLow(cases, c.C), PassRateHigh(cases, c.C)
		case "tango":
			cand, base := make([]PassCount, len(c.Cand)), make([]PassCount, len(c.Base))
			for i := range cand {
				cand[i], base[i] = PassCount{c.Cand[i], 1}, PassCount{c.Base[i], 1}
			}
			low, hasHigh = PassRateDiffLow(cand, base, c.C), false
		case "mean":
			low, high = MeanLow(c.X, c.C), MeanHigh(c.X, c.C)
		default:
			t.Fatalf("unknown kind %q", c.Kind)
		}
		counts[c.Kind]++
		if math.Abs(low-c.Low) > 1e-9 || hasHigh && math.Abs(high-c.High) > 1e-9 {
			t.Errorf("%s %+v: low %v high %v, scipy says %v %v", c.Kind, c, low, high, c.Low, c.High)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"wilson", "cluster", "tango", "mean"} {
		if counts[kind] < 10000 {
			t.Errorf("%d %s cases, want at least 10,000", counts[kind], kind)
		}
	}
}

// Tango's bound has a closed form when every pair agrees: −z²/(n+z²).
// Newcombe's hybrid bound, which it replaced, gave width |(p−l) − (u−p)|
// there once the pairs held both passes and fails (φ = 1): 0 at a pass
// rate of one half, so that 6 cases alike on both sides "proved" the
// candidate no worse.
func TestPassRateDiffLowTies(t *testing.T) {
	z := normalQuantile(0.95)
	for _, n := range []int{1, 5, 6, 30, 500} {
		cand := make([]PassCount, n)
		for i := range cand {
			cand[i] = PassCount{boolInt(i%3 != 0), 1}
		}
		want := -z * z / (float64(n) + z*z)
		if got := PassRateDiffLow(cand, cand, 0.95); math.Abs(got-want) > 1e-12 {
			t.Errorf("n %d, every pair alike: bound %v, want %v", n, got, want)
		}
	}
	// With repeats, differences all 0: Tango's bound on their parts, not
	// a t bound of no width.
	cases := []PassCount{{3, 3}, {0, 3}, {3, 3}, {2, 3}, {3, 3}}
	if got, want := PassRateDiffLow(cases, cases, 0.95), -z*z/(5+z*z); math.Abs(got-want) > 1e-12 {
		t.Errorf("5 cases × 3 repeats alike: bound %v, want %v", got, want)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

var coverageFull = flag.Bool("coverage.full", false, "run the coverage simulation with 10,000 sets per cell")

// simulateCases draws n cases whose true pass rates follow a beta
// distribution with mean p and intra-case correlation rho, each run K
// times.
func simulateCases(r *rand.Rand, n, k int, p, rho float64) []PassCount {
	// Beta(a, b) with mean p and 1/(a+b+1) = rho.
	s := 1/rho - 1
	a, b := p*s, (1-p)*s
	out := make([]PassCount, n)
	for i := range out {
		q := betaDraw(r, a, b)
		passed := 0
		for range k {
			if r.Float64() < q {
				passed++
			}
		}
		out[i] = PassCount{passed, k}
	}
	return out
}

// betaDraw draws from Beta(a, b) through two gamma draws.
func betaDraw(r *rand.Rand, a, b float64) float64 {
	x, y := gammaDraw(r, a), gammaDraw(r, b)
	return x / (x + y)
}

// gammaDraw is Marsaglia and Tsang's method, boosted for shape < 1.
func gammaDraw(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gammaDraw(r, shape+1) * math.Pow(r.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// coverageCell is the share of simulated sets whose one-sided 95% lower
// bound of the pass rate is at or below the truth, p.
func coverageCell(seed uint64, sets, n, k int, p, rho float64, naive bool) float64 {
	r := rand.New(rand.NewPCG(seed, uint64(n*100+k)))
	covered := 0
	for range sets {
		cases := simulateCases(r, n, k, p, rho)
		if naive {
			rows := make([]PassCount, 0, n*k)
			for _, c := range cases {
				for j := range c.Repeats {
					rows = append(rows, PassCount{boolInt(j < c.Passed), 1})
				}
			}
			cases = rows
		}
		if low := PassRateLow(cases, DefaultConfidence); low <= p {
			covered++
		}
	}
	return float64(covered) / float64(sets)
}

// TestPassRateLowCoverage checks the cluster-aware bound's coverage over
// every cell (case rates beta-distributed, ICC 0.2); -coverage.full runs
// 10,000 sets per cell. Known misses, not hidden: at n 10 a one-sided bound
// of a rate near 0.95 covers in 100% of sets (a binomial on 10 cases has
// too few outcomes to land in the band), which the quick cut's slack
// admits; see docs/evals-and-statistics.md. The quick cut's 400
// sets give a Monte Carlo standard error of √(.95·.05/400) ≈ 1.1 points,
// so it allows three of them (3.3 points) beyond the 94–98.5% band.
func TestPassRateLowCoverage(t *testing.T) {
	sets, slack := 400, 0.033
	if *coverageFull {
		sets, slack = 10000, 0.0
	}
	if testing.Short() {
		t.Skip("coverage simulation")
	}
	for _, n := range []int{10, 30, 100, 500} {
		for _, k := range []int{1, 3, 5} {
			for _, p := range []float64{0.05, 0.2, 0.5, 0.8, 0.95} {
				cellSets := sets
				if !*coverageFull && n == 500 {
					cellSets = 100
				}
				got := coverageCell(27, cellSets, n, k, p, 0.2, false)
				tol := slack
				if cellSets == 100 {
					tol = 0.066
				}
				if got < 0.94-tol || got > 0.985+tol {
					t.Errorf("n %d, K %d, p %v: coverage %.3f over %d sets, want 0.94–0.985 (± %.3f)", n, k, p, got, cellSets, tol)
				} else {
					t.Logf("n %d, K %d, p %v: coverage %.3f", n, k, p, got)
				}
			}
		}
	}
}

// Treating repeats as independent rows undercovers when cases differ.
func TestRepeatsAsRowsUndercover(t *testing.T) {
	got := coverageCell(27, 2000, 100, 5, 0.5, 0.2, true)
	if got >= 0.94 {
		t.Errorf("repeats as rows: coverage %.3f, want below 0.94", got)
	}
	t.Logf("repeats as rows, n 100, K 5, p 0.5, rho 0.2: coverage %.3f", got)
}

func TestCasesNeededAndPassAll(t *testing.T) {
	if got := CasesNeeded(5, 0, -0.31, -0.05); got < 5*(0.31/0.05)*(0.31/0.05) || math.IsInf(got, 0) {
		t.Errorf("CasesNeeded(5, 0, -0.31, -0.05) = %v, want about 193", got)
	}
	if got := CasesNeeded(5, -0.1, -0.3, -0.05); !math.IsInf(got, 1) {
		t.Errorf("CasesNeeded with the estimate below the margin = %v, want +Inf", got)
	}
	cases := []PassCount{{3, 3}, {1, 3}, {0, 3}, {3, 3}}
	if got := PassAll(cases); got != 0.5 {
		t.Errorf("PassAll = %v, want 0.5", got)
	}
	if got := FlakyCases(cases); len(got) != 1 || got[0] != 1 {
		t.Errorf("FlakyCases = %v, want [1]", got)
	}
	if !math.IsNaN(PassRateLow(nil, 0.95)) || !math.IsNaN(MeanLow([]float64{1}, 0.95)) {
		t.Error("a bound over no data is not NaN")
	}
}

// BenchmarkBounds computes every bound of 10,000 cases × 3 repeats, beside
// BenchmarkCompare's 10,000-row comparison in the same process.
func BenchmarkBounds(b *testing.B) {
	r := rand.New(rand.NewPCG(27, 27))
	cand, base := simulateCases(r, 10_000, 3, 0.8, 0.2), simulateCases(r, 10_000, 3, 0.75, 0.2)
	candRates, baseRates := caseRates(cand), caseRates(base)
	b.ReportAllocs()
	for b.Loop() {
		_ = PassRateLow(cand, DefaultConfidence) + PassRateHigh(cand, DefaultConfidence) +
			PassRateDiffLow(cand, base, DefaultConfidence) + MeanLow(candRates, DefaultConfidence) +
			MeanHigh(candRates, DefaultConfidence) + MeanDiffLow(candRates, baseRates, DefaultConfidence) +
			PassAll(cand) + float64(len(FlakyCases(cand)))
	}
}

// diffCoverageCell is the share of simulated sets whose one-sided 95% lower
// bound of the paired difference (PassRateDiffLow) is at or below the true
// difference: n cases with Beta-distributed rates (mean p, ICC 0.2), run K
// times on each side, the candidate's rate on a case its baseline's plus
// shift (clipped to [0, 1]); the truth is the mean of the clipped shifts'
// effect, estimated from the draws' rates.
func diffCoverageCell(seed uint64, sets, n, k int, p, shift float64) float64 {
	r := rand.New(rand.NewPCG(seed, uint64(n*100+k)))
	s := 1/0.2 - 1
	a, b := p*s, (1-p)*s
	covered := 0
	for range sets {
		cand, base := make([]PassCount, n), make([]PassCount, n)
		truth := 0.0
		for i := range n {
			q := betaDraw(r, a, b)
			qc := min(1, max(0, q+shift))
			truth += qc - q
			draw := func(rate float64) PassCount {
				passed := 0
				for range k {
					if r.Float64() < rate {
						passed++
					}
				}
				return PassCount{passed, k}
			}
			cand[i], base[i] = draw(qc), draw(q)
		}
		if low := PassRateDiffLow(cand, base, DefaultConfidence); low <= truth/float64(n) {
			covered++
		}
	}
	return float64(covered) / float64(sets)
}

// TestPassRateDiffLowCoverage checks diff_low's coverage on pass rates:
// Tango's bound without repeats, the t bound over case differences with
// repeats, for a candidate as good as the baseline and one 10 points worse.
// The quick cut allows three Monte Carlo standard errors beyond the band,
// as TestPassRateLowCoverage; -coverage.full runs 10,000 sets a cell and
// logs the table of the docs.
func TestPassRateDiffLowCoverage(t *testing.T) {
	sets, slack := 400, 0.033
	if *coverageFull {
		sets, slack = 10000, 0.0
	}
	if testing.Short() {
		t.Skip("coverage simulation")
	}
	for _, n := range []int{10, 30, 100, 500} {
		for _, k := range []int{1, 3, 5} {
			for _, cell := range []struct{ p, shift float64 }{{0.5, 0}, {0.8, 0}, {0.8, -0.1}, {0.95, 0}} {
				cellSets, tol := sets, slack
				if !*coverageFull && n == 500 {
					cellSets, tol = 100, 0.066
				}
				got := diffCoverageCell(27, cellSets, n, k, cell.p, cell.shift)
				if got < 0.94-tol || got > 0.985+tol {
					t.Errorf("n %d, K %d, p %v, shift %v: coverage %.3f over %d sets, want 0.94–0.985 (± %.3f)", n, k, cell.p, cell.shift, got, cellSets, tol)
				} else {
					t.Logf("n %d, K %d, p %v, shift %v: coverage %.3f", n, k, cell.p, cell.shift, got)
				}
			}
		}
	}
}
