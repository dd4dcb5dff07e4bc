package evals

import (
	"cmp"
	"slices"

	"github.com/agenta-go/agenta/models"
)

// This file gathers the repeats of each test case, for a Comparer with
// Repeats > 1: a case is compared once, as its mean over its repeats.

// caseGroup is one test case's rows so far, on each side.
type caseGroup struct {
	seq      int
	inputs   int        // the length of the key's inputs part
	wild     bool       // keyed by inputs alone: rows without expected answers
	testcase bool       // keyed by test case id
	text     []byte     // the start of the first row's InputsText, for its label
	key      []byte     // its pairing key (inputs, a length prefix of it)
	hash     uint64     // keyHash(key)
	next     *caseGroup // another case of the same hash in caseIndex
	rows     [2]int
	fed      [2]bool // the side's values went into Comparer.sides
	failed   [2]int  // rows whose app call failed
	noOutput [2]int  // those of them without output
	scores   [2][]repeatScore
}

// repeatScore is one evaluator's results over a case's rows on one side.
type repeatScore struct {
	evaluator      string
	values, passes int
	sum            float64
	notBool        bool
	lack           valueKind // how the first repeat without a value lacked it
	row            int       // the last of the side's rows that had a result
}

// add adds a row of the side, its results read as Comparer.scores reads
// them (the first of each evaluator), straight into the case's sums.
func (g *caseGroup) add(side int, s *models.EvaluationScenario, failed, noOut bool) {
	g.rows[side]++
	row := g.rows[side]
	if failed {
		g.failed[side]++
		if noOut {
			g.noOutput[side]++
		}
	}
	for i := range s.Results {
		res := &s.Results[i]
		r := g.score(side, i, res.EvaluatorConfig)
		if r.row == row {
			continue // a second result of the evaluator on the row
		}
		r.row = row
		kind, x := kindError, 0.0
		if !failed {
			kind, x = scoreOf(res.Result)
		} else if noOut {
			kind = kindNoOutput
		}
		if !scored(kind) {
			if r.lack == kindNone {
				r.lack = kind
			}
			continue
		}
		r.values++
		r.sum += x
		if kind == kindBool {
			if x == 1 {
				r.passes++
			}
		} else {
			r.notBool = true
		}
	}
}

// score returns the sums of an evaluator on a side, added when new; hint is
// where the repeats of a case most often have it: the result's place.
func (g *caseGroup) score(side, hint int, evaluator string) *repeatScore {
	scores := g.scores[side]
	if hint < len(scores) && scores[hint].evaluator == evaluator {
		return &scores[hint]
	}
	i := slices.IndexFunc(scores, func(r repeatScore) bool { return r.evaluator == evaluator })
	if i < 0 {
		g.scores[side] = append(scores, repeatScore{evaluator: evaluator})
		i = len(scores)
	}
	return &g.scores[side][i]
}

// label returns the case's label: its first row's inputs as text, cut to
// 120 characters.
func (g *caseGroup) label() string { return bound(string(g.text), 120) }

// value returns the case's value of one evaluator on one side: for a
// pass/fail evaluator its passes over its rows (a row without a value a
// fail), for numbers their mean, lacking while any row lacks one.
func (g *caseGroup) value(side int, r repeatScore) caseValue {
	rows := g.rows[side]
	out := caseValue{repeats: rows}
	switch {
	case r.values == 0:
		out.kind = r.lack
		if out.kind == kindNone {
			out.kind = g.lacking(side)
		}
	case !r.notBool:
		out.rate, out.value = true, float64(r.passes)/float64(rows)
		out.kind = kindNumber
		if r.passes == 0 || r.passes == rows {
			out.kind = kindBool
		}
	case r.values < rows:
		out.kind = kindError
	default:
		out.kind, out.value = kindNumber, r.sum/float64(r.values)
	}
	return out
}

// lacking is how an evaluator absent from every row of a side counts, as
// pendingRow.lacking.
func (g *caseGroup) lacking(side int) valueKind {
	switch rows := g.rows[side]; {
	case g.noOutput[side] == rows:
		return kindNoOutput
	case g.failed[side] == rows:
		return kindError
	}
	return kindNone
}

// pending returns a side of the case as one row, its scores appended to
// dst (nil for a row that is kept).
func (g *caseGroup) pending(side int, dst []score) pendingRow {
	row := pendingRow{seq: g.seq, text: g.text, repeats: g.rows[side], scores: dst,
		failed: g.failed[side] == g.rows[side], noOutput: g.noOutput[side] == g.rows[side]}
	for _, r := range g.scores[side] {
		v := g.value(side, r)
		row.scores = append(row.scores, score{r.evaluator, v.kind, v.rate, v.value})
	}
	return row
}

// feed adds a side of the case to the side's case values.
func (g *caseGroup) feed(set *caseSet, side, repeats int) {
	set.cases++
	set.repeats = repeats
	if g.rows[side] < repeats {
		set.short++
	}
	for _, r := range g.scores[side] {
		set.of(r.evaluator).add(g.value(side, r), g)
	}
}

// alike reports whether the rows of side are alike, so that any n of
// them stand for the others: each one failed, all with output or all
// without, none with a value.
func (g *caseGroup) alike(side int) bool {
	rows := g.rows[side]
	if g.failed[side] != rows || (g.noOutput[side] != 0 && g.noOutput[side] != rows) {
		return false
	}
	for _, r := range g.scores[side] {
		if r.values > 0 {
			return false
		}
	}
	return true
}

// mergeSome adds n of the rows of side of o to g, leaving o the others;
// n below o's rows needs them alike.
func (g *caseGroup) mergeSome(o *caseGroup, side, n int) {
	if n == o.rows[side] {
		g.merge(o, side)
		o.rows[side] = 0
		return
	}
	part := *o
	part.rows[side], part.failed[side] = n, n
	part.noOutput[side] = min(o.noOutput[side], n)
	g.merge(&part, side)
	o.rows[side] -= n
	o.failed[side] -= n
	o.noOutput[side] -= part.noOutput[side]
}

// merge adds the rows of side of o to g.
func (g *caseGroup) merge(o *caseGroup, side int) {
	g.rows[side] += o.rows[side]
	g.failed[side] += o.failed[side]
	g.noOutput[side] += o.noOutput[side]
	g.scores[side] = slices.Clone(g.scores[side])
	for _, r := range o.scores[side] {
		i := slices.IndexFunc(g.scores[side], func(x repeatScore) bool { return x.evaluator == r.evaluator })
		if i < 0 {
			g.scores[side] = append(g.scores[side], r)
			continue
		}
		x := &g.scores[side][i]
		x.values += r.values
		x.passes += r.passes
		x.sum += r.sum
		x.notBool = x.notBool || r.notBool
		if x.lack == kindNone {
			x.lack = r.lack
		}
	}
}

// shortOf returns the rows below which a case of a side is short of its
// repeats (CaseSummary.Short): Repeats, or for a Report the side's own
// run's repeats, so that a run once per case compared with a run of
// three repeats is not cut short. A run that does not say it has
// repeats (0 or 1) is never short: its cases may be one row each.
func (c *Comparer) shortOf(side int) int {
	if k := c.sideRepeats[side]; k != 0 {
		return k
	}
	return c.Repeats
}

// addRepeat adds a row to its case; the case is compared once both sides
// have Repeats rows.
func (c *Comparer) addRepeat(s *models.EvaluationScenario, side int, failed bool) {
	answered := true
	testcase := s.TestcaseID != ""
	var inputs int
	var g *caseGroup
	// The row's case is most often the last of its side's (the repeat
	// before it) or of the other side's (the same case, run by the other).
	var last *lastCase
	var label []byte // the row's label, when built with its key
	key := c.key
	switch {
	case testcase:
		c.key = append(append(c.key[:0], testcaseKey...), s.TestcaseID...)
		key, inputs = c.key, len(c.key)
	case repeatCacheOff:
		c.key = pairingKey(c.key[:0], s.Inputs)
		inputs = len(c.key)
		c.key, answered = appendAnswersKey(c.key, s)
		key = c.key
	case c.last[side].same(s):
		last = &c.last[side]
	case c.last[1-side].same(s):
		last = &c.last[1-side]
	default:
		c.key, c.label = keyAndLabel(c.key[:0], c.label[:0], s.Inputs)
		inputs, label = len(c.key), c.label
		c.key, answered = appendAnswersKey(c.key, s)
		c.last[side].remember(s, c.key, inputs, answered)
		last = &c.last[side]
	}
	if last != nil {
		key, inputs, answered, g = last.key, last.inputs, last.answered, last.group
	}
	if g == nil {
		// The case's first row on this side, or a case settled.
		h := keyHash(key)
		if g = c.groups.find(h, key); g == nil {
			if c.settled.has(h) {
				// A row of a case already settled with K rows on both
				// sides: a broken listing.
				c.repeats[side]++
				if c.repeatedCase[side] == "" {
					c.repeatedCase[side] = bound(s.InputsText(), 120)
				}
				return
			}
			g = c.newGroup()
			g.seq, g.inputs, g.wild, g.testcase = c.seq, inputs, !answered, testcase
			g.key, g.hash = append(g.key[:0], key...), h
			switch {
			case repeatCacheOff:
				g.text = []byte(s.InputsText())
			case label != nil:
				g.text = append(g.text[:0], label...)
			default:
				g.text = appendLabel(g.text[:0], s.Inputs)
			}
			c.groups.add(g)
		}
		if last != nil {
			last.group = g
		}
	}
	if g.rows[side] >= c.Repeats {
		// More rows than repeats asked for: a broken listing.
		c.repeats[side]++
		if c.repeatedCase[side] == "" {
			c.repeatedCase[side] = g.label()
		}
		return
	}
	g.add(side, s, failed, failed && noOutput(s))
	if g.rows[side] == c.Repeats && !g.wild {
		g.feed(&c.sides[side], side, c.shortOf(side))
		g.fed[side] = true
	}
	switch {
	case c.alone && g.fed[1]:
	case g.fed[0] && g.fed[1]:
		if g.testcase {
			c.byTestcase++
		}
		// The pair is compared at once: its rows can use scratch space.
		base := g.pending(0, c.caseScratch[0][:0])
		cand := g.pending(1, c.caseScratch[1][:0])
		c.caseScratch = [2][]score{base.scores, cand.scores}
		c.pair(c.delta, base, cand)
	default:
		return
	}
	c.groups.remove(g)
	for i := range c.last {
		if c.last[i].group == g {
			c.last[i].group = nil
		}
	}
	// Remember the case, by its key's hash, to find a row beyond its
	// K-th: 11 to 21 bytes a case.
	c.settled.add(g.hash)
	c.freeGroup(g)
}

// settleCases settles the cases left (with their pairs made by test
// case): the rows without expected answers
// join a case of their side with the same inputs that has room for them,
// each side not yet counted is, and the cases with rows on both sides are
// compared, into deltaOf; it returns the others of each side, oldest
// first, and the pairs made. The Comparer is left as it was.
func (c *Comparer) settleCases(deltaOf func(string) *deltaAccumulator, sides *[2]caseSet) (baseLeft, candLeft []pendingRow, paired, byTestcase int) {
	saved, savedByTestcase := c.paired, c.byTestcase
	defer func() { c.paired, c.byTestcase = saved, savedByTestcase }()
	type keyed struct {
		key string
		g   *caseGroup
	}
	var exact []*caseGroup
	var wild []keyed
	byInputs := map[string][]*caseGroup{}
	for g := range c.groups.all() {
		copied := *g
		if g.wild {
			wild = append(wild, keyed{string(g.key), &copied})
			continue
		}
		exact = append(exact, &copied)
		inputs := string(g.key[:g.inputs])
		byInputs[inputs] = append(byInputs[inputs], &copied)
	}
	bySeq := func(a, b *caseGroup) int { return cmp.Compare(a.seq, b.seq) }
	slices.SortFunc(wild, func(a, b keyed) int { return bySeq(a.g, b.g) })
	for _, list := range byInputs {
		slices.SortFunc(list, bySeq)
	}
	var groups []*caseGroup
	for _, w := range wild {
		for side := range 2 {
			if w.g.rows[side] == 0 {
				continue
			}
			// The first case with room for them all takes them; else,
			// when they are alike (failed rows, which the service lists
			// without expected answers), each case takes what it has
			// room for: two cases of the same inputs, each with a repeat
			// that failed, are whole.
			cases := byInputs[w.key]
			i := slices.IndexFunc(cases, func(g *caseGroup) bool {
				return !g.fed[side] && g.rows[side]+w.g.rows[side] <= c.Repeats
			})
			switch {
			case i >= 0:
				cases[i].mergeSome(w.g, side, w.g.rows[side])
			case w.g.alike(side):
				for _, g := range cases {
					if room := c.Repeats - g.rows[side]; !g.fed[side] && room > 0 && w.g.rows[side] > 0 {
						g.mergeSome(w.g, side, min(room, w.g.rows[side]))
					}
				}
			}
		}
		if w.g.rows[0]+w.g.rows[1] > 0 {
			groups = append(groups, w.g)
		}
	}
	groups = append(groups, exact...)
	slices.SortFunc(groups, bySeq)
	for _, g := range groups {
		for side := range 2 {
			if g.rows[side] > 0 && !g.fed[side] {
				g.feed(&sides[side], side, c.shortOf(side))
			}
		}
		switch {
		case c.alone:
		case g.rows[0] > 0 && g.rows[1] > 0:
			if g.testcase {
				c.byTestcase++
			}
			c.pair(deltaOf, g.pending(0, nil), g.pending(1, nil))
		case g.rows[0] > 0:
			baseLeft = append(baseLeft, g.pending(0, nil))
		default:
			candLeft = append(candLeft, g.pending(1, nil))
		}
	}
	return baseLeft, candLeft, c.paired, c.byTestcase
}

// feedRow adds a row, without repeats a case of its own, to its side's
// case values.
func (c *Comparer) feedRow(side int, scores []score) {
	c.sides[side].cases++
	for _, sc := range scores {
		c.sides[side].of(sc.evaluator).add(caseValue{kind: sc.kind, value: sc.value, rate: sc.rate, repeats: 1}, nil)
	}
}

// score returns the row's score for an evaluator.
func (r pendingRow) score(evaluator string) (score, bool) {
	for _, s := range r.scores {
		if s.evaluator == evaluator {
			return s, true
		}
	}
	return score{}, false
}

// valueOf returns one of the row's scores as a case value.
func (r pendingRow) valueOf(s score) caseValue {
	return caseValue{kind: s.kind, value: s.value, rate: s.rate, repeats: r.repeats}
}

// value returns the row's case value for an evaluator; rate is whether
// the other side's is a pass rate, for a row without one.
func (r pendingRow) value(evaluator string, rate bool) caseValue {
	if s, ok := r.score(evaluator); ok {
		return r.valueOf(s)
	}
	return caseValue{kind: r.lacking(), rate: rate, repeats: r.repeats}
}

// addPair adds a pair of case values to the paired differences. A pass
// rate without a value is a fail, on either side; a baseline without
// output, or a pair where neither side has a value, is no evidence.
func (d *deltaAccumulator) addPair(b, c caseValue) {
	bv, cv := scored(b.kind), scored(c.kind)
	rate := (b.rate || !bv) && (c.rate || !cv)
	binary := max(b.repeats, 1) == 1 && max(c.repeats, 1) == 1
	switch {
	case !bv && !cv, b.kind == kindNoOutput:
	case rate:
		x, y := 0.0, 0.0
		if bv {
			x = b.value
		}
		if cv {
			y = c.value
		}
		d.pairs.add(y, x, binary)
	case bv && cv:
		d.pairs.addNumber(c.value, b.value)
	case !cv:
		d.pairs.CandidateLacks++
	}
}
