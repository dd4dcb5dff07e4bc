package models

import (
	"encoding/json"
	"strings"
)

// EvaluatorRevisionRetrieve says which evaluator revision
// RetrieveEvaluatorRevision looks up: by revision id or slug, by variant,
// or the latest revision of an evaluator (by id or slug).
type EvaluatorRevisionRetrieve struct {
	EvaluatorRef         *Reference `json:"evaluator_ref,omitempty"`
	EvaluatorVariantRef  *Reference `json:"evaluator_variant_ref,omitempty"`
	EvaluatorRevisionRef *Reference `json:"evaluator_revision_ref,omitempty"`
}

// EvaluatorRevision is one saved configuration of an evaluator: the 2026
// counterpart of an EvaluatorConfig.
type EvaluatorRevision struct {
	ID                   string                 `json:"id"`
	Slug                 string                 `json:"slug,omitempty"`
	Version              string                 `json:"version,omitempty"`
	Name                 string                 `json:"name,omitempty"`
	Description          string                 `json:"description,omitempty"`
	Message              string                 `json:"message,omitempty"`
	Author               string                 `json:"author,omitempty"`
	Date                 *Timestamp             `json:"date,omitempty"`
	EvaluatorID          string                 `json:"evaluator_id,omitempty"`
	EvaluatorSlug        string                 `json:"evaluator_slug,omitempty"`
	EvaluatorVariantID   string                 `json:"evaluator_variant_id,omitempty"`
	EvaluatorVariantSlug string                 `json:"evaluator_variant_slug,omitempty"`
	Flags                Flags                  `json:"flags,omitempty"`
	Tags                 map[string]any         `json:"tags,omitempty"`
	Meta                 map[string]any         `json:"meta,omitempty"`
	Data                 *EvaluatorRevisionData `json:"data,omitempty"`
	CreatedAt            *Timestamp             `json:"created_at,omitempty"`
	UpdatedAt            *Timestamp             `json:"updated_at,omitempty"`
	CreatedByID          string                 `json:"created_by_id,omitempty"`
	UpdatedByID          string                 `json:"updated_by_id,omitempty"`
}

// EvaluatorRevisionData is what an evaluator revision runs and with which
// settings.
type EvaluatorRevisionData struct {
	// URI names a built-in, such as "agenta:builtin:auto_exact_match:v0".
	URI string `json:"uri,omitempty"`
	URL string `json:"url,omitempty"`
	// Schemas holds JSON Schemas: "parameters" (the settings) and
	// "outputs" (what each verdict holds, such as {success: boolean}).
	Schemas    map[string]json.RawMessage `json:"schemas,omitempty"`
	Parameters map[string]any             `json:"parameters,omitempty"`
}

// Key returns the built-in evaluator's key, such as "auto_exact_match", from
// Data.URI; "" for an evaluator that is not a built-in.
func (e EvaluatorRevision) Key() string {
	if e.Data == nil {
		return ""
	}
	rest, ok := strings.CutPrefix(e.Data.URI, "agenta:builtin:")
	if !ok {
		return ""
	}
	key, _, _ := strings.Cut(rest, ":")
	return key
}

// CorrectAnswerKey returns the test-set column the evaluator compares
// against: its correct_answer_key parameter, or the default its parameter
// schema declares for it ("correct_answer" for the built-ins that take
// one); "" when it takes none.
func (e EvaluatorRevision) CorrectAnswerKey() string {
	if e.Data == nil {
		return ""
	}
	if v, ok := e.Data.Parameters["correct_answer_key"].(string); ok && v != "" {
		return v
	}
	var schema struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	if raw, ok := e.Data.Schemas["parameters"]; ok && json.Unmarshal(raw, &schema) == nil {
		if d, ok := schema.Properties["correct_answer_key"].Default.(string); ok {
			return d
		}
	}
	return ""
}
