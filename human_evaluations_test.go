package agenta

import (
	"context"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const realHumanEvaluationsBody = `[
  {
    "id": "he-1", "app_id": "app-1", "user_id": "u-1", "user_username": "ada",
    "evaluation_type": "human_a_b_testing",
    "variant_ids": ["var-1", "var-2"], "variant_names": ["app.default", "app.fork"],
    "variants_revision_ids": ["rev-1", "rev-2"], "revisions": ["3", "1"],
    "testset_id": "ts-1", "testset_name": "capitals",
    "status": "EVALUATION_FINISHED",
    "created_at": "2024-06-26T12:22:31.775000", "updated_at": "2024-06-26T12:25:00+00:00"
  },
  {
    "id": "he-2", "app_id": "app-1", "user_id": "u-2", "user_username": "grace",
    "evaluation_type": "rlhf_ranking",
    "variant_ids": ["var-1"], "variant_names": ["app.default"],
    "variants_revision_ids": null, "revisions": [],
    "testset_id": "ts-2", "testset_name": null,
    "status": "EVALUATION_PAUSED_FOR_REVIEW",
    "created_at": "2024-06-26T12:22:31", "updated_at": "2024-06-26T12:22:31.123456789Z",
    "workspace_id": "ws-1"
  }
]`

func TestListHumanEvaluations(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/human-evaluations", "app_id=app-1").replyJSON(200, realHumanEvaluationsBody)

	got, err := c.ListHumanEvaluations(context.Background(), "app-1")

	require.NoError(t, err)
	assertAllSent(t)
	require.Len(t, got, 2)
	h := got[0]
	assert.Equal(t, "he-1", h.ID)
	assert.Equal(t, models.HumanEvaluationABTesting, h.EvaluationType)
	assert.Equal(t, []string{"rev-1", "rev-2"}, h.VariantsRevisionIDs)
	assert.Equal(t, []string{"3", "1"}, h.Revisions)
	assert.Equal(t, models.EvaluationFinished, h.Status)
	assert.True(t, h.CreatedAt.Equal(time.Date(2024, 6, 26, 12, 22, 31, 775000000, time.UTC)), "got %s", h.CreatedAt)
	assert.True(t, h.UpdatedAt.Equal(time.Date(2024, 6, 26, 12, 25, 0, 0, time.UTC)), "got %s", h.UpdatedAt)

	h = got[1]
	assert.Equal(t, "rlhf_ranking", h.EvaluationType, "an unknown type is kept")
	assert.Equal(t, "EVALUATION_PAUSED_FOR_REVIEW", h.Status, "an unknown status is kept")
	assert.Nil(t, h.VariantsRevisionIDs)
	assert.Equal(t, "", h.TestsetName)
	assert.Equal(t, 123456789, h.UpdatedAt.Nanosecond())
}

func TestListHumanEvaluationsEmpty(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/human-evaluations", "app_id=app+with+spaces").replyJSON(200, `[]`)

	got, err := c.ListHumanEvaluations(context.Background(), "app with spaces")

	require.NoError(t, err)
	assert.NotNil(t, got)
	assert.Empty(t, got)
	assertAllSent(t)
}
