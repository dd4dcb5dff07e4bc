package evals

// What the judging layer does for rows of 2026 runs: pairing by test case,
// evaluators known by slug, today's levenshtein read the right way.

import (
	"testing"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withTestcase is a row of a 2026 run: it names its test case.
func withTestcase(s models.EvaluationScenario, testcaseID string) models.EvaluationScenario {
	s.TestcaseID = testcaseID
	return s
}

// Rows that name their test case pair by it alone, in the order they
// come: duplicate rows (distinct test cases on 2026) pair with their own
// test case's row whatever the order, and a failed row with its own, even
// when its inputs would pair it with another.
func TestComparePairsByTestcase(t *testing.T) {
	baseline := []models.EvaluationScenario{
		withTestcase(answered("France", "Paris", "Paris", 0, 1, boolResult("e", true)), "t1"),
		withTestcase(answered("France", "Paris", "Lyon", 0, 1, boolResult("e", false)), "t2"), // a duplicate row
		withTestcase(answered("Spain", "Madrid", "Madrid", 0, 1, boolResult("e", true)), "t3"),
	}
	candidate := []models.EvaluationScenario{
		withTestcase(failedRow("Spain", "boom", "e"), "t3"),
		withTestcase(answered("France", "Paris", "Paris", 0, 1, boolResult("e", true)), "t2"),
		withTestcase(answered("France", "Paris", "Lyon", 0, 1, boolResult("e", false)), "t1"),
	}
	c := Compare(baseline, candidate)
	assert.Equal(t, 3, c.Paired)
	assert.Equal(t, 3, c.PairedByTestcase)
	assert.Equal(t, "their test case", c.Pairing())
	d := c.Evaluators["e"]
	assert.Equal(t, 1, d.Better(HigherIsBetter), "t2: Lyon then Paris")
	assert.Equal(t, 2, d.Worse(HigherIsBetter), "t1: Paris then Lyon; t3: the failed row")

	// By inputs and answers, the same rows pair otherwise: France with
	// France in order, so t1 with t2's partner.
	strip := func(rows []models.EvaluationScenario) []models.EvaluationScenario {
		out := make([]models.EvaluationScenario, len(rows))
		for i, r := range rows {
			r.TestcaseID = ""
			out[i] = r
		}
		return out
	}
	c = Compare(strip(baseline), strip(candidate))
	assert.Equal(t, 0, c.PairedByTestcase)
	assert.Equal(t, "their inputs and expected answers", c.Pairing())

	// A row with a test case never pairs with one without.
	c = Compare(baseline[:1], strip(candidate[2:]))
	assert.Equal(t, 0, c.Paired)
	assert.Equal(t, 2, c.Unpaired)
}

// A 2026 evaluator (one with a URI) is higher-is-better: today's
// auto_levenshtein_distance scores a similarity; a 2024 one without a
// threshold is a distance. Gates find a 2026 evaluator by slug too.
func TestEvaluators2026(t *testing.T) {
	lev24 := models.EvaluatorConfig{ID: "a", Name: "Edit distance", EvaluatorKey: "auto_levenshtein_distance"}
	lev26 := models.EvaluatorConfig{ID: "b", Name: "Edit distance", Slug: "edit-distance", EvaluatorKey: "auto_levenshtein_distance",
		URI: "agenta:builtin:auto_levenshtein_distance:v0", SettingsValues: map[string]any{"correct_answer_key": "correct_answer"}}
	assert.Equal(t, LowerIsBetter, EvaluatorOf(lev24).Direction)
	assert.Equal(t, HigherIsBetter, EvaluatorOf(lev26).Direction)
	assert.Equal(t, "edit-distance", EvaluatorOf(lev26).Slug)

	exact := models.EvaluatorConfig{ID: "x", Name: "Exact capital", Slug: "exact-capital", EvaluatorKey: "auto_exact_match",
		URI: "agenta:builtin:auto_exact_match:v0"}
	run := Run{Evaluation: models.Evaluation{ID: "r", AggregatedResults: []models.AggregatedResult{{EvaluatorConfig: exact}}},
		Scenarios: []models.EvaluationScenario{withTestcase(answered("France", "Paris", "Paris", 0, 1, boolResult("x", true)), "t1")}}
	report := NewReport(Run{}, run)
	for _, spec := range []string{"Exact capital >= 1", "exact-capital >= 1", "x >= 1"} {
		g, err := ParseGate(spec)
		require.NoError(t, err)
		assert.NoError(t, report.Check(g), spec)
	}
	g, err := ParseGate("exact-capitol >= 1")
	require.NoError(t, err)
	assert.ErrorIs(t, report.Check(g), ErrInvalidGate, "a slug is matched exactly")

	// A name wins over another evaluator's slug.
	other := models.EvaluatorConfig{ID: "y", Name: "exact-capital", EvaluatorKey: "auto_exact_match"}
	run.Evaluation.AggregatedResults = append(run.Evaluation.AggregatedResults, models.AggregatedResult{EvaluatorConfig: other})
	run.Scenarios[0].Results = append(run.Scenarios[0].Results, boolResult("y", false))
	report = NewReport(Run{}, run)
	g, err = ParseGate("exact-capital >= 1")
	require.NoError(t, err)
	assert.Error(t, report.Check(g), "the evaluator named exact-capital, which failed, not the one of that slug")
}
