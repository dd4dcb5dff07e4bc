package models

// PreflightRequest names what Client.Preflight checks before an
// evaluation is created: the ids of a NewEvaluation, by the same names.
// NewEvaluation.PreflightRequest builds it.
type PreflightRequest struct {
	AppID      string
	VariantIDs []string
	// EvaluatorConfigIDs are the evaluator configs (on a 2026 server,
	// evaluators or evaluator revisions) the evaluation would apply.
	EvaluatorConfigIDs []string
	TestsetID          string
}

// PreflightRequest returns the preflight of this evaluation: its app,
// variants, evaluator configs and test set.
func (e NewEvaluation) PreflightRequest() PreflightRequest {
	return PreflightRequest{AppID: e.AppID, VariantIDs: e.VariantIDs, EvaluatorConfigIDs: e.EvaluatorConfigIDs, TestsetID: e.TestsetID}
}

// PreflightProblem is what a PreflightFinding found wrong.
type PreflightProblem string

// The problems a preflight finds. A NotFound is a wrong id (the command's
// usage error); a missing column is a test set that does not fit the app or
// an evaluator, which the 2024 service ends as EVALUATION_FAILED.
const (
	// PreflightNotFound is an id that names nothing of its kind, or
	// something of another app.
	PreflightNotFound PreflightProblem = "not found"
	// PreflightMissingInput is an input of the app that the test set has
	// no column for.
	PreflightMissingInput PreflightProblem = "missing input column"
	// PreflightMissingCorrectAnswer is an evaluator that compares with a
	// correct answer whose column the test set lacks, or (on a 2024
	// server, which has no default) that names no column at all.
	PreflightMissingCorrectAnswer PreflightProblem = "missing correct-answer column"
)

// The kinds of object a PreflightFinding names in its Subject.
const (
	PreflightVariant   = "variant"
	PreflightTestset   = "test set"
	PreflightEvaluator = "evaluator"
)

// PreflightFinding is one thing a preflight found wrong, which would make
// the evaluation fail or score nothing.
type PreflightFinding struct {
	Problem PreflightProblem
	// Subject is the kind of object found wrong: PreflightVariant,
	// PreflightTestset or PreflightEvaluator.
	Subject string
	// ID is the id as the request gave it; Name the object's name, when
	// the server has one.
	ID, Name string
	// Column is the missing test-set column, for the column problems.
	Column string
	// Message says it in a sentence, such as "the test set has no column
	// 'country', which the app takes as input".
	Message string
}

// PreflightNote is a check a preflight skipped, because the server does
// not serve the read it needs or has nothing to check against, and why.
type PreflightNote struct {
	Check   string // such as "app inputs"
	Message string
}

// PreflightReport is what a preflight checked and found: the findings,
// which stop the evaluation, and the checks it skipped, which do not.
type PreflightReport struct {
	// Generation is the API the server speaks, "2024" or "2026".
	Generation string
	Findings   []PreflightFinding
	Skipped    []PreflightNote
	// Evaluators are the evaluator configs the request names that exist,
	// in its order, as the server describes them: their names, keys and
	// settings are known before any run.
	Evaluators []EvaluatorConfig
	// Rows is the number of the test set's rows, when the preflight read
	// them (a mid-2024 server's test set is read whole); 0 otherwise.
	Rows int
	// Columns are the test set's columns: on a mid-2024 server those every
	// row has, sorted (its rows are JSON objects); on a 2026 one the first
	// test case's, in its order. Nil when they could not be read.
	Columns []string
}

// Has reports whether the report holds a finding of problem p.
func (r *PreflightReport) Has(p PreflightProblem) bool {
	if r == nil {
		return false
	}
	for _, f := range r.Findings {
		if f.Problem == p {
			return true
		}
	}
	return false
}
