package evals

import (
	"bytes"
	"cmp"
	"hash/fnv"
	"iter"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/agenta-go/agenta/models"
)

// Comparison is how a candidate run differs from a baseline, row by row:
// rows with the same inputs and expected answers are paired, and each
// evaluator's results on them are compared. A row left without a partner
// counts as missing on the side that lacks it.
type Comparison struct {
	// Paired counts the rows matched by their inputs (names and values)
	// and expected answers (correct_answers), whatever their order; rows
	// that still collide pair in the order they come. A row whose app call
	// failed has no expected answers on the service: it pairs by its
	// inputs alone, with a row the other side has left over.
	Paired int
	// PairedByTestcase counts those of the Paired rows matched by the test
	// case they ran (EvaluationScenario.TestcaseID, as the rows of 2026
	// runs carry it) instead.
	PairedByTestcase int
	// Unpaired counts the rows of either side left without a partner:
	// UnpairedBaseline + UnpairedCandidate.
	Unpaired                            int
	UnpairedBaseline, UnpairedCandidate int
	// BaselineRows and CandidateRows count the rows of each run, and
	// BaselineAppErrors and CandidateAppErrors those whose app call failed.
	BaselineRows, CandidateRows           int
	BaselineAppErrors, CandidateAppErrors int
	// BaselineWithoutOutput and CandidateWithoutOutput count those of
	// the AppErrors rows that hold no output and no error (see
	// Summary.AppErrors). A baseline's are no evidence that its app
	// failed: they raise no limit of "app_errors <= baseline".
	BaselineWithoutOutput, CandidateWithoutOutput int
	// BaselineDuplicates and CandidateDuplicates count the rows left out
	// because they repeat the scenario id of an earlier row of their run:
	// a scenario is compared once, as its first row (see
	// Summary.Duplicates). They count in no other field, but a listing
	// that repeats rows may have lost others: a gate on worse rows or
	// regression_p against a baseline that has any fails (see Check).
	BaselineDuplicates, CandidateDuplicates int
	// BaselineDuplicateID and CandidateDuplicateID are the first id
	// repeated on each side.
	BaselineDuplicateID, CandidateDuplicateID string
	// BaselineRepeats and CandidateRepeats count the rows, with scenario
	// ids of their own, that repeat the inputs and expected answers of an
	// earlier row of their run (rows of a 2026 run, which name their test
	// case, aside: those are asked-for repeats). A comparison pairs each
	// test case once, so such a listing is no evidence to compare with:
	// a gate on the comparison fails, naming the case, on either side
	// (see Check). BaselineRepeatedCase and CandidateRepeatedCase are the
	// inputs of the first case repeated on each side.
	//
	// With repeats asked for (Comparer.Repeats K > 1), rows of one case
	// are its repeats; only a case listed more than K times on a side is
	// counted here (its rows beyond the K-th left out).
	BaselineRepeats, CandidateRepeats           int
	BaselineRepeatedCase, CandidateRepeatedCase string
	Evaluators                                  map[string]Delta

	// Repeats is the number of repeats asked for (Comparer.Repeats; 0 or
	// 1 for none). With repeats, the test case is the unit: the rows of
	// a case (by test case id, else by inputs and expected answers) are
	// gathered on each side, each evaluator's value on the case is its
	// mean over them (a pass rate: passes over repeats, a repeat without
	// a value a fail), and Paired, Unpaired and every count of a Delta
	// count cases, not rows.
	Repeats int
	// BaselineCases and CandidateCases are what each side's test cases
	// add up to (each row a case, without repeats), for the bound
	// measures: low, high, pass_all, flaky.
	BaselineCases, CandidateCases CaseSummary
	// changes holds, with repeats, by evaluator, the first cases whose
	// value moved (see worseCases).
	changes map[string]caseChanges

	// EvaluatorIDs lists the keys of Evaluators in the order they were
	// first seen.
	EvaluatorIDs []string
}

// Pairing says how the rows were paired, to complete "N rows paired by
// …": "their inputs and expected answers", "their test case" when every
// pair was made by test case (the rows of 2026 runs), or both.
func (c Comparison) Pairing() string {
	switch {
	case c.PairedByTestcase == 0:
		return "their inputs and expected answers"
	case c.PairedByTestcase == c.Paired:
		return "their test case"
	}
	return "their test case or their inputs and expected answers"
}

// Delta is one evaluator's change from the baseline to the candidate.
//
// Absence of evidence is never success: a row where one side has no
// value (its result errored or is missing, its app call failed, or the
// candidate has no row paired with the baseline's) ranks below every
// value, so an errored candidate row is worse than any baseline value,
// whichever way the evaluator improves; a row without a value on both
// sides is a tie. A candidate row without a baseline partner is no
// evidence either way (CandidateOnly). Higher, Lower and Tied count the
// rows with a value on both sides; CandidateLacks, BaselineLacks and
// BothLack the others. Worse, Better, RegressionP and Regressed fold them
// in by the evaluator's Direction.
type Delta struct {
	// Baseline and Candidate summarise each side over every row of the
	// comparison, a row without partner counting as missing on the side
	// that lacks it.
	Baseline, Candidate Metric
	Diff                float64 // Candidate.Mean − Baseline.Mean
	Higher, Lower, Tied int     // rows with a value on both sides where the candidate's is higher, lower, equal
	// CandidateLacks counts the rows where the baseline has a value and
	// the candidate none; BaselineLacks the reverse; BothLack the rows
	// where neither has one.
	CandidateLacks, BaselineLacks, BothLack int
	// CandidateOnly counts the candidate's rows without a partner in the
	// baseline. They are missing on the baseline's side (in Baseline), but
	// with no baseline row to compare with they are no evidence that the
	// candidate did better: they count in neither Better nor the tests.
	// (A baseline row without a partner counts in CandidateLacks: the
	// candidate lacks it.)
	CandidateOnly int
	// BaselineWithoutOutput counts the paired rows where the candidate
	// has a value and the baseline's row holds no output and no error
	// (see Summary.AppErrors): no evidence that the baseline failed, so,
	// as CandidateOnly, in neither Better nor the tests. (A baseline row
	// whose app call failed counts in BaselineLacks.)
	BaselineWithoutOutput int
	// BaselineLacksPassed and BaselineLacksFailed split BaselineLacks by
	// the candidate's bool, for a pass/fail evaluator (0 for others): a
	// baseline row without value is a fail, which only a pass beats.
	BaselineLacksPassed, BaselineLacksFailed int

	// PValue is the two-sided p-value of a difference when higher is
	// better: PValues[HigherIsBetter]. The test is the exact McNemar test
	// (a binomial test on the discordant pairs) for bools, and Wilcoxon's
	// signed-rank test for numbers, on the same paired differences as
	// RegressionPs; 1 when nothing differs.
	PValue float64
	// PValues and RegressionPs hold, by Direction, the two-sided p-value
	// and the one-sided p-value in the direction that is worse (see
	// PValueFor and RegressionP).
	PValues, RegressionPs [2]float64
	// valuesOnlyP holds, by Direction, the one-sided p-value over the
	// rows with a value on both sides only, for a gate that allows failed
	// rows.
	valuesOnlyP [2]float64
	// Pairs gathers the paired case differences, candidate − baseline,
	// for diff_low.
	Pairs PairedCases
}

// direction turns a Direction into an index of Delta's arrays.
func (d Direction) index() int {
	if d == LowerIsBetter {
		return 1
	}
	return 0
}

// Worse returns the number of rows in which the candidate did worse than
// the baseline, given which direction is better: the rows with a lower
// value (higher when lower is better), and every row where the candidate
// has no value and the baseline has one.
func (d Delta) Worse(dir Direction) int {
	if dir == LowerIsBetter {
		return d.Higher + d.CandidateLacks
	}
	return d.Lower + d.CandidateLacks
}

// Better returns the number of rows in which the candidate did better than
// the baseline, given which direction is better, counting the paired rows
// where only the baseline has no value (not CandidateOnly).
//
// For a pass/fail evaluator a baseline row without value is a fail: it
// counts here only where the candidate passed (where lower is better, where
// it did not), as in RegressionP.
func (d Delta) Better(dir Direction) int {
	if d.BaselineLacksPassed+d.BaselineLacksFailed > 0 {
		if dir == LowerIsBetter {
			return d.Lower + d.BaselineLacksFailed
		}
		return d.Higher + d.BaselineLacksPassed
	}
	if dir == LowerIsBetter {
		return d.Lower + d.BaselineLacks
	}
	return d.Higher + d.BaselineLacks
}

// PValueFor returns the two-sided p-value of a difference, given which
// direction is better (which decides where a row without a value ranks).
func (d Delta) PValueFor(dir Direction) float64 { return d.PValues[dir.index()] }

// RegressionP returns the one-sided p-value of the candidate being worse
// than the baseline, in the direction dir says is worse: the exact
// McNemar test (a binomial test on the discordant pairs) for bools, the
// Wilcoxon signed-rank test (exact up to 100 non-zero differences, normal
// approximation beyond) for numbers, on the paired differences, a row
// where one side has no value counting for the other side (but a baseline
// row without value is a fail for a pass/fail evaluator, which only a
// candidate's pass beats, and a baseline row without output is no
// evidence: see Delta.BaselineWithoutOutput). It is small
// when the candidate regressed, and near 1 when it improved.
func (d Delta) RegressionP(dir Direction) float64 { return d.RegressionPs[dir.index()] }

// Regressed reports whether the candidate is significantly worse than the
// baseline: RegressionP(dir) is below alpha, a one-sided test at level
// alpha.
func (d Delta) Regressed(dir Direction, alpha float64) bool {
	return d.RegressionP(dir) < alpha
}

// Compare pairs the rows of two runs of the same test set by their inputs
// and expected answers and compares each evaluator's results on the pairs
// (see Comparison and Delta). Its cost is linear in the number of rows.
func Compare(baseline, candidate []models.EvaluationScenario) Comparison {
	var c Comparer
	return compareInto(&c, baseline, candidate)
}

// compareInto is Compare with a Comparer of the caller's.
func compareInto(c *Comparer, baseline, candidate []models.EvaluationScenario) Comparison {
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
	return compareStreamInto(&c, baseline, candidate)
}

// CompareStream is the package's CompareStream with this Comparer, so
// that its settings (Repeats) apply: it adds both runs' rows, reading them
// in turn, and returns the comparison. It stops at the first error.
func (c *Comparer) CompareStream(baseline, candidate iter.Seq2[models.EvaluationScenario, error]) (Comparison, error) {
	return compareStreamInto(c, baseline, candidate)
}

// CaseCounter gathers one run's rows by test case, as the candidate side
// of a Comparer does (its repeats together), for the bound measures of a
// run judged without a baseline: Report.CandidateCases. It keeps a few
// numbers per case, never the rows. Create it with NewCaseCounter.
type CaseCounter struct{ c Comparer }

// NewCaseCounter returns a CaseCounter for runs of repeats repeats of
// each test case (0 or 1 for none).
func NewCaseCounter(repeats int) *CaseCounter {
	return &CaseCounter{c: Comparer{Repeats: repeats, alone: true}}
}

// Add adds a row of the run.
func (k *CaseCounter) Add(s models.EvaluationScenario) { k.c.AddCandidate(s) }

// Cases returns what the run's test cases add up to so far.
func (k *CaseCounter) Cases() CaseSummary { return k.c.Comparison().CandidateCases }

// compareStreamInto is CompareStream with a Comparer of the caller's.
func compareStreamInto(c *Comparer, baseline, candidate iter.Seq2[models.EvaluationScenario, error]) (Comparison, error) {
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
// side that has the same inputs and expected answers and no partner yet,
// so duplicate rows pair in the order they come. A row without expected
// answers (the service writes none for a row whose app call failed) pairs
// at once with a row of the other side that has none either and the same
// inputs; otherwise it waits, and Comparison pairs it with the earliest row
// of the other side with the same inputs left over. A row that names its
// test case (TestcaseID, as rows of a 2026 run do) pairs by that alone,
// with the rows of the other side of the same test case, in the order
// they come (its repeats, in order). The Comparer holds the
// unpaired rows' scores (not the rows), and for number evaluators one
// difference per pair. The zero value is ready to use; a Comparer is not
// safe for concurrent use.
type Comparer struct {
	// Repeats is the number of repeats asked for of each test case: 0 or
	// 1 for none. With K > 1, the rows of a test case (its test case id
	// when the rows name one, else its inputs and expected answers) are
	// gathered on each side and compared as one case, its value its mean
	// over them (see Comparison.Repeats); a case is settled once both
	// sides have K rows, so a listing in test-set order keeps memory
	// flat. A case with more than K rows on a side is a broken listing
	// (Comparison.BaselineRepeats, CandidateRepeats); one with fewer is
	// a listing cut short (CaseSummary.Short), on which gates fail. Set it before
	// the first row.
	Repeats int

	// alone keeps only the candidate's case values: no rows wait for a
	// partner (see candidateCases).
	alone bool
	// sideRepeats are, for a Report, each side's run's own repeats, at
	// least 1 (see shortOf); zero for a Comparer used alone.
	sideRepeats [2]int
	sides       [2]caseSet
	// groups holds, with repeats, the cases not yet settled;
	// settled the hashes of the keys of those settled.
	groups      caseIndex
	settled     caseHashes
	last        [2]lastCase  // by side, the last row keyed by inputs and answers
	free        []*caseGroup // groups of settled cases, for reuse
	caseScratch [2][]score   // scratch for the two sides of a case compared at once

	// exact holds the rows with expected answers still without a
	// partner, by inputs and answers; wild those without, by inputs.
	exact, wild map[string]waitingRows
	paired      int
	byTestcase  int    // pairs made by test case
	rows        [2]int // by side: baseline, candidate
	appErrors   [2]int
	noOutput    [2]int         // those of appErrors without output
	ids         [2]scenarioIDs // by side
	duplicates  [2]int
	duplicateID [2]string
	// cases holds a hash of each test case seen by side (inputs and
	// expected answers), to find a listing that repeats one.
	cases        [2]map[uint64]struct{}
	repeats      [2]int
	repeatedCase [2]string
	seq          int // rows added, to order rows across keys
	deltas       map[string]*deltaAccumulator
	order        []string
	key          []byte  // scratch for the pairing key
	label        []byte  // scratch for a case's label
	scratch      []score // scratch for a row that pairs at once
	slab         []score // storage for the scores of waiting rows
}

// pendingRow is a row still without a partner.
type pendingRow struct {
	scores   []score
	text     []byte // with repeats, the case's label (its group's, not copied)
	seq      int
	repeats  int  // rows of the case; 0 means 1
	failed   bool // the app call failed, or the row has no output
	noOutput bool // the row has no output and no error
}

// waitingRows are the rows of one key still without a partner; only one
// side can have any. The first is held inline, as most keys have one.
type waitingRows struct {
	baseline bool
	inputs   int // the length of the key's inputs part
	first    pendingRow
	more     []pendingRow
}

func (w *waitingRows) len() int {
	if w.first.scores == nil {
		return 0
	}
	return 1 + len(w.more)
}

func (w *waitingRows) push(row pendingRow) {
	if w.first.scores == nil {
		w.first = row
		return
	}
	w.more = append(w.more, row)
}

// pop removes and returns the oldest row.
func (w *waitingRows) pop() pendingRow {
	row := w.first
	w.first = pendingRow{}
	if len(w.more) > 0 {
		w.first = w.more[0]
		w.more[0] = pendingRow{}
		w.more = w.more[1:]
	}
	return row
}

// all returns the rows, oldest first.
func (w *waitingRows) all() []pendingRow {
	if w.first.scores == nil {
		return nil
	}
	return append([]pendingRow{w.first}, w.more...)
}

// score is one evaluator's result on a row, as it counts.
type score struct {
	evaluator string
	kind      valueKind
	rate      bool // value is a pass rate: a bool, or passes over repeats
	value     float64
}

// AddBaseline adds a row of the baseline run. A row that repeats the
// scenario id of an earlier baseline row is left out (counted in
// Comparison.BaselineDuplicates).
func (c *Comparer) AddBaseline(s models.EvaluationScenario) { c.add(&s, true) }

// AddCandidate adds a row of the candidate run. A row that repeats the
// scenario id of an earlier candidate row is left out (counted in
// Comparison.CandidateDuplicates).
func (c *Comparer) AddCandidate(s models.EvaluationScenario) { c.add(&s, false) }

func (c *Comparer) add(s *models.EvaluationScenario, baseline bool) {
	side := sideOf(baseline)
	if !c.ids[side].first(s.ID) {
		c.duplicates[side]++
		if c.duplicateID[side] == "" {
			c.duplicateID[side] = bound(s.ID, 120)
		}
		return
	}
	c.rows[side]++
	c.seq++
	failed := appFailed(s)
	if failed {
		c.appErrors[side]++
		if noOutput(s) {
			c.noOutput[side]++
		}
	}
	if c.Repeats > 1 {
		c.addRepeat(s, side, failed)
		return
	}
	if c.alone {
		c.scratch = c.scores(c.scratch[:0], s, failed)
		c.feedRow(side, c.scratch)
		return
	}
	var inputs int
	answered := true
	if s.TestcaseID != "" {
		// A row of a 2026 run: runs over one test-set revision share
		// test-case ids, whatever the rows hold.
		c.key = append(append(c.key[:0], testcaseKey...), s.TestcaseID...)
		inputs = len(c.key)
	} else {
		c.key = pairingKey(c.key[:0], s.Inputs)
		inputs = len(c.key)
		c.key, answered = appendAnswersKey(c.key, s)
		c.countCase(side, s)
	}
	waiting := &c.exact
	if !answered {
		waiting = &c.wild
	}
	w, found := (*waiting)[string(c.key)]
	if found && w.baseline != baseline {
		row := pendingRow{scores: c.scores(c.scratch[:0], s, failed), failed: failed, noOutput: failed && noOutput(s)}
		c.scratch = row.scores
		c.feedRow(side, row.scores)
		partner := w.pop()
		if s.TestcaseID != "" {
			c.byTestcase++
		}
		if w.len() == 0 {
			delete(*waiting, string(c.key))
		} else {
			(*waiting)[string(c.key)] = w
		}
		if baseline {
			c.pair(c.delta, row, partner)
		} else {
			c.pair(c.delta, partner, row)
		}
		return
	}
	// Keep the scores in a shared slab: one allocation per 4,096 scores.
	if cap(c.slab)-len(c.slab) < len(s.Results)+1 {
		c.slab = make([]score, 0, max(4096, len(s.Results)+1))
	}
	start := len(c.slab)
	c.slab = c.scores(c.slab, s, failed)
	// The scores are never nil, even without results: nil marks an empty
	// slot of waitingRows.
	row := pendingRow{scores: c.slab[start:len(c.slab):len(c.slab)], seq: c.seq, failed: failed, noOutput: failed && noOutput(s)}
	c.feedRow(side, row.scores)
	if !found {
		if *waiting == nil {
			*waiting = map[string]waitingRows{}
		}
		w = waitingRows{baseline: baseline, inputs: inputs}
	}
	w.push(row)
	(*waiting)[string(c.key)] = w
}

// countCase counts a row whose test case (c.key: its inputs and expected
// answers) an earlier row of its side had.
func (c *Comparer) countCase(side int, s *models.EvaluationScenario) {
	h := fnv.New64a()
	h.Write(c.key)
	sum := h.Sum64()
	if c.cases[side] == nil {
		c.cases[side] = map[uint64]struct{}{}
	}
	if _, seen := c.cases[side][sum]; !seen {
		c.cases[side][sum] = struct{}{}
		return
	}
	c.repeats[side]++
	if c.repeatedCase[side] == "" {
		c.repeatedCase[side] = bound(s.InputsText(), 120)
	}
}

func sideOf(baseline bool) int {
	if baseline {
		return 0
	}
	return 1
}

// scores appends the scores of a row's results, the first result of each
// evaluator only; every result of a row whose app call failed (failed:
// appFailed(s)) counts as an error.
func (c *Comparer) scores(dst []score, s *models.EvaluationScenario, failed bool) []score {
	start := len(dst)
	var seen map[string]bool // for rows with many results, where a scan would be quadratic
	if len(s.Results) > 16 {
		seen = make(map[string]bool, len(s.Results))
	}
	for _, r := range s.Results {
		if seen != nil {
			if seen[r.EvaluatorConfig] {
				continue
			}
			seen[r.EvaluatorConfig] = true
		} else if slices.ContainsFunc(dst[start:], func(x score) bool { return x.evaluator == r.EvaluatorConfig }) {
			continue
		}
		kind, x := kindError, 0.0
		if !failed {
			kind, x = scoreOf(r.Result)
		} else if noOutput(s) {
			kind = kindNoOutput
		}
		dst = append(dst, score{r.EvaluatorConfig, kind, kind == kindBool, x})
	}
	return dst
}

// lacking is how a row without a result for an evaluator counts: an error
// when its app call failed, missing otherwise.
func (r pendingRow) lacking() valueKind {
	if r.noOutput {
		return kindNoOutput
	}
	if r.failed {
		return kindError
	}
	return kindNone
}

// find returns the row's score for an evaluator.
func (r pendingRow) find(evaluator string) (valueKind, float64) {
	for _, s := range r.scores {
		if s.evaluator == evaluator {
			return s.kind, s.value
		}
	}
	return r.lacking(), 0
}

// pair compares the scores of a baseline row and its candidate partner,
// into the accumulators deltaOf gives.
func (c *Comparer) pair(deltaOf func(string) *deltaAccumulator, base, cand pendingRow) {
	c.paired++
	for _, b := range base.scores {
		ck, y := cand.find(b.evaluator)
		d := deltaOf(b.evaluator)
		d.add(b.kind, b.value, ck, y)
		bv, cv := base.valueOf(b), cand.value(b.evaluator, b.rate)
		d.addPair(bv, cv)
		if c.Repeats > 1 {
			d.noteChange(base, bv, cv)
		}
	}
	for _, s := range cand.scores {
		if !slices.ContainsFunc(base.scores, func(b score) bool { return b.evaluator == s.evaluator }) {
			d := deltaOf(s.evaluator)
			d.add(base.lacking(), 0, s.kind, s.value)
			d.addPair(caseValue{kind: base.lacking(), rate: s.rate, repeats: base.repeats}, cand.valueOf(s))
		}
	}
}

// delta returns the accumulator of an evaluator, adding it when new.
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

// Comparison returns the comparison of the rows added so far: it pairs
// the rows without expected answers with the rows the other side has left
// over, and counts the rows still unpaired as missing on the side that
// lacks them. The Comparer is left as it was, so it can take more rows
// and give another Comparison.
func (c *Comparer) Comparison() Comparison {
	// Work on copies: settling the left-over rows must not change what
	// later rows pair with.
	deltas := make(map[string]*deltaAccumulator, len(c.deltas))
	for id, d := range c.deltas {
		copied := *d
		copied.diffs = slices.Clone(d.diffs)
		copied.fell, copied.rose = slices.Clone(d.fell), slices.Clone(d.rose)
		deltas[id] = &copied
	}
	order := slices.Clone(c.order)
	deltaOf := func(id string) *deltaAccumulator {
		d := deltas[id]
		if d == nil {
			d = &deltaAccumulator{}
			deltas[id] = d
			order = append(order, id)
		}
		return d
	}
	sides := [2]caseSet{c.sides[0].clone(), c.sides[1].clone()}
	var baseLeft, candLeft []pendingRow
	paired, byTestcase := 0, c.byTestcase
	if c.Repeats > 1 {
		baseLeft, candLeft, paired, byTestcase = c.settleCases(deltaOf, &sides)
	} else {
		baseLeft, candLeft, paired = c.settle(deltaOf)
	}
	out := Comparison{
		Paired: paired, PairedByTestcase: byTestcase,
		BaselineRows: c.rows[0], CandidateRows: c.rows[1],
		BaselineAppErrors: c.appErrors[0], CandidateAppErrors: c.appErrors[1],
		BaselineWithoutOutput: c.noOutput[0], CandidateWithoutOutput: c.noOutput[1],
		BaselineDuplicates: c.duplicates[0], CandidateDuplicates: c.duplicates[1],
		BaselineDuplicateID: c.duplicateID[0], CandidateDuplicateID: c.duplicateID[1],
		BaselineRepeats: c.repeats[0], CandidateRepeats: c.repeats[1],
		BaselineRepeatedCase: c.repeatedCase[0], CandidateRepeatedCase: c.repeatedCase[1],
		UnpairedBaseline: len(baseLeft), UnpairedCandidate: len(candLeft),
		Unpaired:      len(baseLeft) + len(candLeft),
		Repeats:       c.Repeats,
		BaselineCases: sides[0].summary(), CandidateCases: sides[1].summary(),
	}
	// Evaluators seen only in rows left without partner.
	for _, row := range slices.Concat(baseLeft, candLeft) {
		for _, sc := range row.scores {
			if deltas[sc.evaluator] == nil {
				deltas[sc.evaluator] = &deltaAccumulator{}
				order = append(order, sc.evaluator)
			}
		}
	}
	for _, row := range baseLeft {
		for _, id := range order {
			bk, x := row.find(id)
			deltas[id].add(bk, x, kindNone, 0)
			if b, ok := row.score(id); ok {
				deltas[id].addPair(row.valueOf(b), caseValue{kind: kindNone, rate: b.rate})
			}
		}
	}
	for _, row := range candLeft {
		for _, id := range order {
			ck, y := row.find(id)
			deltas[id].addCandidateOnly(ck, y)
		}
	}
	rows := out.Paired + out.Unpaired
	out.Evaluators = make(map[string]Delta, len(deltas))
	for id, d := range deltas {
		// An evaluator absent from both rows of a pair: neither has a
		// value.
		for d.seen < rows {
			d.add(kindNone, 0, kindNone, 0)
		}
		out.Evaluators[id] = d.delta()
		if len(d.fell)+len(d.rose) > 0 {
			if out.changes == nil {
				out.changes = map[string]caseChanges{}
			}
			out.changes[id] = caseChanges{fell: d.fell, rose: d.rose}
		}
	}
	out.EvaluatorIDs = order
	return out
}

// settle pairs each waiting row without expected answers, oldest first,
// with the oldest left-over row of the other side with the same inputs,
// into deltas, and returns the rows still unpaired of each side, oldest
// first.
func (c *Comparer) settle(deltaOf func(string) *deltaAccumulator) (baseLeft, candLeft []pendingRow, paired int) {
	saved := c.paired
	defer func() { c.paired = saved }()
	type leftover struct {
		pendingRow
		baseline bool
		inputs   string
		used     bool
	}
	// The left-over rows with expected answers, by inputs and side, oldest
	// first, each list with a cursor past the rows already taken.
	type queue struct {
		rows []*leftover
		next int
	}
	var rows []*leftover
	byInputs := map[string]*[2]queue{}
	for key, w := range c.exact {
		for _, r := range w.all() {
			l := &leftover{pendingRow: r, baseline: w.baseline, inputs: key[:w.inputs]}
			rows = append(rows, l)
			q := byInputs[l.inputs]
			if q == nil {
				q = &[2]queue{}
				byInputs[l.inputs] = q
			}
			side := sideOf(l.baseline)
			q[side].rows = append(q[side].rows, l)
		}
	}
	var wild []*leftover
	for key, w := range c.wild {
		for _, r := range w.all() {
			l := &leftover{pendingRow: r, baseline: w.baseline, inputs: key}
			rows = append(rows, l)
			wild = append(wild, l)
		}
	}
	bySeq := func(a, b *leftover) int { return cmp.Compare(a.seq, b.seq) }
	slices.SortFunc(wild, bySeq)
	for _, q := range byInputs {
		slices.SortFunc(q[0].rows, bySeq)
		slices.SortFunc(q[1].rows, bySeq)
	}
	for _, w := range wild {
		q := byInputs[w.inputs]
		if q == nil {
			continue
		}
		other := &q[1-sideOf(w.baseline)]
		if other.next == len(other.rows) {
			continue
		}
		partner := other.rows[other.next]
		other.next++
		partner.used, w.used = true, true
		if w.baseline {
			c.pair(deltaOf, w.pendingRow, partner.pendingRow)
		} else {
			c.pair(deltaOf, partner.pendingRow, w.pendingRow)
		}
	}
	slices.SortFunc(rows, bySeq)
	for _, r := range rows {
		switch {
		case r.used:
		case r.baseline:
			baseLeft = append(baseLeft, r.pendingRow)
		default:
			candLeft = append(candLeft, r.pendingRow)
		}
	}
	return baseLeft, candLeft, c.paired
}

// testcaseKey starts the pairing key of a row that names its test case;
// no key of pairingKey (empty, or starting with a digit or "|") does.
const testcaseKey = "\x00testcase:"

// pairingKey appends a key that is equal for two rows exactly when they
// have the same input names with the same values as text, in any order:
// the inputs sorted by name, each name and value length-prefixed.
func pairingKey(key []byte, inputs []models.Input) []byte {
	var small [8]int
	for _, i := range byName(small[:0], inputs) {
		in := inputs[i]
		key = appendField(key, in.Name)
		if v, ok := plainString(in.Value); ok {
			key = appendField(key, v)
			continue
		}
		key = appendField(key, in.Text())
	}
	return key
}

// byName appends to order the indexes of inputs, sorted by name (stable).
func byName(order []int, inputs []models.Input) []int {
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
	return order
}

// appendField appends a field of a pairing key, length-prefixed.
func appendField[T string | []byte](key []byte, field T) []byte {
	key = strconv.AppendInt(key, int64(len(field)), 10)
	key = append(key, ':')
	return append(key, field...)
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

// appendAnswersKey appends to a pairing key the row's expected answers,
// each column and value length-prefixed, sorted by column (the answer of
// older servers counting as column "correct_answer"), and reports whether
// the row has any.
func appendAnswersKey(key []byte, s *models.EvaluationScenario) ([]byte, bool) {
	answers := s.CorrectAnswers
	if len(answers) == 0 {
		if s.CorrectAnswer == "" {
			return key, false
		}
		answers = []models.CorrectAnswer{{Key: models.DefaultCorrectAnswerKey, Value: s.CorrectAnswer}}
	}
	// The inputs part is a run of length-prefixed fields, so a byte that
	// cannot start a length keeps the two parts apart.
	key = append(key, '|')
	var small [4]int
	order := small[:0]
	for i := range answers {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(answers[a].Key, answers[b].Key) })
	for _, i := range order {
		key = strconv.AppendInt(key, int64(len(answers[i].Key)), 10)
		key = append(key, ':')
		key = append(key, answers[i].Key...)
		key = strconv.AppendInt(key, int64(len(answers[i].Value)), 10)
		key = append(key, ':')
		key = append(key, answers[i].Value...)
	}
	return key, true
}

// deltaAccumulator gathers one evaluator's results over the rows of a
// comparison.
type deltaAccumulator struct {
	baseline, candidate            metricAccumulator
	seen                           int // rows added
	higher, lower, tied            int
	candLacks, baseLacks, bothLack int
	candOnly                       int // candidate rows without a partner
	// baseLacksTrue and baseLacksFalse split baseLacks by the candidate's
	// bool: a baseline row without value is a fail for a pass/fail
	// evaluator, so only the candidate's pass differs from it.
	baseLacksTrue, baseLacksFalse int
	baseNoOutput                  int // paired rows whose baseline row has no output
	// onlyCandidate and onlyBaseline count the pairs of bools where only
	// that side passed; diffs holds the non-zero differences of the other
	// pairs of values, and notAllBool is set once there is one, or a
	// number facing a row without value.
	onlyCandidate, onlyBaseline int
	diffs                       []float64
	notAllBool                  bool
	// pairs gathers the paired case differences, for diff_low.
	pairs PairedCases
	// fell and rose hold, with repeats, the first cases whose candidate
	// value fell below the baseline's, or rose above it (a value lost
	// counts as both), for the Markdown report: worse is one or the
	// other by the evaluator's Direction, which the Comparer does not
	// know.
	fell, rose []caseChange
}

func scored(k valueKind) bool { return k == kindBool || k == kindNumber }

func (d *deltaAccumulator) add(bk valueKind, x float64, ck valueKind, y float64) {
	d.seen++
	d.baseline.addScore(bk, x)
	d.candidate.addScore(ck, y)
	switch bv, cv := scored(bk), scored(ck); {
	case !bv && !cv:
		d.bothLack++
		return
	case !cv:
		d.candLacks++
		d.notAllBool = d.notAllBool || bk == kindNumber
		return
	case bk == kindNoOutput:
		d.baseNoOutput++
		return
	case !bv:
		d.baseLacks++
		d.notAllBool = d.notAllBool || ck == kindNumber
		if ck == kindBool && y == 1 {
			d.baseLacksTrue++
		} else if ck == kindBool {
			d.baseLacksFalse++
		}
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

// addCandidateOnly adds a candidate row that has no partner in the
// baseline: missing on the baseline's side, and in no comparison.
// addCandidateOnly counts a candidate row the baseline never ran: no
// evidence either way, it counts on neither side of the means and the
// difference (issue 26), as in worse(...) and regression_p(...).
func (d *deltaAccumulator) addCandidateOnly(ck valueKind, y float64) {
	d.seen++
	d.candOnly++
}

func (d *deltaAccumulator) delta() Delta {
	out := Delta{
		Baseline:              d.baseline.metric(),
		Candidate:             d.candidate.metric(),
		Higher:                d.higher,
		Lower:                 d.lower,
		Tied:                  d.tied,
		CandidateLacks:        d.candLacks,
		BaselineLacks:         d.baseLacks,
		BothLack:              d.bothLack,
		CandidateOnly:         d.candOnly,
		BaselineWithoutOutput: d.baseNoOutput,
		Pairs:                 d.pairs,
	}
	out.Diff = out.Candidate.Mean - out.Baseline.Mean
	if !d.notAllBool {
		out.BaselineLacksPassed, out.BaselineLacksFailed = d.baseLacksTrue, d.baseLacksFalse
		// McNemar on the discordant pairs. A candidate row without value
		// is below every value, so it is discordant with any value. A
		// baseline row without value is a fail (issue 16: an errored or
		// missing result is a fail in McNemar): it differs only from a
		// candidate's pass, and facing a candidate's fail is no evidence
		// that the candidate did better (a judge that failed on the
		// baseline says nothing of the baseline's answer).
		for _, dir := range []Direction{HigherIsBetter, LowerIsBetter} {
			better, worse, baseFail := d.onlyCandidate, d.onlyBaseline, d.baseLacksTrue
			if dir == LowerIsBetter {
				better, worse, baseFail = worse, better, d.baseLacksFalse
			}
			i := dir.index()
			out.valuesOnlyP[i] = BinomialTestAlternative(worse, better+worse, 0.5, Greater)
			better, worse = better+baseFail, worse+d.candLacks
			out.PValues[i] = McNemarExact(better, worse)
			out.RegressionPs[i] = BinomialTestAlternative(worse, better+worse, 0.5, Greater)
		}
	} else {
		diffs := d.diffs
		if d.onlyCandidate+d.onlyBaseline > 0 {
			diffs = make([]float64, 0, len(d.diffs)+d.onlyCandidate+d.onlyBaseline)
			diffs = append(diffs, d.diffs...)
			for range d.onlyCandidate {
				diffs = append(diffs, 1)
			}
			for range d.onlyBaseline {
				diffs = append(diffs, -1)
			}
		}
		ranked := rankDiffs(diffs)
		// A row without value on the candidate's side is a difference of
		// −Inf where higher is better, +Inf where lower is.
		for _, dir := range []Direction{HigherIsBetter, LowerIsBetter} {
			plus, minus, worse := d.baseLacks, d.candLacks, Less
			if dir == LowerIsBetter {
				plus, minus, worse = minus, plus, Greater
			}
			i := dir.index()
			_, out.PValues[i] = ranked.test(plus, minus, TwoSided)
			_, out.RegressionPs[i] = ranked.test(plus, minus, worse)
			_, out.valuesOnlyP[i] = ranked.test(0, 0, worse)
		}
	}
	out.PValue = out.PValues[HigherIsBetter.index()]
	return out
}
