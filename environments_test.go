package agenta_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On a self-hosted 0.19 server the lookup route is a 500 (a deleted
// db_manager function): GetVariantByEnvironment reads the app's
// environments, then the deployed variant, as the real server allows.
func TestGetVariantByEnvironmentOnBrokenLookup(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithBrokenEnvironmentLookup())
	demo := agentatest.SeedDemo(srv)
	c := clientFor(t, srv)
	ctx := context.Background()

	v, err := c.GetVariantByEnvironment(ctx, demo.AppID, "production")
	require.NoError(t, err)
	assert.Equal(t, demo.VariantID, v.VariantID)
	assert.Equal(t, "capitals.default", v.VariantName)
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Method+" "+r.Path)
	}
	assert.Equal(t, []string{
		"GET /api/apps/get_variant_by_env",
		"GET /api/apps/" + demo.AppID + "/environments/",
		"GET /api/variants/" + demo.VariantID,
	}, paths)

	v, err = c.GetVariantByEnvironment(ctx, demo.AppID, "staging")
	require.NoError(t, err)
	assert.Equal(t, demo.VerboseVariantID, v.VariantID)

	app := srv.AddApp(agentatest.App{Name: "undeployed"})
	_, err = c.GetVariantByEnvironment(ctx, app, "production")
	require.ErrorIs(t, err, agenta.ErrNotFound)
	assert.EqualError(t, err, "agenta: app "+app+` has no variant deployed to "production"`)

	_, err = c.GetVariantByEnvironment(ctx, demo.AppID, "prod")
	require.ErrorIs(t, err, agenta.ErrNotFound)
	assert.EqualError(t, err, "agenta: app "+demo.AppID+` has no environment "prod" (it has development, staging, production)`)

	// An unknown app: the listing's own 500, with the lookup's kept.
	_, err = c.GetVariantByEnvironment(ctx, "0190b5a2-0000-7000-8000-000000000000", "production")
	var apiErr *agenta.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "/api/apps/0190b5a2-0000-7000-8000-000000000000/environments/", apiErr.Path)
	assert.Contains(t, err.Error(), "'NoneType' object has no attribute 'uuid'")
	assert.Contains(t, err.Error(), "read after the lookup failed")
	assert.Contains(t, err.Error(), "get_app_variant_by_app_name_and_environment")
}

// Another 500 of the lookup is the server's answer: no second request.
func TestGetVariantByEnvironmentOtherServerErrorNotFallenBack(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	c := clientFor(t, srv)

	app := srv.AddApp(agentatest.App{Name: "undeployed"})
	_, err := c.GetVariantByEnvironment(context.Background(), app, "production")

	var apiErr *agenta.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
	assert.Equal(t, "App Variant not found", apiErr.Message)
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	assert.Len(t, srv.Requests(), 1)
}
