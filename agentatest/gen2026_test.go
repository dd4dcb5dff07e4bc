package agentatest

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Vectors: RFC 7693's "abc", and ids a real v0.113 server gave the test
// set "capitals" (id 01a215fd-5b42-7c84-a631-f20f25088fb5) created by the
// test kit's seed.py.
func TestBlake2bAndTestcaseIDs(t *testing.T) {
	assert.Equal(t, "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
		hex.EncodeToString(blake2b([]byte("abc"), 64)))
	long := strings.Repeat("0123456789", 30) // several blocks
	assert.Len(t, blake2b([]byte(long), 16), 16)
	row := []column{{"country", json.RawMessage(`"France"`)}, {"correct_answer", json.RawMessage(`"Paris"`)}}
	assert.Equal(t, "fee9cbcc-c703-5e21-b66f-183068ab1fac", blobID(row, ""))
	assert.Equal(t, "02bf8528dd9c", dedupID(row, 0))
	withDedup := append(row, column{"testcase_dedup_id", json.RawMessage(`"02bf8528dd9c"`)})
	assert.Equal(t, "df71eb89-83f6-5736-ac6f-b410a834d7dd", blobID(withDedup, "01a215fd-5b42-7c84-a631-f20f25088fb5"))
	assert.Equal(t, `{"a":"\u00e9\ud83d\ude00","b":[1,2.5,true,null]}`,
		string(appendPythonObject(nil, []column{{"b", json.RawMessage(`[1,2.5,true,null]`)}, {"a", json.RawMessage(`"é😀"`)}})),
		"Python's json.dumps(sort_keys=True, separators=(',',':')), ASCII only")
}

type raw26 struct {
	t   *testing.T
	srv *Server
}

func (r raw26) do(method, path, auth, body string) (int, string) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.srv.URL()+path, strings.NewReader(body))
	require.NoError(r.t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(r.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAuth2026(t *testing.T) {
	srv := NewTestServer(t, WithGeneration(Generation2026), WithAPIKey("k1"))
	r := raw26{t, srv}
	const unauthorized = `{"detail":{"message":"Unauthorized"}}`
	for _, tc := range []struct {
		path, auth string
		status     int
		body       string
	}{
		{"/evaluations/runs/00000000-0000-0000-0000-000000000000", "", 401, unauthorized},
		{"/evaluations/runs/00000000-0000-0000-0000-000000000000", "Bearer k1", 401, unauthorized},
		{"/evaluations/runs/00000000-0000-0000-0000-000000000000", "ApiKey wrong", 401, unauthorized},
		{"/evaluations/runs/00000000-0000-0000-0000-000000000000", "ApiKey k1", 200, `{"count":0}`},
		{"/evaluations/runs/00000000-0000-0000-0000-000000000000", "k1", 200, `{"count":0}`},
		{"/definitely-not-a-route", "", 401, unauthorized},
		{"/definitely-not-a-route", "k1", 404, `{"detail":"Not Found"}`},
		{"/evaluations/0190b606-0000-7000-8000-000000000000/status", "k1", 404, `{"detail":"Not Found"}`},
		{"/health", "", 200, `{"status":"ok"}`},
		{"/evaluations/runs/00000000-0000-0000-0000-000000000000/", "k1", 200, `{"count":0}`},
	} {
		status, body := r.do(http.MethodGet, tc.path, tc.auth, "")
		assert.Equal(t, tc.status, status, "%s with %q", tc.path, tc.auth)
		assert.JSONEq(t, tc.body, body, "%s with %q", tc.path, tc.auth)
	}
	// Auth runs before the body is read.
	status, _ := r.do(http.MethodPost, "/evaluations/results/query", "", "{bad")
	assert.Equal(t, 401, status)
}

func TestBothGenerations(t *testing.T) {
	srv := NewTestServer(t, WithGeneration(GenerationBoth))
	demo := SeedDemo(srv)
	SeedDemo2026(srv)
	r := raw26{t, srv}
	status, _ := r.do(http.MethodGet, "/variants/"+demo.VariantID, "", "")
	assert.Equal(t, 200, status, "the 2024 routes are served as before, without credentials")
	status, body := r.do(http.MethodPost, "/applications/revisions/retrieve", "any", `{"application_ref":{"slug":"capitals"}}`)
	assert.Equal(t, 200, status)
	assert.Contains(t, body, `"application_revision"`)
	status, _ = r.do(http.MethodGet, "/definitely-not-a-route", "", "")
	assert.Equal(t, 404, status, "an unknown route is the 2024 server's 404 when both are served")
}

func TestValidation2026(t *testing.T) {
	srv := NewTestServer(t, WithGeneration(Generation2026))
	r := raw26{t, srv}
	for _, tc := range []struct {
		method, path, body, want string
	}{
		{"POST", "/simple/evaluations/", "", `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"POST", "/evaluations/results/query", "{bad", `{"detail":[{"type":"json_invalid","loc":["body",1],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}`},
		{"POST", "/applications/revisions/retrieve", `{"application_revision_ref":{"id":"not-a-uuid"}}`,
			`{"detail":[{"type":"uuid_parsing","loc":["body","application_revision_ref","id"],"msg":"Input should be a valid UUID, invalid character: found ` + "`n`" + ` at 1","input":"not-a-uuid","ctx":{"error":"invalid character: found ` + "`n`" + ` at 1"}}]}`},
		{"GET", "/applications/revisions/xyz", "", `{"detail":[{"type":"uuid_parsing","loc":["path","application_revision_id"],"msg":"Input should be a valid UUID, invalid character: found ` + "`x`" + ` at 1","input":"xyz","ctx":{"error":"invalid character: found ` + "`x`" + ` at 1"}}]}`},
		{"POST", "/evaluations/results/query", `{"result":{"run_id":"00000000-0000-0000-0000-000000000000"},"windowing":{"limit":3,"next":"not-a-uuid"}}`,
			`{"detail":[{"type":"uuid_parsing","loc":["body","windowing","next"],"msg":"Input should be a valid UUID, invalid character: found ` + "`n`" + ` at 1","input":"not-a-uuid","ctx":{"error":"invalid character: found ` + "`n`" + ` at 1"}}]}`},
		{"POST", "/applications/revisions/retrieve", `{}`, `{"detail":"Provide application refs or environment refs with key to retrieve an application revision."}`},
		{"POST", "/testcases/query", `{}`, `{"detail":"At least one filter is required: testcase_ids, testset_id, testset_ref/testset_variant_ref/testset_revision_ref."}`},
		{"GET", "/traces/not-a-trace", "", `{"detail":"Invalid trace_id."}`},
		{"GET", "/traces/", "", `{"detail":"At least one trace_id query parameter is required."}`},
		{"GET", "/spans/0123456789abcdef0123456789abcdef/zz", "", `{"detail":""}`},
		{"POST", "/testsets/revisions/retrieve", `{}`, `{"count":0}`},
		// As the real v0.113 answered: fails in the model's field order,
		// nested ones first; a missing member shows the object lacking it;
		// every field of a model is checked, variant_id too.
		{"POST", "/applications/variants/fork", `{"application_variant_ref":{"id":"bad"},"application_variant":{"slug":1}}`,
			`{"detail":[{"type":"string_type","loc":["body","application_variant","slug"],"msg":"Input should be a valid string","input":1},{"type":"uuid_parsing","loc":["body","application_variant_ref","id"],"msg":"Input should be a valid UUID, invalid length: expected length 32 for simple format, found 3","input":"bad","ctx":{"error":"invalid length: expected length 32 for simple format, found 3"}}]}`},
		{"POST", "/applications/variants/fork", `{"application_variant":{"slug":1}}`,
			`{"detail":[{"type":"string_type","loc":["body","application_variant","slug"],"msg":"Input should be a valid string","input":1},{"type":"missing","loc":["body","application_variant_ref"],"msg":"Field required","input":{"application_variant":{"slug":1}}}]}`},
		{"POST", "/applications/revisions/commit", `{"application_revision":{"application_variant_id":"0190b606-17b8-7000-8000-000000000002","variant_id":"bad"}}`,
			`{"detail":[{"type":"uuid_parsing","loc":["body","application_revision","variant_id"],"msg":"Input should be a valid UUID, invalid length: expected length 32 for simple format, found 3","input":"bad","ctx":{"error":"invalid length: expected length 32 for simple format, found 3"}}]}`},
		{"POST", "/testcases/query", `{"windowing":{"limit":1.5,"next":3}}`,
			`{"detail":[{"type":"uuid_type","loc":["body","windowing","next"],"msg":"UUID input should be a string, bytes or UUID object","input":3},{"type":"int_from_float","loc":["body","windowing","limit"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5}]}`},
	} {
		_, body := r.do(tc.method, tc.path, "k", tc.body)
		assert.JSONEq(t, tc.want, body, "%s %s %s", tc.method, tc.path, tc.body)
	}
}

func TestQueries2026(t *testing.T) {
	srv := NewTestServer(t, WithGeneration(Generation2026), WithEvaluationPace(time.Millisecond))
	demo := SeedDemo2026(srv)
	r := raw26{t, srv}
	create := fmt.Sprintf(`{"evaluation":{"name":"q","data":{"testset_steps":{"%s":"auto"},"application_steps":{"%s":"auto"},"evaluator_steps":{"%s":"auto"}}}}`,
		demo.TestsetRevisionID, demo.RevisionID, demo.EvaluatorRevisionID)
	_, body := r.do("POST", "/simple/evaluations", "k", create)
	var created struct {
		Evaluation struct{ ID string } `json:"evaluation"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &created))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.WaitRuns2026(ctx))
	run := created.Evaluation.ID

	count := func(path, body string) (int, []string) {
		_, out := r.do("POST", path, "k", body)
		var page map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(out), &page), out)
		var n int
		require.NoError(t, json.Unmarshal(page["count"], &n))
		var ids []string
		for _, member := range []string{"scenarios", "results", "metrics", "testcases"} {
			var rows []struct{ ID, ScenarioID string }
			if raw, ok := page[member]; ok {
				require.NoError(t, json.Unmarshal(raw, &rows))
				assert.Len(t, rows, n, "count is the page's length")
				for _, row := range rows {
					ids = append(ids, row.ID)
				}
			}
		}
		_, windowed := page["windowing"]
		if strings.Contains(path, "evaluations/") {
			assert.False(t, windowed, "run queries never answer a cursor")
		}
		return n, ids
	}
	n, first := count("/evaluations/scenarios/query", `{"scenario":{"run_id":"`+run+`"},"windowing":{"limit":2}}`)
	assert.Equal(t, 2, n)
	n, next := count("/evaluations/scenarios/query", `{"scenario":{"run_id":"`+run+`"},"windowing":{"limit":2,"next":"`+first[1]+`"}}`)
	assert.Equal(t, 2, n)
	assert.Greater(t, next[0], first[1])
	n, _ = count("/evaluations/results/query", `{"result":{"run_id":"`+run+`"},"windowing":{"limit":0}}`)
	assert.Equal(t, 1, n, "a limit below 1 is 1")
	n, _ = count("/evaluations/results/query", `{"result":{}}`)
	assert.Equal(t, 15, n, "no run_id reads every cell of the project")
	n, _ = count("/evaluations/results/query", `{"result":{"run_id":"`+run+`","step_keys":["testset-`+srv.v26.runs[run].tsRev.slug+`"]}}`)
	assert.Equal(t, 5, n)
	_, metrics := count("/evaluations/metrics/query", `{"metrics":{"run_id":"`+run+`"},"windowing":{"limit":1}}`)
	_, out := r.do("POST", "/evaluations/metrics/query", "k", `{"metrics":{"run_id":"`+run+`"},"windowing":{"limit":1}}`)
	assert.NotContains(t, out, `"scenario_id"`, "metrics default to descending: the global row first (%s)", metrics)

	// Test cases: by ids, an exact last page still carries a cursor; by a
	// revision it does not.
	ids, _ := json.Marshal(demo.TestcaseIDs)
	_, out = r.do("POST", "/testcases/query", "k", `{"testcase_ids":`+string(ids)+`,"windowing":{"limit":5}}`)
	assert.Contains(t, out, `"windowing":{"oldest"`)
	_, out = r.do("POST", "/testcases/query", "k", `{"testset_revision_ref":{"id":"`+demo.TestsetRevisionID+`"},"windowing":{"limit":5}}`)
	assert.NotContains(t, out, `"windowing"`)
	_, out = r.do("POST", "/testcases/query", "k", `{"testset_revision_ref":{"id":"`+demo.TestsetRevisionID+`"},"windowing":{"limit":3}}`)
	assert.Contains(t, out, `"windowing":{"next"`)
}
