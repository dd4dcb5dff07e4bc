package agenta

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agenta-go/agenta/models"
)

// createTag is the tag CreateEvaluation gives each run it creates on a
// 2026 server, with a value of its own: a create whose answer was lost can
// then be found by it, never sent again.
const createTag = "agenta_go_create"

// newCreateToken returns the value of createTag for one create.
func newCreateToken() string { return rand.Text() }

// findLostRun bounds the lookup of a run whose create answer was lost: it
// runs even when ctx has ended, since the run may be running.
const findLostRun = 10 * time.Second

// answerLost reports whether err may hide a create the server carried
// out: the request went out and no answer said what became of it (the
// connection broke, an attempt or the context timed out, a gateway
// answered in the server's place).
func answerLost(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode == http.StatusBadGateway || apiErr.StatusCode == http.StatusGatewayTimeout ||
			apiErr.StatusCode == http.StatusServiceUnavailable && len(apiErr.Body) == 0
	}
	return errors.Is(err, ErrAnswerCut) || errors.Is(err, ErrNoResponse) || errors.Is(err, ErrAttemptTimeout) ||
		errors.Is(err, ErrIdleTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// runQueryAnswer is POST /evaluations/runs/query's answer.
type runQueryAnswer struct {
	Count int                    `json:"count"`
	Runs  []models.EvaluationRun `json:"runs"`
}

// findCreatedRun looks up the run whose createTag is token: the run a
// create made though its answer was lost. It returns nil when there is
// none.
func (c *Client) findCreatedRun(ctx context.Context, token string) (*models.EvaluationRun, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), findLostRun)
	defer cancel()
	a, err := getOne[runQueryAnswer](ctx, c, &request{operation: "CreateEvaluation", method: http.MethodPost,
		path: "/evaluations/runs/query", body: map[string]any{"run": map[string]any{"tags": map[string]string{createTag: token}}}, read: true})
	if err != nil || len(a.Runs) == 0 {
		return nil, err
	}
	return &a.Runs[0], nil
}

// lostCreateError is a create whose answer was lost: the run may exist,
// and the error says how to find it.
func lostCreateError(token string, err error) error {
	return fmt.Errorf("the run may have been created, though its answer was lost; it was not sent again: find it with POST /api/evaluations/runs/query {\"run\":{\"tags\":{%q:%q}}}: %w", createTag, token, err)
}
