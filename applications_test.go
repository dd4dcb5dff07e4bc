package agenta_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplicationRevisions2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	byID, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRevisionRef: &models.Reference{ID: demo.RevisionID}})
	require.NoError(t, err)
	assert.Equal(t, "1", byID.Version)
	assert.Equal(t, demo.VariantID, byID.ApplicationVariantID)
	assert.Equal(t, "capitals", byID.ApplicationSlug)
	require.NotNil(t, byID.Data)
	assert.Equal(t, "What is the capital of {country}?", byID.Data.Parameters["prompt_template"])

	for name, q := range map[string]models.ApplicationRevisionRetrieve{
		"variant":  {ApplicationVariantRef: &models.Reference{ID: demo.VariantID}},
		"app id":   {ApplicationRef: &models.Reference{ID: demo.ApplicationID}},
		"app slug": {ApplicationRef: &models.Reference{Slug: "capitals"}},
		"version":  {ApplicationVariantRef: &models.Reference{ID: demo.VariantID}, ApplicationRevisionRef: &models.Reference{Version: "1"}},
	} {
		rev, err := c.RetrieveApplicationRevision(ctx, q)
		require.NoError(t, err, name)
		assert.Equal(t, demo.RevisionID, rev.ID, name)
	}

	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRevisionRef: &models.Reference{ID: demo.TestsetRevisionID}})
	var nf *agenta.NotFoundError
	require.True(t, errors.As(err, &nf), "a test-set revision id is no application revision: %v", err)
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	assert.Equal(t, "RetrieveApplicationRevision", nf.Operation)
	assert.JSONEq(t, `{"count":0}`, string(nf.Body))

	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRevisionRef: &models.Reference{Version: "1"}})
	assert.True(t, errors.Is(err, agenta.ErrBadRequest), "a version alone is a 400: %v", err)
	assert.Contains(t, err.Error(), "per-variant sequence number")

	n := len(srv.Requests())
	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{})
	requireArg(t, err, "ApplicationRevisionRetrieve")
	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRef: &models.Reference{}})
	requireArg(t, err, "ApplicationRevisionRetrieve.ApplicationRef")
	assert.Len(t, srv.Requests(), n, "refused before sending")

	got, err := c.FetchApplicationRevision(ctx, demo.RevisionID)
	require.NoError(t, err)
	assert.Equal(t, byID.Slug, got.Slug)
	_, err = c.FetchApplicationRevision(ctx, "0190b606-0000-7000-8000-000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	_, err = c.FetchApplicationRevision(ctx, "xyz")
	var verr *agenta.ValidationError
	require.True(t, errors.As(err, &verr), "a malformed id is a 422: %v", err)
	assert.Equal(t, "path.application_revision_id", verr.Details[0].Field())

	v, err := c.FetchApplicationVariant(ctx, demo.VariantID)
	require.NoError(t, err)
	assert.Equal(t, "capitals", v.Name)
	assert.Equal(t, demo.ApplicationID, v.ApplicationID)
	_, err = c.FetchApplicationVariant(ctx, demo.RevisionID)
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "a revision id is no variant id")
}

func TestEnvironments2026(t *testing.T) {
	c, _, demo := fake26(t)
	ctx := ctx26(t)
	byEnv := models.ApplicationRevisionRetrieve{EnvironmentRef: &models.Reference{Slug: models.EnvironmentProduction}, ApplicationRef: &models.Reference{Slug: "capitals"}}
	_, err := c.RetrieveApplicationRevision(ctx, byEnv)
	var apiErr *agenta.APIError
	require.True(t, errors.As(err, &apiErr), "nothing deployed is v0.113's 404: %v", err)
	assert.Equal(t, 404, apiErr.StatusCode)
	assert.True(t, errors.Is(err, agenta.ErrNotFound))

	_, err = c.DeployApplicationRevision(ctx, models.ApplicationRevisionDeploy{
		ApplicationRevisionRef: models.Reference{ID: demo.RevisionID}, EnvironmentRef: models.Reference{Slug: models.EnvironmentProduction}})
	require.NoError(t, err)
	for _, q := range []models.ApplicationRevisionRetrieve{
		byEnv,
		{EnvironmentRef: &models.Reference{Slug: "production"}, Key: "capitals.revision"},
		{EnvironmentRef: &models.Reference{Slug: "production"}, ApplicationRef: &models.Reference{ID: demo.ApplicationID}},
	} {
		rev, err := c.RetrieveApplicationRevision(ctx, q)
		require.NoError(t, err)
		assert.Equal(t, demo.RevisionID, rev.ID)
	}
	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{EnvironmentRef: &models.Reference{Slug: "staging"}, ApplicationRef: &models.Reference{Slug: "capitals"}})
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{EnvironmentRef: &models.Reference{Slug: "production"}})
	assert.True(t, errors.Is(err, agenta.ErrBadRequest), "an environment without a key: %v", err)
	_, err = c.DeployApplicationRevision(ctx, models.ApplicationRevisionDeploy{
		ApplicationRevisionRef: models.Reference{ID: demo.RevisionID}, EnvironmentRef: models.Reference{Slug: "nope"}})
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "got %v", err)
}

func TestForkAndCommit2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	fork, err := c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{
		ApplicationVariantRef: models.Reference{ID: demo.VariantID},
		ApplicationVariant:    models.NewApplicationVariant{Slug: "capitals-cold", Description: "colder"}})
	require.NoError(t, err)
	assert.Equal(t, "capitals-cold", fork.Slug)
	assert.Equal(t, "capitals-cold", fork.Name, "the name defaults to the slug")

	latest, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: fork.ID}})
	require.NoError(t, err)
	assert.Equal(t, "1", latest.Version, "the fork keeps the source's numbering")
	assert.True(t, strings.HasSuffix(latest.Slug, "_"+strings.ReplaceAll(fork.ID, "-", "")), "a copied revision's slug: %s", latest.Slug)

	data := *latest.Data
	data.Parameters = map[string]any{"prompt_template": "Capital of {country}?", "temperature": 0.2}
	v2, err := c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, Message: "full data", Data: &data})
	require.NoError(t, err)
	assert.Equal(t, "2", v2.Version)
	assert.Equal(t, "full data", v2.Message)
	assert.Equal(t, demo.ApplicationID, v2.ApplicationID)

	v3, err := c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID,
		Delta: &models.RevisionDelta{Set: map[string]any{"parameters": map[string]any{"temperature": 0.9, "extra": map[string]any{"a": 1}}}}})
	require.NoError(t, err)
	assert.Equal(t, "3", v3.Version)
	assert.Equal(t, "Capital of {country}?", v3.Data.Parameters["prompt_template"], "a delta merges")
	assert.EqualValues(t, 0.9, v3.Data.Parameters["temperature"])
	assert.Equal(t, "http://127.0.0.1:19080", v3.Data.URL, "the rest of the data is kept")

	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, BaseRevisionID: v2.ID,
		Delta: &models.RevisionDelta{Remove: []string{"parameters.extra"}}})
	assert.True(t, errors.Is(err, agenta.ErrServer), "a stale base is v0.113's 500: %v", err)
	var apiErr *agenta.APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Contains(t, string(apiErr.Body), `"operation_id":"commit_application_revision"`)

	v4, err := c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, BaseRevisionID: v3.ID,
		Delta: &models.RevisionDelta{Remove: []string{"parameters.extra"}}})
	require.NoError(t, err)
	assert.Equal(t, "4", v4.Version)
	assert.NotContains(t, v4.Data.Parameters, "extra")

	// A fork at revision 2 copies the history up to it.
	atTwo, err := c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: fork.ID},
		ApplicationRevisionRef: &models.Reference{ID: v2.ID}, ApplicationVariant: models.NewApplicationVariant{Slug: "capitals-two"}})
	require.NoError(t, err)
	rev, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: atTwo.ID}})
	require.NoError(t, err)
	assert.Equal(t, "2", rev.Version)
	assert.Equal(t, "full data", rev.Message)

	_, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: demo.VariantID},
		ApplicationVariant: models.NewApplicationVariant{Slug: "capitals-cold"}})
	var nc *agenta.NotCreatedError
	require.True(t, errors.As(err, &nc), "a taken slug is {\"count\":0}: %v", err)
	assert.True(t, errors.Is(err, agenta.ErrNotCreated))
	assert.Contains(t, err.Error(), "could not create the variant capitals-cold")
	_, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: "0190b606-0000-7000-8000-000000000000"},
		ApplicationVariant: models.NewApplicationVariant{Slug: "x"}})
	assert.True(t, errors.Is(err, agenta.ErrBadRequest))
	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: "0190b606-0000-7000-8000-000000000000", Data: &data})
	assert.True(t, errors.Is(err, agenta.ErrNotCreated), "an unknown variant is {\"count\":0}: %v", err)

	n := len(srv.Requests())
	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID})
	requireArg(t, err, "ApplicationRevisionCommit.Data")
	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, Data: &data, Delta: &models.RevisionDelta{}})
	requireArg(t, err, "ApplicationRevisionCommit.Delta")
	_, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: demo.VariantID}})
	requireArg(t, err, "ApplicationVariantFork.ApplicationVariant.Slug")
	assert.Len(t, srv.Requests(), n, "refused before sending")

	// A create is sent once: a fork the server failed to answer is not repeated.
	srv.InjectFault(agentatest.OpForkApplicationVariant, 1, agentatest.Fault{Status: 503})
	before := len(srv.RequestsFor(agentatest.OpForkApplicationVariant))
	_, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: demo.VariantID},
		ApplicationVariant: models.NewApplicationVariant{Slug: "once"}})
	assert.True(t, errors.Is(err, agenta.ErrServer))
	assert.Len(t, srv.RequestsFor(agentatest.OpForkApplicationVariant), before+1, "a 503 on a fork is not retried")
}
