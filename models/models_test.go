package models

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Canonical wire documents: every field set, timestamps as Timestamp writes
// them. Decoding then marshalling must give back the same document: the
// same JSON names and nothing lost.
var canonicalDocs = map[string]struct {
	doc  string
	into func() any
}{
	"EvaluationScenario": {`{
		"id": "s-1", "evaluation_id": "e-1",
		"inputs": [{"name": "country", "type": "text", "value": "France"}, {"name": "n", "type": "number", "value": 1.5},
		           {"name": "ctx", "type": "json", "value": {"k": [1, null]}}, {"name": "none", "type": "text", "value": null}],
		"outputs": [{"result": {"type": "text", "value": "Paris", "error": {"message": "m", "stacktrace": "st"}}, "cost": 0.0001, "latency": 2}],
		"evaluation": "e-1", "correct_answer": "Paris", "correct_answers": [{"key": "correct_answer", "value": "Paris"}],
		"is_pinned": true, "note": "look",
		"results": [{"evaluator_config": "c-1", "result": {"type": "bool", "value": true}},
		            {"evaluator_config": "c-2", "result": {"type": "object", "value": {"a": [1, 2, {"b": null}]}}},
		            {"evaluator_config": "c-3", "result": {"type": "text", "value": null}}]
	}`, func() any { return new(EvaluationScenario) }},
	"Evaluation": {`{
		"id": "e-1", "app_id": "a-1", "user_id": "u-1", "user_username": "ada",
		"variant_ids": ["v-1"], "variant_names": ["app.default"], "variant_revision_ids": ["r-1"], "revisions": ["3"],
		"testset_id": "t-1", "testset_name": "capitals",
		"status": {"type": "status", "value": "EVALUATION_FINISHED"},
		"aggregated_results": [{"evaluator_config": {"id": "c-1", "name": "Exact", "evaluator_key": "auto_exact_match",
			"settings_values": {"threshold": 0.5, "nested": {"list": ["x"]}},
			"created_at": "2024-06-20T08:00:00Z", "updated_at": "2024-06-20T08:00:00.123456Z"},
			"result": {"type": "number", "value": 0.5}}],
		"average_cost": {"type": "cost", "value": 0.002}, "total_cost": {"type": "cost", "value": 0.04},
		"average_latency": {"type": "latency", "value": 1.25},
		"created_at": "2024-06-26T12:22:31.775Z", "updated_at": "2024-06-26T14:22:31.775+02:00"
	}`, func() any { return new(Evaluation) }},
	"AppVariantResponse": {`{
		"app_id": "a-1", "app_name": "capitals", "variant_id": "v-1", "variant_name": "app.default",
		"parameters": {"temperature": 0.7, "model": "gpt-4o", "stop": null, "inputs": [{"name": "country"}]},
		"previous_variant_name": "app.old", "user_id": "u-1", "base_name": "app", "base_id": "b-1",
		"config_name": "default", "uri": "http://app:80", "revision": 3, "organization_id": "o-1", "workspace_id": "w-1"
	}`, func() any { return new(AppVariantResponse) }},
	"Span": {`{
		"id": "sp-1", "name": "workflow", "parent_span_id": "sp-0", "created_at": "2024-06-26T12:22:31.775Z",
		"variant": {"variant_id": "v-1", "variant_name": "app.default", "revision": 3, "environment": "staging"},
		"environment": "production", "spankind": "WORKFLOW", "status": "OK",
		"metadata": {"cost": 0.1, "latency": 2.5, "usage": {"total_tokens": 150}}, "trace_id": "tr-1", "user_id": "u-1",
		"content": {"inputs": {"country": "France"}, "internals": {}, "outputs": ["Paris"]},
		"children": [{"id": "sp-2", "name": "llm", "parent_span_id": "sp-1", "created_at": "2024-06-26T12:22:32Z",
			"variant": {"variant_id": "v-1"}, "spankind": "NEW_KIND", "status": "NEW_STATUS", "metadata": {}, "content": {},
			"children": [{"id": "sp-3", "name": "tool", "created_at": "2024-06-26T12:22:33Z", "variant": {},
				"spankind": "TOOL", "status": "ERROR", "metadata": {"cost": 1}, "content": {"outputs": null}}]}],
		"config": {"temperature": 0.7}
	}`, func() any { return new(Span) }},
	"HumanEvaluation": {`{
		"id": "h-1", "app_id": "a-1", "user_id": "u-1", "user_username": "ada", "evaluation_type": "human_a_b_testing",
		"variant_ids": ["v-1", "v-2"], "variant_names": ["a", "b"], "variants_revision_ids": ["r-1", "r-2"],
		"revisions": ["1", "2"], "testset_id": "t-1", "testset_name": "faq", "status": "EVALUATION_FINISHED",
		"created_at": "2024-06-26T12:22:31.775Z", "updated_at": "2024-06-26T12:22:31.775-03:30"
	}`, func() any { return new(HumanEvaluation) }},
	"NewEvaluation": {`{
		"app_id": "a-1", "variant_ids": ["v-1", "v-2"], "evaluators_configs": ["c-1"], "testset_id": "t-1",
		"rate_limit": {"batch_size": 10, "max_retries": 3, "retry_delay": 3, "delay_between_batches": 5},
		"lm_providers_keys": {"OPENAI_API_KEY": "[REDACTED]", "GROQ_API_KEY": "[REDACTED]"}, "correct_answer_column": "expected"
	}`, func() any { return new(NewEvaluation) }},
	"AddVariantFromBase": {`{
		"base_id": "b-1", "new_variant_name": "fork", "new_config_name": "cfg", "parameters": {"temperature": 0.2, "n": [1]}
	}`, func() any { return new(AddVariantFromBase) }},
}

func TestModelsRoundTripCanonical(t *testing.T) {
	for name, tc := range canonicalDocs {
		t.Run(name, func(t *testing.T) {
			// Compact first: json.Marshal compacts the json.RawMessage values.
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, []byte(tc.doc)))
			v := tc.into()
			dec := json.NewDecoder(&compact)
			dec.DisallowUnknownFields() // every wire name has a Go field
			require.NoError(t, dec.Decode(v))

			out, err := json.Marshal(v)
			require.NoError(t, err)
			assert.JSONEq(t, tc.doc, string(out), "%s must marshal back to the same document", name)

			again := tc.into()
			require.NoError(t, json.Unmarshal(out, again))
			assert.Equal(t, v, again, "decode(marshal(decode(doc))) must equal decode(doc)")
		})
	}
}

// What real servers send (nulls, naive timestamps, unknown fields) decodes,
// and the decoded value survives a marshal round trip unchanged.
func TestModelsRoundTripRealShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		into func() any
	}{
		{"EvaluationScenario", `{"id":null,"evaluation_id":"e","inputs":[{"name":"x","type":"text","value":null}],
			"outputs":[{"result":{"type":"text","value":null,"error":null},"cost":null,"latency":null}],
			"evaluation":null,"correct_answer":null,"is_pinned":null,"note":null,"results":null,"future":1}`,
			func() any { return new(EvaluationScenario) }},
		{"Evaluation", `{"id":"e","status":{"type":"status","value":"EVALUATION_STARTED","error":null},
			"aggregated_results":[{"evaluator_config":{"id":"c","settings_values":null,"created_at":"2024-06-20T08:00:00","updated_at":null},"result":{"type":"number","value":null}}],
			"average_cost":null,"total_cost":null,"average_latency":null,"testset_id":null,
			"created_at":"2024-06-26T12:22:31.775000","updated_at":"2024-06-26T12:22:31.775000+00:00","x":[1]}`,
			func() any { return new(Evaluation) }},
		{"AppVariantResponse", `{"app_id":"a","parameters":null,"previous_variant_name":null,"uri":null,"revision":null,"organization_id":null,"workspace_id":null,"created_at":"2024-06-26T12:22:31.775000"}`,
			func() any { return new(AppVariantResponse) }},
		{"Span", `{"id":"s","parent_span_id":null,"created_at":"2024-06-26T12:22:31.775000","variant":null,"environment":null,
			"spankind":"LLM","status":"OK","metadata":null,"trace_id":null,"user_id":null,"content":null,"children":null,"config":null,
			"variant_environment":"x"}`,
			func() any { return new(Span) }},
		{"HumanEvaluation", `{"id":"h","variants_revision_ids":null,"testset_name":null,"created_at":"2024-06-26T12:22:31","updated_at":"2024-06-26T12:22:31.5+05:30","extra":{}}`,
			func() any { return new(HumanEvaluation) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.into()
			require.NoError(t, json.Unmarshal([]byte(tc.doc), v))
			out, err := json.Marshal(v)
			require.NoError(t, err)
			again := tc.into()
			require.NoError(t, json.Unmarshal(out, again))
			assert.Equal(t, v, again, "a round trip changes nothing\nout: %s", out)
		})
	}
}

// Go field names follow the JSON names in Go's initialism style.
func TestModelFieldNames(t *testing.T) {
	for _, tc := range []struct {
		v      any
		fields map[string]string // Go name -> JSON name
	}{
		{NewEvaluation{}, map[string]string{"AppID": "app_id", "VariantIDs": "variant_ids", "EvaluatorConfigIDs": "evaluators_configs",
			"TestsetID": "testset_id", "RateLimit": "rate_limit", "LMProvidersKeys": "lm_providers_keys", "CorrectAnswerColumn": "correct_answer_column"}},
		{RateLimit{}, map[string]string{"BatchSize": "batch_size", "MaxRetries": "max_retries", "RetryDelay": "retry_delay", "DelayBetweenBatches": "delay_between_batches"}},
		{AddVariantFromBase{}, map[string]string{"BaseID": "base_id", "NewVariantName": "new_variant_name", "NewConfigName": "new_config_name", "Parameters": "parameters"}},
		{AppVariantResponse{}, map[string]string{"AppID": "app_id", "VariantID": "variant_id", "URI": "uri", "Revision": "revision", "OrganizationID": "organization_id", "WorkspaceID": "workspace_id"}},
		{EvaluationScenario{}, map[string]string{"ID": "id", "EvaluationID": "evaluation_id", "IsPinned": "is_pinned", "CorrectAnswer": "correct_answer"}},
		{Evaluation{}, map[string]string{"VariantRevisionIDs": "variant_revision_ids", "AggregatedResults": "aggregated_results", "AverageCost": "average_cost"}},
		{Span{}, map[string]string{"SpanKind": "spankind", "ParentSpanID": "parent_span_id", "TraceID": "trace_id", "Children": "children", "Environment": "environment"}},
		{SpanVariant{}, map[string]string{"VariantID": "variant_id", "Environment": "environment", "Revision": "revision"}},
		{HumanEvaluation{}, map[string]string{"VariantsRevisionIDs": "variants_revision_ids", "EvaluationType": "evaluation_type"}},
		{Result{}, map[string]string{"Type": "type", "Value": "value", "Error": "error"}},
		{Error{}, map[string]string{"Message": "message", "Stacktrace": "stacktrace"}},
	} {
		typ := reflect.TypeOf(tc.v)
		for goName, jsonName := range tc.fields {
			f, ok := typ.FieldByName(goName)
			if !assert.True(t, ok, "%s has no field %s", typ, goName) {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			assert.Equal(t, jsonName, tag, "%s.%s", typ, goName)
		}
	}
	// Compile-time facts of the public surface.
	var keys ProviderKeys = NewProviderKeys(map[string]string{"OPENAI_API_KEY": "k"})
	ev := NewEvaluation{LMProvidersKeys: keys}
	ev.LMProvidersKeys = NewProviderKeys(map[string]string{"GROQ_API_KEY": "g"})
	var _ int = AppVariantResponse{}.Revision
	var _ []Span = Span{}.Children
	assert.Equal(t, 1, ev.LMProvidersKeys.Len())
}

// Unset optional request fields are not sent; parameters is always an object.
func TestRequestsOmitUnsetOptionalFields(t *testing.T) {
	out, err := json.Marshal(NewEvaluation{AppID: "a", VariantIDs: []string{"v"}, EvaluatorConfigIDs: []string{"c"}, TestsetID: "t", RateLimit: DefaultRateLimit()})
	require.NoError(t, err)
	assert.JSONEq(t, `{"app_id":"a","variant_ids":["v"],"evaluators_configs":["c"],"testset_id":"t",
		"rate_limit":{"batch_size":10,"max_retries":3,"retry_delay":3,"delay_between_batches":5}}`, string(out))

	for _, params := range []map[string]any{nil, {}} {
		out, err = json.Marshal(AddVariantFromBase{BaseID: "b", NewVariantName: "n", NewConfigName: "c", Parameters: params})
		require.NoError(t, err)
		assert.JSONEq(t, `{"base_id":"b","new_variant_name":"n","new_config_name":"c","parameters":{}}`, string(out))
	}
	out, err = json.Marshal(&AddVariantFromBase{BaseID: "b"})
	require.NoError(t, err)
	assert.Contains(t, string(out), `"parameters":{}`, "a pointer marshals the same")
	var back AddVariantFromBase
	require.NoError(t, json.Unmarshal([]byte(`{"base_id":"b","parameters":{"x":1}}`), &back))
	assert.Equal(t, map[string]any{"x": json.Number("1")}, back.Parameters, "AddVariantFromBase also decodes, numbers exact")
}

func TestEvaluationState(t *testing.T) {
	for _, tc := range []struct{ status, want string }{
		{`{"type":"status","value":"EVALUATION_STARTED"}`, EvaluationStarted},
		{`{"type":"status","value":"EVALUATION_FINISHED_WITH_ERRORS"}`, EvaluationFinishedWithErrors},
		{`{"type":"status","value":"SOMETHING_NEW"}`, "SOMETHING_NEW"},
		{`{"type":"status","value":null}`, ""},
		{`{"type":"status","value":3}`, ""},
		{`{"type":"status"}`, ""},
	} {
		var ev Evaluation
		require.NoError(t, json.Unmarshal([]byte(`{"status":`+tc.status+`}`), &ev))
		assert.Equal(t, tc.want, ev.State(), tc.status)
	}
	assert.Equal(t, RateLimit{BatchSize: 10, MaxRetries: 3, RetryDelay: 3, DelayBetweenBatches: 5}, DefaultRateLimit())
}
