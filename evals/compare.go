package evals

import (
	"bytes"
	"iter"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/agenta-go/agenta/models"
)

// Comparison is how a candidate run differs from a baseline, row by row:
// rows with the same inputs are paired, and each evaluator's results on
// them are compared.
type Comparison struct {
	Paired     int // rows matched by their inputs (names and values), whatever their order; duplicates pair in order
	Unpaired   int // rows of either side left without a partner
	Evaluators map[string]Delta

	// EvaluatorIDs lists the keys of Evaluators in the order they were
	// first seen.
	EvaluatorIDs []string
}

// Delta is one evaluator's change from the baseline to the candidate.
//
// Higher, Lower and Tied count the pairs in which both sides have a value;
// whether higher is better depends on the evaluator (see Direction, and
// Delta.Worse).
type Delta struct {
	Baseline, Candidate Metric  // over the paired rows only
	Diff                float64 // Candidate.Mean − Baseline.Mean
	Higher, Lower, Tied int     // paired rows where the candidate's value is higher, lower, equal
	PValue              float64 // two-sided: the exact McNemar test (a binomial test on the discordant pairs) for bools, the Wilcoxon signed-rank test for numbers; 1 when nothing differs
}

// Worse returns the number of paired rows in which the candidate did worse
// than the baseline, given which direction is better.
func (d Delta) Worse(dir Direction) int {
	if dir == LowerIsBetter {
		return d.Higher
	}
	return d.Lower
}

// Better returns the number of paired rows in which the candidate did
// better than the baseline, given which direction is better.
func (d Delta) Better(dir Direction) int {
	if dir == LowerIsBetter {
		return d.Lower
	}
	return d.Higher
}

// Regressed reports whether the candidate is significantly worse than the
// baseline: its mean moved the wrong way and PValue is below alpha. Since
// PValue is two-sided, the chance of a false alarm when nothing changed is
// at most alpha/2.
func (d Delta) Regressed(dir Direction, alpha float64) bool {
	return d.Diff != 0 && !math.IsNaN(d.Diff) && (d.Diff < 0) == (dir == HigherIsBetter) && d.PValue < alpha
}

// Compare pairs the rows of two runs of the same test set by their inputs
// and compares each evaluator's results on the pairs. Its cost is linear in
// the number of rows.
func Compare(baseline, candidate []models.EvaluationScenario) Comparison {
	var c Comparer
	for i := range baseline {
		c.AddBaseline(baseline[i])
	}
	for i := range candidate {
		c.AddCandidate(candidate[i])
	}
	return c.Comparison()
}

// CompareStream compares two runs read from sequences such as
// client.StreamEvaluationScenarios, reading them in turn, one row from each.
// The service writes scenarios in test-set order, so rows meet their
// partner soon and memory stays small. It stops at the first error.
func CompareStream(baseline, candidate iter.Seq2[models.EvaluationScenario, error]) (Comparison, error) {
	var c Comparer
	nextBase, stopBase := iter.Pull2(baseline)
	defer stopBase()
	nextCandidate, stopCandidate := iter.Pull2(candidate)
	defer stopCandidate()
	// take adds the next row of one side; it reports false when that side
	// has ended, and the stream's error.
	take := func(next func() (models.EvaluationScenario, error, bool), add func(models.EvaluationScenario)) (bool, error) {
		s, err, ok := next()
		if ok && err == nil {
			add(s)
		}
		return ok, err
	}
	for more := [2]bool{true, true}; more[0] || more[1]; {
		var err error
		if more[0] {
			if more[0], err = take(nextBase, c.AddBaseline); err != nil {
				return c.Comparison(), err
			}
		}
		if more[1] {
			if more[1], err = take(nextCandidate, c.AddCandidate); err != nil {
				return c.Comparison(), err
			}
		}
	}
	return c.Comparison(), nil
}

// Comparer builds a Comparison from rows added one at a time, from either
// side and in any order. A row is paired with the first row of the other
// side that has the same inputs and no partner yet, so duplicate inputs
// pair in the order they come. It holds the unpaired rows' scores (not the
// rows), and for number evaluators one difference per pair. The zero value
// is ready to use; a Comparer is not safe for concurrent use.
type Comparer struct {
	waiting map[string]waitingRows
	paired  int
	deltas  map[string]*deltaAccumulator
	order   []string
	key     []byte  // scratch for the pairing key
	scratch []score // scratch for a row that pairs at once
	slab    []score // storage for the scores of waiting rows
}

// waitingRows are the rows of one input key still without a partner; only
// one side can have any. The first is held inline, as most keys have one.
type waitingRows struct {
	baseline bool
	first    []score
	more     [][]score
}

func (w *waitingRows) len() int {
	if w.first == nil {
		return 0
	}
	return 1 + len(w.more)
}

// pop removes and returns the oldest row.
func (w *waitingRows) pop() []score {
	row := w.first
	w.first = nil
	if len(w.more) > 0 {
		w.first = w.more[0]
		w.more[0] = nil
		w.more = w.more[1:]
	}
	return row
}

// score is one evaluator's result on a row, as it counts.
type score struct {
	evaluator string
	kind      valueKind
	value     float64
}

// AddBaseline adds a row of the baseline run.
func (c *Comparer) AddBaseline(s models.EvaluationScenario) { c.add(s, true) }

// AddCandidate adds a row of the candidate run.
func (c *Comparer) AddCandidate(s models.EvaluationScenario) { c.add(s, false) }

func (c *Comparer) add(s models.EvaluationScenario, baseline bool) {
	c.key = pairingKey(c.key[:0], s.Inputs)
	w, found := c.waiting[string(c.key)]
	if found && w.baseline != baseline {
		row := c.scores(c.scratch[:0], s)
		c.scratch = row
		partner := w.pop()
		if w.len() == 0 {
			delete(c.waiting, string(c.key))
		} else {
			c.waiting[string(c.key)] = w
		}
		if baseline {
			c.pair(row, partner)
		} else {
			c.pair(partner, row)
		}
		return
	}
	// Keep the scores in a shared slab: one allocation per 4,096 scores.
	if cap(c.slab)-len(c.slab) < len(s.Results) {
		c.slab = make([]score, 0, max(4096, len(s.Results)))
	}
	start := len(c.slab)
	c.slab = c.scores(c.slab, s)
	row := c.slab[start:len(c.slab):len(c.slab)]
	if !found {
		if c.waiting == nil {
			c.waiting = map[string]waitingRows{}
		}
		w = waitingRows{baseline: baseline}
	}
	if w.first == nil {
		w.first = row
	} else {
		w.more = append(w.more, row)
	}
	c.waiting[string(c.key)] = w
}

// scores appends the scores of a row's results.
func (c *Comparer) scores(dst []score, s models.EvaluationScenario) []score {
	for _, r := range s.Results {
		kind, x := scoreOf(r.Result)
		dst = append(dst, score{r.EvaluatorConfig, kind, x})
	}
	return dst
}

// pair compares the scores of a baseline row and its candidate partner.
func (c *Comparer) pair(base, cand []score) {
	c.paired++
	for _, b := range base {
		other := kindNone
		var y float64
		for _, s := range cand {
			if s.evaluator == b.evaluator {
				other, y = s.kind, s.value
				break
			}
		}
		c.delta(b.evaluator).add(b.kind, b.value, other, y)
	}
	for _, s := range cand {
		if !slices.ContainsFunc(base, func(b score) bool { return b.evaluator == s.evaluator }) {
			c.delta(s.evaluator).add(kindNone, 0, s.kind, s.value)
		}
	}
}

func (c *Comparer) delta(id string) *deltaAccumulator {
	d := c.deltas[id]
	if d == nil {
		if c.deltas == nil {
			c.deltas = map[string]*deltaAccumulator{}
		}
		d = &deltaAccumulator{}
		c.deltas[id] = d
		c.order = append(c.order, id)
	}
	return d
}

// Comparison returns the comparison of the rows added so far.
func (c *Comparer) Comparison() Comparison {
	out := Comparison{
		Paired:       c.paired,
		Evaluators:   make(map[string]Delta, len(c.deltas)),
		EvaluatorIDs: append([]string(nil), c.order...),
	}
	for _, w := range c.waiting {
		out.Unpaired += w.len()
	}
	for id, d := range c.deltas {
		out.Evaluators[id] = d.delta()
	}
	return out
}

// pairingKey appends a key that is equal for two rows exactly when they
// have the same input names with the same values as text, in any order:
// the inputs sorted by name, each name and value length-prefixed.
func pairingKey(key []byte, inputs []models.Input) []byte {
	var small [8]int
	order := small[:0]
	if len(inputs) > len(small) {
		order = make([]int, 0, len(inputs))
	}
	for i := range inputs {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch x, y := inputs[a].Name, inputs[b].Name; {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	for _, i := range order {
		in := inputs[i]
		key = strconv.AppendInt(key, int64(len(in.Name)), 10)
		key = append(key, ':')
		key = append(key, in.Name...)
		if v, ok := plainString(in.Value); ok {
			key = strconv.AppendInt(key, int64(len(v)), 10)
			key = append(key, ':')
			key = append(key, v...)
			continue
		}
		text := in.Text()
		key = strconv.AppendInt(key, int64(len(text)), 10)
		key = append(key, ':')
		key = append(key, text...)
	}
	return key
}

// plainString returns the contents of a JSON string that needs no
// unescaping, which is what Input.Text would return for it, without
// allocating.
func plainString(v []byte) ([]byte, bool) {
	v = bytes.TrimSpace(v)
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	for _, b := range inner {
		if b < 0x20 || b == '\\' || b == '"' {
			return nil, false
		}
	}
	return inner, utf8.Valid(inner)
}

// deltaAccumulator gathers one evaluator's results over the pairs.
type deltaAccumulator struct {
	baseline, candidate metricAccumulator
	higher, lower, tied int
	// onlyCandidate and onlyBaseline count the pairs of bools where only
	// that side passed; diffs holds the differences of the other pairs of
	// values, and allBool is false once there is one.
	onlyCandidate, onlyBaseline int
	diffs                       []float64
	notAllBool                  bool
}

func (d *deltaAccumulator) add(bk valueKind, x float64, ck valueKind, y float64) {
	d.baseline.addScore(bk, x)
	d.candidate.addScore(ck, y)
	scored := func(k valueKind) bool { return k == kindBool || k == kindNumber }
	if !scored(bk) || !scored(ck) {
		return
	}
	switch {
	case y > x:
		d.higher++
	case y < x:
		d.lower++
	default:
		d.tied++
	}
	if bk == kindBool && ck == kindBool {
		switch {
		case y > x:
			d.onlyCandidate++
		case y < x:
			d.onlyBaseline++
		}
		return
	}
	d.notAllBool = true
	if y != x {
		d.diffs = append(d.diffs, y-x)
	}
}

func (d *deltaAccumulator) delta() Delta {
	out := Delta{
		Baseline:  d.baseline.metric(),
		Candidate: d.candidate.metric(),
		Higher:    d.higher,
		Lower:     d.lower,
		Tied:      d.tied,
		PValue:    1,
	}
	out.Diff = out.Candidate.Mean - out.Baseline.Mean
	switch {
	case d.higher == 0 && d.lower == 0:
		// Nothing differs: p = 1, whatever the test.
	case !d.notAllBool:
		out.PValue = McNemarExact(d.onlyCandidate, d.onlyBaseline)
	default:
		diffs := make([]float64, 0, len(d.diffs)+d.onlyCandidate+d.onlyBaseline)
		diffs = append(diffs, d.diffs...)
		for range d.onlyCandidate {
			diffs = append(diffs, 1)
		}
		for range d.onlyBaseline {
			diffs = append(diffs, -1)
		}
		_, out.PValue = WilcoxonSignedRank(diffs)
	}
	return out
}
