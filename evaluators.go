package agenta

import (
	"context"
	"net/http"

	"github.com/agenta-go/agenta/models"
)

// RetrieveEvaluatorRevision finds an evaluator revision, the 2026
// counterpart of an evaluator config: by revision id or slug, by variant,
// or the latest revision of an evaluator by id or slug. The evaluation
// routes take the revision's ID. No match is a *NotFoundError
// (ErrNotFound).
func (c *Client) RetrieveEvaluatorRevision(ctx context.Context, q models.EvaluatorRevisionRetrieve) (*models.EvaluatorRevision, error) {
	refs := []namedRef{
		{"EvaluatorRef", "evaluator_ref", q.EvaluatorRef}, {"EvaluatorVariantRef", "evaluator_variant_ref", q.EvaluatorVariantRef},
		{"EvaluatorRevisionRef", "evaluator_revision_ref", q.EvaluatorRevisionRef},
	}
	if err := checkRefs("EvaluatorRevisionRetrieve", refs, false); err != nil {
		return nil, err
	}
	a, err := lookup[evaluatorRevisionAnswer](ctx, c, &request{operation: "RetrieveEvaluatorRevision",
		method: http.MethodPost, path: "/evaluators/revisions/retrieve", body: q, read: true},
		"evaluator revision matching "+describe(q))
	if err != nil {
		return nil, err
	}
	return a.Revision, nil
}

type evaluatorRevisionAnswer struct {
	Count    *int                      `json:"count,omitempty"`
	Revision *models.EvaluatorRevision `json:"evaluator_revision,omitempty"`
}

func (a *evaluatorRevisionAnswer) member() (*int, bool) { return a.Count, a.Revision != nil }
