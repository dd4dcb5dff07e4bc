package agentatest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

func TestRoutes(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	u := srv.URL()
	for _, tc := range []struct {
		method, path string
		status       int
		detail       string
	}{
		{"GET", "/variants/" + d.VariantID, 200, ""},
		{"GET", "/variants/" + d.VariantID + "/", 200, ""},
		{"GET", "/apps/get_variant_by_env/?app_id=" + d.AppID + "&environment=staging", 200, ""},
		{"GET", "/human-evaluations/?app_id=" + d.AppID, 200, ""},
		{"GET", "/observability/spans/" + d.SpanID + "/", 200, ""},
		{"GET", "/variants/from-base", 500, "badly formed hexadecimal UUID string"},
		{"GET", "/evaluations/" + d.VariantID, 404, "404: Evaluation with id " + d.VariantID + " not found"},
		{"POST", "/evaluations/" + d.VariantID + "/status", 405, "Method Not Allowed"},
		{"GET", "/nothing/here", 404, "Not Found"},
		{"GET", "/variants/a%2Fb", 404, "Not Found"},
		{"GET", "/variants//", 404, "Not Found"},
		{"DELETE", "/variants/" + d.VariantID, 405, "Method Not Allowed"},
		{"GET", "/evaluations", 405, "Method Not Allowed"},
		{"PUT", "/human-evaluations", 405, "Method Not Allowed"},
	} {
		req, err := http.NewRequest(tc.method, u+tc.path, nil)
		require.NoError(t, err)
		r := do(t, noRedirects, req)
		assert.Equal(t, tc.status, r.status, "%s %s: %s", tc.method, tc.path, r.body)
		if tc.detail != "" {
			assert.Equal(t, tc.detail, detail(t, r), "%s %s", tc.method, tc.path)
		}
		assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	}
	// Outside the /api prefix nothing is served.
	r := get(t, noRedirects, strings.TrimSuffix(u, "/api")+"/variants/"+d.VariantID)
	assert.Equal(t, 404, r.status)
}

func TestRedirectLosingPrefix(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithRedirectLosingPrefix())
	d := agentatest.SeedDemo(srv)
	r := get(t, noRedirects, srv.URL()+"/observability/spans/"+d.SpanID)
	require.Equal(t, 307, r.status)
	assert.Equal(t, strings.TrimSuffix(srv.URL(), "/api")+"/observability/spans/"+d.SpanID+"/", r.header.Get("Location"))
}

func TestPathPrefix(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithPathPrefix("v2/api/"))
	d := agentatest.SeedDemo(srv)
	require.True(t, strings.HasSuffix(srv.URL(), "/v2/api"), srv.URL())
	assert.Equal(t, 200, get(t, http.DefaultClient, srv.URL()+"/variants/"+d.VariantID).status)
}

func TestAPIKey(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithAPIKey("k.secret"))
	d := agentatest.SeedDemo(srv)
	url := srv.URL() + "/variants/" + d.VariantID
	for _, tc := range []struct {
		auth   string
		status int
	}{
		{"", 401},
		{"k.other", 401},
		{"Bearer k.secret", 401},
		{"k.secret", 200},
		{"ApiKey k.secret", 200},
	} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		r := do(t, http.DefaultClient, req)
		assert.Equal(t, tc.status, r.status, "Authorization %q", tc.auth)
		if tc.status != 200 {
			assert.JSONEq(t, `{"detail":{"message":"Unauthorized"}}`, string(r.body), "a missing and a wrong key alike")
		}
	}
}

var (
	naiveStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$`)
	// Fresh objects on older servers.
	zonedStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$`)
	// Evaluations, as Pydantic 2 writes them.
	zuluStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$`)
	// Human evaluations and evaluator configs: Python's str(datetime).
	pythonStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{6})?\+00:00$`)
	// UUIDv7 ids.
	uuid7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	// Older servers' MongoDB ObjectIds.
	objectID = regexp.MustCompile(`^[0-9a-f]{24}$`)
)

// TestWireShapes checks what only the raw JSON shows: explicit nulls and the
// two timestamp forms.
func TestWireShapes(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	u := srv.URL()

	v := get(t, http.DefaultClient, u+"/variants/"+d.VariantID).json(t).(map[string]any)
	assert.Contains(t, v, "previous_variant_name", "the demo app is a cloud one")
	assert.Nil(t, v["previous_variant_name"])
	assert.Regexp(t, uuid7, v["organization_id"])
	assert.Regexp(t, uuid7, v["workspace_id"])

	humans := get(t, http.DefaultClient, u+"/human-evaluations?app_id="+d.AppID).json(t).([]any)
	for _, h := range humans {
		h := h.(map[string]any)
		assert.Regexp(t, pythonStamp, h["created_at"])
		assert.Regexp(t, pythonStamp, h["updated_at"])
	}
	assert.Equal(t, "2024-06-25 16:40:11+00:00", humans[1].(map[string]any)["created_at"], "no fraction for whole seconds, as Python writes it")

	span := get(t, http.DefaultClient, u+"/observability/spans/"+d.SpanID+"/").json(t).(map[string]any)
	assert.Contains(t, span, "parent_span_id")
	assert.Nil(t, span["parent_span_id"])
	assert.Equal(t, "2024-06-26T12:22:31.775000", span["created_at"])
	assert.Contains(t, span, "config")
	leaf := span["children"].([]any)[0].(map[string]any)
	assert.Contains(t, leaf, "children")
	assert.Nil(t, leaf["children"], "a leaf sends children: null")
	assert.NotContains(t, leaf, "config", "children are plain spans")
	assert.Nil(t, leaf["metadata"].(map[string]any)["cost"])

	body := fmt.Sprintf(`{"app_id":%q,"variant_ids":[%q],"evaluators_configs":[%q],"testset_id":%q,
		"rate_limit":{"batch_size":10,"max_retries":3,"retry_delay":3,"delay_between_batches":5}}`,
		d.AppID, d.VariantID, d.ExactMatchID, d.TestsetID)
	created := post(t, u+"/evaluations", "application/json", body)
	require.Equal(t, 200, created.status, "%s", created.body)
	ev := created.json(t).([]any)[0].(map[string]any)
	assert.Regexp(t, uuid7, ev["id"])
	assert.Regexp(t, zuluStamp, ev["created_at"])
	assert.Regexp(t, zuluStamp, ev["updated_at"])
	assert.Equal(t, map[string]any{"type": "status", "value": "EVALUATION_INITIALIZED", "error": nil}, ev["status"])
	for _, k := range []string{"average_cost", "total_cost", "average_latency"} {
		assert.Contains(t, ev, k)
		assert.Nil(t, ev[k], k)
	}

	waitRuns(t, srv)
	scenarios := get(t, http.DefaultClient, u+"/evaluations/"+ev["id"].(string)+"/evaluation_scenarios").json(t).([]any)
	sc := scenarios[0].(map[string]any)
	assert.Regexp(t, uuid7, sc["id"])
	assert.NotContains(t, sc, "evaluation")
	assert.NotContains(t, sc, "correct_answer")
	assert.Equal(t, []any{map[string]any{"key": "correct_answer", "value": "Paris"}}, sc["correct_answers"])
	result := sc["results"].([]any)[0].(map[string]any)["result"].(map[string]any)
	assert.Equal(t, map[string]any{"type": "bool", "value": true, "error": nil}, result)

	read := get(t, http.DefaultClient, u+"/evaluations/"+ev["id"].(string)).json(t).(map[string]any)
	config := read["aggregated_results"].([]any)[0].(map[string]any)["evaluator_config"].(map[string]any)
	assert.Equal(t, "Exact match", config["name"])
	assert.Regexp(t, pythonStamp, config["created_at"])
	assert.Regexp(t, zuluStamp, read["updated_at"])
}

func TestOlderServerShapes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        []agentatest.Option
		stamp       *regexp.Regexp // of a created evaluation
		readStamp   *regexp.Regexp // of the evaluation read back
		humanStamp  *regexp.Regexp
		olderFields bool
		id          *regexp.Regexp // "UUIDv7 strings since July 2024; older servers used 24-hex ObjectIds"
	}{
		{"mid-2024, the default", nil, zuluStamp, zuluStamp, pythonStamp, false, uuid7},
		{"WithNewerServer changes nothing", []agentatest.Option{agentatest.WithNewerServer()}, zuluStamp, zuluStamp, pythonStamp, false, uuid7},
		{"WithOlderServer", []agentatest.Option{agentatest.WithOlderServer()}, zonedStamp, naiveStamp, naiveStamp, true, objectID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentatest.NewTestServer(t, tc.opts...)
			d := agentatest.SeedDemo(srv)
			body := fmt.Sprintf(`{"app_id":%q,"variant_ids":[%q],"evaluators_configs":[%q],"testset_id":%q,
				"rate_limit":{"batch_size":1,"max_retries":1,"retry_delay":0,"delay_between_batches":0}}`,
				d.AppID, d.VariantID, d.ExactMatchID, d.TestsetID)
			created := post(t, srv.URL()+"/evaluations", "application/json", body)
			require.Equal(t, 200, created.status, "%s", created.body)
			ev := created.json(t).([]any)[0].(map[string]any)
			assert.Regexp(t, tc.stamp, ev["created_at"])
			humans := get(t, http.DefaultClient, srv.URL()+"/human-evaluations?app_id="+d.AppID).json(t).([]any)
			assert.Regexp(t, tc.humanStamp, humans[0].(map[string]any)["created_at"])
			read := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+ev["id"].(string)).json(t).(map[string]any)
			assert.Regexp(t, tc.readStamp, read["created_at"], "read back from storage")
			for _, id := range []any{d.AppID, d.VariantID, d.TestsetID, d.ExactMatchID, d.SpanID, d.UserID, d.HumanEvaluationIDs[0],
				ev["id"], ev["user_id"], ev["variant_revision_ids"].([]any)[0]} {
				assert.Regexp(t, tc.id, id)
			}
			forked := post(t, srv.URL()+"/variants/from-base", "application/json",
				`{"base_id":"`+d.BaseID+`","new_variant_name":"x","new_config_name":"forked","parameters":{}}`).json(t).(map[string]any)
			assert.Regexp(t, tc.id, forked["variant_id"], "a created variant: %v", forked)

			waitRuns(t, srv)
			sc := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+ev["id"].(string)+"/evaluation_scenarios").json(t).([]any)[0].(map[string]any)
			assert.Regexp(t, tc.id, sc["id"])
			if tc.olderFields {
				assert.NotContains(t, sc, "correct_answers")
				assert.Equal(t, "Paris", sc["correct_answer"])
				assert.Contains(t, sc, "evaluation")
			} else {
				assert.NotContains(t, sc, "correct_answer")
				assert.NotContains(t, sc, "evaluation")
				assert.Equal(t, []any{map[string]any{"key": "correct_answer", "value": "Paris"}}, sc["correct_answers"])
			}
		})
	}
}

func TestCloseTwiceAndAfterwards(t *testing.T) {
	srv := agentatest.NewServer()
	url := srv.URL()
	srv.Close()
	srv.Close()
	_, err := http.Get(url + "/human-evaluations?app_id=x")
	assert.Error(t, err, "a closed server answers nothing")
}

// TestNeverPanics throws odd requests at every route; each gets an answer,
// and the server keeps serving.
func TestNeverPanics(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	rng := rand.New(rand.NewPCG(1, 2))
	paths := []string{
		"/evaluations", "/evaluations/x/evaluation_scenarios", "/apps/get_variant_by_env",
		"/variants/from-base", "/variants/" + d.VariantID, "/observability/spans/" + d.SpanID + "/",
		"/human-evaluations", "/", "", "/%", "/variants/%ZZ",
	}
	bodies := []string{
		"", "null", "{", "[]", "[[1,2],[3]]", `{"a":`, "\x00\xff", `"str"`, "1e999", `{"rate_limit":[["batch_size","1"]]}`,
		`{"parameters":[["k","v"],"ab"]}`, `{"lm_providers_keys":[[1,2]]}`, strings.Repeat("[", 5000),
		`{"app_id":{"$gt":""}}`, `{"variant_ids":"` + strings.Repeat("x", 1000) + `"}`,
	}
	methods := []string{"GET", "POST", "PUT", "HEAD", "OPTIONS"}
	queries := []string{"", "?app_id", "?app_id=&environment=", "?type=", "?app_id=%zz&environment=%", "?;;&&=="}
	for i := 0; i < 400; i++ {
		method := methods[rng.IntN(len(methods))]
		url := srv.URL() + paths[rng.IntN(len(paths))] + queries[rng.IntN(len(queries))]
		req, err := http.NewRequest(method, url, strings.NewReader(bodies[rng.IntN(len(bodies))]))
		if err != nil {
			continue // not even a valid URL for net/http
		}
		if rng.IntN(2) == 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		r := do(t, noRedirects, req)
		require.NotZero(t, r.status)
		require.NotContains(t, string(r.body), "agentatest: internal error", "%s %s", method, url)
		if r.status == http.StatusInternalServerError && string(r.body) == "Internal Server Error" {
			// Starlette's 500 for a 422 that would echo inf (the body 1e999).
			assert.Equal(t, "text/plain; charset=utf-8", r.header.Get("Content-Type"))
			continue
		}
		if r.status >= 400 && method != "HEAD" {
			doc, ok := r.json(t).(map[string]any)
			require.True(t, ok, "%s %s: %s", method, url, r.body)
			assert.Contains(t, doc, "detail")
		}
	}
	assert.Equal(t, 200, get(t, http.DefaultClient, srv.URL()+"/variants/"+d.VariantID).status)
}

// TestGeneratedIDsNeverTakeDemoIDs: once, the 1,408th variant added took
// capitals.default's id and replaced it.
func TestGeneratedIDsNeverTakeDemoIDs(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	seen := map[string]bool{}
	for i := range 1500 { // past the 1,408th
		id := srv.AddVariant(agentatest.Variant{BaseID: d.BaseID, ConfigName: fmt.Sprintf("v%d", i)})
		require.Regexp(t, uuid7, id)
		require.False(t, seen[id], "id %s handed out twice", id)
		seen[id] = true
	}
	for _, id := range []string{d.AppID, d.BaseID, d.VariantID, d.VerboseVariantID, d.TestsetID, d.ExactMatchID, d.SpanID} {
		assert.Regexp(t, uuid7, id, "demo ids are UUIDv7 values")
		assert.False(t, seen[id], "a generated id took the demo's %s", id)
	}
	v := get(t, http.DefaultClient, srv.URL()+"/variants/"+d.VariantID).json(t).(map[string]any)
	assert.Equal(t, "capitals.default", v["variant_name"])
}

// "A field that is not in the server's model is absent: self-hosted servers
// send no previous_variant_name, organization_id or workspace_id (the cloud
// does)." An app seeded without an organization is a self-hosted one.
func TestSelfHostedVariantsLackCloudFields(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	app := srv.AddApp(agentatest.App{Name: "self-hosted"})
	base := srv.AddBase(agentatest.Base{AppID: app})
	first := srv.AddVariant(agentatest.Variant{BaseID: base, PreviousVariantName: "self-hosted.v0"})
	forked := post(t, srv.URL()+"/variants/from-base", "application/json",
		`{"base_id":"`+base+`","new_variant_name":"x","new_config_name":"forked","parameters":{}}`)
	require.Equal(t, http.StatusOK, forked.status, "from-base: %s", forked.body)
	for name, body := range map[string]rawResponse{
		"GET /variants/{id}":       get(t, http.DefaultClient, srv.URL()+"/variants/"+first),
		"POST /variants/from-base": forked,
	} {
		v, ok := body.json(t).(map[string]any)
		require.True(t, ok, "%s: %s", name, body.body)
		for _, field := range []string{"previous_variant_name", "organization_id", "workspace_id"} {
			assert.NotContains(t, v, field, "%s: a self-hosted server has no %s field; got %s", name, field, body.body)
		}
		assert.Contains(t, v, "uri", "%s: optional fields of the model are sent, as null", name)
	}
}

// The service reads every id with Python's uuid.UUID and looks up that
// value, so the other forms uuid.UUID reads (upper case, braces, a
// "urn:uuid:" prefix, no hyphens) name the same object: what the contract's
// "badly formed hexadecimal UUID string" for any other string implies.
func TestIDsInEveryFormUUIDReads(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithManualEvaluations())
	d := agentatest.SeedDemo(srv)
	forms := func(id string) map[string]string {
		return map[string]string{
			"upper case": strings.ToUpper(id), "braces": "{" + id + "}", "urn": "urn:uuid:" + id,
			"no hyphens": strings.ReplaceAll(id, "-", ""),
		}
	}
	for name, variant := range forms(d.VariantID) {
		r := get(t, http.DefaultClient, srv.URL()+"/variants/"+url.PathEscape(variant))
		require.Equal(t, http.StatusOK, r.status, "variant id in %s form: %s", name, r.body)
		assert.Equal(t, d.VariantID, r.json(t).(map[string]any)["variant_id"], "the stored form comes back")
	}
	for name, app := range forms(d.AppID) {
		r := get(t, http.DefaultClient, srv.URL()+"/human-evaluations?app_id="+url.QueryEscape(app))
		assert.Len(t, r.json(t), 2, "app id in %s form: %s", name, r.body)
	}
	ev := created(t, createRaw(t, srv, strings.ToUpper(d.AppID), "{"+d.TestsetID+"}",
		[]string{strings.ReplaceAll(d.VariantID, "-", "")}, []string{strings.ToUpper(d.ExactMatchID)}, 3))[0]
	assert.Equal(t, d.AppID, ev["app_id"], "the evaluation names the app as stored")
	for name, id := range forms(ev["id"].(string)) {
		r := get(t, http.DefaultClient, srv.URL()+"/evaluations/"+url.PathEscape(id)+"/status")
		assert.Equal(t, http.StatusOK, r.status, "evaluation id in %s form: %s", name, r.body)
	}
}

// TestNoGoroutineLeftAfterClose: background runs, stalled requests and
// connections all end with Close.
func TestNoGoroutineLeftAfterClose(t *testing.T) {
	before := runtime.NumGoroutine()
	srv := agentatest.NewServer()
	d := agentatest.SeedDemo(srv)
	c := newClient(t, srv)
	_, err := c.CreateEvaluation(context.Background(), newEvaluation(d, d.VariantIDs()...))
	require.NoError(t, err)
	srv.InjectFault(agentatest.OpGetVariant, 1, agentatest.Fault{Stall: agentatest.StallForever})
	go func() { _, _ = c.GetVariant(context.Background(), d.VariantID) }()
	for len(srv.RequestsFor(agentatest.OpGetVariant)) == 0 {
		runtime.Gosched()
	}
	within(t, "Close", srv.Close)
	// Goroutines end soon after Close; the client's idle connections too.
	var after int
	for range 200 {
		c.CloseIdleConnections()
		if after = runtime.NumGoroutine(); after <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("%d goroutines before the server, %d after Close; want no more than before:\n%s",
		before, after, buf[:runtime.Stack(buf, true)])
}

// TestConcurrentUse drives every operation, seeding, fault injection,
// inspection and background evaluations at once; run it with -race.
func TestConcurrentUse(t *testing.T) {
	srv, d, c := newDemo(t, agentatest.WithEvaluationPace(100*time.Microsecond))
	ctx := context.Background()

	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers*16)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			check := func(err error) {
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
				}
			}
			for i := 0; i < 4; i++ {
				_, err := c.GetVariant(ctx, d.VariantID)
				check(err)
				_, err = c.GetVariantByEnvironment(ctx, d.AppID, models.EnvironmentStaging)
				check(err)
				// Injected 503s may outlast the retries; any other failure counts.
				if _, err = c.GetSpan(ctx, d.SpanID, nil); !errors.Is(err, agenta.ErrServer) {
					check(err)
				}
				_, err = c.ListHumanEvaluations(ctx, d.AppID)
				check(err)
				v, err := c.AddVariantFromBase(ctx, models.AddVariantFromBase{
					BaseID: d.BaseID, NewVariantName: "n", NewConfigName: fmt.Sprintf("w%d-%d", w, i),
					Parameters: map[string]any{"prompt_system": "one word", "temperature": float64(i) / 4},
				})
				check(err)
				if v == nil {
					continue
				}
				evs, err := c.CreateEvaluation(ctx, newEvaluation(d, v.VariantID, d.VariantID))
				check(err)
				for _, ev := range evs {
					_, err := c.FetchEvaluationScenarios(ctx, ev.ID)
					check(err)
					_, _ = srv.Evaluation(ev.ID)
				}
			}
		}(w)
	}
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			srv.InjectFault(agentatest.OpGetSpan, 1, agentatest.Fault{Status: 503, RetryAfter: "0"})
			_ = srv.Requests()
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			app := srv.AddApp(agentatest.App{Name: fmt.Sprintf("extra-%d", i)})
			base := srv.AddBase(agentatest.Base{AppID: app})
			v := srv.AddVariant(agentatest.Variant{BaseID: base})
			srv.DeployToEnvironment(v, "production")
			srv.UpdateVariantParameters(v, map[string]any{"i": i})
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			srv.AdvanceEvaluations(3)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	require.NoError(t, srv.WaitEvaluations(waitCtx))
	ids := srv.EvaluationIDs()
	assert.Len(t, ids, workers*4*2)
	for _, id := range ids {
		scenarios, err := c.FetchEvaluationScenarios(ctx, id)
		require.NoError(t, err)
		assert.Len(t, scenarios, 8, "evaluation %s", id)
		seen := map[string]bool{}
		for _, sc := range scenarios {
			assert.False(t, seen[sc.ID], "scenario ids are unique")
			seen[sc.ID] = true
		}
	}
}
