package agenta

import (
	"testing"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
)

// Each 2026 run status as the 2024 status evals and the command read.
func TestStatusOfRun(t *testing.T) {
	for _, tc := range []struct {
		run     models.RunStatus
		want    models.EvaluationStatus
		message string
	}{
		{models.RunPending, models.EvaluationInitialized, ""},
		{models.RunQueued, models.EvaluationInitialized, ""},
		{models.RunRunning, models.EvaluationStarted, ""},
		{models.RunSuccess, models.EvaluationFinished, ""},
		{models.RunErrors, models.EvaluationFinishedWithErrors, ""},
		{models.RunFailure, models.EvaluationFailed, "could not execute"},
		{models.RunCancelled, models.EvaluationFailed, "cancelled"},
		{"paused", "paused", ""},
	} {
		got := statusOfRun(tc.run)
		assert.Equal(t, models.ResultTypeStatus, got.Type)
		assert.Equal(t, tc.want, got.EvaluationStatus(), "%s", tc.run)
		assert.Equal(t, tc.want.Terminal(), tc.run.Terminal(), "%s ends a wait on both or on neither", tc.run)
		if tc.message == "" {
			assert.Nil(t, got.Error, "%s", tc.run)
		} else if assert.NotNil(t, got.Error, "%s", tc.run) {
			assert.Contains(t, got.Error.Message, tc.message)
		}
	}
}

// The 2024 rate limit as a 2026 run's concurrency: attempts become
// retries; the pause between batches has no counterpart.
func TestRunConcurrency(t *testing.T) {
	c := runConcurrency(models.RateLimit{BatchSize: 5, MaxRetries: 1, RetryDelay: 2, DelayBetweenBatches: 9})
	assert.Equal(t, 5, *c.BatchSize)
	assert.Equal(t, 0, *c.MaxRetries, "one attempt is no retry")
	assert.Equal(t, 2.0, *c.RetryDelay)
}
