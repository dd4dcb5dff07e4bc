package models

import "encoding/json"

// Environments an application variant can be deployed to.
const (
	EnvironmentDevelopment = "development"
	EnvironmentStaging     = "staging"
	EnvironmentProduction  = "production"
)

// AppVariantResponse is an application variant: a named configuration
// (parameters) of a base, at a given revision. GetVariant,
// GetVariantByEnvironment and AddVariantFromBase return it.
type AppVariantResponse struct {
	// AppID is the id of the application the variant belongs to.
	AppID string `json:"app_id"`
	// AppName is that application's name, such as "capitals".
	AppName string `json:"app_name"`
	// VariantID is the variant's own id, the one GetVariant and
	// NewEvaluation.VariantIDs take.
	VariantID string `json:"variant_id"`
	// VariantName is "{BaseName}.{ConfigName}", such as "capitals.default".
	VariantName string `json:"variant_name"`
	// Parameters is the configuration at this revision: the prompt, the
	// model, the temperature… Its shape is the application's own. Servers
	// since May 2025 no longer send it, so it may be nil.
	Parameters map[string]any `json:"parameters,omitempty"`
	// PreviousVariantName is, on the cloud, the name of the variant this one
	// was forked from; self-hosted servers do not send it.
	PreviousVariantName string `json:"previous_variant_name,omitempty"`
	// UserID is the id of the variant's owner. Servers since September 2024
	// send project_id instead, and leave it empty.
	UserID string `json:"user_id"`
	// BaseName is the name of the base: the application code the variant
	// configures, shared by all its variants.
	BaseName string `json:"base_name"`
	// BaseID is the base's id, the one AddVariantFromBase forks from.
	BaseID string `json:"base_id"`
	// ConfigName is the configuration's name within the base, such as
	// "default": the part of VariantName after the dot.
	ConfigName string `json:"config_name"`
	// URI is where the application is served, when it is deployed.
	URI string `json:"uri,omitempty"`
	// Revision is the configuration's revision number: a variant made by
	// AddVariantFromBase starts at 1, and each saved change adds one.
	Revision int `json:"revision"`
	// OrganizationID is the cloud organization holding the variant;
	// self-hosted servers do not send it.
	OrganizationID string `json:"organization_id,omitempty"`
	// WorkspaceID is the cloud workspace holding the variant, sent by the
	// cloud only too.
	WorkspaceID string `json:"workspace_id,omitempty"`
}

// AddVariantFromBase is the request to fork a new variant from an existing
// base with a new configuration.
//
// The service names the new variant "{base_name}.{new_config_name}";
// NewVariantName is required by the service but not used for the name.
type AddVariantFromBase struct {
	BaseID         string `json:"base_id"`
	NewVariantName string `json:"new_variant_name"`
	NewConfigName  string `json:"new_config_name"`
	// Parameters is the new configuration. A nil map is sent as {}.
	Parameters map[string]any `json:"parameters"`
}

// MarshalJSON writes the request, sending nil Parameters as an empty object
// because the service requires an object there.
func (a AddVariantFromBase) MarshalJSON() ([]byte, error) {
	type wire AddVariantFromBase
	w := wire(a)
	if w.Parameters == nil {
		w.Parameters = map[string]any{}
	}
	return json.Marshal(w)
}

// AddVariantFromBasePayload is the OpenAPI name of AddVariantFromBase.
//
// Deprecated: Use AddVariantFromBase, the one name the SDK uses for this type.
type AddVariantFromBasePayload = AddVariantFromBase
