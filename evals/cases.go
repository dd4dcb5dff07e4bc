package evals

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// This file gathers, by test case, what the bound measures (low, high,
// pass_all, flaky) read of one side of a comparison: the test case is the
// unit, and with repeats its value is its mean over its repeats. Each
// evaluator keeps a few sums, whatever the number of cases.

// MaxFlakyListed is how many flaky cases of an evaluator a report keeps
// and lists; the others are counted ("and 12 more").
const MaxFlakyListed = 20

// FlakyCase is a test case whose repeats disagree on a pass/fail
// evaluator: some passed, some failed.
type FlakyCase struct {
	// Case names the test case by its inputs, as text (at most 120
	// characters).
	Case            string
	Passed, Repeats int
}

// FlakyList lists one evaluator's flaky cases.
type FlakyList struct {
	Evaluator string // the evaluator config's id
	Name      string // its name, as the report shows it
	// Cases holds the first MaxFlakyListed flaky cases, in the order they
	// ended; Total counts them all.
	Cases []FlakyCase
	Total int
}

// caseValue is one side's value of an evaluator on one test case: kind
// and value as in score (for a pass rate, value is its passes over
// repeats), rate when it is a pass rate, repeats the rows of the case.
type caseValue struct {
	kind    valueKind
	value   float64
	rate    bool
	repeats int
}

// CaseStats is what one side's test cases add up to on one evaluator, as
// the bound measures (low, high, pass_all, flaky) read them: a few sums,
// whatever the number of cases. Each case counts once, its value its
// mean over its repeats.
type CaseStats struct {
	Cases int // cases with a result, lacking ones included
	// Lacking counts the cases without a value (errored, missing, not a
	// bool or number); LackingRepeats and LackingRepeats2 sum their rows
	// and its squares. For a pass rate each is a case that failed every
	// repeat.
	Lacking, LackingRepeats int
	LackingRepeats2         float64
	Rates, Numbers          int // cases with a pass rate, with a number score
	// Passed and Trials sum the passes and the repeats of the pass
	// rates; SumPassed2, SumPassedRepeats and SumRepeats2 the squares and
	// products that Korn and Graubard's variance takes.
	Passed, Trials                            int
	SumPassed2, SumPassedRepeats, SumRepeats2 float64
	MaxRepeats                                int
	// PassAll counts the cases whose repeats all passed; Flaky those
	// whose repeats disagree, the first MaxFlakyListed in FlakyCases.
	PassAll, Flaky int
	FlakyCases     []FlakyCase
	// flakyKeys holds the key of every flaky case (16 bytes each), for
	// the reports that mark the rows of a flaky case.
	flakyKeys []caseKey
	// Values counts the number scores' case means; Sum and SumSquares
	// sum them and their squares (compensated).
	Values            int
	Sum, SumSquares   float64
	sumCarry, sqCarry float64
}

// add adds a case's value; g is the case's rows, nil for a row without
// repeats (never flaky).
func (s *CaseStats) add(v caseValue, g *caseGroup) {
	s.Cases++
	r := max(v.repeats, 1)
	switch {
	case !scored(v.kind):
		s.Lacking++
		s.LackingRepeats += r
		s.LackingRepeats2 += float64(r * r)
		s.MaxRepeats = max(s.MaxRepeats, r)
	case v.rate:
		s.Rates++
		p := int(math.Round(v.value * float64(r)))
		s.Passed += p
		s.Trials += r
		s.SumPassed2 += float64(p * p)
		s.SumPassedRepeats += float64(p * r)
		s.SumRepeats2 += float64(r * r)
		s.MaxRepeats = max(s.MaxRepeats, r)
		switch {
		case p == r:
			s.PassAll++
		case p > 0:
			s.Flaky++
			if g != nil {
				if len(s.FlakyCases) < MaxFlakyListed {
					s.FlakyCases = append(s.FlakyCases, FlakyCase{Case: g.label(), Passed: p, Repeats: r})
				}
				s.flakyKeys = append(s.flakyKeys, g.caseKey())
			}
		}
	default:
		s.Numbers++
		s.Values++
		s.Sum, s.sumCarry = compensatedAdd(s.Sum, s.sumCarry, v.value)
		s.SumSquares, s.sqCarry = compensatedAdd(s.SumSquares, s.sqCarry, v.value*v.value)
	}
}

// clone returns a copy that shares nothing the copy's adds would change.
func (s *CaseStats) clone() *CaseStats {
	c := *s
	c.FlakyCases = slices.Clip(c.FlakyCases)
	c.flakyKeys = slices.Clip(c.flakyKeys)
	return &c
}

// isRate reports whether the evaluator's values are pass rates.
func (s CaseStats) isRate() bool { return s.Rates > 0 && s.Numbers == 0 }

// rateBounds returns the one-sided bounds of the pass rate over cases
// (PassRateLow and PassRateHigh, from sums), counting missing more cases
// of one row as lacking. A lacking case failed every repeat, or passed
// every one when lackAsPass (for a pass/fail evaluator whose true is the
// worse verdict); without counts them in no way.
func (s CaseStats) rateBounds(missing int, lackAsPass, without bool, confidence float64) (low, high float64) {
	n, passed, total := s.Rates, s.Passed, s.Trials
	sumPP, sumPT, sumT := s.SumPassed2, s.SumPassedRepeats, s.SumRepeats2
	if !without {
		lacking, lacking2 := s.LackingRepeats+missing, s.LackingRepeats2+float64(missing)
		n += s.Lacking + missing
		total += lacking
		sumT += lacking2
		if lackAsPass {
			passed += lacking
			sumPP += lacking2
			sumPT += lacking2
		}
	}
	if n == 0 || total == 0 {
		return math.NaN(), math.NaN()
	}
	if total == n { // no repeats
		return WilsonInterval(passed, total, 2*confidence-1)
	}
	if n < 2 {
		return math.NaN(), math.NaN()
	}
	p := float64(passed) / float64(total)
	meanSize := float64(total) / float64(n)
	ss := max(0, sumPP-2*p*sumPT+p*p*sumT)
	v := ss / (float64(n) * float64(n-1) * meanSize * meanSize)
	nEff := float64(total)
	if v > 0 && p > 0 && p < 1 {
		nEff = min(nEff, p*(1-p)/v)
	}
	return wilsonBounds(p, nEff, tQuantile(confidence, float64(n-1)))
}

// CaseSummary is what one side's test cases add up to, by evaluator.
type CaseSummary struct {
	Cases int // test cases (rows, without repeats)
	// Short counts the cases with fewer rows than Repeats, the repeats
	// the run asked for: a repeat that never came back. A gate on such a
	// run fails (see Check): the listing was cut short.
	Short, Repeats int
	Evaluators     map[string]CaseStats // by evaluator config id
}

// caseSet gathers a CaseSummary.
type caseSet struct {
	cases     int
	short     int
	repeats   int // the rows a case is held to (see Comparer.shortOf)
	evaluator map[string]*CaseStats
}

func (c caseSet) summary() CaseSummary {
	out := CaseSummary{Cases: c.cases, Short: c.short, Repeats: c.repeats, Evaluators: make(map[string]CaseStats, len(c.evaluator))}
	for id, s := range c.evaluator {
		out.Evaluators[id] = *s
	}
	return out
}

func (c *caseSet) of(id string) *CaseStats {
	s := c.evaluator[id]
	if s == nil {
		if c.evaluator == nil {
			c.evaluator = map[string]*CaseStats{}
		}
		s = &CaseStats{}
		c.evaluator[id] = s
	}
	return s
}

func (c caseSet) clone() caseSet {
	out := c
	out.evaluator = make(map[string]*CaseStats, len(c.evaluator))
	for id, s := range c.evaluator {
		out.evaluator[id] = s.clone()
	}
	return out
}

// String writes the list on one line, for a report or an annotation:
// `Exact match: 2 flaky cases (repeats that disagree): "country=FR" 1 of
// 3 passed; "country=PE" 2 of 3 passed`, with "and N more" for those not
// held.
func (f FlakyList) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s (repeats that disagree): ", f.Name, plural(f.Total, "flaky case"))
	for i, c := range f.Cases {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%q %d of %d passed", c.Case, c.Passed, c.Repeats)
	}
	if more := f.Total - len(f.Cases); more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return b.String()
}

// flaky lists the flaky cases of each evaluator in order, those with none
// left out.
func (c CaseSummary) flaky(order []string, cat catalog) []FlakyList {
	var out []FlakyList
	for _, id := range order {
		if s := c.Evaluators[id]; s.Flaky > 0 {
			out = append(out, FlakyList{Evaluator: id, Name: cat.label(id), Cases: slices.Clone(s.FlakyCases), Total: s.Flaky})
		}
	}
	return out
}

// numberBounds returns the one-sided t bounds of the mean of the number
// scores' case means (MeanLow, MeanHigh, from sums); NaN below two.
func (s CaseStats) numberBounds(confidence float64) (low, high float64) {
	if s.Values < 2 {
		return math.NaN(), math.NaN()
	}
	n := float64(s.Values)
	sum, sq := s.Sum+s.sumCarry, s.SumSquares+s.sqCarry
	mean := sum / n
	m2 := max(0, sq-sum*sum/n)
	half := tQuantile(confidence, n-1) * math.Sqrt(m2/(n-1)) / math.Sqrt(n)
	return mean - half, mean + half
}
