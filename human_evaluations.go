package agenta

import (
	"context"
	"net/http"

	"github.com/agenta-go/agenta/models"
)

// ListHumanEvaluations returns the human evaluations of an app.
//
// The service describes app_id as an optional filter but its published
// contract requires it, so appID must not be empty.
func (c *Client) ListHumanEvaluations(ctx context.Context, appID string) ([]models.HumanEvaluation, error) {
	if err := required("appID", "app_id", appID); err != nil {
		return nil, err
	}
	return getList(ctx, c, &request{
		operation: "ListHumanEvaluations",
		method:    http.MethodGet,
		path:      "/human-evaluations",
		query:     humanEvaluationsQuery{AppID: appID},
	}, jsonList[models.HumanEvaluation])
}

type humanEvaluationsQuery struct {
	AppID string `url:"app_id"`
}
