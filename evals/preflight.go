package evals

import (
	"context"

	"github.com/agenta-go/agenta/models"
)

// preflighter is a Service that checks an evaluation before creating it,
// such as *agenta.Client (see its Preflight): a wrong id or a test set
// without a column the app or an evaluator reads then ends Evaluate
// before anything is created, with the Service's error.
type preflighter interface {
	Preflight(ctx context.Context, req models.PreflightRequest) (*models.PreflightReport, error)
}
