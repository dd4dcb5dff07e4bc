package evals

import (
	"fmt"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// OrderByVariant orders the evaluations CreateEvaluation returned as the
// variants of its request were given, so that the first is the baseline
// and the last the candidate whatever order the service answered in; an
// evaluation that names no variant keeps the service's order. A count
// other than one evaluation a variant is an error naming the ids created.
func OrderByVariant(created []models.Evaluation, variantIDs []string) ([]models.Evaluation, error) {
	if len(created) != len(variantIDs) {
		ids := make([]string, len(created))
		for i, ev := range created {
			ids[i] = bound(ev.ID, 80)
		}
		return nil, fmt.Errorf("evals: the service created %d evaluations for %d variants: %s", len(created), len(variantIDs), bound(strings.Join(ids, ", "), 400))
	}
	out := make([]models.Evaluation, len(variantIDs))
	used := make([]bool, len(created))
	for i, id := range variantIDs {
		for j, ev := range created {
			if !used[j] && len(ev.VariantIDs) > 0 && ev.VariantIDs[0] == id {
				out[i], used[j] = ev, true
				break
			}
		}
	}
	for i := range out {
		if out[i].ID != "" {
			continue
		}
		for j := range created {
			if !used[j] {
				out[i], used[j] = created[j], true
				break
			}
		}
	}
	return out, nil
}
