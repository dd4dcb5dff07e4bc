package evals

import "github.com/agenta-go/agenta/models"

// OrderByVariant orders the evaluations CreateEvaluation returned as the
// variants of its request were given, so that the first is the baseline
// and the last the candidate whatever order the service answered in; an
// evaluation that names no variant keeps the service's order. A count
// other than one evaluation a variant is an error naming the ids created.
// It is the order Evaluate returns its runs in, for a caller that creates
// the evaluation itself, as agenta eval run does.
func OrderByVariant(created []models.Evaluation, variantIDs []string) ([]models.Evaluation, error) {
	return byVariant(created, variantIDs)
}
