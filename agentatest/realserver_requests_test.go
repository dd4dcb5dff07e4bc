package agentatest_test

// The calls of the differential suite (realserver_test.go): the objects of
// ../shared/realserver/seed.py, seeded through the real server's own routes
// or into agentatest, and the probes and evaluation lifecycles of
// ../shared/realserver/probe.py, with a few more, recorded in probe.py's
// JSON form.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// obj builds a JSON object whose keys keep the order given: request bodies
// must, since a 422 echoes the body in the order it was sent.
func obj(keysAndValues ...any) orderedObject {
	o := orderedObject{}
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		o = append(o, member{keysAndValues[i].(string), keysAndValues[i+1]})
	}
	return o
}

// with returns a copy of o with key set to value, in its place or last, as
// Python's dict(o, key=value) does.
func with(o orderedObject, key string, value any) orderedObject {
	out := append(orderedObject{}, o...)
	for i := range out {
		if out[i].key == key {
			out[i].value = value
			return out
		}
	}
	return append(out, member{key, value})
}

func without(o orderedObject, key string) orderedObject {
	var out orderedObject
	for _, m := range o {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}

// The objects seed.py creates, by the key it prints their ids under.
var (
	standInCapitals = [][2]string{{"France", "Paris"}, {"Germany", "Berlin"}, {"Italy", "Rome"}, {"Spain", "Madrid"}, {"Japan", "Tokyo"}}

	capitalsParameters = obj("prompt_template", "What is the capital of {country}?", "temperature", 0.7)

	capitalsTestsets = []struct {
		key, name string
		rows      []map[string]string
	}{
		{"testset_id", "capitals", capitalRows("country", 5, true)},
		{"testset_mismatch_id", "wrong-columns", capitalRows("nation", 3, true)},
		{"testset_errors_id", "with-errors", []map[string]string{
			{"country": "France", "correct_answer": "Paris"}, {"country": "ERR-1", "correct_answer": "x"},
			{"country": "Germany", "correct_answer": "Bonn"}, {"country": "ERR-2", "correct_answer": "y"}}},
		{"testset_nogt_id", "no-answer-column", capitalRows("country", 2, false)},
	}

	capitalsEvaluators = []struct {
		key, name, evaluator string
		settings             orderedObject
	}{
		{"ev_exact", "Exact match", "auto_exact_match", obj("correct_answer_key", "correct_answer")},
		{"ev_regex", "Capitalised", "auto_regex_test", obj("regex_pattern", "^[A-Z][a-z]+$", "regex_should_match", true)},
		{"ev_lev", "Edit distance", "auto_levenshtein_distance", obj("correct_answer_key", "correct_answer")},
		{"ev_exact_nokey", "Exact no key", "auto_exact_match", obj()},
		{"ev_starts", "Starts with P", "auto_starts_with", obj("prefix", "P", "case_sensitive", true)},
		{"ev_ai", "AI critique", "auto_ai_critique", obj("prompt_template", "rate {llm_app_output}", "correct_answer_key", "correct_answer")},
	}
)

func capitalRows(column string, n int, withAnswer bool) []map[string]string {
	var rows []map[string]string
	for _, c := range standInCapitals[:n] {
		row := map[string]string{column: c[0]}
		if withAnswer {
			row["correct_answer"] = c[1]
		}
		rows = append(rows, row)
	}
	return rows
}

// standInApplication answers as ../shared/realserver/apps/llmapp.py does:
// the capital of the country, "Unknown" for another, and a failure for a
// country starting with ERR.
func standInApplication(_ map[string]any, inputs map[string]string) (string, error) {
	country := inputs["country"]
	if strings.HasPrefix(country, "ERR") {
		return "", fmt.Errorf("deterministic failure for %s", country)
	}
	for _, c := range standInCapitals {
		if c[0] == country {
			return c[1], nil
		}
	}
	return "Unknown", nil
}

// seedFake loads the objects of seed.py into srv under the app name, with
// the variants' uri the real server gave, and returns their ids.
func seedFake(srv *agentatest.Server, name, uri string) map[string]string {
	ids := map[string]string{}
	ids["app_id"] = srv.AddApp(agentatest.App{Name: name})
	ids["base_id"] = srv.AddBase(agentatest.Base{AppID: ids["app_id"], Name: name, URI: uri, Application: standInApplication})
	ids["variant_id"] = srv.AddVariant(agentatest.Variant{BaseID: ids["base_id"], ConfigName: "default", Parameters: plainMap(capitalsParameters)})
	for _, ts := range capitalsTestsets {
		ids[ts.key] = srv.AddTestset(agentatest.Testset{AppID: ids["app_id"], Name: ts.name, Rows: ts.rows})
	}
	for _, e := range capitalsEvaluators {
		ids[e.key] = srv.AddEvaluatorConfig(models.EvaluatorConfig{Name: e.name, EvaluatorKey: e.evaluator, SettingsValues: plainMap(e.settings)})
	}
	ids["human_evaluation_id"] = srv.AddHumanEvaluation(models.HumanEvaluation{AppID: ids["app_id"],
		EvaluationType: models.HumanEvaluationSingleModelTest, VariantIDs: []string{ids["variant_id"]},
		TestsetID: ids["testset_id"], TestsetName: "capitals", Status: models.EvaluationInitialized})
	return ids
}

func plainMap(o orderedObject) map[string]any {
	m := map[string]any{}
	for _, kv := range o {
		m[kv.key] = kv.value
	}
	return m
}

// prober makes the suite's calls to one server, base ending in /api. It
// follows no redirect, so that a 307 is compared as such.
type prober struct {
	t      *testing.T
	base   string
	client *http.Client
	// stuck is set once a run did not end within pollLimit: later waits
	// give up at once, since the server's worker is likely down.
	stuck atomic.Bool
	// parallel runs the lifecycles at once: the fake's runs are
	// independent, while the real server's one worker takes them in turn.
	parallel bool
}

func newProber(t *testing.T, base string) *prober {
	return &prober{t: t, base: strings.TrimRight(base, "/"), client: &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// exchange is one call and its answer, as probe.py records it.
type exchange struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Status      int    `json:"status"`
	ContentType string `json:"ctype"`
	// Body is the answer decoded by decodeAnswer.
	Body any `json:"body"`
}

// UnmarshalJSON reads a record of probe.py, keeping the body's key order
// and number spelling.
func (e *exchange) UnmarshalJSON(data []byte) error {
	var raw struct {
		Method      string          `json:"method"`
		Path        string          `json:"path"`
		Status      int             `json:"status"`
		ContentType string          `json:"ctype"`
		Body        json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*e = exchange{raw.Method, raw.Path, raw.Status, raw.ContentType, decodeAnswer(raw.Body)}
	return nil
}

// do makes one call: body is sent as JSON, or raw as it is; every call
// says Content-Type: application/json, as probe.py's do.
func (p *prober) do(method, path string, body any, raw string, header map[string]string) exchange {
	p.t.Helper()
	var data io.Reader
	switch {
	case raw != "":
		data = strings.NewReader(raw)
	case body != nil:
		b, err := json.Marshal(body)
		if err != nil {
			panic(fmt.Sprintf("%s %s: the suite's body does not encode: %v", method, path, err))
		}
		data = bytes.NewReader(b)
	}
	failed := func(err error) exchange {
		// Errorf, not Fatalf: the suite probes both servers at once.
		p.t.Errorf("%s %s%s: %v", method, p.base, path, err)
		return exchange{Method: method, Path: path, Body: err.Error()}
	}
	req, err := http.NewRequest(method, p.base+path, data)
	if err != nil {
		return failed(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return failed(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return failed(fmt.Errorf("read the answer: %w", err))
	}
	return exchange{method, path, resp.StatusCode, resp.Header.Get("Content-Type"), decodeAnswer(answer)}
}

// seedReal creates the objects of seed.py on a real server through its own
// routes, under the app name, and returns their ids and the variant's uri.
func (p *prober) seedReal(name string) (map[string]string, string) {
	p.t.Helper()
	call := func(method, path string, body any, want ...string) orderedObject {
		p.t.Helper()
		e := p.do(method, path, body, "", nil)
		o, ok := e.Body.(orderedObject)
		if e.Status != http.StatusOK || !ok && len(want) > 0 {
			p.t.Fatalf("seeding the real server: %s %s: %d %s", method, path, e.Status, clip(e.Body))
		}
		for _, key := range want {
			if v, _ := lookup(o, key); v == nil {
				p.t.Fatalf("seeding the real server: %s %s: no %s in %s", method, path, key, clip(e.Body))
			}
		}
		return o
	}
	text := func(o orderedObject, key string) string {
		v, _ := lookup(o, key)
		s, _ := v.(string)
		return s
	}
	ids := map[string]string{}
	ids["app_id"] = text(call("POST", "/apps/", obj("app_name", name), "app_id"), "app_id")
	v := call("POST", "/apps/"+ids["app_id"]+"/variant/from-image/", obj(
		"variant_name", name+".default", "docker_id", standInImageID, "tags", standInImageTag,
		"base_name", name, "config_name", "default"), "variant_id", "base_id")
	ids["variant_id"], ids["base_id"] = text(v, "variant_id"), text(v, "base_id")
	uri := text(call("PUT", "/variants/"+ids["variant_id"]+"/", obj("action", obj("action", "START")), "uri"), "uri")
	call("PUT", "/variants/"+ids["variant_id"]+"/parameters/", obj("parameters", capitalsParameters))
	for _, ts := range capitalsTestsets {
		ids[ts.key] = text(call("POST", "/testsets/"+ids["app_id"]+"/", obj("name", ts.name, "csvdata", ts.rows), "id"), "id")
	}
	for _, e := range capitalsEvaluators {
		ids[e.key] = text(call("POST", "/evaluators/configs/", obj("app_id", ids["app_id"], "name", e.name,
			"evaluator_key", e.evaluator, "settings_values", e.settings), "id"), "id")
	}
	ids["human_evaluation_id"] = text(call("POST", "/human-evaluations/", obj("app_id", ids["app_id"],
		"variant_ids", []string{ids["variant_id"]}, "evaluation_type", "single_model_test", "inputs", []string{"country"},
		"testset_id", ids["testset_id"], "status", "EVALUATION_INITIALIZED"), "id"), "id")
	return ids, uri
}

// The image seed.py deploys: the kit's docker stub knows it, and its stand-in
// app answers for it.
const (
	standInImageTag = "agentaai/rsapp:latest"
	standInImageID  = "sha256:0000000000000000000000000000000000000000000000000000000000rsapp"
)

// unknownID is a well-formed UUIDv7 that names nothing, and hex24 an
// ObjectId, as probe.py uses them.
const (
	unknownID = "0190b5a2-1234-7abc-8def-0123456789ab"
	hex24     = "6583e552eb855930ec6b1bdd"
)

// probe is one call of the suite.
type probe struct {
	name, method, path string
	body               any
	raw                string
	header             map[string]string
}

// defaultRateLimit is probe.py's rate_limit: the web UI's.
var defaultRateLimit = obj("batch_size", 10, "max_retries", 3, "retry_delay", 3, "delay_between_batches", 5)

// goodCreate is probe.py's create request: the four evaluators that run
// without a key, on the good test set.
func goodCreate(ids map[string]string) orderedObject {
	return obj("app_id", ids["app_id"], "variant_ids", []string{ids["variant_id"]},
		"evaluators_configs", []string{ids["ev_exact"], ids["ev_regex"], ids["ev_lev"], ids["ev_starts"]},
		"testset_id", ids["testset_id"], "rate_limit", defaultRateLimit)
}

// probes lists probe.py's error probes, in its order, then the suite's
// own; the create that succeeds and the reads after it come in run.
func probes(ids map[string]string) []probe {
	good := goodCreate(ids)
	frombase := func(base, variant, config string, parameters any) orderedObject {
		o := obj("base_id", base, "new_variant_name", variant, "new_config_name", config)
		if parameters != nil {
			o = append(o, member{"parameters", parameters})
		}
		return o
	}
	return []probe{
		// 1 scenarios
		{name: "scen_unknown_uuid", method: "GET", path: "/evaluations/" + unknownID + "/evaluation_scenarios/"},
		{name: "scen_non_uuid", method: "GET", path: "/evaluations/nope/evaluation_scenarios/"},
		{name: "scen_hex24", method: "GET", path: "/evaluations/" + hex24 + "/evaluation_scenarios/"},
		{name: "scen_noslash_unknown", method: "GET", path: "/evaluations/" + unknownID + "/evaluation_scenarios"},
		// 2 create
		{name: "create_missing_all", method: "POST", path: "/evaluations/", body: obj()},
		{name: "create_missing_rate_limit", method: "POST", path: "/evaluations/", body: without(good, "rate_limit")},
		{name: "create_bad_types", method: "POST", path: "/evaluations/", body: with(with(good, "variant_ids", "x"), "rate_limit", obj("batch_size", "a"))},
		{name: "create_bad_provider", method: "POST", path: "/evaluations/", body: with(good, "lm_providers_keys", obj("FOO_KEY", "x"))},
		{name: "create_unknown_app", method: "POST", path: "/evaluations/", body: with(good, "app_id", unknownID)},
		{name: "create_non_uuid_app", method: "POST", path: "/evaluations/", body: with(good, "app_id", "nope")},
		{name: "create_unknown_variant", method: "POST", path: "/evaluations/", body: with(good, "variant_ids", []string{unknownID})},
		{name: "create_non_uuid_variant", method: "POST", path: "/evaluations/", body: with(good, "variant_ids", []string{"nope"})},
		{name: "create_unknown_testset", method: "POST", path: "/evaluations/", body: with(good, "testset_id", unknownID)},
		{name: "create_non_uuid_testset", method: "POST", path: "/evaluations/", body: with(good, "testset_id", "nope")},
		{name: "create_unknown_evaluator", method: "POST", path: "/evaluations/", body: with(good, "evaluators_configs", []string{unknownID})},
		{name: "create_non_uuid_evaluator", method: "POST", path: "/evaluations/", body: with(good, "evaluators_configs", []string{"nope"})},
		{name: "create_ai_no_keys", method: "POST", path: "/evaluations/", body: with(good, "evaluators_configs", []string{ids["ev_ai"]})},
		{name: "create_empty_variants", method: "POST", path: "/evaluations/", body: with(good, "variant_ids", []string{})},
		{name: "create_empty_evaluators", method: "POST", path: "/evaluations/", body: with(good, "evaluators_configs", []string{})},
		// 3 variant by environment
		{name: "env_ok", method: "GET", path: "/apps/get_variant_by_env/?app_id=" + ids["app_id"] + "&environment=production"},
		{name: "env_noslash", method: "GET", path: "/apps/get_variant_by_env?app_id=" + ids["app_id"] + "&environment=production"},
		{name: "env_unknown_app", method: "GET", path: "/apps/get_variant_by_env/?app_id=" + unknownID + "&environment=production"},
		{name: "env_missing_params", method: "GET", path: "/apps/get_variant_by_env/"},
		// 4 from base
		{name: "frombase_ok", method: "POST", path: "/variants/from-base/", body: frombase(ids["base_id"], "ignored", "probe",
			obj("temperature", 0.1, "prompt_template", "What is the capital of {country}?"))},
		{name: "frombase_dup", method: "POST", path: "/variants/from-base/", body: frombase(ids["base_id"], "ignored", "probe", obj())},
		{name: "frombase_default_dup", method: "POST", path: "/variants/from-base/", body: frombase(ids["base_id"], "x", "default", obj())},
		{name: "frombase_unknown_base", method: "POST", path: "/variants/from-base/", body: frombase(unknownID, "x", "y", obj())},
		{name: "frombase_non_uuid_base", method: "POST", path: "/variants/from-base/", body: frombase("nope", "x", "y", obj())},
		{name: "frombase_missing", method: "POST", path: "/variants/from-base/", body: obj()},
		{name: "frombase_noslash_missing_params", method: "POST", path: "/variants/from-base", body: frombase(ids["base_id"], "x", "z", nil)},
		// 5 get variant
		{name: "variant_ok", method: "GET", path: "/variants/" + ids["variant_id"] + "/"},
		{name: "variant_noslash", method: "GET", path: "/variants/" + ids["variant_id"]},
		{name: "variant_unknown", method: "GET", path: "/variants/" + unknownID + "/"},
		{name: "variant_non_uuid", method: "GET", path: "/variants/nope/"},
		// 6 span
		{name: "span_slash", method: "GET", path: "/observability/spans/" + unknownID + "/"},
		{name: "span_noslash", method: "GET", path: "/observability/spans/" + unknownID},
		// 7 human evaluations
		{name: "human_ok", method: "GET", path: "/human-evaluations/?app_id=" + ids["app_id"]},
		{name: "human_noslash", method: "GET", path: "/human-evaluations?app_id=" + ids["app_id"]},
		{name: "human_unknown", method: "GET", path: "/human-evaluations/?app_id=" + unknownID},
		{name: "human_non_uuid", method: "GET", path: "/human-evaluations/?app_id=nope"},
		{name: "human_empty", method: "GET", path: "/human-evaluations/?app_id="},
		{name: "human_missing", method: "GET", path: "/human-evaluations/"},
		// 8, 9 the evaluation and its status
		{name: "eval_unknown", method: "GET", path: "/evaluations/" + unknownID + "/"},
		{name: "eval_non_uuid", method: "GET", path: "/evaluations/nope/"},
		{name: "status_unknown", method: "GET", path: "/evaluations/" + unknownID + "/status/"},
		{name: "status_non_uuid", method: "GET", path: "/evaluations/nope/status/"},
		// transport
		{name: "no_api_prefix", method: "GET", path: "/../variants/" + ids["variant_id"] + "/"},
		{name: "unknown_route", method: "GET", path: "/nothing-here/"},
		{name: "bad_json", method: "POST", path: "/evaluations/", raw: "{not json"},
		{name: "wrong_method_scen", method: "POST", path: "/evaluations/" + unknownID + "/evaluation_scenarios/", body: obj()},
		{name: "key_garbage", method: "GET", path: "/variants/" + ids["variant_id"] + "/", header: map[string]string{"Authorization": "garbage"}},
		{name: "key_bearer", method: "GET", path: "/variants/" + ids["variant_id"] + "/", header: map[string]string{"Authorization": "Bearer x.y.z"}},
		{name: "key_apikey", method: "GET", path: "/variants/" + ids["variant_id"] + "/", header: map[string]string{"Authorization": "ApiKey abc"}},

		// The suite's own, beyond probe.py: the order of create's checks,
		// and the aggregated results read.
		{name: "create_empty_testset", method: "POST", path: "/evaluations/", body: with(good, "testset_id", "")},
		{name: "create_non_uuid_variant_and_testset", method: "POST", path: "/evaluations/", body: with(with(good, "variant_ids", []string{"nope"}), "testset_id", "nope")},
		{name: "create_unknown_variant_and_testset", method: "POST", path: "/evaluations/", body: with(with(good, "variant_ids", []string{unknownID}), "testset_id", unknownID)},
		{name: "results_unknown", method: "GET", path: "/evaluations/" + unknownID + "/results/"},
		{name: "results_non_uuid", method: "GET", path: "/evaluations/nope/results/"},
		{name: "results_noslash_unknown", method: "GET", path: "/evaluations/" + unknownID + "/results"},
		{name: "results_wrong_method", method: "POST", path: "/evaluations/" + unknownID + "/results/", body: obj()},
		// Numbers as the service stores and answers them: Python floats
		// from jsonb (1.0, 100.0, 1e-07, 0.0 for -0.0), exact integers.
		{name: "frombase_number_spellings", method: "POST", path: "/variants/from-base/", raw: `{"base_id":"` + ids["base_id"] +
			`","new_variant_name":"x","new_config_name":"numbers","parameters":{"temperature":1.0,"n":1,"x":1e2,"y":0.10,"z":-0.0,` +
			`"big":12345678901234567890,"e":1E-7,"f":2.50,"zz":{"b":1.0,"a":[1.0,2]}}}`},
	}
}

// terminalStatuses end a run.
var terminalStatuses = map[string]bool{
	models.EvaluationFinished: true, models.EvaluationFinishedWithErrors: true,
	models.EvaluationFailed: true, models.EvaluationAggregationFailed: true,
}

// recording is what one server answered to the whole suite, in probe.py's
// form: "errors" by probe name, "life" by lifecycle name.
type recording struct {
	Errors map[string]exchange  `json:"errors"`
	Life   map[string]lifecycle `json:"life"`
}

// run makes every call of the suite, as probe.py does.
func (p *prober) run(ids map[string]string) recording {
	rec := recording{Errors: map[string]exchange{}, Life: map[string]lifecycle{}}
	for _, pr := range probes(ids) {
		rec.Errors[pr.name] = p.do(pr.method, pr.path, pr.body, pr.raw, pr.header)
	}
	// A create that succeeds, and reads of what it made once it is over.
	created := p.do("POST", "/evaluations/", goodCreate(ids), "", nil)
	rec.Errors["create_ok"] = created
	if id, ok := firstEvaluationID(created); ok {
		rec.Errors["create_ok_immediate_status"] = p.do("GET", "/evaluations/"+id+"/status/", nil, "", nil)
		rec.Errors["create_ok_immediate_scen"] = p.do("GET", "/evaluations/"+id+"/evaluation_scenarios/", nil, "", nil)
		p.waitTerminal(id)
		rec.Errors["eval_ok"] = p.do("GET", "/evaluations/"+id+"/", nil, "", nil)
		rec.Errors["eval_ok_noslash"] = p.do("GET", "/evaluations/"+id, nil, "", nil)
		rec.Errors["status_ok"] = p.do("GET", "/evaluations/"+id+"/status/", nil, "", nil)
		rec.Errors["status_ok_noslash"] = p.do("GET", "/evaluations/"+id+"/status", nil, "", nil)
		rec.Errors["scen_ok"] = p.do("GET", "/evaluations/"+id+"/evaluation_scenarios/", nil, "", nil)
		rec.Errors["scen_ok_noslash"] = p.do("GET", "/evaluations/"+id+"/evaluation_scenarios", nil, "", nil)
		rec.Errors["results_ok_noslash"] = p.do("GET", "/evaluations/"+id+"/results", nil, "", nil)
	}
	// Two variants, the second unknown: the first one's run is created.
	rec.Errors["create_two_second_unknown"] = p.do("POST", "/evaluations/", with(goodCreate(ids), "variant_ids", []string{ids["variant_id"], unknownID}), "", nil)

	base := goodCreate(ids)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, l := range []struct {
		name string
		body orderedObject
	}{
		{"L1_good", base},
		{"L2_mismatch_columns", with(base, "testset_id", ids["testset_mismatch_id"])},
		{"L3_app_errors", with(base, "testset_id", ids["testset_errors_id"])},
		{"L4_max_retries_0", with(base, "rate_limit", with(defaultRateLimit, "max_retries", 0))},
		{"L5_no_correct_answer_key", with(base, "evaluators_configs", []string{ids["ev_exact_nokey"], ids["ev_regex"]})},
		{"L6_missing_answer_column", with(base, "testset_id", ids["testset_nogt_id"])},
		{"L7_batches_2x1s", with(base, "rate_limit", with(with(defaultRateLimit, "batch_size", 2), "delay_between_batches", 1))},
		{"L8_correct_answer_column_only", with(with(base, "evaluators_configs", []string{ids["ev_exact_nokey"]}), "correct_answer_column", "correct_answer")},
		// The suite's own: an evaluator config that does not exist.
		{"L9_unknown_evaluator", with(base, "evaluators_configs", []string{ids["ev_exact"], unknownID})},
	} {
		wg.Add(1)
		life := func() {
			defer wg.Done()
			got := p.life(l.body)
			mu.Lock()
			defer mu.Unlock()
			rec.Life[l.name] = got
		}
		if p.parallel {
			go life()
		} else {
			life()
		}
	}
	wg.Wait()
	return rec
}

func firstEvaluationID(e exchange) (string, bool) {
	list, _ := e.Body.([]any)
	if e.Status != http.StatusOK || len(list) == 0 {
		return "", false
	}
	first, _ := list[0].(orderedObject)
	v, _ := lookup(first, "id")
	id, ok := v.(string)
	return id, ok
}

// statusText reads the value of a status read's Result.
func statusText(e exchange) (string, bool) {
	o, _ := e.Body.(orderedObject)
	status, _ := lookup(o, "status")
	s, _ := status.(orderedObject)
	v, _ := lookup(s, "value")
	text, ok := v.(string)
	return text, ok
}

// pollLimit bounds a wait for a run's end, as probe.py's 60 s.
const pollLimit = time.Minute

// waitTerminal polls the status every 50 ms until the run is over.
func (p *prober) waitTerminal(id string) {
	p.t.Helper()
	for end := time.Now().Add(pollLimit); !p.stuck.Load() && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if v, _ := statusText(p.do("GET", "/evaluations/"+id+"/status/", nil, "", nil)); terminalStatuses[v] {
			return
		}
	}
	p.giveUp(id)
}

// giveUp fails the test for a run that did not end, and makes later waits
// give up at once.
func (p *prober) giveUp(id string) {
	if p.stuck.Swap(true) {
		p.t.Errorf("%s: evaluation %s not awaited: an earlier one never ended", p.base, id)
		return
	}
	p.t.Errorf("%s: evaluation %s did not end within %s: is the server's worker running?", p.base, id, pollLimit)
}

// lifecycle is one evaluation from create to its end, as probe.py's life()
// records it: the samples a poller saw every 50 ms (one per change of
// status or scenario count; each reads the scenarios, then the status),
// then the final reads.
type lifecycle struct {
	Create       exchange `json:"create"`
	Timeline     []sample `json:"timeline"`
	FinalStatus  exchange `json:"final_status"`
	FinalEval    exchange `json:"final_eval"`
	FinalScen    exchange `json:"final_scen"`
	FinalResults exchange `json:"final_results"`
}

// sample is one state a poller saw.
type sample struct {
	Status     string `json:"status"`
	Scenarios  int    `json:"scenarios"`
	StatusBody any    `json:"status_body"`
}

// UnmarshalJSON reads a sample of probe.py, keeping the status body's key
// order.
func (s *sample) UnmarshalJSON(data []byte) error {
	var raw struct {
		Status     any             `json:"status"`
		Scenarios  any             `json:"scenarios"`
		StatusBody json.RawMessage `json:"status_body"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	s.Status = fmt.Sprint(raw.Status)
	if n, ok := raw.Scenarios.(float64); ok {
		s.Scenarios = int(n)
	} else {
		s.Scenarios = -1 // the scenario read failed
	}
	s.StatusBody = decodeAnswer(raw.StatusBody)
	return nil
}

func (p *prober) life(body orderedObject) lifecycle {
	p.t.Helper()
	l := lifecycle{Create: p.do("POST", "/evaluations/", body, "", nil)}
	id, ok := firstEvaluationID(l.Create)
	if !ok {
		return l
	}
	var last *sample
	for end := time.Now().Add(pollLimit); ; time.Sleep(50 * time.Millisecond) {
		// The scenarios first, then the status: a run only moves forward,
		// so a sample whose status is INITIALIZED then truly had no
		// scenario (probe.py reads them the other way round, and on a
		// loaded machine a slow scenario read can pair INITIALIZED with
		// scenarios written after the status was read).
		scenarios := p.do("GET", "/evaluations/"+id+"/evaluation_scenarios/", nil, "", nil)
		status := p.do("GET", "/evaluations/"+id+"/status/", nil, "", nil)
		s := sample{Status: fmt.Sprint(status.Status), Scenarios: -1, StatusBody: status.Body}
		if v, ok := statusText(status); ok {
			s.Status = v
		}
		if list, ok := scenarios.Body.([]any); ok {
			s.Scenarios = len(list)
		}
		if last == nil || last.Status != s.Status || last.Scenarios != s.Scenarios {
			l.Timeline = append(l.Timeline, s)
			last = &l.Timeline[len(l.Timeline)-1]
		}
		if terminalStatuses[s.Status] {
			break
		}
		if p.stuck.Load() || time.Now().After(end) {
			p.giveUp(id)
			break
		}
	}
	l.FinalStatus = p.do("GET", "/evaluations/"+id+"/status/", nil, "", nil)
	l.FinalEval = p.do("GET", "/evaluations/"+id+"/", nil, "", nil)
	l.FinalScen = p.do("GET", "/evaluations/"+id+"/evaluation_scenarios/", nil, "", nil)
	l.FinalResults = p.do("GET", "/evaluations/"+id+"/results/", nil, "", nil)
	return l
}
