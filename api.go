package agenta

import (
	"context"
	"iter"

	"github.com/agenta-go/agenta/models"
)

// generationAPI is the seam between the Client's methods and the API
// generations: each operation whose requests differ between a mid-2024
// server and a 2026 one, implemented once per generation (api2024 in
// gen2024.go, api2026 in gen2026.go), with the facts of its routes. The
// Client's methods check their arguments and call api(), the one place
// that asks which API the server speaks. A third generation is a third
// implementation of this interface and a case in apiOf (docs/design.md,
// "Adding a generation").
type generationAPI interface {
	createEvaluation(ctx context.Context, ev models.NewEvaluation) ([]models.Evaluation, error)
	fetchEvaluation(ctx context.Context, evaluationID string) (*models.Evaluation, error)
	fetchEvaluationStatus(ctx context.Context, evaluationID string) (*models.Result, error)
	fetchEvaluationScenarios(ctx context.Context, evaluationID string) ([]models.EvaluationScenario, error)
	streamEvaluationScenarios(ctx context.Context, evaluationID string) iter.Seq2[models.EvaluationScenario, error]
	waitEvaluation(ctx context.Context, evaluationID string, opts *WaitOptions) (*models.Evaluation, error)
	stopEvaluation(ctx context.Context, evaluationID string) error
	getVariant(ctx context.Context, variantID string) (*models.AppVariantResponse, error)
	getVariantByEnvironment(ctx context.Context, appID, environment string) (*models.AppVariantResponse, error)
	addVariantFromBase(ctx context.Context, v models.AddVariantFromBase) (*models.AppVariantResponse, error)
	preflight(ctx context.Context, req models.PreflightRequest, report *models.PreflightReport) (*preflightFacts, error)
}

// api returns the API the Client knows its server speaks, without asking
// it: the 2024 one until it knows (see DetectGeneration).
func (c *Client) api() generationAPI { return c.apiOf(c.knownGeneration()) }

// apiOf returns the implementation of generation g; GenerationUnknown is
// the 2024 API, which a Client speaks until it knows.
func (c *Client) apiOf(g Generation) generationAPI {
	if g == Generation2026 {
		return api2026{c}
	}
	return api2024{c}
}
