package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenta-go/agenta/models"
)

// The preflight reads of a 2026 server: each id is resolved as
// CreateEvaluation resolves it (a variant or test set or evaluator to its
// latest revision, a revision as it is), so that what is checked is what
// would run. The app's inputs are its revision's input schema; the test
// set's columns are its first test case's.

// preflight runs the reads of a 2026 server: up to two per id, and one
// for the first test case.
func (c api2026) preflight(ctx context.Context, req models.PreflightRequest, report *models.PreflightReport) (*preflightFacts, error) {
	facts := &preflightFacts{}
	testset, err := c.latestTestsetRevision(ctx, req.TestsetID)
	switch {
	case errors.Is(err, ErrNotFound):
		c.notFound(report, models.PreflightTestset, req.TestsetID, "is neither a test set nor a test-set revision")
	case err != nil:
		return nil, err
	default:
		if facts.columns, err = c.firstTestcaseColumns(ctx, testset.ID); err != nil {
			return nil, err
		}
		if facts.columns == nil {
			skip(report, checkInputs, "the test set has no test cases: its columns were not checked")
		}
	}

	for i, id := range req.VariantIDs {
		rev, err := c.latestApplicationRevision(ctx, req.AppID, i, id)
		switch {
		case errors.Is(err, ErrNotFound):
			c.notFound(report, models.PreflightVariant, id, "is neither an application variant nor an application revision")
			continue
		case errors.Is(err, ErrInvalidArgument):
			c.notFound(report, models.PreflightVariant, id, "is not a variant of app "+c.text(req.AppID, maxMessage))
			continue
		case err != nil:
			return nil, err
		}
		name := c.text(variantName(rev.ApplicationSlug, rev.ApplicationVariantSlug), maxMessage)
		inputs, ok := schemaProperties(rev.Data)
		if !ok {
			skip(report, checkInputs, "variant %s has no input schema (data.schemas.inputs): its inputs were not checked", name)
			continue
		}
		facts.inputs = append(facts.inputs, variantInputs{variant: name, names: inputs})
	}

	for i, id := range req.EvaluatorConfigIDs {
		rev, err := c.latestEvaluatorRevision(ctx, fmt.Sprintf("PreflightRequest.EvaluatorConfigIDs[%d]", i), id)
		switch {
		case errors.Is(err, ErrNotFound):
			c.notFound(report, models.PreflightEvaluator, id, "is neither an evaluator nor an evaluator revision")
			continue
		case err != nil:
			return nil, err
		}
		config := models.EvaluatorConfig{ID: id, Name: rev.Name, EvaluatorKey: rev.Key(), Slug: rev.EvaluatorSlug}
		if rev.EvaluatorID != "" {
			config.ID = rev.EvaluatorID
		}
		if rev.Data != nil {
			config.URI, config.SettingsValues = rev.Data.URI, rev.Data.Parameters
		}
		report.Evaluators = append(report.Evaluators, config)
		column := rev.CorrectAnswerKey()
		if column == "" && takesCorrectAnswer2024[config.EvaluatorKey] {
			column = defaultCorrectAnswer2026
		}
		facts.answers = append(facts.answers, answerColumn{config: config, column: column})
	}
	return facts, nil
}

// defaultCorrectAnswer2026 is the column a 2026 built-in evaluator that
// compares with a correct answer reads when its settings name none.
const defaultCorrectAnswer2026 = "correct_answer"

// firstTestcaseColumns returns the columns of a test-set revision's first
// test case, without the service's dedup column; nil when it has none.
func (c *Client) firstTestcaseColumns(ctx context.Context, revisionID string) ([]string, error) {
	for tc, err := range c.QueryTestcases(ctx, models.TestcasesQuery{TestsetRevisionRef: &models.Reference{ID: revisionID}, PageSize: 1}) {
		if err != nil {
			return nil, err
		}
		columns := []string{}
		for _, col := range tc.Data {
			if col.Name != models.TestcaseDedupKey {
				columns = append(columns, col.Name)
			}
		}
		return columns, nil
	}
	return nil, nil
}

// schemaProperties returns the property names of a revision's input
// schema; ok is false when it has none.
func schemaProperties(data *models.ApplicationRevisionData) (names []string, ok bool) {
	if data == nil {
		return nil, false
	}
	raw, ok := data.Schemas["inputs"]
	if !ok {
		return nil, false
	}
	var schema struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &schema) != nil || len(schema.Properties) == 0 {
		return nil, false
	}
	columns := models.Columns{}
	if json.Unmarshal(schema.Properties, &columns) != nil {
		return nil, false
	}
	names = []string{}
	for _, col := range columns {
		names = append(names, col.Name)
	}
	return names, true
}
