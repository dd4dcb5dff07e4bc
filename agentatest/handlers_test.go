package agentatest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

func TestURLEndsInAPI(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/api$`, srv.URL())
}

func TestClientGetVariant(t *testing.T) {
	_, d, c := newDemo(t)
	v, err := c.GetVariant(context.Background(), d.VariantID)
	require.NoError(t, err)
	assert.Equal(t, d.AppID, v.AppID)
	assert.Equal(t, "capitals", v.AppName)
	assert.Equal(t, "capitals.default", v.VariantName)
	assert.Equal(t, "default", v.ConfigName)
	assert.Equal(t, "capitals", v.BaseName)
	assert.Equal(t, d.BaseID, v.BaseID)
	assert.Equal(t, 3, v.Revision)
	assert.Equal(t, "gpt-3.5-turbo", v.Parameters["model"])
	assert.Equal(t, json.Number("0.7"), v.Parameters["temperature"])
	assert.Equal(t, "", v.PreviousVariantName, "sent as null")
	assert.Equal(t, "http://capitals-default.agenta.local", v.URI)
}

func TestClientGetVariantUnknownIs500(t *testing.T) {
	_, _, c := newDemo(t)
	for _, tc := range []struct{ id, message string }{
		{"0190b5a2-0000-7000-8000-0000deadbeef", "'NoneType' object has no attribute 'base_id'"},
		{"66a0c0de00000000deadbeef", "badly formed hexadecimal UUID string"},
	} {
		_, err := c.GetVariant(context.Background(), tc.id)
		require.ErrorIs(t, err, agenta.ErrServer, "the service has no 404 here")
		var apiErr *agenta.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 500, apiErr.StatusCode)
		assert.Equal(t, tc.message, apiErr.Message)
	}
}

func TestClientGetVariantByEnvironment(t *testing.T) {
	_, d, c := newDemo(t)
	ctx := context.Background()
	for env, want := range map[string]string{
		models.EnvironmentProduction:  d.VariantID,
		models.EnvironmentDevelopment: d.VariantID,
		models.EnvironmentStaging:     d.VerboseVariantID,
	} {
		v, err := c.GetVariantByEnvironment(ctx, d.AppID, env)
		require.NoError(t, err, env)
		assert.Equal(t, want, v.VariantID, env)
	}
}

func TestClientGetVariantByEnvironmentNotDeployedIs500(t *testing.T) {
	srv, d, c := newDemo(t)
	ctx := context.Background()
	for _, tc := range []struct{ app, env string }{
		{d.AppID, "playground"},
		{"0190b5a2-0000-7000-8000-00000000dead", models.EnvironmentProduction},
	} {
		_, err := c.GetVariantByEnvironment(ctx, tc.app, tc.env)
		require.ErrorIs(t, err, agenta.ErrServer)
		var apiErr *agenta.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 500, apiErr.StatusCode)
		assert.Equal(t, "App Variant not found", apiErr.Message)
	}
	// A 500 here is not transient: the client must not have retried.
	assert.Len(t, srv.RequestsFor(agentatest.OpGetVariantByEnvironment), 2)
}

func TestClientAddVariantFromBase(t *testing.T) {
	srv, d, c := newDemo(t)
	ctx := context.Background()
	v, err := c.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: d.BaseID, NewVariantName: "ignored-by-the-service", NewConfigName: "precise",
		Parameters: map[string]any{"model": "gpt-4o-mini", "temperature": 0.0},
	})
	require.NoError(t, err)
	assert.Equal(t, "capitals.precise", v.VariantName, "named {base_name}.{new_config_name}")
	assert.Equal(t, "precise", v.ConfigName)
	assert.Equal(t, "capitals.default", v.PreviousVariantName)
	assert.Equal(t, 1, v.Revision)
	assert.Equal(t, d.AppID, v.AppID)
	assert.Equal(t, "gpt-4o-mini", v.Parameters["model"])

	got, err := c.GetVariant(ctx, v.VariantID)
	require.NoError(t, err)
	assert.Equal(t, *v, *got)

	// Adding it again is a duplicate name: 500, and not retried.
	_, err = c.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: d.BaseID, NewVariantName: "x", NewConfigName: "precise",
	})
	var apiErr *agenta.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.StatusCode)
	assert.Equal(t, "App variant with the same name already exists", apiErr.Message)
	assert.Len(t, srv.RequestsFor(agentatest.OpAddVariantFromBase), 2)

	_, err = c.AddVariantFromBase(ctx, models.AddVariantFromBase{BaseID: "66a0c0de000000000000dead", NewVariantName: "x", NewConfigName: "y"})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.StatusCode)
}

func TestClientCreateEvaluationAndFetchScenarios(t *testing.T) {
	srv, d, c := newDemo(t)
	ctx := context.Background()
	evs, err := c.CreateEvaluation(ctx, newEvaluation(d, d.VariantID, d.VerboseVariantID))
	require.NoError(t, err)
	require.Len(t, evs, 2, "one evaluation per variant")
	for i, want := range []string{d.VariantID, d.VerboseVariantID} {
		ev := evs[i]
		assert.Equal(t, models.EvaluationInitialized, ev.State(), "create answers before the run starts")
		assert.Equal(t, []string{want}, ev.VariantIDs)
		assert.Equal(t, d.TestsetID, ev.TestsetID)
		assert.Equal(t, "capitals", ev.TestsetName)
		assert.Empty(t, ev.AggregatedResults)
		assert.Nil(t, ev.AverageCost, "sent as null")
		assert.False(t, ev.CreatedAt.IsZero())
	}
	assert.Equal(t, []string{"3"}, evs[0].Revisions)

	waitRuns(t, srv)
	scenarios, err := c.FetchEvaluationScenarios(ctx, evs[0].ID)
	require.NoError(t, err)
	require.Len(t, scenarios, 8, "one scenario per test-set row")
	exact := 0
	for _, sc := range scenarios {
		assert.Equal(t, evs[0].ID, sc.EvaluationID)
		require.Len(t, sc.Inputs, 1)
		assert.Equal(t, "country", sc.Inputs[0].Name)
		require.Len(t, sc.Outputs, 1)
		require.NotNil(t, sc.Outputs[0].Cost)
		require.NotNil(t, sc.Outputs[0].Latency)
		require.Len(t, sc.Results, 3)
		assert.Equal(t, d.ExactMatchID, sc.Results[0].EvaluatorConfig)
		out, _ := sc.Outputs[0].Result.Text()
		match, ok := sc.Results[0].Result.Bool()
		require.True(t, ok)
		require.Len(t, sc.CorrectAnswers, 2, "one per evaluator config with a correct_answer_key")
		want := sc.CorrectAnswers[0].Value
		assert.Equal(t, out == want, match, "exact match of %q against %q", out, want)
		if match {
			exact++
		}
	}
	assert.Equal(t, 5, exact, "the default variant confuses three capitals")

	verbose, err := c.FetchEvaluationScenarios(ctx, evs[1].ID)
	require.NoError(t, err)
	out, _ := verbose[0].Outputs[0].Result.Text()
	assert.Equal(t, "The capital of France is Paris.", out, "the two variants answer differently")

	ev, ok := srv.Evaluation(evs[0].ID)
	require.True(t, ok)
	assert.Equal(t, models.EvaluationFinished, ev.State())
	require.Len(t, ev.AggregatedResults, 3)
	score, _ := ev.AggregatedResults[0].Result.Float64()
	assert.InDelta(t, 0.625, score, 1e-9)
	require.NotNil(t, ev.AverageCost)

	var streamed []string
	for sc, err := range c.StreamEvaluationScenarios(ctx, evs[0].ID) {
		require.NoError(t, err)
		streamed = append(streamed, sc.ID)
	}
	require.Len(t, streamed, 8)
	assert.Equal(t, scenarios[7].ID, streamed[7])
}

func TestClientCreateEvaluationErrors(t *testing.T) {
	srv, d, c := newDemo(t)
	ctx := context.Background()

	ev := newEvaluation(d, d.VariantID)
	ev.AppID = "0190b5a2-0000-7000-8000-000000000bad"
	_, err := c.CreateEvaluation(ctx, ev)
	require.ErrorIs(t, err, agenta.ErrNotFound)

	ev = newEvaluation(d, d.VariantID)
	ev.EvaluatorConfigIDs = []string{d.AICritiqueID}
	_, err = c.CreateEvaluation(ctx, ev)
	require.ErrorIs(t, err, agenta.ErrBadRequest)
	var apiErr *agenta.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "Missing LM provider Key", apiErr.Message)

	ev.LMProvidersKeys = models.NewProviderKeys(map[string]string{"NOT_A_PROVIDER": "sk-secret-value"})
	_, err = c.CreateEvaluation(ctx, ev)
	var verr *agenta.ValidationError
	require.ErrorAs(t, err, &verr)
	require.Len(t, verr.Details, 1)
	assert.Equal(t, []any{"body", "lm_providers_keys", "NOT_A_PROVIDER", "[key]"}, verr.Details[0].Loc)
	assert.Equal(t, "enum", verr.Details[0].Type)
	assert.NotContains(t, err.Error(), "sk-secret-value")

	ev.LMProvidersKeys = models.NewProviderKeys(map[string]string{models.OpenAIAPIKey: "sk-secret-value"})
	evs, err := c.CreateEvaluation(ctx, ev)
	require.NoError(t, err, "with a key the AI critique evaluation starts")
	waitRuns(t, srv)
	scenarios, err := c.FetchEvaluationScenarios(ctx, evs[0].ID)
	require.NoError(t, err)
	require.NotEmpty(t, scenarios)
	assert.True(t, scenarios[0].Results[0].Result.Failed(), "the fake cannot run an AI critique")
}

func TestClientFetchScenariosOfUnknownEvaluation(t *testing.T) {
	_, _, c := newDemo(t)
	_, err := c.FetchEvaluationScenarios(context.Background(), "0190b5a2-0000-7000-8000-00000000beef")
	require.ErrorIs(t, err, agenta.ErrNotFound)
	_, err = c.FetchEvaluationScenarios(context.Background(), "66a0c0de000000000000beef")
	require.ErrorIs(t, err, agenta.ErrServer, "an id that is not a UUID is a 500")
}

func TestClientGetSpan(t *testing.T) {
	_, d, c := newDemo(t)
	ctx := context.Background()
	span, err := c.GetSpan(ctx, d.SpanID, nil)
	require.NoError(t, err)
	assert.Equal(t, "capitals", span.Name)
	assert.Equal(t, models.SpanKindWorkflow, span.SpanKind)
	assert.Equal(t, "", span.ParentSpanID, "root sent with parent_span_id null")
	assert.Equal(t, "production", span.DeployedEnvironment())
	assert.Equal(t, time.Date(2024, 6, 26, 12, 22, 31, 775000000, time.UTC), span.CreatedAt.Time)
	assert.Equal(t, "gpt-3.5-turbo", span.Config["model"])
	var names []string
	span.Walk(func(s *models.Span, depth int) bool {
		names = append(names, s.Name)
		if depth > 0 {
			assert.Nil(t, s.Config, "children carry no config")
		}
		return true
	})
	assert.Equal(t, []string{"capitals", "lookup_country", "format_prompt", "render_template", "openai.chat.completions", "cache_write"}, names)
	cost, ok := span.Cost()
	assert.True(t, ok)
	assert.InDelta(t, 0.0000185, cost, 1e-12)

	child, err := c.GetSpan(ctx, span.Children[1].ID, &agenta.GetSpanOptions{Type: "generation"})
	require.NoError(t, err)
	assert.Equal(t, "format_prompt", child.Name)
	assert.Equal(t, d.SpanID, child.ParentSpanID)
	require.Len(t, child.Children, 1)

	// Only generation spans are implemented: another type answers [].
	_, err = c.GetSpan(ctx, d.SpanID, &agenta.GetSpanOptions{Type: "trace"})
	var decErr *agenta.DecodeError
	require.ErrorAs(t, err, &decErr)
	assert.Equal(t, 200, decErr.StatusCode)

	_, err = c.GetSpan(ctx, "66a0c0de000000000000f00d", nil)
	require.ErrorIs(t, err, agenta.ErrServer)
}

func TestClientListHumanEvaluations(t *testing.T) {
	_, d, c := newDemo(t)
	ctx := context.Background()
	list, err := c.ListHumanEvaluations(ctx, d.AppID)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, models.HumanEvaluationABTesting, list[0].EvaluationType)
	assert.Equal(t, []string{"capitals.default", "capitals.verbose"}, list[0].VariantNames)
	assert.Len(t, list[0].VariantsRevisionIDs, 2)
	assert.Equal(t, time.Date(2024, 6, 20, 9, 15, 2, 512000000, time.UTC), list[0].CreatedAt.Time)
	assert.Equal(t, time.Date(2024, 6, 25, 16, 40, 11, 0, time.UTC), list[1].CreatedAt.Time)
	assert.Equal(t, models.EvaluationStarted, list[1].Status)

	none, err := c.ListHumanEvaluations(ctx, "0190b5a2-0000-7000-8000-00000000a0a0")
	require.NoError(t, err)
	assert.Empty(t, none, "an app without human evaluations lists none")
}

func TestClientWithAPIKey(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithAPIKey("abc.def"))
	d := agentatest.SeedDemo(srv)
	ctx := context.Background()

	_, err := newClient(t, srv).GetVariant(ctx, d.VariantID)
	require.ErrorIs(t, err, agenta.ErrUnauthorized)

	_, err = newClient(t, srv, agenta.WithAPIKey("abc.wrong")).GetVariant(ctx, d.VariantID)
	require.ErrorIs(t, err, agenta.ErrUnauthorized, "a wrong key is answered as a missing one")

	_, err = newClient(t, srv, agenta.WithAPIKey("abc.def")).GetVariant(ctx, d.VariantID)
	require.NoError(t, err)
	last := srv.Requests()[len(srv.Requests())-1]
	assert.Equal(t, "abc.def", last.Header.Get("Authorization"), "the key is sent raw")
}

func TestClientRequestLog(t *testing.T) {
	srv, d, c := newDemo(t)
	ctx := context.Background()
	_, err := c.GetVariantByEnvironment(ctx, d.AppID, "production")
	require.NoError(t, err)
	_, err = c.CreateEvaluation(ctx, newEvaluation(d, d.VariantID))
	require.NoError(t, err)

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, agentatest.OpGetVariantByEnvironment, reqs[0].Operation)
	assert.Equal(t, "/api/apps/get_variant_by_env", reqs[0].Path)
	assert.Equal(t, d.AppID, reqs[0].Query.Get("app_id"))
	assert.Equal(t, 200, reqs[0].Status)

	assert.Equal(t, agentatest.OpCreateEvaluation, reqs[1].Operation)
	assert.Equal(t, "application/json", reqs[1].Header.Get("Content-Type"))
	var sent map[string]any
	require.NoError(t, json.Unmarshal(reqs[1].Body, &sent))
	assert.Equal(t, []any{d.ExactMatchID, d.EditDistanceID, d.TerseAnswerID}, sent["evaluators_configs"])
	assert.NotContains(t, sent, "correct_answer_column", "unset optional fields are not sent")

	srv.ResetRequests()
	assert.Empty(t, srv.Requests())
}

func TestClientSpanPathWithoutSlashIsRedirected(t *testing.T) {
	// Through the SDK the slash is kept; here the redirect is checked raw.
	srv, d, _ := newDemo(t)
	resp := get(t, noRedirects, srv.URL()+"/observability/spans/"+d.SpanID+"?type=generation")
	assert.Equal(t, 307, resp.status)
	assert.Equal(t, srv.URL()+"/observability/spans/"+d.SpanID+"/?type=generation", resp.header.Get("Location"))
}

func TestClientErrorsAreTyped(t *testing.T) {
	_, d, c := newDemo(t)
	_, err := c.GetVariantByEnvironment(context.Background(), d.AppID, "nowhere")
	// 500 "App Variant not found" is the service's not-found answer there:
	// it matches both.
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "expected ErrNotFound for %v", err)
	assert.True(t, errors.Is(err, agenta.ErrServer), "expected ErrServer for %v", err)
}
