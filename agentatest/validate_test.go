package agentatest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
)

const goodRateLimit = `"rate_limit":{"batch_size":10,"max_retries":3,"retry_delay":3,"delay_between_batches":5}`

// TestValidationErrorsV1 pins the 422 bodies of the contract's Pydantic v1
// dialect: loc, msg and type of each item, in FastAPI's order.
func TestValidationErrorsV1(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithOlderServer())
	u := srv.URL()
	for _, tc := range []struct {
		name, path, contentType, body string
		want                          string
	}{
		{
			name: "no body", path: "/evaluations", contentType: "application/json", body: "",
			want: `{"detail":[{"loc":["body"],"msg":"field required","type":"value_error.missing"}]}`,
		},
		{
			name: "null body", path: "/variants/from-base", contentType: "application/json", body: "null",
			want: `{"detail":[{"loc":["body"],"msg":"field required","type":"value_error.missing"}]}`,
		},
		{
			name: "not JSON", path: "/evaluations", contentType: "application/json", body: "app_id=1",
			want: `{"detail":[{"loc":["body",0],"msg":"Expecting value: line 1 column 1 (char 0)","type":"value_error.jsondecode",
				"ctx":{"msg":"Expecting value","doc":"app_id=1","pos":0,"lineno":1,"colno":1}}]}`,
		},
		{
			name: "truncated JSON on the second line", path: "/evaluations", contentType: "application/json", body: "{\n \"app_id\" 1}",
			// Python skips the blank before reporting the missing colon.
			want: `{"detail":[{"loc":["body",12],"msg":"Expecting ':' delimiter: line 2 column 11 (char 12)","type":"value_error.jsondecode",
				"ctx":{"msg":"Expecting ':' delimiter","doc":"{\n \"app_id\" 1}","pos":12,"lineno":2,"colno":11}}]}`,
		},
		{
			name: "trailing data", path: "/evaluations", contentType: "application/json", body: `{} x`,
			want: `{"detail":[{"loc":["body",3],"msg":"Extra data: line 1 column 4 (char 3)","type":"value_error.jsondecode",
				"ctx":{"msg":"Extra data","doc":"{} x","pos":3,"lineno":1,"colno":4}}]}`,
		},
		{
			name: "text content type", path: "/variants/from-base", contentType: "text/plain", body: `{}`,
			want: `{"detail":[{"loc":["body"],"msg":"value is not a valid dict","type":"type_error.dict"}]}`,
		},
		{
			name: "a list is not a model", path: "/variants/from-base", contentType: "application/json", body: `[1]`,
			want: `{"detail":[{"loc":["body"],"msg":"value is not a valid dict","type":"type_error.dict"}]}`,
		},
		{
			name: "every field missing", path: "/evaluations", contentType: "application/json", body: `{}`,
			want: `{"detail":[
				{"loc":["body","app_id"],"msg":"field required","type":"value_error.missing"},
				{"loc":["body","variant_ids"],"msg":"field required","type":"value_error.missing"},
				{"loc":["body","evaluators_configs"],"msg":"field required","type":"value_error.missing"},
				{"loc":["body","testset_id"],"msg":"field required","type":"value_error.missing"},
				{"loc":["body","rate_limit"],"msg":"field required","type":"value_error.missing"}]}`,
		},
		{
			name: "list positions are integers", path: "/evaluations", contentType: "application/json",
			body: `{"app_id":"a","variant_ids":["v",null,{}],"evaluators_configs":"e","testset_id":"t",` + goodRateLimit + `}`,
			want: `{"detail":[
				{"loc":["body","variant_ids",1],"msg":"none is not an allowed value","type":"type_error.none.not_allowed"},
				{"loc":["body","variant_ids",2],"msg":"str type expected","type":"type_error.str"},
				{"loc":["body","evaluators_configs"],"msg":"value is not a valid list","type":"type_error.list"}]}`,
		},
		{
			name: "nested rate limit", path: "/evaluations", contentType: "application/json",
			body: `{"app_id":"a","variant_ids":[],"evaluators_configs":[],"testset_id":"t",
				"rate_limit":{"batch_size":"ten","max_retries":1.5,"retry_delay":null}}`,
			want: `{"detail":[
				{"loc":["body","rate_limit","batch_size"],"msg":"value is not a valid integer","type":"type_error.integer"},
				{"loc":["body","rate_limit","retry_delay"],"msg":"none is not an allowed value","type":"type_error.none.not_allowed"},
				{"loc":["body","rate_limit","delay_between_batches"],"msg":"field required","type":"value_error.missing"}]}`,
		},
		{
			name: "rate limit not an object", path: "/evaluations", contentType: "application/json",
			body: `{"app_id":"a","variant_ids":[],"evaluators_configs":[],"testset_id":"t","rate_limit":5}`,
			want: `{"detail":[{"loc":["body","rate_limit"],"msg":"value is not a valid dict","type":"type_error.dict"}]}`,
		},
		{
			name: "provider key not allowed", path: "/evaluations", contentType: "application/json",
			body: `{"app_id":"a","variant_ids":[],"evaluators_configs":[],"testset_id":"t",` + goodRateLimit + `,
				"lm_providers_keys":{"OPENAI_API_KEY":"sk-1","MY_KEY":"sk-2","GROQ_API_KEY":[]}}`,
			want: `{"detail":[
				{"loc":["body","lm_providers_keys","__key__"],"msg":"value is not a valid enumeration member; permitted: 'OPENAI_API_KEY', 'MISTRAL_API_KEY', 'COHERE_API_KEY', 'ANTHROPIC_API_KEY', 'ANYSCALE_API_KEY', 'PERPLEXITYAI_API_KEY', 'DEEPINFRA_API_KEY', 'TOGETHERAI_API_KEY', 'ALEPHALPHA_API_KEY', 'OPENROUTER_API_KEY', 'GROQ_API_KEY', 'GEMINI_API_KEY'","type":"type_error.enum",
				 "ctx":{"enum_values":["OPENAI_API_KEY","MISTRAL_API_KEY","COHERE_API_KEY","ANTHROPIC_API_KEY","ANYSCALE_API_KEY","PERPLEXITYAI_API_KEY","DEEPINFRA_API_KEY","TOGETHERAI_API_KEY","ALEPHALPHA_API_KEY","OPENROUTER_API_KEY","GROQ_API_KEY","GEMINI_API_KEY"]}},
				{"loc":["body","lm_providers_keys","GROQ_API_KEY"],"msg":"str type expected","type":"type_error.str"}]}`,
		},
		{
			name: "add variant fields", path: "/variants/from-base", contentType: "application/json",
			body: `{"base_id":["b"],"new_config_name":"c","parameters":"x"}`,
			want: `{"detail":[
				{"loc":["body","base_id"],"msg":"str type expected","type":"type_error.str"},
				{"loc":["body","new_variant_name"],"msg":"field required","type":"value_error.missing"},
				{"loc":["body","parameters"],"msg":"value is not a valid dict","type":"type_error.dict"}]}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, u+tc.path, tc.contentType, tc.body)
			require.Equal(t, 422, r.status, "%s", r.body)
			assert.JSONEq(t, tc.want, string(r.body))
		})
	}
}

// TestValidationCoercionV1 checks what Pydantic v1 accepts rather than
// refuses: numbers as strings, numeric strings and floats as integers, and
// Python's dict() of pairs. Such requests get past validation to the
// service's own checks.
func TestValidationCoercionV1(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithOlderServer())
	d := agentatest.SeedDemo(srv)
	body := `{"app_id":12,"variant_ids":[],"evaluators_configs":[],"testset_id":"t",
		"rate_limit":{"batch_size":"10","max_retries":2.9,"retry_delay":true,"delay_between_batches":" 1_0 "}}`
	r := post(t, srv.URL()+"/evaluations", "application/json", body)
	assert.Equal(t, 404, r.status, "app 12 is valid but unknown: %s", r.body)
	assert.Equal(t, "404: App not found", detail(t, r))

	r = post(t, srv.URL()+"/variants/from-base", "", `{"base_id":"`+d.BaseID+`","new_variant_name":"n","new_config_name":"pairs","parameters":[["temperature",0.5]]}`)
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, map[string]any{"temperature": 0.5}, r.json(t).(map[string]any)["parameters"])
}

func TestValidationErrorsV2(t *testing.T) {
	srv := agentatest.NewTestServer(t) // the mid-2024 service runs Pydantic 2
	u := srv.URL()
	docs := "https://errors.pydantic.dev/2.7/v/"
	for _, tc := range []struct {
		name, path, body string
		want             string
	}{
		{
			name: "not JSON", path: "/evaluations", body: "{",
			want: `{"detail":[{"type":"json_invalid","loc":["body",1],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`, // FastAPI builds it: no url (bad_json on the real server)
		},
		{
			name: "fields", path: "/evaluations",
			body: `{"app_id":12,"variant_ids":["v",3],"evaluators_configs":[],"testset_id":"t",
				"rate_limit":{"batch_size":1.5,"max_retries":"x","retry_delay":1,"delay_between_batches":1},
				"lm_providers_keys":{"MY_KEY":"k"}}`,
			want: `{"detail":[
				{"type":"string_type","loc":["body","app_id"],"msg":"Input should be a valid string","input":12,"url":"` + docs + `string_type"},
				{"type":"string_type","loc":["body","variant_ids",1],"msg":"Input should be a valid string","input":3,"url":"` + docs + `string_type"},
				{"type":"int_from_float","loc":["body","rate_limit","batch_size"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5,"url":"` + docs + `int_from_float"},
				{"type":"int_parsing","loc":["body","rate_limit","max_retries"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x","url":"` + docs + `int_parsing"},
				{"type":"enum","loc":["body","lm_providers_keys","MY_KEY","[key]"],"msg":"Input should be 'OPENAI_API_KEY', 'MISTRAL_API_KEY', 'COHERE_API_KEY', 'ANTHROPIC_API_KEY', 'ANYSCALE_API_KEY', 'PERPLEXITYAI_API_KEY', 'DEEPINFRA_API_KEY', 'TOGETHERAI_API_KEY', 'ALEPHALPHA_API_KEY', 'OPENROUTER_API_KEY', 'GROQ_API_KEY' or 'GEMINI_API_KEY'","input":"MY_KEY",
				 "ctx":{"expected":"'OPENAI_API_KEY', 'MISTRAL_API_KEY', 'COHERE_API_KEY', 'ANTHROPIC_API_KEY', 'ANYSCALE_API_KEY', 'PERPLEXITYAI_API_KEY', 'DEEPINFRA_API_KEY', 'TOGETHERAI_API_KEY', 'ALEPHALPHA_API_KEY', 'OPENROUTER_API_KEY', 'GROQ_API_KEY' or 'GEMINI_API_KEY'"},"url":"` + docs + `enum"}]}`,
		},
		{
			name: "missing carries the enclosing object", path: "/variants/from-base", body: `{"base_id":"b","new_variant_name":"n","new_config_name":"c"}`,
			want: `{"detail":[{"type":"missing","loc":["body","parameters"],"msg":"Field required",
				"input":{"base_id":"b","new_variant_name":"n","new_config_name":"c"},"url":"` + docs + `missing"}]}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, u+tc.path, "application/json", tc.body)
			require.Equal(t, 422, r.status, "%s", r.body)
			assert.JSONEq(t, tc.want, string(r.body))
		})
	}
	r := get(t, http.DefaultClient, u+"/human-evaluations")
	assert.JSONEq(t, `{"detail":[{"type":"missing","loc":["query","app_id"],"msg":"Field required","input":null,"url":"`+docs+`missing"}]}`, string(r.body))
}

func TestValidationQuery(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithOlderServer())
	u := srv.URL()
	for _, tc := range []struct{ path, want string }{
		{"/apps/get_variant_by_env", `{"detail":[
			{"loc":["query","app_id"],"msg":"field required","type":"value_error.missing"},
			{"loc":["query","environment"],"msg":"field required","type":"value_error.missing"}]}`},
		{"/apps/get_variant_by_env?app_id=a", `{"detail":[{"loc":["query","environment"],"msg":"field required","type":"value_error.missing"}]}`},
		{"/human-evaluations?appid=a", `{"detail":[{"loc":["query","app_id"],"msg":"field required","type":"value_error.missing"}]}`},
	} {
		r := get(t, http.DefaultClient, u+tc.path)
		require.Equal(t, 422, r.status, tc.path)
		assert.JSONEq(t, tc.want, string(r.body), tc.path)
	}
	// A blank value is present, so it passes validation and fails later.
	r := get(t, http.DefaultClient, u+"/apps/get_variant_by_env?app_id=&environment=production")
	assert.Equal(t, 400, r.status, "the service's ValueError")
	r = get(t, http.DefaultClient, u+"/human-evaluations?app_id")
	assert.Equal(t, 500, r.status)
}

// TestValidationThroughTheSDK checks the SDK reads the fake's 422 as a
// *ValidationError with integer list positions.
func TestValidationThroughTheSDK(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	// The SDK checks its arguments before sending, so only a value it cannot
	// judge reaches the server: an unknown provider key.
	c := newClient(t, srv)
	unknown := "0190b5a2-0000-7000-8000-00000000dead"
	_, err := c.CreateEvaluation(context.Background(), newEvaluation(agentatest.Demo{
		AppID: unknown, TestsetID: unknown, ExactMatchID: "e", EditDistanceID: "e2", TerseAnswerID: "e3",
	}, unknown))
	require.ErrorIs(t, err, agenta.ErrNotFound, "valid shape: the app lookup fails")

	var verr *agenta.ValidationError
	ev := newEvaluation(agentatest.Demo{AppID: "a", TestsetID: "t", ExactMatchID: "e", EditDistanceID: "e2", TerseAnswerID: "e3"}, "v")
	ev.LMProvidersKeys = map[string]string{"OPENAI": "sk-test-0123456789"}
	_, err = c.CreateEvaluation(context.Background(), ev)
	require.ErrorAs(t, err, &verr)
	assert.Equal(t, 422, verr.StatusCode)
	assert.Equal(t, []any{"body", "lm_providers_keys", "OPENAI", "[key]"}, verr.Details[0].Loc)
}

// TestPythonJSONConstants: bodies are read by Python's json module, which
// takes NaN, Infinity and -Infinity, and reads 1e400 as inf. Such a body is
// no json_invalid 422: where the value is ignored the request succeeds, and
// where Pydantic refuses it, the 422 body would hold the value, which
// Starlette cannot write (allow_nan=False), so the answer is a 500.
func TestPythonJSONConstants(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	for _, value := range []string{"NaN", "Infinity", "-Infinity", "1e400"} {
		t.Run(value, func(t *testing.T) {
			body := func(batchSize string) string {
				return fmt.Sprintf(`{"app_id":%q,"variant_ids":[%q],"evaluators_configs":[],"testset_id":%q,
					"rate_limit":{"batch_size":%s,"max_retries":3,"retry_delay":3,"delay_between_batches":5},
					"not_a_field":[%s]}`, d.AppID, d.VariantID, d.TestsetID, batchSize, value)
			}
			r := post(t, srv.URL()+"/evaluations", "application/json", body("10"))
			assert.Equal(t, 200, r.status, "an ignored field holding %s: %s", value, r.body)
			r = post(t, srv.URL()+"/evaluations", "application/json", body(value))
			assert.Equal(t, 500, r.status, "an integer field holding %s: %s", value, r.body)
			// Starlette's error middleware: plain text, no JSON detail.
			assert.Equal(t, "Internal Server Error", string(r.body), "the body of Starlette's 500")
			assert.Equal(t, "text/plain; charset=utf-8", r.header.Get("Content-Type"))
		})
	}
	waitRuns(t, srv)
}

func TestGeminiIsAProviderKey(t *testing.T) {
	srv, d, c := newDemo(t)
	ev := newEvaluation(d, d.VariantID)
	ev.EvaluatorConfigIDs = []string{d.AICritiqueID}
	ev.LMProvidersKeys = map[string]string{"GEMINI_API_KEY": "g-secret"}
	_, err := c.CreateEvaluation(context.Background(), ev)
	require.NoError(t, err, "GEMINI_API_KEY is one of the service's provider keys")
	assert.Len(t, srv.EvaluationIDs(), 1)
}
