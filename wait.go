package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agenta-go/agenta/models"
)

// DefaultWaitInterval is the pause between status reads of WaitEvaluation
// when WaitOptions.Interval is 0: the service's own web page polls every 2 s.
const DefaultWaitInterval = 2 * time.Second

// WaitOptions tunes WaitEvaluation. The zero value, like a nil pointer,
// polls every 2 s and reports nothing.
type WaitOptions struct {
	// Interval between status reads; 0 means the service's own web page's 2 s.
	Interval time.Duration
	// OnStatus, if set, is called with the first status read and again
	// each time the status value changes, on the waiting goroutine, for
	// example to print a progress line. It must not block for long: the
	// next read waits for it.
	OnStatus func(status models.Result)
}

// WaitEvaluation waits until an evaluation's run is over and returns the
// evaluation as FetchEvaluation reads it then, aggregated results included.
//
// It reads the status every opts.Interval (a read is about 100 bytes), never
// the scenario list, and stops at a terminal status: EVALUATION_FINISHED,
// EVALUATION_FINISHED_WITH_ERRORS, EVALUATION_FAILED or
// EVALUATION_AGGREGATION_FAILED. A status value it does not know does not
// end the wait. A run that FAILED or AGGREGATION_FAILED returns the
// evaluation and an *EvaluationFailedError, which matches
// ErrEvaluationFailed and carries the service's message and the cause, the
// last line of its stack trace (such as "KeyError: 'country'"); a run finished with
// errors is finished and returns no error.
//
// Bound the wait with ctx: when ctx ends first, the error is a *WaitError
// that wraps ctx.Err() and names the last status seen and how long it held.
// A run that stays EVALUATION_INITIALIZED usually means no worker is
// running on the server. Each status read is retried like every GET (a 503,
// a dropped connection); an error the retries do not cure (a 500, a 401,
// a 503 that outlasts them) ends the wait and is returned as it is. opts
// may be nil.
func (c *Client) WaitEvaluation(ctx context.Context, evaluationID string, opts *WaitOptions) (*models.Evaluation, error) {
	if _, err := segment("evaluationID", "evaluation_id", evaluationID); err != nil {
		return nil, err
	}
	interval := DefaultWaitInterval
	var onStatus func(models.Result)
	if opts != nil {
		if opts.Interval < 0 {
			return nil, invalid("WaitOptions.Interval", "must not be negative, got %v", opts.Interval)
		}
		if opts.Interval > 0 {
			interval = opts.Interval
		}
		onStatus = opts.OnStatus
	}
	if ctx == nil {
		return nil, invalid("ctx", "is nil")
	}

	var (
		last  models.EvaluationStatus
		since time.Time
		seen  bool
		timer *time.Timer
	)
	ended := func() error {
		held := time.Duration(0)
		if seen {
			held = time.Since(since)
		}
		// The status is the server's text: a value the SDK does not know
		// may echo a credential.
		status := models.EvaluationStatus(c.text(string(last), maxMessage))
		return &WaitError{EvaluationID: evaluationID, Status: status, Held: held, Err: ctx.Err()}
	}
	var final models.Result
	for {
		status, err := c.FetchEvaluationStatus(ctx, evaluationID)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ended()
			}
			return nil, err
		}
		value := status.EvaluationStatus()
		if !seen || value != last {
			last, since, seen = value, time.Now(), true
			if onStatus != nil {
				onStatus(*status)
			}
		}
		if value.Terminal() {
			final = *status
			break
		}
		if timer == nil {
			timer = time.NewTimer(interval)
			defer timer.Stop()
		} else {
			timer.Reset(interval)
		}
		select {
		case <-ctx.Done():
			return nil, ended()
		case <-timer.C:
		}
	}

	ev, err := c.FetchEvaluation(ctx, evaluationID)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ended()
		}
		return nil, err
	}
	// The evaluation is read after the status, so its status is the newer
	// one, unless it says nothing terminal.
	result := ev.Status
	if !result.EvaluationStatus().Terminal() {
		result = final
	}
	if result.EvaluationStatus().Failed() {
		failure := &EvaluationFailedError{EvaluationID: evaluationID, Status: result.EvaluationStatus()}
		for _, r := range []models.Result{result, final} {
			if r.Error != nil && r.Error.Message != "" && failure.Message == "" {
				failure.Message = c.text(r.Error.Message, maxMessage)
			}
			if r.Error != nil && r.Error.Cause() != "" && failure.Cause == "" {
				failure.Cause = c.text(r.Error.Cause(), maxMessage)
				failure.Hint = c.text(r.Error.Hint(), 2*maxMessage)
			}
		}
		return ev, failure
	}
	return ev, nil
}

// statusAnswer is the status read's answer, {"status": <Result>}. An answer
// without a status is a decoding error, not an empty status that would
// keep a wait going for ever; a bare string status is taken as its value.
type statusAnswer struct {
	Status models.Result
}

func (a *statusAnswer) UnmarshalJSON(data []byte) error {
	var wire struct {
		Status json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	switch {
	case len(wire.Status) == 0 || string(wire.Status) == "null":
		return errors.New(`the answer has no "status"`)
	case wire.Status[0] == '"':
		a.Status = models.Result{Type: models.ResultTypeStatus, Value: wire.Status}
		return nil
	case wire.Status[0] != '{':
		// Name the kind of value only: it may hold a secret, and the error
		// stays in the chain of the *DecodeError.
		kind := "a number"
		switch wire.Status[0] {
		case '[':
			kind = "an array"
		case 't', 'f':
			kind = "a boolean"
		}
		return fmt.Errorf(`"status" is %s, neither a Result object nor a string`, kind)
	}
	return json.Unmarshal(wire.Status, &a.Status)
}
