package agenta

import "net/http"

// notFoundAnswers are the service's answers that mean "not found" but come
// with status 500 (see the contract's README, "Variants" and "Create
// evaluation"). An *APIError of the operation with status 500 and exactly
// this Message matches ErrNotFound as well as ErrServer, so that a typo in an
// id does not page whoever alerts on ErrServer. The README's Errors section
// lists the same table; keep the two in step (TestNotFoundTableDocumented).
//
// Each text is matched only on its operation: "'id'" from another
// operation is no evidence of anything missing.
var notFoundAnswers = []struct {
	operation string // the Client method
	message   string // APIError.Message, exactly
	missing   string // what is missing, said in the error string
}{
	{"GetVariantByEnvironment", "App Variant not found", "the app, or a variant deployed to that environment"},
	{"GetVariant", "'NoneType' object has no attribute 'base_id'", "the variant"},
	{"AddVariantFromBase", "'NoneType' object has no attribute 'base_name'", "the base"},
	{"AddVariantFromBase", "'base_name'", "the base"},
	{"AddVariantFromBase", "Previous app variant not found", "a variant of the base to fork from"},
	// The real mid-2024 server reads an unknown variant's revision first
	// (../shared/realserver, create_unknown_variant).
	{"CreateEvaluation", "'NoneType' object has no attribute 'revision'", "the variant"},
	{"CreateEvaluation", "'NoneType' object has no attribute 'id'", "a variant or the test set"},
	{"CreateEvaluation", "'id'", "a variant or the test set"},
	{"FetchEvaluationStatus", "'NoneType' object has no attribute 'status'", "the evaluation"},
}

// notFoundAs500 returns what is missing when e is one of notFoundAnswers.
func (e *APIError) notFoundAs500() (missing string, ok bool) {
	if e.StatusCode != http.StatusInternalServerError || e.Operation == "" {
		return "", false
	}
	for _, a := range notFoundAnswers {
		if a.operation == e.Operation && a.message == e.Message {
			return a.missing, true
		}
	}
	return "", false
}
