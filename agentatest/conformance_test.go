package agentatest_test

// One test per row of the "Observed differences" table of
// ../shared/realserver/README.md: what the real mid-2024 server answered
// where the fake once answered otherwise, pinned without a server (the
// differential suite in realserver_test.go checks them against one). Each
// names its evidence: the probe of results/real_errors.json or
// results/real_life.json.

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// runToEnd creates an evaluation from body and returns its id once it is
// over.
func runToEnd(t *testing.T, srv *agentatest.Server, body orderedObject) string {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	r := post(t, srv.URL()+"/evaluations/", "application/json", string(b))
	id := created(t, r)[0]["id"].(string)
	waitRuns(t, srv)
	return id
}

// rawField reads the raw JSON text of a member of a raw object, for key order
// and number spelling.
func rawField(t *testing.T, body []byte, path ...string) string {
	t.Helper()
	var cur any = decodeAnswer(body)
	for _, p := range path {
		o, ok := cur.(orderedObject)
		require.True(t, ok, "%v in %s", path, body)
		cur, ok = lookup(o, p)
		require.True(t, ok, "%v in %s", path, body)
	}
	b, err := json.Marshal(cur)
	require.NoError(t, err)
	return string(b)
}

// user_username: agenta (create_ok, human_ok, eval_ok).
func TestRealServerUserIsAgenta(t *testing.T) {
	srv, ids := newCapitals(t)
	r := post(t, srv.URL()+"/evaluations/", "application/json", mustJSON(t, goodCreate(ids)))
	assert.Equal(t, "agenta", created(t, r)[0]["user_username"])
	h := get(t, http.DefaultClient, srv.URL()+"/human-evaluations/?app_id="+ids["app_id"]).json(t).([]any)
	require.Len(t, h, 1)
	assert.Equal(t, "agenta", h[0].(map[string]any)["user_username"])
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// GET /observability/spans/{id}/: 404 {"detail":"Not Found"} on a
// self-hosted server (span_slash, span_noslash); the cloud, which has the
// route, answers a span or 500.
func TestRealServerSpanRoute(t *testing.T) {
	srv, _ := newCapitals(t)
	for _, path := range []string{"/observability/spans/" + unknownID + "/", "/observability/spans/" + unknownID} {
		r := get(t, noRedirects, srv.URL()+path)
		assert.Equal(t, 404, r.status, path)
		assert.JSONEq(t, `{"detail":"Not Found"}`, string(r.body), path)
	}
	spanID := srv.AddTrace(models.Span{Name: "capitals"})
	assert.Equal(t, 200, get(t, noRedirects, srv.URL()+"/observability/spans/"+spanID+"/").status, "a Server holding a trace has the route")
	r := get(t, noRedirects, srv.URL()+"/observability/spans/"+unknownID+"/")
	assert.Equal(t, 500, r.status)
	assert.Equal(t, "Span "+unknownID+" not found", detail(t, r))
	assert.Equal(t, 307, get(t, noRedirects, srv.URL()+"/observability/spans/"+spanID).status)
}

// GET /apps/get_variant_by_env/: served as the interface describes by
// default; WithBrokenEnvironmentLookup answers every lookup with the real
// server's 500 (env_ok, env_noslash, env_unknown_app), after the 422 of a
// missing parameter (env_missing_params).
func TestRealServerEnvironmentLookup(t *testing.T) {
	srv, ids := newCapitals(t)
	srv.DeployToEnvironment(ids["variant_id"], "production")
	path := "/apps/get_variant_by_env/?app_id=" + ids["app_id"] + "&environment=production"
	r := get(t, http.DefaultClient, srv.URL()+path)
	require.Equal(t, 200, r.status, "%s", r.body)

	broken, ids := newCapitals(t, agentatest.WithBrokenEnvironmentLookup())
	broken.DeployToEnvironment(ids["variant_id"], "production")
	for _, q := range []string{"?app_id=" + ids["app_id"] + "&environment=production", "?app_id=" + unknownID + "&environment=staging", "?app_id=nope&environment=x"} {
		r := get(t, http.DefaultClient, broken.URL()+"/apps/get_variant_by_env/"+q)
		assert.Equal(t, 500, r.status, q)
		assert.Equal(t, "module 'agenta_backend.services.db_manager' has no attribute 'get_app_variant_by_app_name_and_environment'", detail(t, r), q)
	}
	assert.Equal(t, 422, get(t, http.DefaultClient, broken.URL()+"/apps/get_variant_by_env/").status)
}

// A variant's uri and parameters: the started base's uri (variant_ok,
// frombase_ok), and the parameters in jsonb's key order, as stored.
func TestRealServerVariantAsStored(t *testing.T) {
	srv, ids := newCapitals(t)
	r := get(t, http.DefaultClient, srv.URL()+"/variants/"+ids["variant_id"]+"/")
	require.Equal(t, 200, r.status)
	v := r.json(t).(map[string]any)
	assert.Regexp(t, `^http://localhost/[0-9a-f-]{36}/capitals/capitals$`, v["uri"])
	assert.Equal(t, `{"temperature":0.7,"prompt_template":"What is the capital of {country}?"}`, rawField(t, r.body, "parameters"))

	body := obj("base_id", ids["base_id"], "new_variant_name", "x", "new_config_name", "probe",
		"parameters", obj("temperature", 0.1, "prompt_template", "p", "a_longer_name", obj("zz", 1, "b", 2)))
	r = post(t, srv.URL()+"/variants/from-base/", "application/json", mustJSON(t, body))
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, `{"temperature":0.1,"a_longer_name":{"b":2,"zz":1},"prompt_template":"p"}`, rawField(t, r.body, "parameters"),
		"jsonb orders keys by length, then bytes, at every depth")
	assert.Equal(t, v["uri"], r.json(t).(map[string]any)["uri"], "the fork runs on its base's deployment")

	cloud := agentatest.NewTestServer(t)
	app := cloud.AddApp(agentatest.App{Name: "c", OrganizationID: "o"})
	variant := cloud.AddVariant(agentatest.Variant{BaseID: cloud.AddBase(agentatest.Base{AppID: app})})
	assert.Nil(t, get(t, http.DefaultClient, cloud.URL()+"/variants/"+variant).json(t).(map[string]any)["uri"],
		"a cloud app's base has no uri unless seeded with one")
}

// Numbers in stored parameters as Python writes what it read back from
// jsonb: a float keeps its fraction or exponent (1.0, 100.0 for 1e2,
// 1e-07), a negative zero is 0.0 (jsonb's numeric has none), an integer is
// exact whatever its size. Evidence: POST /variants/from-base/ with this
// body, then GET /variants/{id}/, on the real server (127.0.0.1:18000,
// 2026-11-26), probe frombase_number_spellings of the differential suite.
func TestRealServerParameterNumbers(t *testing.T) {
	srv, ids := newCapitals(t)
	body := `{"base_id":"` + ids["base_id"] + `","new_variant_name":"x","new_config_name":"numbers","parameters":` +
		`{"temperature":1.0,"n":1,"x":1e2,"y":0.10,"z":-0.0,"big":12345678901234567890,"e":1E-7,"f":2.50,"zz":{"b":1.0,"a":[1.0,2]}}}`
	const real = `{"e":1e-07,"f":2.5,"n":1,"x":100.0,"y":0.1,"z":0.0,"zz":{"a":[1.0,2],"b":1.0},"big":12345678901234567890,"temperature":1.0}`
	r := post(t, srv.URL()+"/variants/from-base/", "application/json", body)
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, real, rawField(t, r.body, "parameters"), "the fork's answer")
	id := r.json(t).(map[string]any)["variant_id"].(string)
	assert.Equal(t, real, rawField(t, get(t, http.DefaultClient, srv.URL()+"/variants/"+id+"/").body, "parameters"), "the variant read back")
}

// A human evaluation lists its variants' revisions (human_ok).
func TestRealServerHumanEvaluationRevisions(t *testing.T) {
	srv, ids := newCapitals(t)
	h := get(t, http.DefaultClient, srv.URL()+"/human-evaluations/?app_id="+ids["app_id"]).json(t).([]any)[0].(map[string]any)
	assert.Equal(t, []any{"capitals.default"}, h["variant_names"])
	assert.Equal(t, []any{"1"}, h["revisions"])
	require.Len(t, h["variants_revision_ids"], 1)
	assert.Regexp(t, uuid7, h["variants_revision_ids"].([]any)[0])
}

// A status read's Result in jsonb's key order, "type", "error", "value"
// (status_ok, create_ok_immediate_status); the evaluation itself, a model,
// keeps "type", "value", "error" (eval_ok).
func TestRealServerStatusKeyOrder(t *testing.T) {
	srv, ids := newCapitals(t, agentatest.WithManualEvaluations())
	r := post(t, srv.URL()+"/evaluations/", "application/json", mustJSON(t, goodCreate(ids)))
	id := created(t, r)[0]["id"].(string)
	assert.Equal(t, `{"type":"status","value":"EVALUATION_INITIALIZED","error":null}`, rawField(t, r.body[1:len(r.body)-1], "status"))
	assert.Equal(t, `{"status":{"type":"status","error":null,"value":"EVALUATION_INITIALIZED"}}`,
		string(get(t, http.DefaultClient, srv.URL()+"/evaluations/"+id+"/status/").body))
	assert.Equal(t, `{"type":"status","value":"EVALUATION_INITIALIZED","error":null}`,
		rawField(t, get(t, http.DefaultClient, srv.URL()+"/evaluations/"+id+"/").body, "status"))
}

// Aggregates: Python floats (1.0, 0.0), settings as stored (jsonb order),
// in the order the evaluator configs were created (eval_ok, L5), the same
// in GET /evaluations/{id}/results/ with each result in jsonb order
// (final_results).
func TestRealServerAggregates(t *testing.T) {
	srv, ids := newCapitals(t)
	id := runToEnd(t, srv, goodCreate(ids))
	ev := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+id+"/")
	var doc struct {
		AggregatedResults []json.RawMessage `json:"aggregated_results"`
	}
	require.NoError(t, json.Unmarshal(ev.body, &doc))
	require.Len(t, doc.AggregatedResults, 4)
	var values, settings []string
	for _, a := range doc.AggregatedResults {
		values = append(values, rawField(t, a, "result", "value"))
		settings = append(settings, rawField(t, a, "evaluator_config", "settings_values"))
	}
	assert.Equal(t, []string{"1.0", "1.0", "0.0", "0.2"}, values, "exact match, capitalised, edit distance, starts with P")
	assert.Equal(t, `{"prefix":"P","case_sensitive":true}`, settings[3])

	// Requested in another order, listed in the order of creation.
	nokey := runToEnd(t, srv, with(goodCreate(ids), "evaluators_configs", []string{ids["ev_exact_nokey"], ids["ev_regex"]}))
	results := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+nokey+"/results/")
	require.Equal(t, 200, results.status)
	var read struct {
		Results []struct {
			EvaluatorConfig struct{ Name string } `json:"evaluator_config"`
			Result          json.RawMessage       `json:"result"`
		} `json:"results"`
		EvaluationID string `json:"evaluation_id"`
	}
	require.NoError(t, json.Unmarshal(results.body, &read))
	assert.Equal(t, nokey, read.EvaluationID)
	require.Len(t, read.Results, 2)
	assert.Equal(t, "Capitalised", read.Results[0].EvaluatorConfig.Name, "created before Exact no key")
	assert.Equal(t, `{"type":"number","error":null,"value":1.0}`, string(read.Results[0].Result))
	assert.True(t, strings.HasPrefix(string(read.Results[1].Result), `{"type":"error","error":{"message":"unsupported operand type(s) for +: 'int' and 'NoneType'","stacktrace":"Traceback (most recent call last):\n`),
		"%s", read.Results[1].Result)
	assert.True(t, strings.HasSuffix(string(read.Results[1].Result), `TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'\n"},"value":null}`),
		"%s", read.Results[1].Result)

	for path, message := range map[string]string{
		"/evaluations/" + unknownID + "/results/": "'NoneType' object has no attribute 'id'",
		"/evaluations/nope/results/":              "badly formed hexadecimal UUID string",
	} {
		r := get(t, http.DefaultClient, srv.URL()+path)
		assert.Equal(t, 500, r.status, path)
		assert.Equal(t, message, detail(t, r), path)
	}
}

// correct_answers as the worker builds them: one entry per evaluator that
// takes a correct answer, "" for a key left unset (L5, L8) or a column the
// row lacks (L6), none for a failed row (L3).
func TestRealServerCorrectAnswers(t *testing.T) {
	srv, ids := newCapitals(t)
	for _, tc := range []struct {
		name    string
		body    orderedObject
		answers []models.CorrectAnswer
	}{
		{"two evaluators with a key, two without", goodCreate(ids),
			[]models.CorrectAnswer{{Key: "correct_answer", Value: "Paris"}, {Key: "correct_answer", Value: "Paris"}}},
		{"no key", with(goodCreate(ids), "evaluators_configs", []string{ids["ev_exact_nokey"], ids["ev_regex"]}),
			[]models.CorrectAnswer{{Key: "", Value: ""}}},
		{"no such column", with(goodCreate(ids), "testset_id", ids["testset_nogt_id"]),
			[]models.CorrectAnswer{{Key: "correct_answer", Value: ""}, {Key: "correct_answer", Value: ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := runToEnd(t, srv, tc.body)
			var scenarios []models.EvaluationScenario
			require.NoError(t, json.Unmarshal(get(t, http.DefaultClient, srv.URL()+"/evaluations/"+id+"/evaluation_scenarios/").body, &scenarios))
			require.NotEmpty(t, scenarios)
			assert.Equal(t, tc.answers, scenarios[0].CorrectAnswers)
		})
	}
}

// Failed rows: an app's failure keeps a Python traceback (L3); a row never
// called (max_retries 0) has the stacktrace "None" (L4); no cost means the
// cost and latency aggregates are errors, total_cost's saying "sum" (L4).
func TestRealServerFailedRows(t *testing.T) {
	srv, ids := newCapitals(t)
	errorsRun := runToEnd(t, srv, with(goodCreate(ids), "testset_id", ids["testset_errors_id"]))
	var scenarios []models.EvaluationScenario
	require.NoError(t, json.Unmarshal(get(t, http.DefaultClient, srv.URL()+"/evaluations/"+errorsRun+"/evaluation_scenarios/").body, &scenarios))
	require.Len(t, scenarios, 4)
	failed := scenarios[1].Outputs[0].Result.Error
	require.NotNil(t, failed)
	assert.Equal(t, "deterministic failure for ERR-1", failed.Message)
	assert.Equal(t, "Traceback (most recent call last):\nValueError: deterministic failure for ERR-1\n", failed.Stacktrace)
	assert.Empty(t, scenarios[1].CorrectAnswers)

	never := runToEnd(t, srv, with(goodCreate(ids), "rate_limit", with(defaultRateLimit, "max_retries", 0)))
	require.NoError(t, json.Unmarshal(get(t, http.DefaultClient, srv.URL()+"/evaluations/"+never+"/evaluation_scenarios/").body, &scenarios))
	assert.Equal(t, "Max retries reached", scenarios[0].Outputs[0].Result.Error.Message)
	assert.Equal(t, "None", scenarios[0].Outputs[0].Result.Error.Stacktrace, "str(None): no exception was raised")
	ev := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+never+"/").json(t).(map[string]any)
	traceback := regexp.MustCompile(`^Traceback \(most recent call last\):\n  File "/app/agenta_backend/services/aggregation_service.py", line \d+, in \w+\n    .*\nValueError: `)
	for name, message := range map[string]string{
		"average_cost":    "No valid values found for cost aggregation.",
		"total_cost":      "No valid values found for cost sum aggregation.",
		"average_latency": "No valid values found for latency aggregation.",
	} {
		e := ev[name].(map[string]any)["error"].(map[string]any)
		assert.Equal(t, message, e["message"], name)
		assert.Regexp(t, traceback, e["stacktrace"], name)
		assert.True(t, strings.HasSuffix(e["stacktrace"].(string), "ValueError: "+message+"\n"), name)
	}
}

// A 422 echoes the body's keys in the order sent (create_missing_rate_limit)
// with Pydantic's url; FastAPI's own JSON decode error has none (bad_json).
func TestRealServerValidationEcho(t *testing.T) {
	srv, ids := newCapitals(t)
	r := post(t, srv.URL()+"/evaluations/", "application/json", mustJSON(t, without(goodCreate(ids), "rate_limit")))
	require.Equal(t, 422, r.status)
	var doc struct{ Detail []json.RawMessage }
	require.NoError(t, json.Unmarshal(r.body, &doc))
	require.Len(t, doc.Detail, 1)
	input := decodeAnswer([]byte(rawField(t, doc.Detail[0], "input"))).(orderedObject)
	assert.Equal(t, []string{"app_id", "variant_ids", "evaluators_configs", "testset_id"}, keysOf(input))
	assert.Equal(t, `"https://errors.pydantic.dev/2.7/v/missing"`, rawField(t, doc.Detail[0], "url"))

	r = post(t, srv.URL()+"/evaluations/", "application/json", "{not json")
	assert.JSONEq(t, `{"detail":[{"type":"json_invalid","loc":["body",1],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}`, string(r.body))
}

// A run whose evaluator config does not exist starts, then fails before
// any app call with the worker's AttributeError (the suite's L9 on the
// real server).
func TestRealServerUnknownEvaluatorRun(t *testing.T) {
	srv, ids := newCapitals(t, agentatest.WithManualEvaluations())
	r := post(t, srv.URL()+"/evaluations/", "application/json", mustJSON(t, with(goodCreate(ids), "evaluators_configs", []string{ids["ev_exact"], unknownID})))
	id := created(t, r)[0]["id"].(string)
	require.Equal(t, 1, srv.AdvanceEvaluations(1))
	assert.Equal(t, "EVALUATION_STARTED", statusValue(t, srv, id))
	require.Equal(t, 1, srv.AdvanceEvaluations(1))
	status := statusOf(t, srv, id)
	assert.Equal(t, "EVALUATION_FAILED", status["value"])
	e := status["error"].(map[string]any)
	assert.Equal(t, "Evaluation Failed", e["message"])
	assert.True(t, strings.HasSuffix(e["stacktrace"].(string), "\nAttributeError: 'NoneType' object has no attribute 'id'\n"), "%s", e["stacktrace"])
	assert.Equal(t, 0, srv.AdvanceEvaluations(1), "no app call after the failure")
	assert.Empty(t, scenariosOf(t, srv, id))
}
