//go:build ignore

// Command fuzzcorpus writes the seed corpus of the fuzz targets
// (testdata/fuzz/ and models/testdata/fuzz/) from the body shapes real
// servers send, as listed in ../shared/contract/README.md. Run it from the
// repository root after changing a shape:
//
//	go run tools/fuzzcorpus/main.go
//
// Files it does not name (crashers that fuzzing found) are left alone.
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Result values of every JSON type, with and without an error.
var results = []string{
	`{"type":"text","value":"Paris","error":null}`,
	`{"type":"number","value":0.75}`,
	`{"type":"number","value":-1e-7}`,
	`{"type":"bool","value":true,"error":null}`,
	`{"type":"cost","value":0.000123}`,
	`{"type":"latency","value":1.52}`,
	`{"type":"status","value":"EVALUATION_FINISHED_WITH_ERRORS"}`,
	`{"type":"text","value":{"answer":"Paris","confidence":0.9,"sources":["wiki"]}}`,
	`{"type":"text","value":["a",1,false,null,{"k":[]}]}`,
	`{"type":"text","value":null,"error":null}`,
	`{"type":"error","value":null,"error":{"message":"Invalid JSON in output","stacktrace":"Traceback (most recent call last):\n  File \"eval.py\", line 3\nValueError"}}`,
	`{"type":"error","error":{"message":"timeout","stacktrace":null}}`,
	`{"type":"unknown_future_kind","value":"<b>&amp;</b> \u2028"}`,
}

var scenarios = map[string]string{
	// An older server: correct_answer, explicit nulls in every optional field.
	"scenario-older-nulls": `[{"id":"66e3f0a1b2c3d4e5f6a7b8c9","evaluation_id":"66e3f0a1b2c3d4e5f6a7b8c0",` +
		`"inputs":[{"name":"country","type":"text","value":"France"},{"name":"meta","type":"dict","value":null}],` +
		`"outputs":[{"result":` + results[0] + `,"cost":null,"latency":null}],` +
		`"evaluation":null,"correct_answer":null,"is_pinned":null,"note":null,` +
		`"results":[{"evaluator_config":"c-1","result":` + results[3] + `},{"evaluator_config":"c-2","result":` + results[10] + `}]}]`,
	// A newer server: correct_answers, ids absent, mixed Result values.
	"scenario-newer-correct-answers": `[{"evaluation_id":"e-1","inputs":[{"name":"q","type":"text","value":{"nested":[1,2]}}],` +
		`"outputs":[{"result":` + results[7] + `,"cost":0.00021,"latency":0.8},{"result":` + results[8] + `}],` +
		`"correct_answers":[{"key":"correct_answer","value":"Paris"},{"key":"alt","value":"paris"}],` +
		`"is_pinned":true,"note":"checked by hand",` +
		`"results":[{"evaluator_config":"c-1","result":` + results[1] + `},{"evaluator_config":"c-2","result":` + results[12] + `}],` +
		`"unknown_field":{"tolerated":true}}]`,
	"scenario-empty-list": `[]`,
	"scenario-null":       `null`,
}

var evaluations = map[string]string{
	// What create returns: zoned timestamps, status EVALUATION_STARTED.
	"evaluation-created": `[{"id":"e-1","app_id":"a-1","user_id":"u-1","user_username":"ana","variant_ids":["v-1"],` +
		`"variant_names":["app.default"],"variant_revision_ids":["r-1"],"revisions":["3"],"testset_id":"t-1",` +
		`"testset_name":"capitals","status":{"type":"status","value":"EVALUATION_STARTED","error":null},` +
		`"aggregated_results":[],"average_cost":null,"total_cost":null,"average_latency":null,` +
		`"created_at":"2024-06-26T12:22:31.775000+00:00","updated_at":"2024-06-26T12:22:31.775000+00:00"}]`,
	// Read back from storage: naive timestamps, aggregated results, costs.
	"evaluation-stored": `[{"id":"e-2","app_id":"a-1","user_id":"u-1","user_username":"ana","variant_ids":["v-1"],` +
		`"variant_names":["app.default"],"variant_revision_ids":["r-1"],"revisions":["3"],"testset_id":null,` +
		`"testset_name":null,"status":` + results[6] + `,` +
		`"aggregated_results":[{"evaluator_config":{"id":"c-1","name":"Exact match","evaluator_key":"auto_exact_match",` +
		`"settings_values":{},"created_at":"2024-06-26T12:22:31.775000","updated_at":"2024-06-26T12:22:31"},"result":` + results[1] + `},` +
		`{"evaluator_config":{"id":"c-2","name":"Similarity","evaluator_key":"auto_similarity_match",` +
		`"settings_values":{"similarity_threshold":0.5,"correct_answer_key":"correct_answer"},` +
		`"created_at":"2024-06-26T12:22:31.775000+00:00","updated_at":"2024-06-26T12:22:31.775000+00:00"},"result":` + results[2] + `}],` +
		`"average_cost":` + results[4] + `,"total_cost":{"type":"cost","value":0.0123},"average_latency":` + results[5] + `,` +
		`"created_at":"2024-06-26T12:22:31.775000","updated_at":"2024-06-27T08:00:00.000001"}]`,
	"evaluation-failed": `{"id":"e-3","app_id":"a-1","user_id":"u-1","user_username":"ana","variant_ids":[],"variant_names":[],` +
		`"variant_revision_ids":[],"revisions":[],"status":{"type":"status","value":"EVALUATION_FAILED","error":{"message":"Missing LM provider Key"}},` +
		`"aggregated_results":[{"evaluator_config":{},"result":` + results[11] + `}],` +
		`"created_at":"2024-06-26T12:22:31Z","updated_at":"2024-06-26T12:22:31.123456789-05:00"}`,
}

var variants = map[string]string{
	"variant-full": `{"app_id":"a-1","app_name":"capitals","variant_id":"v-1","variant_name":"capitals.default",` +
		`"parameters":{"model":"gpt-4o-mini","temperature":0.7,"max_tokens":512,"prompt_system":"You are <helpful> & terse.",` +
		`"stop":["\n\n"],"inputs":[{"name":"country"}]},"previous_variant_name":"capitals.v0","user_id":"u-1","base_name":"capitals",` +
		`"base_id":"b-1","config_name":"default","uri":"http://capitals-app:80","revision":7,"organization_id":"o-1","workspace_id":"w-1"}`,
	"variant-nulls": `{"app_id":"a-1","app_name":"capitals","variant_id":"v-1","variant_name":"capitals.default",` +
		`"parameters":null,"previous_variant_name":null,"user_id":"u-1","base_name":"capitals","base_id":"b-1",` +
		`"config_name":"default","uri":null,"revision":0,"organization_id":null,"workspace_id":null,"new_server_field":[1]}`,
	// Add variant from base may answer an arbitrary JSON value on failure paths.
	"variant-arbitrary": `{"detail":"duplicate","$schema":"x"}`,
}

var spans = map[string]string{
	// environment at span level, as in the sample response.
	"span-environment-at-span": `{"id":"sp-1","name":"workflow","parent_span_id":null,"created_at":"2024-06-26T12:22:31.775000",` +
		`"variant":{"variant_id":"v-1","variant_name":"capitals.default","revision":3},"environment":"production",` +
		`"spankind":"WORKFLOW","status":"OK","metadata":{"cost":0.00042,"latency":1.2,"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}},` +
		`"trace_id":"tr-1","user_id":"u-1","content":{"inputs":{"country":"France"},"internals":{},"outputs":{"answer":"Paris"}},` +
		`"children":[{"id":"sp-2","name":"llm","parent_span_id":"sp-1","created_at":"2024-06-26T12:22:31.800000+00:00",` +
		`"variant":{"variant_id":"v-1"},"environment":"production","spankind":"LLM","status":"UNSET","metadata":{},` +
		`"content":{},"children":null}],"config":{"temperature":0.7}}`,
	// environment inside the variant, as in the field list; enums unknown.
	"span-environment-in-variant": `{"id":"sp-3","name":"agent","created_at":"2024-06-26T12:22:31+00:00",` +
		`"variant":{"variant_id":"v-2","variant_name":"x.y","revision":1,"environment":"playground"},` +
		`"spankind":"RERANKER","status":"CANCELLED","metadata":{"cost":"n/a"},"content":{"internals":null},` +
		`"children":[{"id":"sp-4","name":"tool","created_at":"2024-06-26T12:22:31.775000","variant":{},"spankind":"TOOL",` +
		`"status":"ERROR","metadata":{},"content":{},"children":[{"id":"sp-5","name":"retriever","created_at":"2024-06-26T12:22:31",` +
		`"variant":{},"spankind":"RETRIEVER","status":"OK","metadata":{},"content":{}}]}]}`,
	"span-empty-children": `{"id":"sp-6","name":"e","created_at":null,"variant":{},"spankind":"EMBEDDING","status":"OK",` +
		`"metadata":null,"content":null,"children":[],"config":null}`,
}

var humans = map[string]string{
	"human-ab": `[{"id":"h-1","app_id":"a-1","user_id":"u-1","user_username":"ana","evaluation_type":"human_a_b_testing",` +
		`"variant_ids":["v-1","v-2"],"variant_names":["a","b"],"variants_revision_ids":["r-1","r-2"],"revisions":["1","2"],` +
		`"testset_id":"t-1","testset_name":"capitals","status":"EVALUATION_FINISHED",` +
		`"created_at":"2024-06-26T12:22:31.775000","updated_at":"2024-06-26T12:22:31.775000"}]`,
	"human-single": `[{"id":"h-2","app_id":"a-1","user_id":"u-1","user_username":"ana","evaluation_type":"single_model_test",` +
		`"variant_ids":["v-1"],"variant_names":["a"],"variants_revision_ids":["r-1"],"revisions":["1"],` +
		`"testset_id":"t-1","testset_name":"capitals","status":"EVALUATION_INITIALIZED",` +
		`"created_at":"2024-06-26T12:22:31.775000+00:00","updated_at":"2024-06-26T12:22:31+00:00"}]`,
	"human-empty": `[]`,
}

var timestamps = map[string]string{
	"naive-micro":       "2024-06-26T12:22:31.775000",
	"zoned-created":     "2024-06-26T12:22:31.775000+00:00",
	"zulu":              "2019-08-24T14:15:22Z",
	"nine-digits":       "2024-06-26T12:22:31.123456789+05:30",
	"ten-digits":        "2024-06-26T12:22:31.1234567891",
	"leap-second":       "2016-12-31T23:59:60Z",
	"feb-30":            "2024-02-30T00:00:00",
	"feb-29-common":     "2023-02-29T00:00:00",
	"hour-24":           "2024-06-26T24:00:00",
	"offset-24":         "2024-06-26T12:22:31+24:00",
	"space-separator":   "2024-06-26 12:22:31.5",
	"year-zero-offset":  "0000-01-01T00:00:00+01:00",
	"year-9999":         "9999-12-31T23:59:59.999999999-23:59",
	"prism-dynamic":     "1940-05-02T07:28:01.0Z",
	"trailing-garbage":  "2024-06-26T12:22:31Z ",
	"null-literal-text": "null",
}

var errorBodies = []struct {
	name   string
	status int
	body   string
}{
	{"422-classic", 422, `{"detail":[{"loc":["body","variant_ids",0],"msg":"field required","type":"value_error.missing"}]}`},
	{"422-pydantic2-input-url", 422, `{"detail":[{"type":"missing","loc":["query","app_id"],"msg":"Field required","input":null,"url":"https://errors.pydantic.dev/2.5/v/missing"}]}`},
	{"422-ctx", 422, `{"detail":[{"type":"string_too_short","loc":["body","lm_providers_keys","OPENAI_API_KEY"],"msg":"String should have at least 1 character","input":"","ctx":{"min_length":1},"url":"https://errors.pydantic.dev/2/v/string_too_short"},{"loc":["body","rate_limit","batch_size"],"msg":"value is not a valid integer","type":"type_error.integer","input":{"x":[1,2]}}]}`},
	{"422-empty-detail", 422, `{"detail":[]}`},
	{"422-detail-string", 422, `{"detail":"Unprocessable"}`},
	{"422-bad-loc", 422, `{"detail":[{"loc":[1.5,true],"msg":"m","type":"t"}]}`},
	{"400-missing-key", 400, `{"detail":"Missing LM provider Key"}`},
	{"400-columns", 400, `{"detail":"Columns in the test set should match the names of the inputs in the variant"}`},
	{"404-app", 404, `{"detail":"App not found"}`},
	{"403-denied", 403, `{"detail":"You do not have access to this resource"}`},
	{"500-variant", 500, `{"detail":"App Variant not found"}`},
	{"500-duplicate", 500, `{"detail":"Variant with name capitals.default already exists"}`},
	{"502-nginx-html", 502, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"},
	{"504-html-no-title", 504, "<!DOCTYPE html><html><body><h1>Gateway Timeout</h1><p>The upstream server did not answer in time.</p></body></html>"},
	{"503-plain", 503, "upstream connect error or disconnect/reset before headers. reset reason: connection failure"},
	{"429-message", 429, `{"message":"Too Many Requests"}`},
	{"401-error", 401, `{"error":"invalid api key"}`},
	{"500-detail-object", 500, `{"detail":{"code":"E42","reason":"boom"}}`},
	{"500-detail-null", 500, `{"detail":null}`},
	{"500-array", 500, `["not","an","object"]`},
	{"500-empty", 500, ``},
	{"500-whitespace", 500, " \n\t "},
	{"502-invalid-utf8-raw-json", 502, "{\"\":\"\xc9\"}"},
	{"500-long-text", 500, strings.Repeat("Internal error. ", 40)},
}

func main() {
	for name, body := range scenarios {
		write("models/testdata/fuzz/FuzzDecodeEvaluationScenario", name, bytesArg(body))
		write("testdata/fuzz/FuzzAnswerDecode", name, "uint8(0)", bytesArg(body))
	}
	for i, r := range results {
		write("models/testdata/fuzz/FuzzDecodeEvaluationScenario", fmt.Sprintf("result-%02d", i), bytesArg(r))
	}
	for name, body := range evaluations {
		write("models/testdata/fuzz/FuzzDecodeEvaluation", name, bytesArg(body))
		write("testdata/fuzz/FuzzAnswerDecode", name, "uint8(1)", bytesArg(body))
	}
	for name, body := range variants {
		write("models/testdata/fuzz/FuzzDecodeAppVariantResponse", name, bytesArg(body))
		write("testdata/fuzz/FuzzAnswerDecode", name+"-get", "uint8(2)", bytesArg(body))
		write("testdata/fuzz/FuzzAnswerDecode", name+"-add", "uint8(4)", bytesArg(body))
	}
	for name, body := range spans {
		write("models/testdata/fuzz/FuzzDecodeSpan", name, bytesArg(body))
		write("testdata/fuzz/FuzzAnswerDecode", name, "uint8(5)", bytesArg(body))
	}
	for name, body := range humans {
		write("models/testdata/fuzz/FuzzDecodeHumanEvaluation", name, bytesArg(body))
		write("testdata/fuzz/FuzzAnswerDecode", name, "uint8(6)", bytesArg(body))
	}
	for name, ts := range timestamps {
		write("models/testdata/fuzz/FuzzParseTimestamp", name, "string("+strconv.Quote(ts)+")")
	}
	for _, e := range errorBodies {
		write("testdata/fuzz/FuzzErrorBody", e.name, fmt.Sprintf("int(%d)", e.status), bytesArg(e.body))
	}
}

func bytesArg(s string) string { return "[]byte(" + strconv.Quote(s) + ")" }

func write(dir, name string, args ...string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	content := "go test fuzz v1\n" + strings.Join(args, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
}
