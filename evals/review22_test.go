package evals_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// undetected is a service whose generation cannot be found out.
type undetected struct {
	scriptedService
	creates int
}

func (u *undetected) DetectGeneration(context.Context) error { return errors.New("probe failed: 503") }

func (u *undetected) CreateEvaluation(ctx context.Context, ev models.NewEvaluation) ([]models.Evaluation, error) {
	u.creates++
	return u.scriptedService.CreateEvaluation(ctx, ev)
}

// Evaluate sends provider keys to no server whose API it could not find
// out: a 2026 server takes none, and would get them in a 2024 create.
// Without keys, a failed detection still lets the create say what is wrong.
func TestEvaluateKeepsProviderKeysFromAnUnknownServer(t *testing.T) {
	svc := &undetected{scriptedService: *scripted(1, nil)}
	req := request
	req.LMProvidersKeys = models.NewProviderKeys(map[string]string{"OPENAI_API_KEY": "sk-provider-secret-1234567890"})
	_, err := evals.Evaluate(context.Background(), svc, req, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "probe failed")
	assert.Equal(t, 0, svc.creates, "no create was sent")

	_, err = evals.Evaluate(context.Background(), svc, request, "")
	require.NoError(t, err)
	assert.Equal(t, 1, svc.creates)
}
