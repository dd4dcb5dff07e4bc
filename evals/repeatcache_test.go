package evals

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// randomRepeatListing returns a side's rows of a random listing with
// repeats that stresses what a Comparer with Repeats remembers between
// rows: a case's rows mostly one after another, sometimes apart, its inputs
// sometimes in another order or with other spacing, rows without expected
// answers, rows naming their test case, cases listed more than K times or
// again after they settled, and the rows' buffers reused by the caller.
func randomRepeatListing(rng *rand.Rand, cases, k int) []models.EvaluationScenario {
	var rows []models.EvaluationScenario
	id := 0
	for i := range cases {
		n := k
		switch rng.IntN(8) {
		case 0:
			n = 1 + rng.IntN(k+2) // short, or listed more than K times
		case 1:
			n = 0
		}
		for range n {
			question := strconv.Quote(fmt.Sprintf("question %d", i%(cases/2+1)))
			if rng.IntN(10) == 0 {
				question = " " + question
			}
			s := models.EvaluationScenario{
				ID: fmt.Sprintf("r%d", id),
				Inputs: []models.Input{
					{Name: "q", Value: json.RawMessage(question)},
					{Name: "n", Value: json.RawMessage(strconv.Itoa(i % 7))},
				},
				CorrectAnswers: []models.CorrectAnswer{{Key: "correct_answer", Value: fmt.Sprint("a", i%3)}},
			}
			id++
			if rng.IntN(6) == 0 {
				s.Inputs[0], s.Inputs[1] = s.Inputs[1], s.Inputs[0]
			}
			if rng.IntN(15) == 0 {
				s.TestcaseID = fmt.Sprint("tc", i)
			}
			if rng.IntN(12) == 0 {
				s.CorrectAnswers = nil
				fail := models.Result{Type: "error", Value: json.RawMessage("null"), Error: &models.Error{Message: "boom"}}
				s.Outputs = []models.Output{{Result: fail}}
				s.Results = []models.ScenarioResult{{EvaluatorConfig: "exact", Result: fail}}
			} else {
				s.Outputs = []models.Output{{Result: models.Result{Type: "text", Value: json.RawMessage(`"x"`)}}}
				s.Results = []models.ScenarioResult{
					{EvaluatorConfig: "exact", Result: models.Result{Type: "bool", Value: json.RawMessage(strconv.FormatBool(rng.IntN(2) == 0))}},
					{EvaluatorConfig: "edit", Result: models.Result{Type: "number", Value: json.RawMessage(strconv.Itoa(rng.IntN(5)))}},
				}
			}
			rows = append(rows, s)
		}
	}
	// Some rows out of place.
	for range len(rows) / 10 {
		i, j := rng.IntN(len(rows)), rng.IntN(len(rows))
		rows[i], rows[j] = rows[j], rows[i]
	}
	return rows
}

// TestRepeatCacheChangesNothing compares random listings with repeats with
// and without what a Comparer remembers of the last rows (lastCase, the
// reused groups, appendLabel): the comparisons, taken midway and at the
// end, are the same.
func TestRepeatCacheChangesNothing(t *testing.T) {
	defer func() { repeatCacheOff = false }()
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 27))
		k := 2 + rng.IntN(3)
		cases := 1 + rng.IntN(40)
		baseline, candidate := randomRepeatListing(rng, cases, k), randomRepeatListing(rng, cases, k)
		alone := rng.IntN(5) == 0
		compare := func(off bool) []Comparison {
			repeatCacheOff = off
			c := Comparer{Repeats: k, alone: alone}
			var out []Comparison
			// The caller reuses its row's buffers after each call.
			var in [2]models.Input
			add := func(s models.EvaluationScenario, f func(models.EvaluationScenario)) {
				n := copy(in[:], s.Inputs)
				s.Inputs = in[:n]
				f(s)
				in = [2]models.Input{{Name: "zz", Value: json.RawMessage(`"overwritten"`)}}
			}
			for i := range max(len(baseline), len(candidate)) {
				if i < len(baseline) {
					add(baseline[i], c.AddBaseline)
				}
				if i < len(candidate) {
					add(candidate[i], c.AddCandidate)
				}
				if i == len(baseline)/2 {
					out = append(out, c.Comparison())
				}
			}
			return append(out, c.Comparison())
		}
		off, on := compare(true), compare(false)
		// Printed, as NaN (a bound without data) is not DeepEqual to itself.
		if fmt.Sprintf("%#v", off) != fmt.Sprintf("%#v", on) {
			t.Fatalf("seed %d (K %d, %d cases, alone %v): with the cache\n%+v\nwithout\n%+v", seed, k, cases, alone, on, off)
		}
	}
}

// TestAppendLabelIsInputsText checks appendLabel against InputsText, cut as
// a case's label is.
func TestAppendLabelIsInputsText(t *testing.T) {
	long := strconv.Quote(string(make([]rune, 300)))
	longer := strconv.Quote(strings.Repeat("東京é", 200))
	for _, value := range []string{`"plain"`, ` "spaced" `, `12`, ` -1.5e3 `, `true`, `null`, ` null`, `"esc\"aped"`, `"\u00e9"`, `{"a": 1}`, `[1, 2]`, ``, `abc`, `"東京"`, "\"\xff\"", long, longer, `"` + strings.Repeat("a", 500) + `"`} {
		inputs := []models.Input{{Name: "a", Value: json.RawMessage(value)}, {Name: "b", Value: json.RawMessage(value)}}
		want := bound(models.EvaluationScenario{Inputs: inputs}.InputsText(), 120)
		if got := bound(string(appendLabel(nil, inputs)), 120); got != want {
			t.Errorf("label of %q: %q, want %q", value, got, want)
		}
		key, label := keyAndLabel([]byte("k"), []byte("l"), inputs)
		if got := bound(string(label[1:]), 120); string(key) != "k"+string(pairingKey(nil, inputs)) || label[0] != 'l' || got != want {
			t.Errorf("key and label of %q: %q, %q; want %q, %q", value, key[1:], got, pairingKey(nil, inputs), want)
		}
	}
}

// TestCaseIndexSharedSlots compares random listings with repeats with the
// case index's slots narrowed to four, so that most cases share one with
// others (as two keys of one hash would): the comparisons are the same.
func TestCaseIndexSharedSlots(t *testing.T) {
	defer func() { caseIndexMask = ^uint64(0) }()
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 28))
		k := 2 + rng.IntN(3)
		cases := 1 + rng.IntN(40)
		baseline, candidate := randomRepeatListing(rng, cases, k), randomRepeatListing(rng, cases, k)
		compare := func(mask uint64) []Comparison {
			caseIndexMask = mask
			c := Comparer{Repeats: k}
			var out []Comparison
			for i := range max(len(baseline), len(candidate)) {
				if i < len(baseline) {
					c.AddBaseline(baseline[i])
				}
				if i < len(candidate) {
					c.AddCandidate(candidate[i])
				}
				if i == len(baseline)/2 {
					out = append(out, c.Comparison())
				}
			}
			return append(out, c.Comparison())
		}
		wide, narrow := compare(^uint64(0)), compare(3)
		if fmt.Sprintf("%#v", wide) != fmt.Sprintf("%#v", narrow) {
			t.Fatalf("seed %d (K %d, %d cases): with shared slots\n%+v\nwithout\n%+v", seed, k, cases, narrow, wide)
		}
	}
}

// TestRowScanAsModels checks the row readers on every row's path against
// the models' methods they stand for: scoreOf against Result.Failed, Bool
// and Float64, appFailed and noOutput against appError and AppError.
func TestRowScanAsModels(t *testing.T) {
	values := []string{``, ` `, `true`, ` true `, `false`, "\tfalse\n", `True`, `null`, ` null`, `nul`, `n`, `0`, `-0`, `1.5`, ` -2e3 `,
		`1e999`, `-1e999`, `01`, `1x`, `-`, `"1"`, `"true"`, `{"a":1}`, `[1]`, "\u00a0true", "\u00a01", "\u00a0null", "\u0085", "\xc2", `NaN`, `Infinity`, `+1`, `.5`}
	for _, v := range values {
		for _, typ := range []string{"bool", models.ResultTypeError} {
			for _, e := range []*models.Error{nil, {Message: "boom"}} {
				r := models.Result{Type: typ, Value: json.RawMessage(v), Error: e}
				wantKind, wantX := kindOther, 0.0
				if b, ok := r.Bool(); r.Failed() {
					wantKind = kindError
				} else if ok {
					wantKind, wantX = kindBool, 0
					if b {
						wantX = 1
					}
				} else if x, ok := r.Float64(); ok && !math.IsInf(x, 0) {
					wantKind, wantX = kindNumber, x
				}
				if kind, x := scoreOf(r); kind != wantKind || x != wantX {
					t.Errorf("scoreOf(%+v) = %v, %v; want %v, %v", r, kind, x, wantKind, wantX)
				}
				for _, s := range []models.EvaluationScenario{{}, {Outputs: []models.Output{{Result: r}}}, {Outputs: []models.Output{{Result: r}, {}}}} {
					_, failed := appError(s)
					_, called := s.AppError()
					if appFailed(&s) != failed || noOutput(&s) != !called {
						t.Errorf("appFailed, noOutput of %+v: %v, %v; want %v, %v", s.Outputs, appFailed(&s), noOutput(&s), failed, !called)
					}
				}
			}
		}
	}
}

// TestRepeatsReadFirstResult checks that, with repeats, a row's second
// result of an evaluator is left out, as without: listings whose rows
// repeat an evaluator's result with another value compare as without
// those results.
func TestRepeatsReadFirstResult(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 29))
		k := 2 + rng.IntN(3)
		cases := 1 + rng.IntN(30)
		baseline, candidate := randomRepeatListing(rng, cases, k), randomRepeatListing(rng, cases, k)
		compare := func(doubled bool) Comparison {
			c := Comparer{Repeats: k}
			for i := range max(len(baseline), len(candidate)) {
				for side, rows := range [][]models.EvaluationScenario{baseline, candidate} {
					if i >= len(rows) {
						continue
					}
					s := rows[i]
					if doubled {
						s.Results = slices.Clone(s.Results)
						for _, r := range s.Results {
							flipped := r
							flipped.Result.Value = json.RawMessage(`"other"`)
							if rng.IntN(2) == 0 {
								flipped.Result.Value = json.RawMessage(`true`)
							}
							s.Results = append(s.Results, flipped)
						}
					}
					[]func(models.EvaluationScenario){c.AddBaseline, c.AddCandidate}[side](s)
				}
			}
			return c.Comparison()
		}
		if once, doubled := compare(false), compare(true); fmt.Sprintf("%#v", once) != fmt.Sprintf("%#v", doubled) {
			t.Fatalf("seed %d: with second results\n%+v\nwithout\n%+v", seed, doubled, once)
		}
	}
}
