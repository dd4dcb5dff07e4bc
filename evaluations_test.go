package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realScenariosBody is what a real server sends: naive timestamps, explicit
// nulls, Result values of every JSON type, an unknown Result type and
// unknown fields.
const realScenariosBody = `[
  {
    "id": "6679a1f0c2b5e1a7d7f1a001",
    "evaluation_id": "ev-1",
    "inputs": [
      {"name": "country", "type": "text", "value": "France"},
      {"name": "max_words", "type": "number", "value": 12},
      {"name": "context", "type": "json", "value": {"lang": "fr", "tags": ["geo"]}},
      {"name": "empty", "type": "text", "value": null}
    ],
    "outputs": [
      {"result": {"type": "text", "value": "The capital of France is Paris.", "error": null}, "cost": 0.000123, "latency": 1.52}
    ],
    "evaluation": null,
    "correct_answer": "Paris",
    "correct_answers": [{"key": "correct_answer", "value": "Paris"}],
    "is_pinned": false,
    "note": null,
    "results": [
      {"evaluator_config": "ec-exact", "result": {"type": "bool", "value": true, "error": null}},
      {"evaluator_config": "ec-sim", "result": {"type": "number", "value": 0.875, "error": null}},
      {"evaluator_config": "ec-json", "result": {"type": "object", "value": {"score": 1, "reasons": ["ok"]}}},
      {"evaluator_config": "ec-list", "result": {"type": "array", "value": [1, "two", false]}},
      {"evaluator_config": "ec-critique", "result": {"type": "error", "value": null, "error": {"message": "OpenAI rate limit", "stacktrace": "Traceback (most recent call last):\n  File \"x.py\""}}},
      {"evaluator_config": "ec-future", "result": {"type": "confidence_interval", "value": "0.8", "future_field": 1}},
      {"evaluator_config": "ec-big", "result": {"type": "number", "value": 12345678901234567890}}
    ],
    "created_at": "2024-06-26T12:22:31.775000",
    "updated_at": "2024-06-26T12:22:31.775000",
    "unknown_field": {"x": 1}
  },
  {
    "id": null,
    "evaluation_id": "ev-1",
    "inputs": [],
    "outputs": [{"result": {"type": "text", "value": null, "error": null}, "cost": null, "latency": null}],
    "evaluation": "ev-1",
    "correct_answer": null,
    "is_pinned": true,
    "note": "check this",
    "results": []
  }
]`

func TestFetchEvaluationScenarios(t *testing.T) {
	c := gockClient(t)
	e := expect("GET", "/api/evaluations/ev-1/evaluation_scenarios", "")
	e.replyJSON(200, realScenariosBody)

	got, err := c.FetchEvaluationScenarios(context.Background(), "ev-1")

	require.NoError(t, err)
	assertAllSent(t)
	require.Len(t, got, 2)
	s := got[0]
	assert.Equal(t, "6679a1f0c2b5e1a7d7f1a001", s.ID)
	assert.Equal(t, "ev-1", s.EvaluationID)
	require.Len(t, s.Inputs, 4)
	assert.Equal(t, models.Input{Name: "country", Type: "text", Value: json.RawMessage(`"France"`)}, s.Inputs[0])
	assert.JSONEq(t, `12`, string(s.Inputs[1].Value))
	assert.JSONEq(t, `{"lang":"fr","tags":["geo"]}`, string(s.Inputs[2].Value))
	assert.Equal(t, "null", string(s.Inputs[3].Value), "an explicit null is kept")

	require.Len(t, s.Outputs, 1)
	text, ok := s.Outputs[0].Result.Text()
	assert.True(t, ok)
	assert.Equal(t, "The capital of France is Paris.", text)
	require.NotNil(t, s.Outputs[0].Cost)
	assert.Equal(t, 0.000123, *s.Outputs[0].Cost)
	require.NotNil(t, s.Outputs[0].Latency)
	assert.Equal(t, 1.52, *s.Outputs[0].Latency)
	assert.Nil(t, s.Outputs[0].Result.Error)

	assert.Equal(t, "", s.Evaluation)
	assert.Equal(t, "Paris", s.CorrectAnswer)
	assert.Equal(t, []models.CorrectAnswer{{Key: "correct_answer", Value: "Paris"}}, s.CorrectAnswers)
	assert.False(t, s.IsPinned)
	assert.Equal(t, "", s.Note)

	require.Len(t, s.Results, 7)
	byConfig := map[string]models.Result{}
	for _, r := range s.Results {
		byConfig[r.EvaluatorConfig] = r.Result
	}
	b, ok := byConfig["ec-exact"].Bool()
	assert.True(t, ok && b, "bool result")
	f, ok := byConfig["ec-sim"].Float64()
	assert.True(t, ok)
	assert.Equal(t, 0.875, f)
	var obj struct {
		Score   int      `json:"score"`
		Reasons []string `json:"reasons"`
	}
	require.NoError(t, byConfig["ec-json"].Decode(&obj))
	assert.Equal(t, 1, obj.Score)
	assert.Equal(t, []string{"ok"}, obj.Reasons)
	var list []any
	require.NoError(t, byConfig["ec-list"].Decode(&list))
	assert.Equal(t, []any{1.0, "two", false}, list)
	failed := byConfig["ec-critique"]
	assert.True(t, failed.Failed())
	require.NotNil(t, failed.Error)
	assert.Equal(t, "OpenAI rate limit", failed.Error.Message)
	assert.Contains(t, failed.Error.Stacktrace, "Traceback")
	assert.False(t, failed.HasValue())
	assert.True(t, errors.Is(failed.Decode(&list), models.ErrNoValue))
	future := byConfig["ec-future"]
	assert.Equal(t, "confidence_interval", future.Type, "an unknown type is kept")
	_, ok = future.Float64()
	assert.False(t, ok, "a numeric string is not a number")
	text, _ = future.Text()
	assert.Equal(t, "0.8", text)
	assert.Equal(t, "12345678901234567890", string(byConfig["ec-big"].Value), "a big number is kept exactly")

	s = got[1]
	assert.Equal(t, "", s.ID)
	assert.Equal(t, "ev-1", s.Evaluation)
	assert.True(t, s.IsPinned)
	assert.Equal(t, "check this", s.Note)
	assert.Nil(t, s.Outputs[0].Cost)
	assert.Nil(t, s.Outputs[0].Latency)
	assert.False(t, s.Outputs[0].Result.HasValue())
	assert.NotNil(t, s.Inputs)
	assert.Empty(t, s.Results)
}

const realEvaluationsBody = `[
  {
    "id": "ev-1", "app_id": "app-1", "user_id": "u-1", "user_username": "ada",
    "variant_ids": ["var-1"], "variant_names": ["app.default"], "variant_revision_ids": ["rev-1"], "revisions": ["3"],
    "testset_id": "ts-1", "testset_name": "capitals",
    "status": {"type": "status", "value": "EVALUATION_STARTED", "error": null},
    "aggregated_results": [],
    "average_cost": null, "total_cost": null, "average_latency": null,
    "created_at": "2024-06-26T12:22:31.775+00:00", "updated_at": "2024-06-26T12:22:31.775+00:00"
  },
  {
    "id": "ev-2", "app_id": "app-1", "user_id": "u-1", "user_username": "ada",
    "variant_ids": ["var-2"], "variant_names": ["app.fork"], "variant_revision_ids": ["rev-2"], "revisions": ["1"],
    "testset_id": null, "testset_name": null,
    "status": {"type": "status", "value": "EVALUATION_SOMETHING_NEW"},
    "aggregated_results": [
      {"evaluator_config": {"id": "ec-1", "name": "Exact match", "evaluator_key": "auto_exact_match", "settings_values": null,
        "created_at": "2024-06-20T08:00:00", "updated_at": "2024-06-20T08:00:00.123456"},
       "result": {"type": "number", "value": 0.5, "error": null}},
      {"evaluator_config": {"id": "ec-2", "name": "Similarity", "evaluator_key": "auto_similarity_match",
        "settings_values": {"similarity_threshold": 0.5}, "created_at": "2024-06-20T08:00:00Z", "updated_at": "2024-06-20T08:00:00Z",
        "some_new_field": 1},
       "result": {"type": "future_kind", "value": {"mean": 0.7}}}
    ],
    "average_cost": {"type": "cost", "value": 0.0021},
    "total_cost": {"type": "cost", "value": 0.042},
    "average_latency": {"type": "latency", "value": 1.2},
    "created_at": "2024-06-26T12:22:31.775000", "updated_at": "2024-06-26T14:22:31.775+02:00",
    "new_field": true
  }
]`

func TestCreateEvaluation(t *testing.T) {
	c := gockClient(t)
	e := expect("POST", "/api/evaluations", "")
	e.replyJSON(200, realEvaluationsBody)

	got, err := c.CreateEvaluation(context.Background(), validNewEvaluation())

	require.NoError(t, err)
	assertAllSent(t)
	sent := e.only(t)
	assert.JSONEq(t, `{
		"app_id": "app-1",
		"variant_ids": ["var-1", "var-2"],
		"evaluators_configs": ["ec-1"],
		"testset_id": "ts-1",
		"rate_limit": {"batch_size": 10, "max_retries": 3, "retry_delay": 3, "delay_between_batches": 5},
		"lm_providers_keys": {"OPENAI_API_KEY": "`+testProviderKey+`"}
	}`, string(sent.Body), "the provider key is sent, and nothing unset")
	assert.Equal(t, "application/json", sent.Header.Get("Content-Type"))

	require.Len(t, got, 2)
	ev := got[0]
	assert.Equal(t, "ev-1", ev.ID)
	assert.Equal(t, models.EvaluationStarted, ev.State())
	assert.Equal(t, []string{"rev-1"}, ev.VariantRevisionIDs)
	assert.Equal(t, []string{"3"}, ev.Revisions)
	assert.Nil(t, ev.AverageCost)
	assert.NotNil(t, ev.AggregatedResults)
	want := time.Date(2024, 6, 26, 12, 22, 31, 775000000, time.UTC)
	assert.True(t, ev.CreatedAt.Equal(want), "expected %s, got %s", want, ev.CreatedAt)

	ev = got[1]
	assert.Equal(t, "EVALUATION_SOMETHING_NEW", ev.State(), "an unknown status is kept")
	assert.Equal(t, "", ev.TestsetID)
	assert.True(t, ev.CreatedAt.Equal(want), "naive means UTC: expected %s, got %s", want, ev.CreatedAt)
	assert.Equal(t, time.UTC, ev.CreatedAt.Location())
	assert.True(t, ev.UpdatedAt.Equal(want), "+02:00 is the same instant: expected %s, got %s", want, ev.UpdatedAt)
	_, offset := ev.UpdatedAt.Zone()
	assert.Equal(t, 2*3600, offset, "the offset is kept")
	require.Len(t, ev.AggregatedResults, 2)
	ar := ev.AggregatedResults[0]
	assert.Equal(t, "auto_exact_match", ar.EvaluatorConfig.EvaluatorKey)
	assert.Nil(t, ar.EvaluatorConfig.SettingsValues)
	assert.Equal(t, 123456000, ar.EvaluatorConfig.UpdatedAt.Nanosecond())
	f, ok := ar.Result.Float64()
	assert.True(t, ok)
	assert.Equal(t, 0.5, f)
	assert.Equal(t, map[string]any{"similarity_threshold": json.Number("0.5")}, ev.AggregatedResults[1].EvaluatorConfig.SettingsValues)
	assert.Equal(t, "future_kind", ev.AggregatedResults[1].Result.Type)
	require.NotNil(t, ev.TotalCost)
	f, _ = ev.TotalCost.Float64()
	assert.Equal(t, 0.042, f)
}

// Unset optional fields are not sent: an empty correct_answer_column would
// override the server's default.
func TestCreateEvaluationSendsOnlySetOptionalFields(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*models.NewEvaluation)
		present []string
		absent  []string
	}{
		{"neither", func(ev *models.NewEvaluation) { ev.LMProvidersKeys = models.ProviderKeys{} }, nil,
			[]string{"lm_providers_keys", "correct_answer_column"}},
		{"empty keys map", func(ev *models.NewEvaluation) { ev.LMProvidersKeys = models.NewProviderKeys(map[string]string{}) }, nil,
			[]string{"lm_providers_keys", "correct_answer_column"}},
		{"correct answer column", func(ev *models.NewEvaluation) { ev.CorrectAnswerColumn = "expected" },
			[]string{"lm_providers_keys", "correct_answer_column"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t)
			e := expect("POST", "/api/evaluations", "")
			e.replyJSON(200, `[]`)
			ev := validNewEvaluation()
			tc.edit(&ev)

			_, err := c.CreateEvaluation(context.Background(), ev)

			require.NoError(t, err)
			var body map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(e.only(t).Body, &body))
			for _, k := range tc.present {
				assert.Contains(t, body, k)
			}
			for _, k := range tc.absent {
				assert.NotContains(t, body, k, "an unset %s must not be sent", k)
			}
			for _, k := range []string{"app_id", "variant_ids", "evaluators_configs", "testset_id", "rate_limit"} {
				assert.Contains(t, body, k, "required field")
			}
			if ev.CorrectAnswerColumn != "" {
				assert.JSONEq(t, `"expected"`, string(body["correct_answer_column"]))
			}
			assertAllSent(t)
		})
	}
}

// The required fields are checked before sending; the error names the field
// in Go and on the wire.
func TestCreateEvaluationRefusesMissingFields(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		edit        func(*models.NewEvaluation)
	}{
		{"NewEvaluation.AppID", "app_id", func(ev *models.NewEvaluation) { ev.AppID = "" }},
		{"NewEvaluation.AppID", "app_id", func(ev *models.NewEvaluation) { ev.AppID = "  " }},
		{"NewEvaluation.VariantIDs", "variant_ids", func(ev *models.NewEvaluation) { ev.VariantIDs = nil }},
		{"NewEvaluation.VariantIDs", "variant_ids", func(ev *models.NewEvaluation) { ev.VariantIDs = []string{} }},
		{"NewEvaluation.VariantIDs[1]", "variant_ids[1]", func(ev *models.NewEvaluation) { ev.VariantIDs = []string{"v", ""} }},
		{"NewEvaluation.EvaluatorConfigIDs", "evaluators_configs", func(ev *models.NewEvaluation) { ev.EvaluatorConfigIDs = nil }},
		{"NewEvaluation.EvaluatorConfigIDs[0]", "evaluators_configs[0]", func(ev *models.NewEvaluation) { ev.EvaluatorConfigIDs = []string{" "} }},
		{"NewEvaluation.TestsetID", "testset_id", func(ev *models.NewEvaluation) { ev.TestsetID = "" }},
		{"NewEvaluation.RateLimit", "rate_limit", func(ev *models.NewEvaluation) { ev.RateLimit = models.RateLimit{} }},
		{"NewEvaluation.RateLimit.BatchSize", "rate_limit.batch_size", func(ev *models.NewEvaluation) { ev.RateLimit.BatchSize = 0 }},
		{"NewEvaluation.RateLimit.MaxRetries", "rate_limit.max_retries", func(ev *models.NewEvaluation) { ev.RateLimit.MaxRetries = -1 }},
		{"NewEvaluation.RateLimit.MaxRetries", "rate_limit.max_retries", func(ev *models.NewEvaluation) { ev.RateLimit.MaxRetries = 0 }},
		{"NewEvaluation.RateLimit.RetryDelay", "rate_limit.retry_delay", func(ev *models.NewEvaluation) { ev.RateLimit.RetryDelay = -1 }},
		{"NewEvaluation.RateLimit.DelayBetweenBatches", "rate_limit.delay_between_batches", func(ev *models.NewEvaluation) { ev.RateLimit.DelayBetweenBatches = -5 }},
		{"NewEvaluation.LMProvidersKeys", "lm_providers_keys", func(ev *models.NewEvaluation) {
			ev.LMProvidersKeys = models.NewProviderKeys(map[string]string{"": testProviderKey})
		}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			c := gockClient(t)
			ev := validNewEvaluation()
			tc.edit(&ev)

			_, err := c.CreateEvaluation(context.Background(), ev)

			argErr := requireArgumentError(t, err, tc.name)
			assert.Equal(t, tc.field, argErr.Field)
			assert.Contains(t, err.Error(), tc.field)
			assertNoSecret(t, "error string", err.Error())
			assertNothingUnmatched(t)
		})
	}
	t.Run("zero values that are valid", func(t *testing.T) {
		c := gockClient(t)
		expect("POST", "/api/evaluations", "").replyJSON(200, `[]`)
		ev := validNewEvaluation()
		ev.RateLimit = models.RateLimit{BatchSize: 1, MaxRetries: 1}
		_, err := c.CreateEvaluation(context.Background(), ev)
		require.NoError(t, err)
		assertAllSent(t)
	})
}

func TestFetchEvaluation(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/evaluations/"+waitEvalID, "").replyJSON(200, evaluationBody(models.EvaluationFinished))

	ev, err := c.FetchEvaluation(context.Background(), waitEvalID)

	require.NoError(t, err)
	assertAllSent(t)
	assert.Equal(t, waitEvalID, ev.ID)
	assert.Equal(t, models.EvaluationFinished, ev.State())
	assert.True(t, ev.Terminal())
	assert.False(t, ev.Failed())
	require.Len(t, ev.AggregatedResults, 1)
	agg := ev.AggregatedResults[0]
	assert.Equal(t, "auto_exact_match", agg.EvaluatorConfig.EvaluatorKey)
	mean, ok := agg.Result.Float64()
	assert.True(t, ok)
	assert.Equal(t, 0.6666666666666666, mean, "the mean is not rounded")
	require.NotNil(t, ev.TotalCost)
	total, _ := ev.TotalCost.Float64()
	assert.Equal(t, 0.0003, total)
	assert.Equal(t, time.Date(2024, 7, 15, 10, 52, 51, 123456000, time.UTC), ev.CreatedAt.Time.UTC())
	assert.Equal(t, time.Date(2024, 7, 15, 10, 52, 51, 0, time.UTC), agg.EvaluatorConfig.UpdatedAt.Time.UTC())
}

func TestFetchEvaluationNotFound(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/evaluations/"+waitEvalID, "").replyJSON(404, `{"detail":"404: Evaluation with id `+waitEvalID+` not found"}`)

	ev, err := c.FetchEvaluation(context.Background(), waitEvalID)

	assert.Nil(t, ev)
	assert.True(t, errors.Is(err, ErrNotFound), "expected ErrNotFound, got %v", err)
	apiErr := requireAPIError(t, err, 404, "GET", "/api/evaluations/"+waitEvalID)
	// The status prefix the service re-raises with is dropped from Message
	// (the error says 404 already) and kept in Body.
	assert.Equal(t, "Evaluation with id "+waitEvalID+" not found", apiErr.Message)
	assert.Contains(t, string(apiErr.Body), `"404: Evaluation with id `)
}

func TestFetchEvaluationStatus(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       models.EvaluationStatus
		message    string
	}{
		{"started", statusBody(models.EvaluationStarted), models.EvaluationStarted, ""},
		{"failed, with the service's message", statusBody(models.EvaluationFailed), models.EvaluationFailed, "Evaluation Failed"},
		{"unknown fields and status", `{"status":{"type":"status","value":"EVALUATION_QUEUED","error":null,"extra":1},"x":[]}`, "EVALUATION_QUEUED", ""},
		{"a bare string", `{"status":"EVALUATION_INITIALIZED"}`, models.EvaluationInitialized, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t)
			expect("GET", "/api/evaluations/"+waitEvalID+"/status", "").replyJSON(200, tc.body)

			r, err := c.FetchEvaluationStatus(context.Background(), waitEvalID)

			require.NoError(t, err)
			assertAllSent(t)
			assert.Equal(t, tc.want, r.EvaluationStatus())
			assert.Equal(t, models.ResultTypeStatus, r.Type)
			if tc.message == "" {
				assert.Nil(t, r.Error)
			} else {
				require.NotNil(t, r.Error)
				assert.Equal(t, tc.message, r.Error.Message)
			}
		})
	}
}

// The service answers any failure of the status read, an unknown id
// included, with a 500; it is not retried.
func TestFetchEvaluationStatusUnknownID(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/evaluations/nope/status", "").replyJSON(500, `{"detail":"badly formed hexadecimal UUID string"}`)

	_, err := c.FetchEvaluationStatus(context.Background(), "nope")

	assert.True(t, errors.Is(err, ErrServer), "expected ErrServer, got %v", err)
	requireAPIError(t, err, 500, "GET", "/api/evaluations/nope/status")
	assertAllSent(t)
}

// max_retries counts attempts: 0 would never call the app, so it is refused
// before sending, saying why.
func TestCreateEvaluationRefusesZeroAttempts(t *testing.T) {
	c := gockClient(t)
	ev := validNewEvaluation()
	ev.RateLimit.MaxRetries = 0

	_, err := c.CreateEvaluation(context.Background(), ev)

	argErr := requireArgumentError(t, err, "NewEvaluation.RateLimit.MaxRetries")
	assert.Equal(t, "rate_limit.max_retries", argErr.Field)
	assert.Contains(t, argErr.Reason, "attempts", "the reason says why")
	assert.Contains(t, argErr.Reason, "never calls the app")
	assertNothingUnmatched(t)
}
