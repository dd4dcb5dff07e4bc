package agentatest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// seedEcho seeds an app whose base runs app (or the template application)
// with two variants, a three-row test set and the given evaluator keys.
func seedEcho(srv *agentatest.Server, app agentatest.Application, evaluatorKeys ...string) (appID, testsetID string, variants, evaluators []string) {
	appID = srv.AddApp(agentatest.App{Name: "echo"})
	base := srv.AddBase(agentatest.Base{AppID: appID, Application: app})
	variants = []string{
		srv.AddVariant(agentatest.Variant{BaseID: base, ConfigName: "plain", Parameters: map[string]any{"prompt_user": "{word}"}}),
		srv.AddVariant(agentatest.Variant{BaseID: base, ConfigName: "shout", Parameters: map[string]any{"prompt_user": "{word}!"}}),
	}
	testsetID = srv.AddTestset(agentatest.Testset{AppID: appID, Name: "words", Rows: []map[string]string{
		{"word": "alpha", "correct_answer": "alpha"},
		{"word": "beta", "correct_answer": "beta"},
		{"word": "gamma", "correct_answer": "gamma!"},
	}})
	for _, key := range evaluatorKeys {
		evaluators = append(evaluators, srv.AddEvaluatorConfig(models.EvaluatorConfig{
			EvaluatorKey: key, SettingsValues: map[string]any{"correct_answer_key": "correct_answer"},
		}))
	}
	return appID, testsetID, variants, evaluators
}

func create(t *testing.T, c *agenta.Client, appID, testsetID string, variants, evaluators []string) []models.Evaluation {
	t.Helper()
	evs, err := c.CreateEvaluation(context.Background(), models.NewEvaluation{
		AppID: appID, VariantIDs: variants, EvaluatorConfigIDs: evaluators,
		TestsetID: testsetID, RateLimit: models.DefaultRateLimit(),
	})
	require.NoError(t, err)
	require.Len(t, evs, len(variants))
	return evs
}

func state(t *testing.T, srv *agentatest.Server, id string) string {
	t.Helper()
	ev, ok := srv.Evaluation(id)
	require.True(t, ok, "evaluation %s", id)
	return ev.State()
}

func TestEvaluationVariantsDiffer(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	appID, testsetID, variants, evaluators := seedEcho(srv, nil, "auto_exact_match")
	c := newClient(t, srv)
	evs := create(t, c, appID, testsetID, variants, evaluators)
	waitRuns(t, srv)

	outputs := func(id string) []string {
		scenarios, err := c.FetchEvaluationScenarios(context.Background(), id)
		require.NoError(t, err)
		var out []string
		for _, sc := range scenarios {
			s, _ := sc.Outputs[0].Result.Text()
			out = append(out, s)
		}
		return out
	}
	assert.Equal(t, []string{"alpha", "beta", "gamma"}, outputs(evs[0].ID))
	assert.Equal(t, []string{"alpha!", "beta!", "gamma!"}, outputs(evs[1].ID))

	score := func(id string) float64 {
		ev, _ := srv.Evaluation(id)
		require.Len(t, ev.AggregatedResults, 1)
		f, ok := ev.AggregatedResults[0].Result.Float64()
		require.True(t, ok)
		return f
	}
	assert.InDelta(t, 2.0/3, score(evs[0].ID), 1e-4)
	assert.InDelta(t, 1.0/3, score(evs[1].ID), 1e-4)
	assert.Equal(t, models.EvaluationFinished, state(t, srv, evs[0].ID))
}

func TestEvaluationManualProgress(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithManualEvaluations())
	appID, testsetID, variants, evaluators := seedEcho(srv, nil, "auto_exact_match")
	c := newClient(t, srv)
	evs := create(t, c, appID, testsetID, variants, evaluators)
	count := func(id string) int {
		scenarios, err := c.FetchEvaluationScenarios(context.Background(), id)
		require.NoError(t, err)
		return len(scenarios)
	}
	assert.Equal(t, models.EvaluationInitialized, state(t, srv, evs[0].ID), "without a worker nothing starts")
	assert.Equal(t, 0, count(evs[0].ID))

	// Each run of three rows takes six steps: three app calls, then three
	// scenario writes, as the service's worker makes them.
	assert.Equal(t, 3, srv.AdvanceEvaluations(3))
	assert.Equal(t, models.EvaluationStarted, state(t, srv, evs[0].ID))
	assert.Equal(t, 0, count(evs[0].ID), "scenarios are written only after every row's app call")

	assert.Equal(t, 2, srv.AdvanceEvaluations(2))
	assert.Equal(t, models.EvaluationStarted, state(t, srv, evs[0].ID), "still running while it writes")
	assert.Equal(t, 2, count(evs[0].ID), "the scenarios are written one row at a time")

	assert.Equal(t, 2, srv.AdvanceEvaluations(2), "oldest evaluation first, then the next")
	assert.Equal(t, models.EvaluationFinished, state(t, srv, evs[0].ID))
	assert.Equal(t, 3, count(evs[0].ID))
	assert.Equal(t, models.EvaluationStarted, state(t, srv, evs[1].ID))
	assert.Equal(t, 0, count(evs[1].ID))

	assert.Equal(t, 5, srv.AdvanceEvaluations(10), "only five steps were left")
	assert.Equal(t, 0, srv.AdvanceEvaluations(1))
	assert.Equal(t, models.EvaluationFinished, state(t, srv, evs[1].ID))
	assert.Equal(t, 3, count(evs[1].ID))
	require.NoError(t, srv.WaitEvaluations(context.Background()))
}

func TestEvaluationPaced(t *testing.T) {
	srv, demo, c := newDemo(t, agentatest.WithEvaluationPace(time.Millisecond))
	evs := create(t, c, demo.AppID, demo.TestsetID, []string{demo.VariantID, demo.VerboseVariantID}, demo.EvaluatorConfigIDs())

	// Poll as a user would: the list only grows, and a run that has not
	// ended may hold some of its scenarios, never more than its rows.
	seen := 0
	for {
		st, err := c.FetchEvaluationStatus(context.Background(), evs[0].ID)
		require.NoError(t, err)
		scenarios, err := c.FetchEvaluationScenarios(context.Background(), evs[0].ID)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(scenarios), seen, "the scenario list never shrinks")
		require.LessOrEqual(t, len(scenarios), 8)
		seen = len(scenarios)
		if st.EvaluationStatus().Terminal() {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, srv.WaitEvaluations(ctx))
	for _, ev := range evs {
		assert.Equal(t, models.EvaluationFinished, state(t, srv, ev.ID))
		scenarios, err := c.FetchEvaluationScenarios(context.Background(), ev.ID)
		require.NoError(t, err)
		assert.Len(t, scenarios, 8)
	}
}

func TestEvaluationWaitEndsWithContext(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithManualEvaluations())
	appID, testsetID, variants, evaluators := seedEcho(srv, nil, "auto_exact_match")
	create(t, newClient(t, srv), appID, testsetID, variants, evaluators)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, srv.WaitEvaluations(ctx), context.Canceled)
}

func TestEvaluationFinishedWithErrors(t *testing.T) {
	failing := func(params map[string]any, inputs map[string]string) (string, error) {
		if inputs["word"] == "beta" {
			return "", errors.New("rate limited by the provider")
		}
		if inputs["word"] == "gamma" {
			panic("bug in the app")
		}
		return agentatest.TemplateApplication(params, inputs)
	}
	srv := agentatest.NewTestServer(t)
	appID, testsetID, variants, evaluators := seedEcho(srv, failing, "auto_exact_match", "auto_webhook_test")
	c := newClient(t, srv)
	evs := create(t, c, appID, testsetID, variants[:1], evaluators)
	waitRuns(t, srv)
	scenarios, err := c.FetchEvaluationScenarios(context.Background(), evs[0].ID)
	require.NoError(t, err)
	require.Len(t, scenarios, 3)

	ok := scenarios[0]
	assert.False(t, ok.Outputs[0].Result.Failed())
	assert.False(t, ok.Results[0].Result.Failed())
	assert.True(t, ok.Results[1].Result.Failed(), "the fake cannot call a webhook")

	bad := scenarios[1]
	require.NotNil(t, bad.Outputs[0].Result.Error)
	assert.Equal(t, "rate limited by the provider", bad.Outputs[0].Result.Error.Message)
	assert.Nil(t, bad.Outputs[0].Cost, "sent as null")
	assert.Equal(t, bad.Outputs[0].Result, bad.Results[0].Result, "each evaluator's result is a copy of the app's error")
	assert.Empty(t, bad.CorrectAnswers, "a failed row has no correct answers")
	assert.Contains(t, scenarios[2].Outputs[0].Result.Error.Message, "bug in the app")

	assert.Equal(t, models.EvaluationFinishedWithErrors, state(t, srv, evs[0].ID))
}

func TestEvaluationFailsOnUnknownEvaluatorConfig(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	appID, testsetID, variants, _ := seedEcho(srv, nil)
	c := newClient(t, srv)
	evs := create(t, c, appID, testsetID, variants[:1], []string{"0190b5a2-0000-7000-8000-000000000404"})
	assert.Equal(t, models.EvaluationInitialized, evs[0].State(), "the service accepts the request")
	waitRuns(t, srv)
	ev, _ := srv.Evaluation(evs[0].ID)
	assert.Equal(t, models.EvaluationFailed, ev.State())
	require.NotNil(t, ev.Status.Error)
	assert.Equal(t, "Evaluation Failed", ev.Status.Error.Message)
	scenarios, err := c.FetchEvaluationScenarios(context.Background(), evs[0].ID)
	require.NoError(t, err)
	assert.Empty(t, scenarios)
}

func TestEvaluationCreateRefusals(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	appID, testsetID, variants, _ := seedEcho(srv, nil)
	c := newClient(t, srv)
	ctx := context.Background()
	try := func(ev models.NewEvaluation) *agenta.APIError {
		_, err := c.CreateEvaluation(ctx, ev)
		var apiErr *agenta.APIError
		require.ErrorAs(t, err, &apiErr)
		return apiErr
	}
	unknown := "0190b5a2-0000-7000-8000-000000000404"
	// A well-formed config id: a malformed one is refused before the
	// variants and the test set are looked up.
	base := models.NewEvaluation{AppID: appID, VariantIDs: variants, EvaluatorConfigIDs: []string{unknown},
		TestsetID: testsetID, RateLimit: models.DefaultRateLimit()}

	for _, tc := range []struct {
		name    string
		edit    func(*models.NewEvaluation)
		status  int
		message string
	}{
		{"unknown app", func(ev *models.NewEvaluation) { ev.AppID = unknown }, 404, "App not found"}, // the SDK drops the re-raised status prefix from Message
		{"unknown test set", func(ev *models.NewEvaluation) { ev.TestsetID = unknown }, 500, "'NoneType' object has no attribute 'id'"},
		{"unknown variant", func(ev *models.NewEvaluation) { ev.VariantIDs = []string{unknown} }, 500, "'NoneType' object has no attribute 'revision'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := base
			tc.edit(&ev)
			e := try(ev)
			assert.Equal(t, tc.status, e.StatusCode)
			assert.Equal(t, tc.message, e.Message)
		})
	}
	assert.Empty(t, srv.EvaluationIDs(), "no evaluation was started by a refused request")

	ev := base
	ev.VariantIDs = []string{variants[0], unknown}
	assert.Equal(t, 500, try(ev).StatusCode)
	assert.Len(t, srv.EvaluationIDs(), 1, "not atomic: the run of the variant before the unknown one has started")
}

func TestEvaluationReadsCorrectAnswerKey(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	appID := srv.AddApp(agentatest.App{Name: "echo"})
	base := srv.AddBase(agentatest.Base{AppID: appID})
	variant := srv.AddVariant(agentatest.Variant{BaseID: base, Parameters: map[string]any{"prompt_user": "{q}"}})
	testset := srv.AddTestset(agentatest.Testset{AppID: appID, Rows: []map[string]string{{"q": "a", "expected": "a"}}})
	c := newClient(t, srv)

	for _, tc := range []struct {
		name     string
		settings map[string]any
		column   string // correct_answer_column, which the service ignores
		verdict  bool   // an exact match; false means an error Result
		message  string
		answers  []models.CorrectAnswer
	}{
		{"key given", map[string]any{"correct_answer_key": "expected"}, "", true, "",
			[]models.CorrectAnswer{{Key: "expected", Value: "a"}}},
		{"key given, column ignored", map[string]any{"correct_answer_key": "expected"}, "q", true, "",
			[]models.CorrectAnswer{{Key: "expected", Value: "a"}}},
		// The worker lists the evaluator's correct_answer_key even when the
		// settings have none: one entry, with key and value "".
		{"no key", nil, "expected", false, "No correct answer keys provided.", []models.CorrectAnswer{{Key: "", Value: ""}}},
		{"key of a missing column", map[string]any{"correct_answer_key": "nope"}, "", false,
			"Correct answer column 'nope' not found in the test set.", []models.CorrectAnswer{{Key: "nope", Value: ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exact := srv.AddEvaluatorConfig(models.EvaluatorConfig{EvaluatorKey: "auto_exact_match", SettingsValues: tc.settings})
			evs, err := c.CreateEvaluation(context.Background(), models.NewEvaluation{
				AppID: appID, VariantIDs: []string{variant}, EvaluatorConfigIDs: []string{exact},
				TestsetID: testset, RateLimit: models.DefaultRateLimit(), CorrectAnswerColumn: tc.column,
			})
			require.NoError(t, err)
			waitRuns(t, srv)
			scenarios, err := c.FetchEvaluationScenarios(context.Background(), evs[0].ID)
			require.NoError(t, err)
			require.Len(t, scenarios, 1)
			r := scenarios[0].Results[0].Result
			if tc.verdict {
				v, ok := r.Bool()
				assert.True(t, ok && v, "want a true bool, got %s", r)
			} else {
				assert.True(t, r.Failed(), "want an error Result, got %s", r)
				assert.False(t, r.HasValue(), "an error Result's value is null")
			}
			if tc.message != "" {
				require.NotNil(t, r.Error)
				assert.Equal(t, tc.message, r.Error.Message)
			}
			assert.Equal(t, tc.answers, scenarios[0].CorrectAnswers)
		})
	}
}

func TestEvaluationWithRevision(t *testing.T) {
	srv, demo, c := newDemo(t)
	rev := srv.UpdateVariantParameters(demo.VariantID, map[string]any{
		"model": "gpt-4o-mini", "temperature": 0.0, "prompt_system": "One word.", "prompt_user": "{country}",
	})
	assert.Equal(t, 4, rev)
	v, err := c.GetVariant(context.Background(), demo.VariantID)
	require.NoError(t, err)
	assert.Equal(t, 4, v.Revision)
	evs := create(t, c, demo.AppID, demo.TestsetID, []string{demo.VariantID}, []string{demo.ExactMatchID})
	assert.Equal(t, []string{"4"}, evs[0].Revisions)
	waitRuns(t, srv)
	ev, _ := srv.Evaluation(evs[0].ID)
	score, _ := ev.AggregatedResults[0].Result.Float64()
	assert.Equal(t, 1.0, score, "the new revision answers every capital right")
	assert.Equal(t, fmt.Sprint(models.EvaluationFinished), ev.State())
}
