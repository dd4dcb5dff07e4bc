package agenta

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/agenta-go/agenta/models"
)

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
