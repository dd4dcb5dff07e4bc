package models

// Human evaluation types the service is known to send.
const (
	HumanEvaluationABTesting       = "human_a_b_testing"
	HumanEvaluationSingleModelTest = "single_model_test"
)

// HumanEvaluation is an evaluation scored by people rather than evaluators,
// in the service's web UI. ListHumanEvaluations returns them; the SDK can
// read them but not score them.
type HumanEvaluation struct {
	// ID is the human evaluation's id.
	ID string `json:"id"`
	// AppID is the application whose variants are compared.
	AppID string `json:"app_id"`
	// UserID is who created the evaluation. Servers since September 2024
	// send project_id instead, and leave it empty.
	UserID string `json:"user_id"`
	// UserUsername is that user's username.
	UserUsername string `json:"user_username"`
	// EvaluationType is HumanEvaluationABTesting (two variants side by side)
	// or HumanEvaluationSingleModelTest (one variant, rated alone).
	EvaluationType string `json:"evaluation_type"`
	// VariantIDs are the variants compared: two for an A/B test, one for a
	// single model test.
	VariantIDs []string `json:"variant_ids"`
	// VariantNames are their names, at the same index.
	VariantNames []string `json:"variant_names"`
	// VariantsRevisionIDs are the ids of the revisions compared, at the same
	// index; it keeps the service's spelling, variants_revision_ids.
	VariantsRevisionIDs []string `json:"variants_revision_ids"`
	// Revisions are those revisions' numbers as strings, for people to
	// read. The service writes " None" (with its leading space) for a
	// variant that had no revision.
	Revisions []string `json:"revisions"`
	// TestsetID is the test set whose rows people score.
	TestsetID string `json:"testset_id"`
	// TestsetName is that test set's name.
	TestsetName string `json:"testset_name"`
	// Status is a free string holding one of the Evaluation… status values,
	// such as EvaluationStarted or EvaluationFinished.
	Status string `json:"status"`
	// CreatedAt is when the evaluation was created. The service writes
	// Python's str(datetime), "2024-07-15 10:52:51.123456+00:00", which
	// Timestamp reads.
	CreatedAt Timestamp `json:"created_at"`
	// UpdatedAt is when it last changed.
	UpdatedAt Timestamp `json:"updated_at"`
}
