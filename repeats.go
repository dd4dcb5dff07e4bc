package agenta

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// createRepeats is CreateEvaluation with repeats on a mid-2024 server,
// which has none: the create is sent once per repeat, each request once,
// and the answers are joined, repeat after repeat. A create that fails
// after the first ends the loop, and the evaluations created before it are
// returned with an error that names them, since they are running.
func (c api2024) createRepeats(ctx context.Context, body newEvaluationBody) ([]models.Evaluation, error) {
	repeats, variants := body.Repeats, len(body.VariantIDs)
	created := make([]models.Evaluation, 0, repeats*variants)
	for r := range repeats {
		err := ctx.Err()
		var got []models.Evaluation
		if err == nil {
			got, err = c.createOnce(ctx, body)
		}
		what := "was not created"
		switch {
		case err != nil && answerLost(err):
			what = "may have been created, though its answer was lost (it was not sent again)"
		case err == nil && len(got) != variants:
			// Created, but not in the shape the repeats are read in.
			created = append(created, got...)
			what, err = "was created", fmt.Errorf("the service answered %d evaluations for %d variants", len(got), variants)
		}
		if err != nil {
			if len(created) == 0 {
				return nil, err
			}
			ids := make([]string, len(created))
			for j, e := range created {
				ids[j] = e.ID
			}
			return created, fmt.Errorf("agenta: CreateEvaluation: repeat %d of %d %s; these evaluations were created and run: %s: %w",
				r+1, repeats, what, c.text(strings.Join(ids, ", "), 8*maxMessage), err)
		}
		created = append(created, got...)
	}
	return created, nil
}
