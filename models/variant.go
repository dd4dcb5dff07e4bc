package models

import "encoding/json"

// Environments an application variant can be deployed to.
const (
	EnvironmentDevelopment = "development"
	EnvironmentStaging     = "staging"
	EnvironmentProduction  = "production"
)

// AppVariantResponse is an application variant: a named configuration
// (parameters) of a base, at a given revision.
type AppVariantResponse struct {
	AppID               string         `json:"app_id"`
	AppName             string         `json:"app_name"`
	VariantID           string         `json:"variant_id"`
	VariantName         string         `json:"variant_name"`
	Parameters          map[string]any `json:"parameters,omitempty"`
	PreviousVariantName string         `json:"previous_variant_name,omitempty"`
	UserID              string         `json:"user_id"`
	BaseName            string         `json:"base_name"`
	BaseID              string         `json:"base_id"`
	ConfigName          string         `json:"config_name"`
	URI                 string         `json:"uri,omitempty"`
	Revision            int            `json:"revision"`
	OrganizationID      string         `json:"organization_id,omitempty"`
	WorkspaceID         string         `json:"workspace_id,omitempty"`
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
