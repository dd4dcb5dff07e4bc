package agenta

import (
	"context"

	"github.com/agenta-go/agenta/models"
)

// GetVariant returns an application variant by id. On a 2026 server (see
// DetectGeneration) it is the variant's latest revision, named
// "<application slug>.<variant slug>".
func (c *Client) GetVariant(ctx context.Context, variantID string) (*models.AppVariantResponse, error) {
	if _, err := segment("variantID", "variant_id", variantID); err != nil {
		return nil, err
	}
	return c.api().getVariant(ctx, variantID)
}

// GetVariantByEnvironment returns the variant of an app deployed to an
// environment such as models.EnvironmentProduction.
//
// The service answers 500 "App Variant not found" when nothing is deployed
// there; that error is not retried, since it is not transient.
//
// Self-hosted servers of mid-2024 (0.19) answer every call of this route
// with a 500 ("module 'agenta_backend.services.db_manager' has no attribute
// 'get_app_variant_by_app_name_and_environment'"): a server bug, the route
// calling a function that had been deleted. On that answer, and only on
// it, the method reads the app's environments (GET
// /apps/{app_id}/environments/) and then the variant deployed to the one
// named; an environment with nothing deployed, or one the app does not
// have, is ErrNotFound. agentatest serves the lookup as documented, or
// with that bug (agentatest.WithBrokenEnvironmentLookup). On a 2026 server (see DetectGeneration) it is the revision
// deployed to the environment for the application.
func (c *Client) GetVariantByEnvironment(ctx context.Context, appID, environment string) (*models.AppVariantResponse, error) {
	if err := required("appID", "app_id", appID); err != nil {
		return nil, err
	}
	if err := required("environment", "environment", environment); err != nil {
		return nil, err
	}
	return c.api().getVariantByEnvironment(ctx, appID, environment)
}

// AddVariantFromBase forks a new variant from an existing base with a new
// configuration, and returns it. The service names it
// "{base_name}.{new_config_name}"; a duplicate name is refused with a 500.
//
// On a 2026 server (see DetectGeneration) the base is an application (its
// default variant is forked) or a variant: the new variant, whose slug is
// NewConfigName, is forked from it, then its parameters are committed; a
// failure between the two leaves a variant with the base's parameters,
// which the error says.
//
// Adding is not idempotent: it is retried only on 429 or when the
// connection failed before anything was sent. After another failure once the request was
// sent, the variant may exist: check before adding it again.
func (c *Client) AddVariantFromBase(ctx context.Context, v models.AddVariantFromBase) (*models.AppVariantResponse, error) {
	if err := required("AddVariantFromBase.BaseID", "base_id", v.BaseID); err != nil {
		return nil, err
	}
	if err := required("AddVariantFromBase.NewVariantName", "new_variant_name", v.NewVariantName); err != nil {
		return nil, err
	}
	if err := required("AddVariantFromBase.NewConfigName", "new_config_name", v.NewConfigName); err != nil {
		return nil, err
	}
	return c.api().addVariantFromBase(ctx, v)
}
