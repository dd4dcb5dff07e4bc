package agentatest_test

// The evaluations the fake runs: tests that pin each fact of the contract
// README's "The life of an evaluation", read with plain net/http so that
// they hold whatever the SDK does (TestLife*, TestCreate*, TestRun*), and
// runs through the SDK's client (TestEvaluation*).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// "POST /evaluations answers at once with one Evaluation per variant, in
// status EVALUATION_INITIALIZED ... Right after create, the scenarios are
// []." With the default pace, on any machine.
func TestLifeCreateAnswersInitializedAtOnce(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	variants := []string{d.VerboseVariantID, d.VariantID} // not the seeding order
	evs := created(t, createRaw(t, srv, d.AppID, d.TestsetID, variants, d.EvaluatorConfigIDs(), 3))
	require.Len(t, evs, 2, "one evaluation per variant")
	for i, ev := range evs {
		assert.Equal(t, []any{variants[i]}, ev["variant_ids"], "in the order of variant_ids")
		assert.Equal(t, map[string]any{"type": "status", "value": "EVALUATION_INITIALIZED", "error": nil}, ev["status"])
		assert.Regexp(t, uuid7, ev["id"])
		assert.Regexp(t, zuluStamp, ev["created_at"])
		assert.Empty(t, ev["aggregated_results"])
		assert.Empty(t, scenariosOf(t, srv, ev["id"].(string)), "right after create the scenarios are []")
	}
	waitRuns(t, srv)
	for _, ev := range evs {
		assert.Equal(t, "EVALUATION_FINISHED", statusValue(t, srv, ev["id"].(string)))
	}
}

// "With no worker running, the status stays INITIALIZED." Then the worker
// sets EVALUATION_STARTED and calls the app for every row; only then does it
// write one scenario per row, in row order, one at a time: the real server
// (../shared/realserver, results/real_life.json) shows the list growing
// while the run is STARTED (L1: 3 of 5 scenarios, still STARTED). Then it
// aggregates and sets the final status.
func TestLifeRunStepByStep(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithManualEvaluations())
	d := agentatest.SeedDemo(srv)
	id := created(t, createRaw(t, srv, d.AppID, d.TestsetID, []string{d.VariantID}, d.EvaluatorConfigIDs(), 3))[0]["id"].(string)

	assert.Equal(t, "EVALUATION_INITIALIZED", statusValue(t, srv, id), "no worker: nothing starts")
	assert.Empty(t, scenariosOf(t, srv, id))

	for row := 1; row <= d.TestsetRows; row++ {
		require.Equal(t, 1, srv.AdvanceEvaluations(1))
		assert.Equal(t, "EVALUATION_STARTED", statusValue(t, srv, id), "after %d app calls", row)
		assert.Empty(t, scenariosOf(t, srv, id), "no scenario before every row's app call, after %d", row)
	}
	for written := 1; written < d.TestsetRows; written++ {
		require.Equal(t, 1, srv.AdvanceEvaluations(1))
		assert.Equal(t, "EVALUATION_STARTED", statusValue(t, srv, id), "while the scenarios are written")
		assert.Len(t, scenariosOf(t, srv, id), written, "one scenario per write")
		ev := evaluationOf(t, srv, id)
		assert.Empty(t, ev["aggregated_results"], "no aggregate before the end")
		assert.Nil(t, ev["average_cost"])
	}
	require.Equal(t, 1, srv.AdvanceEvaluations(1), "the last write")
	assert.Equal(t, "EVALUATION_FINISHED", statusValue(t, srv, id))
	scenarios := scenariosOf(t, srv, id)
	require.Len(t, scenarios, d.TestsetRows)
	var countries []string
	for _, sc := range scenarios {
		inputs := sc.(map[string]any)["inputs"].([]any)
		countries = append(countries, inputs[0].(map[string]any)["value"].(string))
	}
	assert.Equal(t, []string{"France", "Japan", "Brazil", "Australia", "Canada", "Nigeria", "Switzerland", "Türkiye"},
		countries, "in row order")
	assert.Len(t, evaluationOf(t, srv, id)["aggregated_results"], 3, "aggregated at the end")
	assert.Equal(t, 0, srv.AdvanceEvaluations(1), "nothing left to run")
}

// The final statuses: FINISHED, FINISHED_WITH_ERRORS "when any scenario
// result has type error", FAILED "with error {message: Evaluation Failed,
// stacktrace} when the run broke, for example when the test set's columns
// do not match the app's inputs: then there are 0 scenarios, ever", and
// max_retries 0: "every row fails with Max retries reached".
func TestLifeFinalStatuses(t *testing.T) {
	failing := func(params map[string]any, inputs map[string]string) (string, error) {
		if inputs["word"] == "beta" {
			return "", errors.New("the provider is down")
		}
		return agentatest.TemplateApplication(params, inputs)
	}
	srv := agentatest.NewTestServer(t)
	appID, testsetID, variants, evaluators := seedEcho(srv, nil, "auto_exact_match")
	failingApp, failingTestset, failingVariants, failingEvaluators := seedEcho(srv, failing, "auto_exact_match")
	mismatch := srv.AddTestset(agentatest.Testset{AppID: appID, Rows: []map[string]string{{"text": "x", "correct_answer": "x"}}})

	for _, tc := range []struct {
		name                 string
		app, testset         string
		variant, evaluator   string
		maxRetries           int
		status               string
		scenarios            int
		failure, rowFailures string
	}{
		{"every row good", appID, testsetID, variants[0], evaluators[0], 3, "EVALUATION_FINISHED", 3, "", ""},
		{"one app call fails", failingApp, failingTestset, failingVariants[0], failingEvaluators[0], 3,
			"EVALUATION_FINISHED_WITH_ERRORS", 3, "", "the provider is down"},
		{"max_retries 0: the app is never called", appID, testsetID, variants[0], evaluators[0], 0,
			"EVALUATION_FINISHED_WITH_ERRORS", 3, "", "Max retries reached"},
		{"columns that do not match the inputs", appID, mismatch, variants[0], evaluators[0], 3,
			"EVALUATION_FAILED", 0, "Evaluation Failed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := created(t, createRaw(t, srv, tc.app, tc.testset, []string{tc.variant}, []string{tc.evaluator}, tc.maxRetries))[0]["id"].(string)
			waitRuns(t, srv)
			status := statusOf(t, srv, id)
			assert.Equal(t, tc.status, status["value"])
			if tc.failure != "" {
				e, _ := status["error"].(map[string]any)
				require.NotNil(t, e, "a failed run's status carries an error: %v", status)
				assert.Equal(t, tc.failure, e["message"])
				assert.NotEmpty(t, e["stacktrace"])
			} else {
				assert.Nil(t, status["error"])
			}
			scenarios := scenariosOf(t, srv, id)
			assert.Len(t, scenarios, tc.scenarios)
			if tc.rowFailures == "" {
				return
			}
			failed := 0
			for _, sc := range scenarios {
				sc := sc.(map[string]any)
				out := sc["outputs"].([]any)[0].(map[string]any)
				if e, _ := out["result"].(map[string]any)["error"].(map[string]any); e != nil {
					failed++
					assert.Equal(t, tc.rowFailures, e["message"])
					assert.Nil(t, out["cost"], "a failed row has no cost")
					assert.Nil(t, out["latency"], "nor latency")
					assert.Equal(t, []any{}, sc["correct_answers"], "nor correct answers")
					result := sc["results"].([]any)[0].(map[string]any)["result"]
					assert.Equal(t, out["result"], result, "each evaluator result is a copy of the app's error")
				}
			}
			assert.Positive(t, failed)
		})
	}
}

// Aggregation: "the mean of the values over the rows whose app call
// succeeded (bool counts 1 and 0), not rounded. If any of those values is
// an error, the aggregate is an error Result ...; an evaluator with no such
// rows has no entry at all. average_latency, average_cost, total_cost are
// Results of type latency/cost, or an error Result (No valid values found
// for cost aggregation.) when no row has a value."
func TestLifeAggregation(t *testing.T) {
	down := func(map[string]any, map[string]string) (string, error) { return "", errors.New("down") }
	srv := agentatest.NewTestServer(t)
	appID, testsetID, variants, evaluators := seedEcho(srv, nil, "auto_exact_match")
	broken := srv.AddEvaluatorConfig(models.EvaluatorConfig{EvaluatorKey: "auto_exact_match", SettingsValues: map[string]any{"correct_answer_key": "nope"}})
	downApp, downTestset, downVariants, downEvaluators := seedEcho(srv, down, "auto_exact_match")

	id := created(t, createRaw(t, srv, appID, testsetID, variants[:1], []string{evaluators[0], broken}, 3))[0]["id"].(string)
	allDown := created(t, createRaw(t, srv, downApp, downTestset, downVariants[:1], downEvaluators, 3))[0]["id"].(string)
	waitRuns(t, srv)

	ev := evaluationOf(t, srv, id)
	aggregates := ev["aggregated_results"].([]any)
	require.Len(t, aggregates, 2)
	exact := aggregates[0].(map[string]any)["result"].(map[string]any)
	assert.Equal(t, "number", exact["type"])
	assert.Equal(t, 2.0/3, exact["value"], "the mean of 1, 1, 0, not rounded")
	failed := aggregates[1].(map[string]any)["result"].(map[string]any)
	assert.Equal(t, "error", failed["type"])
	assert.Nil(t, failed["value"])
	assert.Equal(t, "unsupported operand type(s) for +: 'int' and 'NoneType'", failed["error"].(map[string]any)["message"])
	for name, kind := range map[string]string{"average_cost": "cost", "total_cost": "cost", "average_latency": "latency"} {
		r := ev[name].(map[string]any)
		assert.Equal(t, kind, r["type"], name)
		assert.IsType(t, 0.0, r["value"], name)
	}

	ev = evaluationOf(t, srv, allDown)
	assert.Equal(t, []any{}, ev["aggregated_results"], "no row succeeded: no entry at all")
	for name, message := range map[string]string{
		"average_cost":    "No valid values found for cost aggregation.",
		"total_cost":      "No valid values found for cost sum aggregation.", // the real server's text
		"average_latency": "No valid values found for latency aggregation.",
	} {
		r := ev[name].(map[string]any)
		assert.Equal(t, "error", r["type"], name)
		assert.Equal(t, message, r["error"].(map[string]any)["message"], name)
	}
}

// "GET /evaluations/{id}/status answers {"status": <Result>}; any failure
// there, an unknown id included, is a 500. GET /evaluations/{id} answers
// the Evaluation (with its aggregated results and costs) or 404 "404:
// Evaluation with id X not found"."
func TestLifeReads(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	id := created(t, createRaw(t, srv, d.AppID, d.TestsetID, []string{d.VariantID}, d.EvaluatorConfigIDs(), 3))[0]["id"].(string)
	waitRuns(t, srv)

	doc := evaluationOf(t, srv, id)
	assert.Equal(t, id, doc["id"])
	assert.Len(t, doc["aggregated_results"], len(d.EvaluatorConfigIDs()), "one aggregate per evaluator config")
	assert.Equal(t, doc["status"], statusOf(t, srv, id), "the status read agrees with the evaluation read")

	unknown := "0190b5a2-0000-7000-8000-000000000000"
	for _, tc := range []struct {
		name, path string
		status     int
		detail     string
	}{
		{"unknown evaluation", "/evaluations/" + unknown, 404, "404: Evaluation with id " + unknown + " not found"},
		{"malformed id", "/evaluations/nope", 500, "badly formed hexadecimal UUID string"},
		{"status of an unknown evaluation", "/evaluations/" + unknown + "/status", 500, "'NoneType' object has no attribute 'status'"},
		{"status of a malformed id", "/evaluations/nope/status", 500, "badly formed hexadecimal UUID string"},
		{"scenarios of an unknown evaluation", "/evaluations/" + unknown + "/evaluation_scenarios", 404, "404: Evaluation with id " + unknown + " not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, http.DefaultClient, srv.URL()+tc.path)
			assert.Equal(t, tc.status, r.status, "GET %s: %s", tc.path, r.body)
			assert.Equal(t, tc.detail, detail(t, r))
		})
	}
	assert.Len(t, srv.RequestsFor(agentatest.OpFetchEvaluation), 3)
	assert.Len(t, srv.RequestsFor(agentatest.OpFetchEvaluationStatus), 3)
}

// "Not idempotent, and not atomic: each accepted POST starts new runs, and
// runs for the variants before a failing one have already started when the
// 500 comes back."
func TestLifeCreateIsNeitherIdempotentNorAtomic(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	first := created(t, createRaw(t, srv, d.AppID, d.TestsetID, []string{d.VariantID}, nil, 3))
	second := created(t, createRaw(t, srv, d.AppID, d.TestsetID, []string{d.VariantID}, nil, 3))
	assert.NotEqual(t, first[0]["id"], second[0]["id"], "each POST starts a new run")

	r := createRaw(t, srv, d.AppID, d.TestsetID, []string{d.VerboseVariantID, "0190b5a2-0000-7000-8000-000000000404"}, nil, 3)
	assert.Equal(t, 500, r.status)
	assert.Equal(t, "'NoneType' object has no attribute 'revision'", detail(t, r))
	ids := srv.EvaluationIDs()
	require.Len(t, ids, 3, "the run of the variant before the unknown one was created")
	waitRuns(t, srv)
	assert.Equal(t, "EVALUATION_FINISHED", statusValue(t, srv, ids[2]), "and it runs")
}

// "Errors, in the order they are checked: unknown app 404; an AI-critique
// evaluator without provider keys 400; an unknown variant or test set 500",
// and "a malformed id is answered 500 'badly formed hexadecimal UUID
// string'": the service parses an id where it looks it up, so a malformed
// variant or test set id comes after the app and the evaluator configs, and
// after the runs of the variants before it have started.
func TestCreateChecksInTheServiceOrder(t *testing.T) {
	const unknown, malformed = "0190b5a2-0000-7000-8000-000000000404", "not-a-uuid"
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	for _, tc := range []struct {
		name                 string
		app, testset         string
		variants, evaluators []string
		status               int
		detail               string
		started              int
	}{
		{"unknown app before a malformed variant", unknown, d.TestsetID, []string{malformed}, nil, 404, "404: App not found", 0},
		{"unknown app before a malformed test set", unknown, malformed, []string{d.VariantID}, nil, 404, "404: App not found", 0},
		{"unknown app before a malformed config", unknown, d.TestsetID, []string{d.VariantID}, []string{malformed}, 404, "404: App not found", 0},
		{"missing provider key before a malformed variant", d.AppID, d.TestsetID, []string{malformed}, []string{d.AICritiqueID}, 400, "Missing LM provider Key", 0},
		{"missing provider key before a malformed test set", d.AppID, malformed, []string{d.VariantID}, []string{d.AICritiqueID}, 400, "Missing LM provider Key", 0},
		{"malformed config", d.AppID, d.TestsetID, []string{d.VariantID}, []string{malformed}, 500, "badly formed hexadecimal UUID string", 0},
		{"malformed config before an AI critique", d.AppID, d.TestsetID, []string{d.VariantID}, []string{malformed, d.AICritiqueID}, 500, "badly formed hexadecimal UUID string", 0},
		{"malformed app", malformed, d.TestsetID, []string{d.VariantID}, nil, 500, "badly formed hexadecimal UUID string", 0},
		// The real server's test set lookup says which id it could not read.
		{"malformed test set", d.AppID, malformed, []string{d.VariantID}, nil, 500, "testset_id not-a-uuid is not a valid UUID", 0},
		{"malformed test set before a malformed variant", d.AppID, malformed, []string{malformed}, nil, 500, "testset_id not-a-uuid is not a valid UUID", 0},
		{"empty test set", d.AppID, "", []string{d.VariantID}, nil, 500, "testset_id  must be a non-empty string", 0},
		{"no variant: no lookup, no run", d.AppID, malformed, []string{}, nil, 200, "", 0},
		{"a malformed second variant after the first one's run started", d.AppID, d.TestsetID, []string{d.VariantID, malformed}, nil, 500, "badly formed hexadecimal UUID string", 1},
		{"an unknown second variant after the first one's run started", d.AppID, d.TestsetID, []string{d.VariantID, unknown}, nil, 500, "'NoneType' object has no attribute 'revision'", 1},
		{"an unknown variant before an unknown test set", d.AppID, unknown, []string{unknown}, nil, 500, "'NoneType' object has no attribute 'revision'", 0},
		{"an unknown test set", d.AppID, unknown, []string{d.VariantID}, nil, 500, "'NoneType' object has no attribute 'id'", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(srv.EvaluationIDs())
			r := createRaw(t, srv, tc.app, tc.testset, tc.variants, tc.evaluators, 3)
			assert.Equal(t, tc.status, r.status, "status; body %s", r.body)
			if tc.detail != "" {
				assert.Equal(t, tc.detail, detail(t, r))
			}
			assert.Len(t, srv.EvaluationIDs(), before+tc.started, "runs started before the refusal")
		})
	}
}

// "lm_providers_keys names: OPENAI_API_KEY, … GEMINI_API_KEY; another name
// gets a 422": every name models lists is accepted.
func TestCreateAcceptsEveryProviderKeyName(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithManualEvaluations())
	d := agentatest.SeedDemo(srv)
	for _, name := range models.ProviderKeyNames() {
		body := fmt.Sprintf(`{"app_id":%q,"variant_ids":[%q],"evaluators_configs":[%q],"testset_id":%q,
			"rate_limit":{"batch_size":10,"max_retries":3,"retry_delay":3,"delay_between_batches":5},
			"lm_providers_keys":{%q:"sk-test"}}`, d.AppID, d.VariantID, d.ExactMatchID, d.TestsetID, name)
		r := post(t, srv.URL()+"/evaluations", "application/json", body)
		assert.Equal(t, http.StatusOK, r.status, "%s is a valid provider key; got %s", name, r.body)
	}
}

// "The worker … calls the app for every row (in batches of
// rate_limit.batch_size, delay_between_batches seconds apart)": after a
// batch the worker pauses, and no scenario is written before every row is
// done.
func TestRunPausesBetweenBatches(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithEvaluationPace(time.Millisecond))
	var calls atomic.Int32
	app := srv.AddApp(agentatest.App{Name: "counted"})
	base := srv.AddBase(agentatest.Base{AppID: app, Application: func(_ map[string]any, in map[string]string) (string, error) {
		calls.Add(1)
		return in["word"], nil
	}})
	variant := srv.AddVariant(agentatest.Variant{BaseID: base, Parameters: map[string]any{"inputs": []any{map[string]any{"name": "word"}}}})
	rows := make([]map[string]string, 6)
	for i := range rows {
		rows[i] = map[string]string{"word": fmt.Sprint("w", i)}
	}
	testset := srv.AddTestset(agentatest.Testset{AppID: app, Name: "six", Rows: rows})
	body := fmt.Sprintf(`{"app_id":%q,"variant_ids":[%q],"evaluators_configs":[],"testset_id":%q,
		"rate_limit":{"batch_size":4,"max_retries":3,"retry_delay":3,"delay_between_batches":60}}`, app, variant, testset)
	id := created(t, post(t, srv.URL()+"/evaluations", "application/json", body))[0]["id"].(string)

	deadline := time.Now().Add(time.Minute)
	for calls.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.EqualValues(t, 4, calls.Load(), "the first batch of 4 rows")
	// A worker that ignored the batches would make the last two calls and
	// finish within a few milliseconds; this one waits 60 s first.
	time.Sleep(100 * time.Millisecond)
	assert.EqualValues(t, 4, calls.Load(), "no app call during the pause between batches")
	assert.Equal(t, models.EvaluationStarted, statusValue(t, srv, id))
	assert.Empty(t, scenariosOf(t, srv, id), "no scenario before every row is done")
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
