package evals

import (
	"bytes"
	"fmt"
	"io"
	"iter"

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
