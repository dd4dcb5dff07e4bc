package evals

// Builders for the scenarios the tests use, shaped as the service sends
// them (see ../shared/contract/README.md).

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/agenta-go/agenta/models"
)

func textInput(name, value string) models.Input {
	raw, _ := json.Marshal(value)
	return models.Input{Name: name, Type: "text", Value: raw}
}

func boolResult(id string, v bool) models.ScenarioResult {
	return models.ScenarioResult{EvaluatorConfig: id, Result: models.Result{Type: "bool", Value: json.RawMessage(strconv.FormatBool(v))}}
}

func numberResult(id string, x float64) models.ScenarioResult {
	return models.ScenarioResult{EvaluatorConfig: id, Result: models.Result{Type: "number", Value: json.RawMessage(strconv.FormatFloat(x, 'g', -1, 64))}}
}

func errorResult(id, message string) models.ScenarioResult {
	return models.ScenarioResult{EvaluatorConfig: id, Result: models.Result{Type: "error", Value: json.RawMessage("null"), Error: &models.Error{Message: message}}}
}

func textResult(id, text string) models.ScenarioResult {
	raw, _ := json.Marshal(text)
	return models.ScenarioResult{EvaluatorConfig: id, Result: models.Result{Type: "text", Value: raw}}
}

// answered is a row whose app call answered output at the given cost and
// latency, with the expected answer as newer servers send it.
func answered(country, expected, output string, cost, latency float64, results ...models.ScenarioResult) models.EvaluationScenario {
	raw, _ := json.Marshal(output)
	return models.EvaluationScenario{
		Inputs:         []models.Input{textInput("country", country)},
		Outputs:        []models.Output{{Result: models.Result{Type: "text", Value: raw}, Cost: &cost, Latency: &latency}},
		CorrectAnswers: []models.CorrectAnswer{{Key: "correct_answer", Value: expected}},
		Results:        results,
	}
}

// failedRow is a row whose app call failed: the output is an error, and so
// is every evaluator's result, and correct_answers is empty, as the service
// writes it.
func failedRow(country, message string, evaluators ...string) models.EvaluationScenario {
	s := models.EvaluationScenario{
		Inputs:         []models.Input{textInput("country", country)},
		Outputs:        []models.Output{{Result: models.Result{Type: "error", Value: json.RawMessage("null"), Error: &models.Error{Message: message}}}},
		CorrectAnswers: []models.CorrectAnswer{},
	}
	for _, id := range evaluators {
		s.Results = append(s.Results, errorResult(id, message))
	}
	return s
}

// The evaluator configs of the tests, as an evaluation's aggregated
// results name them.
var (
	exactMatch = models.EvaluatorConfig{ID: "ev-exact", Name: "Exact match", EvaluatorKey: "auto_exact_match",
		SettingsValues: map[string]any{"correct_answer_key": "correct_answer"}}
	editDistance = models.EvaluatorConfig{ID: "ev-edit", Name: "Edit distance", EvaluatorKey: "auto_levenshtein_distance",
		SettingsValues: map[string]any{"correct_answer_key": "correct_answer"}}
)

func evaluationOf(id, variant string, configs ...models.EvaluatorConfig) models.Evaluation {
	ev := models.Evaluation{ID: id, VariantIDs: []string{"var-" + variant}, VariantNames: []string{variant}}
	for _, c := range configs {
		ev.AggregatedResults = append(ev.AggregatedResults, models.AggregatedResult{EvaluatorConfig: c})
	}
	return ev
}

// capitalsRuns returns a baseline and a candidate over eight countries:
// the candidate gets two more right, one fewer wrong (Australia regresses),
// and fails on Nigeria.
func capitalsRuns() (baseline, candidate Run) {
	type answer struct {
		country, capital, baseline, candidate string
	}
	answers := []answer{
		{"France", "Paris", "Paris", "Paris"},
		{"Japan", "Tokyo", "Tokyo", "Tokyo"},
		{"Brazil", "Brasília", "São Paulo", "Brasília"},
		{"Australia", "Canberra", "Canberra", "Sydney"},
		{"Canada", "Ottawa", "Toronto", "Ottawa"},
		{"Nigeria", "Abuja", "Lagos", ""},
		{"Switzerland", "Bern", "Zurich", "Bern"},
		{"Türkiye", "Ankara", "Ankara", "Ankara"},
	}
	ids := []string{exactMatch.ID, editDistance.ID}
	for i, a := range answers {
		score := func(output string) []models.ScenarioResult {
			return []models.ScenarioResult{
				boolResult(exactMatch.ID, output == a.capital),
				numberResult(editDistance.ID, float64(levenshtein(output, a.capital))),
			}
		}
		baseline.Scenarios = append(baseline.Scenarios, answered(a.country, a.capital, a.baseline, 0.0001*float64(i+1), float64(5+i)/10, score(a.baseline)...))
		if a.candidate == "" {
			candidate.Scenarios = append(candidate.Scenarios, failedRow(a.country, "rate limited", ids...))
			continue
		}
		candidate.Scenarios = append(candidate.Scenarios, answered(a.country, a.capital, a.candidate, 0.0002*float64(i+1), float64(4+i)/10, score(a.candidate)...))
	}
	// The service lists rows in no defined order: reverse the candidate's.
	for i, j := 0, len(candidate.Scenarios)-1; i < j; i, j = i+1, j-1 {
		candidate.Scenarios[i], candidate.Scenarios[j] = candidate.Scenarios[j], candidate.Scenarios[i]
	}
	baseline.Evaluation = evaluationOf("eval-base", "capitals.default", exactMatch, editDistance)
	candidate.Evaluation = evaluationOf("eval-cand", "capitals.precise", exactMatch)
	return baseline, candidate
}

func levenshtein(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur := make([]int, len(y)+1)
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(y)]
}

// rightRow is row i of twentyRuns' baseline: right on every evaluator.
func rightRow(i int) models.EvaluationScenario {
	country := fmt.Sprintf("C%02d", i+1)
	return answered(country, "Capital of "+country, "Capital of "+country, 0.001, 1,
		boolResult(exactMatch.ID, true), numberResult(scoreConfig.ID, 1))
}

// wrongRow is row i answered wrong: exact match false, score 0.
func wrongRow(i int) models.EvaluationScenario {
	country := fmt.Sprintf("C%02d", i+1)
	return answered(country, "Capital of "+country, "wrong", 0.001, 1,
		boolResult(exactMatch.ID, false), numberResult(scoreConfig.ID, 0))
}

// twentyRuns returns a baseline right on 20 rows (exact match true, score
// 1) and a candidate built by row: each row's results, or an app error.
func twentyRuns(candidateRow func(i int, country string) models.EvaluationScenario) (Run, Run) {
	var baseline, candidate Run
	for i := range 20 {
		country := fmt.Sprintf("C%02d", i+1)
		baseline.Scenarios = append(baseline.Scenarios, answered(country, "Capital of "+country, "Capital of "+country, 0.001, 1,
			boolResult(exactMatch.ID, true), numberResult(scoreConfig.ID, 1)))
		candidate.Scenarios = append(candidate.Scenarios, candidateRow(i, country))
	}
	baseline.Evaluation = evaluationOf("eval-base", "prod", exactMatch, scoreConfig)
	candidate.Evaluation = evaluationOf("eval-cand", "next", exactMatch, scoreConfig)
	return baseline, candidate
}

var scoreConfig = models.EvaluatorConfig{ID: "ev-score", Name: "score", EvaluatorKey: "auto_similarity_score"}

// issueGates are the gates of issue 16 that a broken candidate passed.
var issueGates = []Gate{
	MinMean("Exact match", 0.9),
	MaxWorseRows("Exact match", 0),
	NoSignificantRegression("Exact match", 0.05),
	MinMean("score", 0.5),
	MaxWorseRows("score", 0),
}

func checkedReport(t *testing.T) *Report {
	t.Helper()
	baseline, candidate := capitalsRuns()
	r := NewReport(baseline, candidate)
	_ = r.Check(MinMean("Exact match", 0.8), MaxAppErrors(0))
	return r
}
