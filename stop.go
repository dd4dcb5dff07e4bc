package agenta

import (
	"context"
	"errors"
	"fmt"
)

// ErrCannotStop matches StopEvaluation on a server that has no route to
// stop a run: the mid-2024 service (its DELETE /evaluations/ deletes the
// records while its worker runs on). errors.Is(err, errors.ErrUnsupported)
// holds too.
var ErrCannotStop = fmt.Errorf("agenta: this server (mid-2024) has no route to stop an evaluation: it runs to its end: %w", errors.ErrUnsupported)

// StopEvaluation asks the server to stop an evaluation it is running, so
// that *Client is an evals.Stopper: evals.Evaluate then stops the runs it
// gives up on (its ctx ended, another run failed).
//
// On a 2026 server (see DetectGeneration) it is StopSimpleEvaluation: the
// run is marked inactive, and on v0.113 that is all: rows already
// dispatched to the worker are still run. On a mid-2024 server it sends
// nothing and returns ErrCannotStop.
func (c *Client) StopEvaluation(ctx context.Context, evaluationID string) error {
	if _, err := segment("evaluationID", "evaluation_id", evaluationID); err != nil {
		return err
	}
	return c.api().stopEvaluation(ctx, evaluationID)
}
