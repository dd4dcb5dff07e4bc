package agenta_test

import (
	"errors"
	"testing"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTestsetsAndEvaluators2026(t *testing.T) {
	c, _, demo := fake26(t)
	ctx := ctx26(t)
	ts, err := c.RetrieveTestsetRevision(ctx, models.TestsetRevisionRetrieve{TestsetRef: &models.Reference{Slug: "capitals"}})
	require.NoError(t, err)
	assert.Equal(t, demo.TestsetRevisionID, ts.ID)
	require.NotNil(t, ts.Data)
	assert.Equal(t, demo.TestcaseIDs, ts.Data.TestcaseIDs)
	require.Len(t, ts.Data.Testcases, 5)
	first := ts.Data.Testcases[0].Data
	assert.Equal(t, []string{"country", "correct_answer", "testcase_dedup_id"}, []string{first[0].Name, first[1].Name, first[2].Name}, "columns keep their order")
	dedup, _ := first.Text(models.TestcaseDedupKey)
	assert.Equal(t, "02bf8528dd9c", dedup, "the service's content hash, as a v0.113 server computes it")

	no := false
	bare, err := c.RetrieveTestsetRevision(ctx, models.TestsetRevisionRetrieve{TestsetRevisionRef: &models.Reference{ID: ts.ID}, IncludeTestcases: &no})
	require.NoError(t, err)
	assert.Empty(t, bare.Data.Testcases)
	assert.Len(t, bare.Data.TestcaseIDs, 5)
	_, err = c.RetrieveTestsetRevision(ctx, models.TestsetRevisionRetrieve{TestsetRef: &models.Reference{Slug: "nope"}})
	assert.True(t, errors.Is(err, agenta.ErrNotFound))

	tc, err := c.FetchTestcase(ctx, demo.TestcaseIDs[2])
	require.NoError(t, err)
	country, _ := tc.Data.Text("country")
	assert.Equal(t, "Italy", country)
	_, err = c.FetchTestcase(ctx, "0190b606-0000-7000-8000-000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))

	for _, q := range []models.TestcasesQuery{
		{TestcaseIDs: demo.TestcaseIDs, PageSize: 2},
		{TestcaseIDs: demo.TestcaseIDs, PageSize: 5}, // an exact last page, then an empty one
		{TestsetRevisionRef: &models.Reference{ID: ts.ID}, PageSize: 2},
		{TestsetRevisionRef: &models.Reference{ID: ts.ID}, PageSize: 5},
		{TestsetID: demo.TestsetID},
	} {
		got := collect(t, c.QueryTestcases(ctx, q))
		ids := make([]string, len(got))
		for i, tc := range got {
			ids[i] = tc.ID
		}
		assert.Equal(t, demo.TestcaseIDs, ids, "%+v", q)
	}
	_, err = collectErr(c.QueryTestcases(ctx, models.TestcasesQuery{}))
	requireArg(t, err, "TestcasesQuery")

	ev, err := c.RetrieveEvaluatorRevision(ctx, models.EvaluatorRevisionRetrieve{EvaluatorRef: &models.Reference{Slug: "exact-capital"}})
	require.NoError(t, err)
	assert.Equal(t, demo.EvaluatorRevisionID, ev.ID)
	assert.Equal(t, "auto_exact_match", ev.Key())
	assert.Equal(t, "correct_answer", ev.CorrectAnswerKey())
	_, err = c.RetrieveEvaluatorRevision(ctx, models.EvaluatorRevisionRetrieve{EvaluatorRef: &models.Reference{ID: demo.EvaluatorRevisionID}})
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "a revision id is no evaluator id")
}
