package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"slices"

	"github.com/agenta-go/agenta/internal/sealed"
	"github.com/agenta-go/agenta/models"
)

// api2024 is the mid-2024 API behind the Client's methods (see
// generationAPI): the routes of the published interface. The methods get
// arguments their Client method has already checked.
type api2024 struct{ *Client }

func (c api2024) fetchEvaluationScenarios(ctx context.Context, evaluationID string) ([]models.EvaluationScenario, error) {
	r, err := scenariosRequest("FetchEvaluationScenarios", evaluationID)
	if err != nil {
		return nil, err
	}
	return getList(ctx, c.Client, r, scenarioList)
}

func (c api2024) streamEvaluationScenarios(ctx context.Context, evaluationID string) iter.Seq2[models.EvaluationScenario, error] {
	r, err := scenariosRequest("StreamEvaluationScenarios", evaluationID)
	if err != nil {
		return func(yield func(models.EvaluationScenario, error) bool) {
			yield(models.EvaluationScenario{}, err)
		}
	}
	return streamList(ctx, c.Client, r, scenarioList)
}

func scenariosRequest(operation, evaluationID string) (*request, error) {
	id, err := segment("evaluationID", "evaluation_id", evaluationID)
	if err != nil {
		return nil, err
	}
	return &request{operation: operation, method: http.MethodGet, path: "/evaluations/" + id + "/evaluation_scenarios", mapped: true}, nil
}

func (c api2024) fetchEvaluation(ctx context.Context, evaluationID string) (*models.Evaluation, error) {
	id, err := segment("evaluationID", "evaluation_id", evaluationID)
	if err != nil {
		return nil, err
	}
	return getOne[models.Evaluation](ctx, c.Client, &request{operation: "FetchEvaluation", method: http.MethodGet, path: "/evaluations/" + id, mapped: true})
}

func (c api2024) fetchEvaluationStatus(ctx context.Context, evaluationID string) (*models.Result, error) {
	id, err := segment("evaluationID", "evaluation_id", evaluationID)
	if err != nil {
		return nil, err
	}
	answer, err := getOne[statusAnswer](ctx, c.Client, &request{operation: "FetchEvaluationStatus", method: http.MethodGet,
		path: "/evaluations/" + id + "/status", mapped: true})
	if err != nil {
		return nil, err
	}
	return &answer.Status, nil
}

func (c api2024) createEvaluation(ctx context.Context, ev models.NewEvaluation) ([]models.Evaluation, error) {
	keys := sealed.ProviderKeys(ev.LMProvidersKeys)
	// Every key sent is a secret of the Client from now on: the service
	// may echo it in this answer or any later one (a failed run's message).
	if c.Client != nil && c.secrets != nil {
		c.secrets.addSent(slices.Collect(maps.Values(keys))...)
	}
	body := newEvaluationBody{NewEvaluation: ev, LMProvidersKeys: keys}
	if ev.Repeats > 1 {
		return c.createRepeats(ctx, body)
	}
	return c.createOnce(ctx, body)
}

// createOnce sends one create.
func (c api2024) createOnce(ctx context.Context, body newEvaluationBody) ([]models.Evaluation, error) {
	return getList(ctx, c.Client, &request{
		operation: "CreateEvaluation", method: http.MethodPost, path: "/evaluations", body: body, mapped: true,
	}, jsonList[models.Evaluation])
}

// stopEvaluation sends nothing: a mid-2024 server has no route to stop a
// run (its DELETE /evaluations/ deletes the records while the worker runs
// on).
func (c api2024) stopEvaluation(context.Context, string) error { return ErrCannotStop }

func (c api2024) getVariant(ctx context.Context, variantID string) (*models.AppVariantResponse, error) {
	id, err := segment("variantID", "variant_id", variantID)
	if err != nil {
		return nil, err
	}
	return getOne[models.AppVariantResponse](ctx, c.Client, &request{operation: "GetVariant", method: http.MethodGet, path: "/variants/" + id})
}

// getVariantByEnvironment falls back on the app's environments when the
// lookup fails with the 0.19 server's own 500 (see GetVariantByEnvironment).
func (c api2024) getVariantByEnvironment(ctx context.Context, appID, environment string) (*models.AppVariantResponse, error) {
	v, err := getOne[models.AppVariantResponse](ctx, c.Client, &request{
		operation: "GetVariantByEnvironment",
		method:    http.MethodGet,
		path:      "/apps/get_variant_by_env",
		query:     variantByEnvQuery{AppID: appID, Environment: environment},
	})
	if lookupBroken(err) {
		return c.variantByEnvironmentListed(ctx, appID, environment, err)
	}
	return v, err
}

type variantByEnvQuery struct {
	AppID       string `url:"app_id"`
	Environment string `url:"environment"`
}

func (c api2024) addVariantFromBase(ctx context.Context, v models.AddVariantFromBase) (*models.AppVariantResponse, error) {
	return getOne[models.AppVariantResponse](ctx, c.Client, &request{operation: "AddVariantFromBase", method: http.MethodPost, path: "/variants/from-base", body: v})
}

// waitEvaluation is WaitEvaluation on a mid-2024 server: the status
// polled until it is terminal, then the evaluation read.
func (c api2024) waitEvaluation(ctx context.Context, evaluationID string, opts *WaitOptions) (*models.Evaluation, error) {
	w := &waiter{c: c.Client, ctx: ctx, id: evaluationID, interval: DefaultWaitInterval}
	if opts != nil {
		if opts.Interval > 0 {
			w.interval = opts.Interval
		}
		w.onStatus, w.onRetry = opts.OnStatus, opts.OnRetry
	}
	defer w.stop()

	var final models.Result
	for {
		status, err := retryRead(w, c.fetchEvaluationStatus)
		if err != nil {
			return nil, err
		}
		value := status.EvaluationStatus()
		if !w.seen || value != w.last {
			w.last, w.since, w.seen = value, w.read, true
			if w.onStatus != nil {
				w.onStatus(*status)
			}
		}
		if value.Terminal() {
			final = *status
			break
		}
		if err := w.pause(w.interval); err != nil {
			return nil, err
		}
	}

	ev, err := retryRead(w, c.fetchEvaluation)
	if err != nil {
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

// newEvaluationBody is what CreateEvaluation sends: the request with its
// provider keys in the clear, the one place they are. models.ProviderKeys
// encodes its values as [REDACTED]; this field, at a shallower depth,
// takes the place of the embedded one in the JSON.
type newEvaluationBody struct {
	models.NewEvaluation
	LMProvidersKeys map[string]string `json:"lm_providers_keys,omitempty"`
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
