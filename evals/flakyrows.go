package evals

import (
	"hash/maphash"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// This file marks, in the reports by row (CSV and JSON Lines), the rows
// of a flaky case: the evaluators on which the repeats of the row's test
// case disagree, found by the same case key as the flaky listing
// (Report.Flaky). It holds the flaky cases' keys only, not the rows'.

// caseKey is a test case's key as hashes (keyHash): of the whole key, and
// of its inputs part for a case keyed by inputs (0 for one keyed by test
// case id), which a row without expected answers joins.
type caseKey struct{ key, inputs uint64 }

// caseKey returns the case's key as hashes: its group holds the whole
// key's already.
func (g *caseGroup) caseKey() caseKey {
	k := caseKey{key: g.hash}
	switch {
	case g.testcase:
	case g.inputs == len(g.key):
		k.inputs = g.hash
	default:
		k.inputs = keyHash(g.key[:g.inputs])
	}
	return k
}

// flakyRows finds the evaluators on which a row's case is flaky, by the
// hashes of the case keys: memory in proportion to the flaky cases.
type flakyRows struct {
	byKey, byInputs map[uint64][]string // evaluator names, in order
	key             []byte              // scratch
}

// newFlakyRows indexes the flaky cases of one side, by evaluator in the
// order given; nil when none is flaky.
func newFlakyRows(cases *CaseSummary, order []string, cat catalog) *flakyRows {
	if cases == nil {
		return nil
	}
	var f *flakyRows
	for _, id := range order {
		s := cases.Evaluators[id]
		if len(s.flakyKeys) == 0 {
			continue
		}
		if f == nil {
			f = &flakyRows{byKey: map[uint64][]string{}, byInputs: map[uint64][]string{}}
		}
		name := cat.label(id)
		for _, k := range s.flakyKeys {
			f.byKey[k.key] = appendName(f.byKey[k.key], name)
			if k.inputs != 0 {
				f.byInputs[k.inputs] = appendName(f.byInputs[k.inputs], name)
			}
		}
	}
	return f
}

// appendName appends name unless it ends names already (one evaluator's
// keys are added together).
func appendName(names []string, name string) []string {
	if len(names) > 0 && names[len(names)-1] == name {
		return names
	}
	return append(names, name)
}

// of returns the evaluators on which the row's case is flaky, keyed as
// Comparer.addRepeat keys it: by test case id, else by inputs and
// expected answers; a row without expected answers by its inputs alone,
// as it joins a case of the same inputs.
func (f *flakyRows) of(s models.EvaluationScenario) []string {
	if f == nil {
		return nil
	}
	if s.TestcaseID != "" {
		f.key = append(append(f.key[:0], testcaseKey...), s.TestcaseID...)
		return f.byKey[keyHash(f.key)]
	}
	f.key = pairingKey(f.key[:0], s.Inputs)
	inputs := len(f.key)
	var answered bool
	if f.key, answered = appendAnswersKey(f.key, &s); !answered {
		return f.byInputs[keyHash(f.key[:inputs])]
	}
	return f.byKey[keyHash(f.key)]
}

// repeats returns the repeats of the report's runs: the most asked of
// either run or of the comparison; 0 or 1 means none.
func (r *Report) repeats() int {
	k := max(r.Candidate.Repeats, r.Baseline.Repeats)
	if r.Comparison != nil {
		k = max(k, r.Comparison.Repeats)
	}
	return k
}

// flakyRowsOf returns, for each run the writers write (as runs), the
// index of its own flaky cases: the baseline's rows are marked by the
// baseline's repeats, the candidate's by the candidate's. Nil without
// repeats.
func (r *Report) flakyRowsOf(runs []namedRun, cat catalog) []*flakyRows {
	if r.repeats() <= 1 {
		return nil
	}
	out := make([]*flakyRows, len(runs))
	switch {
	case r.Comparison != nil:
		out[len(out)-1] = newFlakyRows(&r.Comparison.CandidateCases, r.Comparison.EvaluatorIDs, cat)
		if len(out) == 2 {
			out[0] = newFlakyRows(&r.Comparison.BaselineCases, r.Comparison.EvaluatorIDs, cat)
		}
	case r.CandidateCases != nil:
		out[len(out)-1] = newFlakyRows(r.CandidateCases, r.CandidateSummary.EvaluatorIDs, cat)
	}
	return out
}

// flakyCell is the CSV cell of a row's flaky evaluators.
func flakyCell(names []string) string { return strings.Join(names, "; ") }

// caseKeySeed seeds keyHash: the reports look up by hash the cases a
// Comparer hashed, in the same process.
var caseKeySeed = maphash.MakeSeed()

// keyHash is a case key's 64-bit hash, never 0 (an empty slot of
// caseHashes).
func keyHash(key []byte) uint64 { return max(maphash.Bytes(caseKeySeed, key), 1) }
