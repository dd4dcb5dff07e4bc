package agenta_test

import (
	"testing"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 28 case 7: on 2026, a create the server carried out whose answer
// was lost said the run "was not created", leaving it orphaned. The SDK
// finds the run by the tag it gave it, without sending the create again.
func TestCreateEvaluationAnswerLost2026(t *testing.T) {
	c, srv, demo := fake26(t, agentatest.WithManualEvaluations())
	req := models.NewEvaluation{AppID: demo.ApplicationID, VariantIDs: []string{demo.VariantID}, TestsetID: demo.TestsetID,
		EvaluatorConfigIDs: []string{demo.EvaluatorID}, RateLimit: models.DefaultRateLimit()}
	require.NoError(t, c.DetectGeneration(ctx26(t)))
	srv.InjectFault(agentatest.OpCreateSimpleEvaluation, 1, agentatest.Fault{CutAfter: 10, AfterHandling: true})

	created, err := c.CreateEvaluation(ctx26(t), req)

	require.NoError(t, err, "the run exists: it is found, not lost")
	require.Len(t, created, 1)
	assert.Len(t, srv.RequestsFor(agentatest.OpCreateSimpleEvaluation), 1, "the create is never sent twice")
	require.Len(t, srv.RequestsFor(agentatest.OpQueryRuns), 1)
	run, err := c.FetchRun(ctx26(t), created[0].ID)
	require.NoError(t, err)
	assert.Equal(t, created[0].ID, run.ID)
}

// When the lookup finds nothing (the server did not make the run, or
// cannot say), the error says the run may exist and how to find it, and
// the create was sent once.
func TestCreateEvaluationAnswerLostNotFound2026(t *testing.T) {
	c, srv, demo := fake26(t, agentatest.WithManualEvaluations())
	req := models.NewEvaluation{AppID: demo.ApplicationID, VariantIDs: []string{demo.VariantID}, TestsetID: demo.TestsetID,
		EvaluatorConfigIDs: []string{demo.EvaluatorID}, RateLimit: models.DefaultRateLimit()}
	require.NoError(t, c.DetectGeneration(ctx26(t)))
	srv.InjectFault(agentatest.OpCreateSimpleEvaluation, 1, agentatest.Fault{Drop: true})

	_, err := c.CreateEvaluation(ctx26(t), req)

	require.Error(t, err)
	assert.ErrorIs(t, err, agenta.ErrNoResponse)
	assert.Contains(t, err.Error(), "may have been created, though its answer was lost; it was not sent again")
	assert.Contains(t, err.Error(), `POST /api/evaluations/runs/query {"run":{"tags":{"agenta_go_create":`)
	assert.NotContains(t, err.Error(), "was not created")
	assert.Len(t, srv.RequestsFor(agentatest.OpCreateSimpleEvaluation), 1)
}
