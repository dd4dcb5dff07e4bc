package agenta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// ErrPreflight matches a *PreflightError: a preflight that found the
// evaluation misconfigured before anything was created.
var ErrPreflight = errors.New("agenta: preflight found the evaluation misconfigured")

// PreflightError is a preflight's findings: the evaluation would fail (or
// score nothing), and nothing was created. Report.Has tells a wrong id
// (models.PreflightNotFound: the command's usage error, exit 2) from a
// test set that does not fit the app or an evaluator (the missing-column
// problems: exit 3, as the 2024 service's EVALUATION_FAILED).
type PreflightError struct {
	Report *models.PreflightReport
}

// maxFindingsShown bounds the findings Error lists: an app's document may
// name many inputs, and the report holds them all.
const maxFindingsShown = 10

// Error lists the findings, one clause each, the first ten of them.
func (e *PreflightError) Error() string {
	var msgs []string
	if e.Report != nil {
		for i, f := range e.Report.Findings {
			if i == maxFindingsShown {
				msgs = append(msgs, fmt.Sprintf("and %d more", len(e.Report.Findings)-i))
				break
			}
			msgs = append(msgs, f.Message)
		}
	}
	return "agenta: preflight: " + strings.Join(msgs, "; ")
}

// Is matches ErrPreflight.
func (e *PreflightError) Is(target error) bool { return target == ErrPreflight }

// Preflight checks, before an evaluation is created, what would make it
// fail or score nothing, with reads only: that every variant, the test set
// and every evaluator config exist (a wrong id is named with its kind);
// that the test set has a column for each of the app's inputs; and that
// it has the column each evaluator reads its correct answer from. It
// finds the server's generation first (see Generation), and reads what
// that generation serves: docs/evals-and-statistics.md lists the reads.
// A check whose read the server does not serve, or which has nothing to
// check against, is skipped with a note in the report, never guessed.
//
// The report is returned in every case but a failed read; when it has
// findings, the error is a *PreflightError (ErrPreflight) holding it. A
// read that fails otherwise (a 401, a 5xx, no answer) is returned as its
// error: a check that could not run passes nothing.
func (c *Client) Preflight(ctx context.Context, req models.PreflightRequest) (*models.PreflightReport, error) {
	if err := checkPreflightRequest(req); err != nil {
		return nil, err
	}
	gen, err := c.Generation(ctx)
	if err != nil {
		return nil, err
	}
	report := &models.PreflightReport{Generation: gen.String()}
	var facts *preflightFacts
	facts, err = c.apiOf(gen).preflight(ctx, req, report)
	if err != nil {
		return nil, err
	}
	c.judgeColumns(facts, report)
	if len(report.Findings) > 0 {
		return report, &PreflightError{Report: report}
	}
	return report, nil
}

func checkPreflightRequest(req models.PreflightRequest) error {
	return checkEvaluationIDs("PreflightRequest", req.AppID, req.VariantIDs, req.EvaluatorConfigIDs, req.TestsetID)
}

// preflightFacts is what a generation's reads found that the column checks
// judge alike on both: the test set's columns (nil when unknown), each
// variant's inputs as far as known, and each evaluator's correct-answer
// column.
type preflightFacts struct {
	columns []string
	inputs  []variantInputs
	answers []answerColumn
}

// variantInputs are the inputs one variant's app takes.
type variantInputs struct {
	variant string // its name, or its id
	names   []string
}

// answerColumn is the test-set column an evaluator reads its correct
// answer from.
type answerColumn struct {
	config models.EvaluatorConfig
	column string
}

// The notes' check names.
const (
	checkInputs         = "app inputs"
	checkCorrectAnswers = "correct-answer columns"
	checkVariants       = "variants exist"
	checkEvaluators     = "evaluators exist"
)

// judgeColumns adds a finding for each input and correct-answer column the
// test set lacks, each column once.
func (c *Client) judgeColumns(facts *preflightFacts, report *models.PreflightReport) {
	if facts.columns == nil {
		return
	}
	report.Columns = facts.columns
	seen := map[string]bool{}
	for _, v := range facts.inputs {
		for _, name := range v.names {
			if seen[name] || slices.Contains(facts.columns, name) {
				continue
			}
			seen[name] = true
			column := c.text(name, maxMessage)
			report.Findings = append(report.Findings, models.PreflightFinding{
				Problem: models.PreflightMissingInput, Subject: models.PreflightTestset, Column: column,
				Message: fmt.Sprintf("the test set has no column '%s', which the app takes as input: rename the column, or change the app's inputs", column),
			})
		}
	}
	for _, a := range facts.answers {
		if a.column == "" || slices.Contains(facts.columns, a.column) {
			continue
		}
		column := c.text(a.column, maxMessage)
		report.Findings = append(report.Findings, models.PreflightFinding{
			Problem: models.PreflightMissingCorrectAnswer, Subject: models.PreflightEvaluator,
			ID: a.config.ID, Name: a.config.Name, Column: column,
			Message: fmt.Sprintf("the test set has no column '%s', which evaluator %s reads its correct answer from", column, c.evaluatorTitle(a.config)),
		})
	}
}

// evaluatorTitle names an evaluator in a message: 'Name' (id), names being
// unique neither on 2024 servers ("Exact Match" and "Exact match") nor
// across evaluators.
func (c *Client) evaluatorTitle(config models.EvaluatorConfig) string {
	if config.Name == "" {
		return c.text(config.ID, maxMessage)
	}
	return "'" + c.text(config.Name, maxMessage) + "' (" + c.text(config.ID, maxMessage) + ")"
}

// notFound adds the finding of an id that names nothing of its kind.
func (c *Client) notFound(report *models.PreflightReport, subject, id, why string) {
	report.Findings = append(report.Findings, models.PreflightFinding{
		Problem: models.PreflightNotFound, Subject: subject, ID: id,
		Message: fmt.Sprintf("%s %s %s", subject, c.text(id, maxMessage), why),
	})
}

// skip notes a check that did not run.
func skip(report *models.PreflightReport, check, format string, args ...any) {
	report.Skipped = append(report.Skipped, models.PreflightNote{Check: check, Message: fmt.Sprintf(format, args...)})
}

// notServed reports an answer that says the server has no such route, so
// that the check that needs it is skipped rather than failed.
func notServed(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && (apiErr.routeNotFound() || apiErr.StatusCode == 405)
}
