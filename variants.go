package agenta

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"

	"github.com/agenta-go/agenta/models"
)

// GetVariant returns an application variant by id. On a 2026 server (see
// DetectGeneration) it is the variant's latest revision, named
// "<application slug>.<variant slug>".
func (c *Client) GetVariant(ctx context.Context, variantID string) (*models.AppVariantResponse, error) {
	id, err := segment("variantID", "variant_id", variantID)
	if err != nil {
		return nil, err
	}
	if c.speaks2026() {
		return c.getVariant2026(ctx, variantID)
	}
	return getOne[models.AppVariantResponse](ctx, c, &request{operation: "GetVariant", method: http.MethodGet, path: "/variants/" + id})
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
	if c.speaks2026() {
		return c.getVariantByEnvironment2026(ctx, appID, environment)
	}
	v, err := getOne[models.AppVariantResponse](ctx, c, &request{
		operation: "GetVariantByEnvironment",
		method:    http.MethodGet,
		path:      "/apps/get_variant_by_env",
		query:     variantByEnvQuery{AppID: appID, Environment: environment},
	})
	if lookupBroken(err) {
		return c.variantByEnvironmentListed(ctx, appID, environment, err)
	}
	return v, err
}

type variantByEnvQuery struct {
	AppID       string `url:"app_id"`
	Environment string `url:"environment"`
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
	if c.speaks2026() {
		return c.addVariantFromBase2026(ctx, v)
	}
	return getOne[models.AppVariantResponse](ctx, c, &request{operation: "AddVariantFromBase", method: http.MethodPost, path: "/variants/from-base", body: v})
}

// The 2024 variant operations on a 2026 server, once the Client knows it
// speaks the 2026 API (see DetectGeneration). A 2026 application has no
// base: its variants are forked from one another, and a variant's
// configuration is its latest revision's data. docs/2026.md has the
// mapping.

// getVariant2026 is GetVariant on a 2026 server: the variant's latest
// revision (one request).
func (c *Client) getVariant2026(ctx context.Context, variantID string) (*models.AppVariantResponse, error) {
	rev, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: variantID}})
	if err != nil {
		return nil, err
	}
	return variantOfRevision(rev), nil
}

// getVariantByEnvironment2026 is GetVariantByEnvironment on a 2026 server:
// the revision deployed to the environment for the application.
func (c *Client) getVariantByEnvironment2026(ctx context.Context, appID, environment string) (*models.AppVariantResponse, error) {
	rev, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{
		EnvironmentRef: &models.Reference{Slug: environment}, ApplicationRef: &models.Reference{ID: appID}})
	if err != nil {
		return nil, err
	}
	return variantOfRevision(rev), nil
}

// addVariantFromBase2026 is AddVariantFromBase on a 2026 server, in two
// requests: a fork of the base (an application's id forks its default
// variant, a variant's id that variant) onto the slug NewConfigName, then
// a commit of the fork's data with exactly v.Parameters as its parameters,
// as a 2024 server sets them.
func (c *Client) addVariantFromBase2026(ctx context.Context, v models.AddVariantFromBase) (*models.AppVariantResponse, error) {
	base, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: v.BaseID}})
	if errors.Is(err, ErrNotFound) {
		base, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRef: &models.Reference{ID: v.BaseID}})
	}
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("agenta: AddVariantFromBase: BaseID %s is neither an application nor an application variant on this 2026 server: %w",
			c.text(v.BaseID, maxMessage), err)
	}
	if err != nil {
		return nil, err
	}
	fork, err := c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{
		ApplicationVariantRef:  models.Reference{ID: base.ApplicationVariantID},
		ApplicationRevisionRef: &models.Reference{ID: base.ID},
		ApplicationVariant:     models.NewApplicationVariant{Slug: v.NewConfigName, Name: v.NewVariantName},
	})
	if err != nil {
		return nil, err
	}
	data := models.ApplicationRevisionData{}
	if base.Data != nil {
		data = *base.Data
	}
	data.Parameters = maps.Clone(v.Parameters)
	rev, err := c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{
		ApplicationVariantID: fork.ID, Message: "AddVariantFromBase (agenta-go): new parameters", Data: &data})
	if err != nil {
		return nil, fmt.Errorf("agenta: AddVariantFromBase: variant %s was forked, but its new parameters were not committed, so it has those of the base: %w",
			c.text(fork.ID, maxMessage), err)
	}
	return variantOfRevision(rev), nil
}

// variantOfRevision is an application revision in the shape of a 2024
// variant: the application is its own base, and the variant's slug its
// configuration's name.
func variantOfRevision(rev *models.ApplicationRevision) *models.AppVariantResponse {
	out := &models.AppVariantResponse{
		AppID: rev.ApplicationID, AppName: rev.ApplicationSlug,
		VariantID:   rev.ApplicationVariantID,
		VariantName: variantName(rev.ApplicationSlug, rev.ApplicationVariantSlug),
		BaseName:    rev.ApplicationSlug, BaseID: rev.ApplicationID,
		ConfigName: rev.ApplicationVariantSlug,
	}
	out.Revision, _ = strconv.Atoi(rev.Version)
	if rev.Data != nil {
		out.Parameters, out.URI = rev.Data.Parameters, rev.Data.URL
	}
	return out
}
