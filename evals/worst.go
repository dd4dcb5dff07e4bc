package evals

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"

	"github.com/agenta-go/agenta/models"
)

// maxWorstRows bounds the rows a Markdown report shows as worse: a pull
// request comment shows the first few, not the run.
const maxWorstRows = 5

// worseRow is a row on which the candidate did worse than the baseline on
// one evaluator.
type worseRow struct {
	row                    int // from 1, in the candidate's listing
	inputs, expected       string
	evaluator              string
	baseline, candidate    string // the evaluator's results, as text
	baseOutput, candOutput string
}

// worstRows returns up to maxWorstRows rows on which the candidate did
// worse than the baseline, in listing order, reading both listings once in
// step: the service lists the rows of runs of one test set in the same
// order. At the first pair whose test cases differ it stops, and says so
// (ordered false): memory stays flat, and a listing out of order shows no
// rows rather than wrong ones.
func worstRows(cat catalog, base, cand Run) (rows []worseRow, ordered bool, err error) {
	next, stop := iter.Pull2(base.distinct())
	defer stop()
	var bkey, ckey []byte
	i := 0
	for c, cerr := range cand.distinct() {
		if cerr != nil {
			return nil, false, cerr
		}
		b, berr, ok := next()
		if berr != nil {
			return nil, false, berr
		}
		if !ok {
			return rows, true, nil
		}
		i++
		bkey, _ = appendAnswersKey(pairingKey(bkey[:0], b.Inputs), &b)
		ckey, _ = appendAnswersKey(pairingKey(ckey[:0], c.Inputs), &c)
		if !bytes.Equal(bkey, ckey) || b.TestcaseID != c.TestcaseID {
			return rows, false, nil
		}
		for _, e := range cat.list {
			br, _ := b.Result(e.ID)
			cr, _ := c.Result(e.ID)
			if !worse(br, cr, e.Direction) {
				continue
			}
			rows = append(rows, worseRow{row: i, inputs: c.InputsText(), expected: c.ExpectedAnswer(),
				evaluator: cat.label(e.ID), baseline: resultText(br), candidate: resultText(cr),
				baseOutput: b.OutputText(), candOutput: c.OutputText()})
			if len(rows) == maxWorstRows {
				return rows, true, nil
			}
			break // one line a row: its first evaluator that got worse
		}
	}
	return rows, true, nil
}

// worse reports whether the candidate's result is worse than the
// baseline's: a value lost (an error or none where the baseline has one),
// a pass turned fail, or a number further in the wrong direction.
func worse(base, cand models.Result, dir Direction) bool {
	valued := func(k valueKind) bool { return k == kindBool || k == kindNumber }
	bk, bv := scoreOf(base)
	if !valued(bk) {
		return false // nothing to be worse than
	}
	ck, cv := scoreOf(cand)
	switch {
	case !valued(ck):
		return true
	case dir == LowerIsBetter:
		return cv > bv
	}
	return cv < bv
}

// writeWorstRows writes the rows on which the candidate did worse, for a
// pull request comment.
func writeWorstRows(w io.Writer, cat catalog, base, cand Run) error {
	rows, ordered, err := worstRows(cat, base, cand)
	if err != nil || (len(rows) == 0 && ordered) {
		return err
	}
	if !ordered && len(rows) == 0 {
		_, err := fmt.Fprintf(w, "\nThe two runs list their rows in different orders: no rows are shown here (the CSV and JSON reports hold them).\n")
		return err
	}
	fmt.Fprintf(w, "\n#### Rows the candidate did worse on (the first %d)\n\n| Row | Input | Expected | Evaluator | Baseline | Candidate | Candidate's output |\n|---:|---|---|---|---|---|---|\n", maxWorstRows)
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s |\n", r.row, mdText(bound(r.inputs, 120)), mdText(bound(r.expected, 80)),
			mdText(r.evaluator), mdText(bound(r.baseline, 60)), mdText(bound(r.candidate, 60)), mdText(bound(r.candOutput, 120)))
	}
	return nil
}

// caseChange is a test case whose value moved between the runs, with
// repeats: each side's value is its mean over its repeats.
type caseChange struct {
	seq        int    // the order of the case's first row
	inputs     string // the case's label, at most 120 characters
	base, cand caseValue
}

// caseChanges are an evaluator's first cases whose candidate value fell
// below the baseline's and rose above it; a value lost is in both.
type caseChanges struct{ fell, rose []caseChange }

// noteChange keeps a paired case among the evaluator's first
// maxWorstRows that fell or rose, as worstRows would show rows: a
// baseline without a value is nothing to be worse than.
func (d *deltaAccumulator) noteChange(base pendingRow, b, c caseValue) {
	if !scored(b.kind) {
		return
	}
	lost := !scored(c.kind)
	fell := (lost || c.value < b.value) && len(d.fell) < maxWorstRows
	rose := (lost || c.value > b.value) && len(d.rose) < maxWorstRows
	if !fell && !rose {
		return
	}
	ch := caseChange{seq: base.seq, inputs: bound(string(base.text), 120), base: b, cand: c}
	if fell {
		d.fell = append(d.fell, ch)
	}
	if rose {
		d.rose = append(d.rose, ch)
	}
}

// worseCase is a line of the Markdown report's cases the candidate did
// worse on, with repeats.
type worseCase struct {
	caseChange
	evaluator string
}

// worseCases returns, with repeats, up to maxWorstRows test cases on which
// the candidate's mean over its repeats is worse than the baseline's, in
// listing order, each with its first evaluator (in the catalog's order)
// that got worse. Pairing repeat i with repeat i, as worstRows pairs rows,
// would be arbitrary: the repeats of a case are exchangeable.
func worseCases(cat catalog, c *Comparison) []worseCase {
	var out []worseCase
	for _, e := range cat.list {
		list := c.changes[e.ID].fell
		if e.Direction == LowerIsBetter {
			list = c.changes[e.ID].rose
		}
		for _, ch := range list {
			if !slices.ContainsFunc(out, func(w worseCase) bool { return w.seq == ch.seq }) {
				out = append(out, worseCase{ch, cat.label(e.ID)})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b worseCase) int { return cmp.Compare(a.seq, b.seq) })
	return out[:min(len(out), maxWorstRows)]
}

// caseValueText says a case's value over its repeats: "2 of 3 passed"
// for a pass rate, the mean of a score, or why there is none.
func caseValueText(v caseValue) string {
	switch {
	case !scored(v.kind):
		return "no value"
	case v.rate:
		n := max(v.repeats, 1)
		return fmt.Sprintf("%d of %d passed", int(math.Round(v.value*float64(n))), n)
	}
	return strconv.FormatFloat(v.value, 'g', 4, 64)
}

// writeWorseCases writes, with repeats, the test cases on which the
// candidate did worse, for a pull request comment.
func writeWorseCases(w io.Writer, cat catalog, c *Comparison) error {
	cases := worseCases(cat, c)
	if len(cases) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n#### Test cases the candidate did worse on (the first %d; each side's value over its %d repeats)\n\n| Input | Evaluator | Baseline | Candidate |\n|---|---|---|---|\n", maxWorstRows, c.Repeats)
	for _, r := range cases {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", mdText(r.inputs), mdText(r.evaluator), caseValueText(r.base), caseValueText(r.cand))
	}
	return nil
}
