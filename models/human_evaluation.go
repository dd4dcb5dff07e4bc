package models

// Human evaluation types the service is known to send.
const (
	HumanEvaluationABTesting       = "human_a_b_testing"
	HumanEvaluationSingleModelTest = "single_model_test"
)

// HumanEvaluation is an evaluation scored by people rather than evaluators.
type HumanEvaluation struct {
	ID             string   `json:"id"`
	AppID          string   `json:"app_id"`
	UserID         string   `json:"user_id"`
	UserUsername   string   `json:"user_username"`
	EvaluationType string   `json:"evaluation_type"`
	VariantIDs     []string `json:"variant_ids"`
	VariantNames   []string `json:"variant_names"`
	// VariantsRevisionIDs keeps the service's spelling, variants_revision_ids.
	VariantsRevisionIDs []string  `json:"variants_revision_ids"`
	Revisions           []string  `json:"revisions"`
	TestsetID           string    `json:"testset_id"`
	TestsetName         string    `json:"testset_name"`
	Status              string    `json:"status"`
	CreatedAt           Timestamp `json:"created_at"`
	UpdatedAt           Timestamp `json:"updated_at"`
}
