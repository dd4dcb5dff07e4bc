package evals

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// Direction says which way an evaluator's values improve.
type Direction int8

const (
	// HigherIsBetter is the direction of pass rates and scores, and the
	// default.
	HigherIsBetter Direction = iota
	// LowerIsBetter is the direction of distances and error counts, such as
	// auto_levenshtein_distance without a threshold.
	LowerIsBetter
)

// String returns "higher is better" or "lower is better".
func (d Direction) String() string {
	if d == LowerIsBetter {
		return "lower is better"
	}
	return "higher is better"
}

// DirectionOf returns the direction of an evaluator config from its
// evaluator key and settings: lower is better for auto_levenshtein_distance
// without a threshold (its result is then the edit distance, a number);
// higher is better for everything else: bool verdicts, similarity, and the
// scores of webhooks and custom code.
func DirectionOf(evaluatorKey string, settings map[string]any) Direction {
	if evaluatorKey == "auto_levenshtein_distance" {
		if _, ok := models.Number(settings["threshold"]); !ok {
			return LowerIsBetter
		}
	}
	return HigherIsBetter
}

// Evaluator is what reports and gates know about an evaluator config: its
// id, the name to show, and which way its values improve.
type Evaluator struct {
	ID   string
	Name string // shown in reports; the ID when empty
	// Slug is a 2026 evaluator's slug, such as "exact-capital": a gate may
	// name the evaluator by it, as by its name or id.
	Slug string
	// Key is the evaluator key, such as auto_exact_match, when known.
	Key string
	// CorrectAnswerKey is the test-set column holding the expected answer
	// this evaluator compares with ("" means "correct_answer").
	CorrectAnswerKey string
	Direction        Direction
}

// EvaluatorOf describes an evaluator config, with its direction derived
// from its key and settings (see DirectionOf). A 2026 evaluator (one with
// a URI) is higher-is-better whatever its key: the row of a 2026 run holds
// the score of a {"score","success"} verdict, and today's
// auto_levenshtein_distance scores a similarity, where the 2024 one
// answered the distance.
func EvaluatorOf(config models.EvaluatorConfig) Evaluator {
	answerKey, _ := config.SettingsValues["correct_answer_key"].(string)
	direction := DirectionOf(config.EvaluatorKey, config.SettingsValues)
	if config.URI != "" {
		direction = HigherIsBetter
	}
	return Evaluator{
		ID:               config.ID,
		Name:             config.Name,
		Slug:             config.Slug,
		Key:              config.EvaluatorKey,
		CorrectAnswerKey: answerKey,
		Direction:        direction,
	}
}

// EvaluatorsOf describes the evaluator configs named in the aggregated
// results of the given evaluations, as FetchEvaluation or WaitEvaluation
// return them, each once. The service omits an evaluator that has no
// value on any row; reports show such an evaluator by its id.
func EvaluatorsOf(evaluations ...models.Evaluation) []Evaluator {
	var out []Evaluator
	seen := map[string]bool{}
	for _, ev := range evaluations {
		for _, ar := range ev.AggregatedResults {
			if ar.EvaluatorConfig.ID == "" || seen[ar.EvaluatorConfig.ID] {
				continue
			}
			seen[ar.EvaluatorConfig.ID] = true
			out = append(out, EvaluatorOf(ar.EvaluatorConfig))
		}
	}
	return out
}

// catalog resolves evaluators by id or name and gives each a distinct
// label for display.
type catalog struct {
	list   []Evaluator
	labels map[string]string // by id
}

// newCatalog orders the known evaluators by name and adds the ids of
// evaluators seen in results but not described, by id.
func newCatalog(known []Evaluator, seenIDs ...[]string) catalog {
	c := catalog{labels: map[string]string{}}
	have := map[string]bool{}
	for _, e := range known {
		if e.ID != "" && !have[e.ID] {
			have[e.ID] = true
			c.list = append(c.list, e)
		}
	}
	for _, ids := range seenIDs {
		for _, id := range ids {
			if !have[id] {
				have[id] = true
				c.list = append(c.list, Evaluator{ID: id})
			}
		}
	}
	slices.SortStableFunc(c.list, func(a, b Evaluator) int {
		return strings.Compare(a.label(), b.label())
	})
	count := map[string]int{}
	for _, e := range c.list {
		count[e.label()]++
	}
	for _, e := range c.list {
		label := bound(e.label(), 80)
		if count[e.label()] > 1 {
			label = fmt.Sprintf("%s (%s)", label, bound(e.ID, 40))
		}
		c.labels[e.ID] = label
	}
	return c
}

func (e Evaluator) label() string {
	if e.Name != "" {
		return e.Name
	}
	return e.ID
}

// countsEdits reports whether the evaluator's values are edit distances, a
// count of edits rather than a rate: a mid-2024 auto_levenshtein_distance
// without a threshold, the one DirectionOf makes lower-is-better.
// EvaluatorOf makes today's (2026) one, a similarity on [0, 1],
// higher-is-better.
func (e Evaluator) countsEdits() bool {
	return e.Key == "auto_levenshtein_distance" && e.Direction == LowerIsBetter
}

// label returns the display name of an evaluator config id.
func (c catalog) label(id string) string {
	if l, ok := c.labels[id]; ok {
		return l
	}
	return bound(id, 80)
}

// find returns the evaluator whose id, name or label is nameOrID, or else
// the one whose slug (a 2026 evaluator's) it is.
func (c catalog) find(nameOrID string) (Evaluator, bool) {
	for _, e := range c.list {
		if e.ID == nameOrID {
			return e, true
		}
	}
	var found []Evaluator
	for _, e := range c.list {
		if e.Name == nameOrID || c.labels[e.ID] == nameOrID {
			found = append(found, e)
		}
	}
	if len(found) == 0 {
		for _, e := range c.list {
			if e.Slug != "" && e.Slug == nameOrID {
				found = append(found, e)
			}
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return Evaluator{}, false
}

// names lists the labels, for messages about an unknown evaluator.
func (c catalog) names() string {
	labels := make([]string, len(c.list))
	for i, e := range c.list {
		labels[i] = fmt.Sprintf("%q", c.labels[e.ID])
	}
	if len(labels) == 0 {
		return "none"
	}
	return strings.Join(labels, ", ")
}

// unnamedWithoutValues lists, quoted, the evaluators known only by id that
// have no value in the candidate's summary: the service names an
// evaluator only when it has a value on some row whose app call answered.
func (c catalog) unnamedWithoutValues(candidate Summary) []string {
	var out []string
	for _, e := range c.list {
		if e.Name == "" && candidate.Evaluators[e.ID].Count == 0 {
			out = append(out, strconv.Quote(bound(e.ID, 80)))
		}
	}
	return out
}
