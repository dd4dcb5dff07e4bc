package agenta_test

// The 2026 operations against agentatest's 2026 generation: every method,
// its errors, generation detection, WaitRun and the row builder end to end.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fake26Key = "ag26-test-key-SECRET"

// fake26 starts a 2026 fake with the demo seeded and a client for it.
func fake26(t *testing.T, opts ...agentatest.Option) (*agenta.Client, *agentatest.Server, agentatest.Demo2026) {
	t.Helper()
	opts = append([]agentatest.Option{agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey(fake26Key),
		agentatest.WithEvaluationPace(2 * time.Millisecond)}, opts...)
	srv := agentatest.NewTestServer(t, opts...)
	demo := agentatest.SeedDemo2026(srv)
	c, err := agenta.NewClient(srv.URL(), agenta.WithAPIKey("ApiKey "+fake26Key), agenta.WithRetryWait(0, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c, srv, demo
}

func ctx26(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// collect drains a sequence, failing the test on an error.
func collect[T any](t *testing.T, seq func(func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

func TestGenerationDetected(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  agentatest.Generation
		want agenta.Generation
	}{
		{"2024", agentatest.Generation2024, agenta.Generation2024},
		{"2026", agentatest.Generation2026, agenta.Generation2026},
		{"both", agentatest.GenerationBoth, agenta.Generation2026},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentatest.NewTestServer(t, agentatest.WithGeneration(tc.gen))
			c, err := agenta.NewClient(srv.URL(), agenta.WithAPIKey("k"))
			require.NoError(t, err)
			for range 3 {
				g, err := c.Generation(ctx26(t))
				require.NoError(t, err)
				assert.Equal(t, tc.want, g)
			}
			probes := 0
			for _, r := range srv.Requests() {
				if strings.HasSuffix(r.Path, "/evaluations/runs/00000000-0000-0000-0000-000000000000") {
					probes++
				}
			}
			assert.Equal(t, 1, probes, "the generation is detected once per client")
		})
	}
}

func TestGenerationFailedProbeIsNotCached(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithGeneration(agentatest.Generation2026))
	c, err := agenta.NewClient(srv.URL(), agenta.WithAPIKey("k"), agenta.WithMaxRetries(0))
	require.NoError(t, err)
	srv.InjectFault(agentatest.OpFetchRun, 1, agentatest.Fault{Status: 503})
	_, err = c.Generation(ctx26(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "detecting the server's API generation")
	assert.Contains(t, err.Error(), "AGENTA_API_GENERATION")
	assert.True(t, errors.Is(err, agenta.ErrServer), "the answer stays in the chain: %v", err)
	g, err := c.Generation(ctx26(t))
	require.NoError(t, err, "a failed probe is not remembered")
	assert.Equal(t, agenta.Generation2026, g)

	// Without a credential, v0.113 answers 401: no generation, no cache.
	anon, err := agenta.NewClient(srv.URL())
	require.NoError(t, err)
	_, err = anon.Generation(ctx26(t))
	assert.True(t, errors.Is(err, agenta.ErrUnauthorized), "got %v", err)
}

func TestGenerationConcurrentCallsShareOneProbe(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithGeneration(agentatest.Generation2026))
	c, err := agenta.NewClient(srv.URL(), agenta.WithAPIKey("k"))
	require.NoError(t, err)
	srv.InjectFault(agentatest.OpFetchRun, 1, agentatest.Fault{Stall: 200 * time.Millisecond})
	var wg sync.WaitGroup
	got := make([]agenta.Generation, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = c.Generation(ctx26(t))
		}()
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		assert.Equal(t, agenta.Generation2026, got[i])
	}
	assert.Len(t, srv.RequestsFor(agentatest.OpFetchRun), 1, "eight first calls, one probe")
}

func TestGenerationSetExplicitly(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithGeneration(agentatest.Generation2026))
	c, err := agenta.NewClient(srv.URL(), agenta.WithGeneration(agenta.Generation2024))
	require.NoError(t, err)
	g, err := c.Generation(ctx26(t))
	require.NoError(t, err)
	assert.Equal(t, agenta.Generation2024, g, "WithGeneration wins over the server")
	assert.Empty(t, srv.Requests(), "no probe is sent")

	_, err = agenta.NewClient(srv.URL(), agenta.WithGeneration(agenta.Generation(7)))
	assert.True(t, errors.Is(err, agenta.ErrInvalidArgument))

	t.Setenv("AGENTA_HOST", srv.URL())
	t.Setenv("AGENTA_API_GENERATION", "2026")
	c, err = agenta.NewClientFromEnv()
	require.NoError(t, err)
	g, err = c.Generation(ctx26(t))
	require.NoError(t, err)
	assert.Equal(t, agenta.Generation2026, g)
	assert.Empty(t, srv.Requests())

	t.Setenv("AGENTA_API_GENERATION", "2025")
	_, err = agenta.NewClientFromEnv()
	var argErr *agenta.ArgumentError
	require.True(t, errors.As(err, &argErr), "got %v", err)
	assert.Equal(t, "AGENTA_API_GENERATION", argErr.Name)

	t.Setenv("AGENTA_API_GENERATION", "auto")
	c, err = agenta.NewClientFromEnv(agenta.WithAPIKey("k"))
	require.NoError(t, err)
	g, err = c.Generation(ctx26(t))
	require.NoError(t, err)
	assert.Equal(t, agenta.Generation2026, g, "auto detects")
}

func TestApplicationRevisions2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	byID, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRevisionRef: &models.Reference{ID: demo.RevisionID}})
	require.NoError(t, err)
	assert.Equal(t, "1", byID.Version)
	assert.Equal(t, demo.VariantID, byID.ApplicationVariantID)
	assert.Equal(t, "capitals", byID.ApplicationSlug)
	require.NotNil(t, byID.Data)
	assert.Equal(t, "What is the capital of {country}?", byID.Data.Parameters["prompt_template"])

	for name, q := range map[string]models.ApplicationRevisionRetrieve{
		"variant":  {ApplicationVariantRef: &models.Reference{ID: demo.VariantID}},
		"app id":   {ApplicationRef: &models.Reference{ID: demo.ApplicationID}},
		"app slug": {ApplicationRef: &models.Reference{Slug: "capitals"}},
		"version":  {ApplicationVariantRef: &models.Reference{ID: demo.VariantID}, ApplicationRevisionRef: &models.Reference{Version: "1"}},
	} {
		rev, err := c.RetrieveApplicationRevision(ctx, q)
		require.NoError(t, err, name)
		assert.Equal(t, demo.RevisionID, rev.ID, name)
	}

	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRevisionRef: &models.Reference{ID: demo.TestsetRevisionID}})
	var nf *agenta.NotFoundError
	require.True(t, errors.As(err, &nf), "a test-set revision id is no application revision: %v", err)
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	assert.Equal(t, "RetrieveApplicationRevision", nf.Operation)
	assert.JSONEq(t, `{"count":0}`, string(nf.Body))

	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRevisionRef: &models.Reference{Version: "1"}})
	assert.True(t, errors.Is(err, agenta.ErrBadRequest), "a version alone is a 400: %v", err)
	assert.Contains(t, err.Error(), "per-variant sequence number")

	n := len(srv.Requests())
	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{})
	requireArg(t, err, "ApplicationRevisionRetrieve")
	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRef: &models.Reference{}})
	requireArg(t, err, "ApplicationRevisionRetrieve.ApplicationRef")
	assert.Len(t, srv.Requests(), n, "refused before sending")

	got, err := c.FetchApplicationRevision(ctx, demo.RevisionID)
	require.NoError(t, err)
	assert.Equal(t, byID.Slug, got.Slug)
	_, err = c.FetchApplicationRevision(ctx, "0190b606-0000-7000-8000-000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	_, err = c.FetchApplicationRevision(ctx, "xyz")
	var verr *agenta.ValidationError
	require.True(t, errors.As(err, &verr), "a malformed id is a 422: %v", err)
	assert.Equal(t, "path.application_revision_id", verr.Details[0].Field())

	v, err := c.FetchApplicationVariant(ctx, demo.VariantID)
	require.NoError(t, err)
	assert.Equal(t, "capitals", v.Name)
	assert.Equal(t, demo.ApplicationID, v.ApplicationID)
	_, err = c.FetchApplicationVariant(ctx, demo.RevisionID)
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "a revision id is no variant id")
}

func TestEnvironments2026(t *testing.T) {
	c, _, demo := fake26(t)
	ctx := ctx26(t)
	byEnv := models.ApplicationRevisionRetrieve{EnvironmentRef: &models.Reference{Slug: models.EnvironmentProduction}, ApplicationRef: &models.Reference{Slug: "capitals"}}
	_, err := c.RetrieveApplicationRevision(ctx, byEnv)
	var apiErr *agenta.APIError
	require.True(t, errors.As(err, &apiErr), "nothing deployed is v0.113's 404: %v", err)
	assert.Equal(t, 404, apiErr.StatusCode)
	assert.True(t, errors.Is(err, agenta.ErrNotFound))

	_, err = c.DeployApplicationRevision(ctx, models.ApplicationRevisionDeploy{
		ApplicationRevisionRef: models.Reference{ID: demo.RevisionID}, EnvironmentRef: models.Reference{Slug: models.EnvironmentProduction}})
	require.NoError(t, err)
	for _, q := range []models.ApplicationRevisionRetrieve{
		byEnv,
		{EnvironmentRef: &models.Reference{Slug: "production"}, Key: "capitals.revision"},
		{EnvironmentRef: &models.Reference{Slug: "production"}, ApplicationRef: &models.Reference{ID: demo.ApplicationID}},
	} {
		rev, err := c.RetrieveApplicationRevision(ctx, q)
		require.NoError(t, err)
		assert.Equal(t, demo.RevisionID, rev.ID)
	}
	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{EnvironmentRef: &models.Reference{Slug: "staging"}, ApplicationRef: &models.Reference{Slug: "capitals"}})
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	_, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{EnvironmentRef: &models.Reference{Slug: "production"}})
	assert.True(t, errors.Is(err, agenta.ErrBadRequest), "an environment without a key: %v", err)
	_, err = c.DeployApplicationRevision(ctx, models.ApplicationRevisionDeploy{
		ApplicationRevisionRef: models.Reference{ID: demo.RevisionID}, EnvironmentRef: models.Reference{Slug: "nope"}})
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "got %v", err)
}

func TestForkAndCommit2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	fork, err := c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{
		ApplicationVariantRef: models.Reference{ID: demo.VariantID},
		ApplicationVariant:    models.NewApplicationVariant{Slug: "capitals-cold", Description: "colder"}})
	require.NoError(t, err)
	assert.Equal(t, "capitals-cold", fork.Slug)
	assert.Equal(t, "capitals-cold", fork.Name, "the name defaults to the slug")

	latest, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: fork.ID}})
	require.NoError(t, err)
	assert.Equal(t, "1", latest.Version, "the fork keeps the source's numbering")
	assert.True(t, strings.HasSuffix(latest.Slug, "_"+strings.ReplaceAll(fork.ID, "-", "")), "a copied revision's slug: %s", latest.Slug)

	data := *latest.Data
	data.Parameters = map[string]any{"prompt_template": "Capital of {country}?", "temperature": 0.2}
	v2, err := c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, Message: "full data", Data: &data})
	require.NoError(t, err)
	assert.Equal(t, "2", v2.Version)
	assert.Equal(t, "full data", v2.Message)
	assert.Equal(t, demo.ApplicationID, v2.ApplicationID)

	v3, err := c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID,
		Delta: &models.RevisionDelta{Set: map[string]any{"parameters": map[string]any{"temperature": 0.9, "extra": map[string]any{"a": 1}}}}})
	require.NoError(t, err)
	assert.Equal(t, "3", v3.Version)
	assert.Equal(t, "Capital of {country}?", v3.Data.Parameters["prompt_template"], "a delta merges")
	assert.EqualValues(t, 0.9, v3.Data.Parameters["temperature"])
	assert.Equal(t, "http://127.0.0.1:19080", v3.Data.URL, "the rest of the data is kept")

	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, BaseRevisionID: v2.ID,
		Delta: &models.RevisionDelta{Remove: []string{"parameters.extra"}}})
	assert.True(t, errors.Is(err, agenta.ErrServer), "a stale base is v0.113's 500: %v", err)
	var apiErr *agenta.APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Contains(t, string(apiErr.Body), `"operation_id":"commit_application_revision"`)

	v4, err := c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, BaseRevisionID: v3.ID,
		Delta: &models.RevisionDelta{Remove: []string{"parameters.extra"}}})
	require.NoError(t, err)
	assert.Equal(t, "4", v4.Version)
	assert.NotContains(t, v4.Data.Parameters, "extra")

	// A fork at revision 2 copies the history up to it.
	atTwo, err := c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: fork.ID},
		ApplicationRevisionRef: &models.Reference{ID: v2.ID}, ApplicationVariant: models.NewApplicationVariant{Slug: "capitals-two"}})
	require.NoError(t, err)
	rev, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: atTwo.ID}})
	require.NoError(t, err)
	assert.Equal(t, "2", rev.Version)
	assert.Equal(t, "full data", rev.Message)

	_, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: demo.VariantID},
		ApplicationVariant: models.NewApplicationVariant{Slug: "capitals-cold"}})
	var nc *agenta.NotCreatedError
	require.True(t, errors.As(err, &nc), "a taken slug is {\"count\":0}: %v", err)
	assert.True(t, errors.Is(err, agenta.ErrNotCreated))
	assert.Contains(t, err.Error(), "could not create the variant capitals-cold")
	_, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: "0190b606-0000-7000-8000-000000000000"},
		ApplicationVariant: models.NewApplicationVariant{Slug: "x"}})
	assert.True(t, errors.Is(err, agenta.ErrBadRequest))
	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: "0190b606-0000-7000-8000-000000000000", Data: &data})
	assert.True(t, errors.Is(err, agenta.ErrNotCreated), "an unknown variant is {\"count\":0}: %v", err)

	n := len(srv.Requests())
	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID})
	requireArg(t, err, "ApplicationRevisionCommit.Data")
	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, Data: &data, Delta: &models.RevisionDelta{}})
	requireArg(t, err, "ApplicationRevisionCommit.Delta")
	_, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: demo.VariantID}})
	requireArg(t, err, "ApplicationVariantFork.ApplicationVariant.Slug")
	assert.Len(t, srv.Requests(), n, "refused before sending")

	// A create is sent once: a fork the server failed to answer is not repeated.
	srv.InjectFault(agentatest.OpForkApplicationVariant, 1, agentatest.Fault{Status: 503})
	before := len(srv.RequestsFor(agentatest.OpForkApplicationVariant))
	_, err = c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: demo.VariantID},
		ApplicationVariant: models.NewApplicationVariant{Slug: "once"}})
	assert.True(t, errors.Is(err, agenta.ErrServer))
	assert.Len(t, srv.RequestsFor(agentatest.OpForkApplicationVariant), before+1, "a 503 on a fork is not retried")
}

func requireArg(t *testing.T, err error, name string) {
	t.Helper()
	var argErr *agenta.ArgumentError
	require.True(t, errors.As(err, &argErr), "expected an *ArgumentError, got %v", err)
	assert.Equal(t, name, argErr.Name)
	assert.True(t, errors.Is(err, agenta.ErrInvalidArgument))
}

func TestTestsetsAndEvaluators2026(t *testing.T) {
	c, _, demo := fake26(t)
	ctx := ctx26(t)
	ts, err := c.RetrieveTestsetRevision(ctx, models.TestsetRevisionRetrieve{TestsetRef: &models.Reference{Slug: "capitals"}})
	require.NoError(t, err)
	assert.Equal(t, demo.TestsetRevisionID, ts.ID)
	require.NotNil(t, ts.Data)
	assert.Equal(t, demo.TestcaseIDs, ts.Data.TestcaseIDs)
	require.Len(t, ts.Data.Testcases, 5)
	first := ts.Data.Testcases[0].Data
	assert.Equal(t, []string{"country", "correct_answer", "testcase_dedup_id"}, []string{first[0].Name, first[1].Name, first[2].Name}, "columns keep their order")
	dedup, _ := first.Text(models.TestcaseDedupKey)
	assert.Equal(t, "02bf8528dd9c", dedup, "the service's content hash, as a v0.113 server computes it")

	no := false
	bare, err := c.RetrieveTestsetRevision(ctx, models.TestsetRevisionRetrieve{TestsetRevisionRef: &models.Reference{ID: ts.ID}, IncludeTestcases: &no})
	require.NoError(t, err)
	assert.Empty(t, bare.Data.Testcases)
	assert.Len(t, bare.Data.TestcaseIDs, 5)
	_, err = c.RetrieveTestsetRevision(ctx, models.TestsetRevisionRetrieve{TestsetRef: &models.Reference{Slug: "nope"}})
	assert.True(t, errors.Is(err, agenta.ErrNotFound))

	tc, err := c.FetchTestcase(ctx, demo.TestcaseIDs[2])
	require.NoError(t, err)
	country, _ := tc.Data.Text("country")
	assert.Equal(t, "Italy", country)
	_, err = c.FetchTestcase(ctx, "0190b606-0000-7000-8000-000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))

	for _, q := range []models.TestcasesQuery{
		{TestcaseIDs: demo.TestcaseIDs, PageSize: 2},
		{TestcaseIDs: demo.TestcaseIDs, PageSize: 5}, // an exact last page, then an empty one
		{TestsetRevisionRef: &models.Reference{ID: ts.ID}, PageSize: 2},
		{TestsetRevisionRef: &models.Reference{ID: ts.ID}, PageSize: 5},
		{TestsetID: demo.TestsetID},
	} {
		got := collect(t, c.QueryTestcases(ctx, q))
		ids := make([]string, len(got))
		for i, tc := range got {
			ids[i] = tc.ID
		}
		assert.Equal(t, demo.TestcaseIDs, ids, "%+v", q)
	}
	_, err = collectErr(c.QueryTestcases(ctx, models.TestcasesQuery{}))
	requireArg(t, err, "TestcasesQuery")

	ev, err := c.RetrieveEvaluatorRevision(ctx, models.EvaluatorRevisionRetrieve{EvaluatorRef: &models.Reference{Slug: "exact-capital"}})
	require.NoError(t, err)
	assert.Equal(t, demo.EvaluatorRevisionID, ev.ID)
	assert.Equal(t, "auto_exact_match", ev.Key())
	assert.Equal(t, "correct_answer", ev.CorrectAnswerKey())
	_, err = c.RetrieveEvaluatorRevision(ctx, models.EvaluatorRevisionRetrieve{EvaluatorRef: &models.Reference{ID: demo.EvaluatorRevisionID}})
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "a revision id is no evaluator id")
}

func collectErr[T any](seq func(func(T, error) bool)) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

func createRun(t *testing.T, c *agenta.Client, e models.SimpleEvaluationCreate) *models.SimpleEvaluation {
	t.Helper()
	run, err := c.CreateSimpleEvaluation(ctx26(t), e)
	require.NoError(t, err)
	return run
}

func TestRunLifecycle2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	created := createRun(t, c, models.SimpleEvaluationCreate{Name: "basic", TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	assert.Equal(t, models.RunPending, created.Data.Status, "create answers pending")
	assert.False(t, created.Flags.IsActive)
	assert.Equal(t, map[string]string{demo.EvaluatorRevisionID: "auto"}, created.Data.EvaluatorSteps)
	body := string(srv.RequestsFor(agentatest.OpCreateSimpleEvaluation)[0].Body)
	assert.Contains(t, body, `"evaluator_steps":{"`+demo.EvaluatorRevisionID+`":"auto"}`, "steps are sent as maps with origin auto")
	assert.NotContains(t, body, `"status"`, "no data.status: the server's worker runs it")

	first, err := c.FetchRun(ctx, created.ID)
	require.NoError(t, err)
	assert.Equal(t, models.RunRunning, first.Status, "the first read says running")

	var statuses []models.RunStatus
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond,
		OnStatus: func(r models.EvaluationRun) { statuses = append(statuses, r.Status) }})
	require.NoError(t, err)
	assert.Equal(t, models.RunSuccess, run.Status)
	assert.False(t, run.Flags.IsActive)
	assert.Equal(t, models.RunSuccess, statuses[len(statuses)-1])
	require.Len(t, run.Steps(models.StepAnnotation), 1)
	assert.Equal(t, demo.EvaluatorRevisionID, run.Steps(models.StepAnnotation)[0].Revision().ID)

	scenarios := collect(t, c.QueryScenarios(ctx, models.RunScenarioQuery{RunID: run.ID, PageSize: 2}))
	assert.Len(t, scenarios, 5)
	for i := 1; i < len(scenarios); i++ {
		assert.Less(t, scenarios[i-1].ID, scenarios[i].ID, "ascending id order across pages")
	}
	results := collect(t, c.QueryResults(ctx, models.RunResultQuery{RunID: run.ID, PageSize: 4}))
	assert.Len(t, results, 15, "5 rows × (input, invocation, evaluator)")
	byStep := map[string]int{}
	for _, r := range results {
		byStep[strings.SplitN(r.StepKey, "-", 2)[0]]++
		if strings.HasPrefix(r.StepKey, "testset-") {
			assert.Empty(t, r.TraceID, "the input cell has no trace")
		} else {
			assert.NotEmpty(t, r.TraceID)
		}
		assert.NotEmpty(t, r.TestcaseID)
	}
	assert.Equal(t, map[string]int{"testset": 5, "application": 5, "evaluator": 5}, byStep)
	only := collect(t, c.QueryResults(ctx, models.RunResultQuery{RunID: run.ID, ScenarioIDs: []string{scenarios[0].ID, scenarios[1].ID}}))
	assert.Len(t, only, 6)
	metrics := collect(t, c.QueryMetrics(ctx, models.RunMetricsQuery{RunID: run.ID, PageSize: 4}))
	assert.Len(t, metrics, 6, "one row per scenario and the global one")
	var global *models.RunMetrics
	for i := range metrics {
		if metrics[i].ScenarioID == "" {
			global = &metrics[i]
		}
	}
	require.NotNil(t, global)
	stats, err := global.Stats()
	require.NoError(t, err)
	success := stats[run.Steps(models.StepAnnotation)[0].Key]["attributes.ag.data.outputs.success"]
	assert.Equal(t, "binary", success.Type)
	assert.Equal(t, 5, success.Count)
	refreshed, err := c.RefreshMetrics(ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, refreshed, 1)
	assert.Equal(t, global.ID, refreshed[0].ID, "refresh replaces the global row")
	none, err := c.RefreshMetrics(ctx, "0190b606-0000-7000-8000-000000000000")
	require.NoError(t, err)
	assert.Empty(t, none)

	stopped, err := c.StopSimpleEvaluation(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, models.RunSuccess, stopped.Data.Status, "stop keeps a finished run's status")
	again, err := c.FetchSimpleEvaluation(ctx, run.ID)
	require.NoError(t, err)
	assert.False(t, again.Flags.IsActive)
	_, err = c.StopSimpleEvaluation(ctx, "0190b606-0000-7000-8000-000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	_, err = c.FetchRun(ctx, "0190b606-0000-7000-8000-000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))

	// Traces: one, several at once, and a span.
	var traceIDs []string
	for _, r := range results {
		if r.TraceID != "" {
			traceIDs = append(traceIDs, r.TraceID)
		}
	}
	trace, err := c.FetchTrace(ctx, traceIDs[0])
	require.NoError(t, err)
	root, ok := trace.Root()
	require.True(t, ok)
	_, err = c.FetchTrace(ctx, models.NormalizeTraceID(traceIDs[0]))
	require.NoError(t, err, "32 hex digits work too")
	span, err := c.FetchSpan(ctx, trace.TraceID, root.SpanID)
	require.NoError(t, err)
	assert.Equal(t, root.SpanName, span.SpanName)
	_, err = c.FetchSpan(ctx, trace.TraceID, "0000000000000000")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	_, err = c.FetchTrace(ctx, "not-a-trace")
	assert.True(t, errors.Is(err, agenta.ErrBadRequest))
	_, err = c.FetchTrace(ctx, "0123456789abcdef0123456789abcdef")
	assert.True(t, errors.Is(err, agenta.ErrNotFound))
	asked := append(slices.Clone(traceIDs), "0123456789abcdef0123456789abcdef")
	traces := collect(t, c.FetchTraces(ctx, asked))
	assert.Len(t, traces, len(traceIDs), "the unknown trace is left out")
}

func TestRunRefusedArguments2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	ok := models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID, ApplicationRevisionID: demo.RevisionID,
		EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}}
	for name, tc := range map[string]struct {
		mutate func(*models.SimpleEvaluationCreate)
		arg    string
	}{
		"no test set": {func(e *models.SimpleEvaluationCreate) { e.TestsetRevisionID = "" }, "SimpleEvaluationCreate.TestsetRevisionID"},
		"no app":      {func(e *models.SimpleEvaluationCreate) { e.ApplicationRevisionID = " " }, "SimpleEvaluationCreate.ApplicationRevisionID"},
		"duplicate":   {func(e *models.SimpleEvaluationCreate) { e.EvaluatorRevisionIDs = []string{"a", "a"} }, "SimpleEvaluationCreate.EvaluatorRevisionIDs[1]"},
		"repeats":     {func(e *models.SimpleEvaluationCreate) { e.Repeats = -1 }, "SimpleEvaluationCreate.Repeats"},
		"batch": {func(e *models.SimpleEvaluationCreate) {
			zero := 0
			e.Concurrency = &models.RunConcurrency{BatchSize: &zero}
		}, "SimpleEvaluationCreate.Concurrency.BatchSize"},
		"empty evaluator": {func(e *models.SimpleEvaluationCreate) { e.EvaluatorRevisionIDs = []string{""} }, "SimpleEvaluationCreate.EvaluatorRevisionIDs[0]"},
	} {
		e := ok
		tc.mutate(&e)
		_, err := c.CreateSimpleEvaluation(ctx, e)
		requireArg(t, err, tc.arg)
		_ = name
	}
	for _, seq := range []error{
		first(c.QueryScenarios(ctx, models.RunScenarioQuery{})),
		first(c.QueryResults(ctx, models.RunResultQuery{RunID: "r", PageSize: -1})),
		first(c.QueryMetrics(ctx, models.RunMetricsQuery{})),
		first(c.FetchTraces(ctx, nil)),
		first(c.StreamRunRows(ctx, "", nil)),
	} {
		assert.True(t, errors.Is(seq, agenta.ErrInvalidArgument), "got %v", seq)
	}
	assert.Empty(t, srv.RequestsFor(agentatest.OpCreateSimpleEvaluation), "nothing was sent")

	// Ids of the wrong kind: the service's {"count":0}, a *NotCreatedError.
	for name, e := range map[string]models.SimpleEvaluationCreate{
		"test set id":      {TestsetRevisionID: demo.TestsetID, ApplicationRevisionID: demo.RevisionID},
		"variant id":       {TestsetRevisionID: demo.TestsetRevisionID, ApplicationRevisionID: demo.VariantID},
		"evaluator id":     {TestsetRevisionID: demo.TestsetRevisionID, ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorID}},
		"unknown revision": {TestsetRevisionID: demo.TestsetRevisionID, ApplicationRevisionID: "0190b606-0000-7000-8000-000000000000"},
	} {
		_, err := c.CreateSimpleEvaluation(ctx, e)
		assert.True(t, errors.Is(err, agenta.ErrNotCreated), "%s: %v", name, err)
		assert.Contains(t, err.Error(), "could not create the evaluation", name)
	}
	// A create is never sent twice.
	srv.InjectFault(agentatest.OpCreateSimpleEvaluation, 1, agentatest.Fault{Status: 502})
	before := len(srv.RequestsFor(agentatest.OpCreateSimpleEvaluation))
	_, err := c.CreateSimpleEvaluation(ctx, ok)
	assert.True(t, errors.Is(err, agenta.ErrServer))
	assert.Len(t, srv.RequestsFor(agentatest.OpCreateSimpleEvaluation), before+1)
}

func first[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		return err
	}
	return nil
}

func TestRunRowsFailingRows2026(t *testing.T) {
	c, _, demo := fake26(t)
	ctx := ctx26(t)
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.ErrTestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond})
	require.NoError(t, err, "a run with failed rows ends errors, which is no error")
	assert.Equal(t, models.RunErrors, run.Status)

	rows := collect(t, c.StreamRunRows(ctx, run.ID, &agenta.RunRowsOptions{PageSize: 2}))
	require.Len(t, rows, 5)
	byCountry := map[string]models.RunRow{}
	for _, row := range rows {
		country, _ := row.Scenario.Input("country")
		byCountry[country] = row
		assert.NotEmpty(t, row.TestcaseID)
		assert.Equal(t, run.ID, row.Scenario.EvaluationID)
		_, hasDedup := row.Scenario.Input(models.TestcaseDedupKey)
		assert.False(t, hasDedup, "the dedup column is no input")
		_, hasAnswer := row.Scenario.Input("correct_answer")
		assert.False(t, hasAnswer, "the expected answer is no input")
	}
	assert.Equal(t, "Paris", byCountry["France"].Scenario.OutputText())
	assert.Equal(t, "Paris", byCountry["France"].Scenario.ExpectedAnswer())
	v, _ := byCountry["France"].Scenario.Results[0].Result.Bool()
	assert.True(t, v)
	assert.Equal(t, demo.EvaluatorID, byCountry["France"].Scenario.Results[0].EvaluatorConfig, "results are keyed by the evaluator's id")
	italy, _ := byCountry["Italy"].Scenario.Results[0].Result.Bool()
	assert.False(t, italy, "Rome is not Naples")
	for _, name := range []string{"ERRland", "ERRor2"} {
		row := byCountry[name]
		assert.True(t, row.Scenario.Failed(), name)
		msg, _ := row.Scenario.AppError()
		assert.Equal(t, "stand-in app error for "+name, msg)
		assert.True(t, row.Scenario.Results[0].Result.Failed(), "an evaluator does not judge a failed call")
		assert.Equal(t, models.RunErrors, row.Status)
	}
	latency, ok := byCountry["France"].Scenario.Latency()
	assert.True(t, ok)
	assert.Greater(t, latency, 0.0)
	_, hasCost := byCountry["France"].Scenario.Cost()
	assert.False(t, hasCost, "the stand-in app reports no cost")

	plain := collect(t, c.StreamRunScenarios(ctx, run.ID))
	assert.Len(t, plain, 5)
}

func TestRunRowsRepeats2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	for _, split := range []bool{false, true} {
		created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID, Repeats: 3, Split: split,
			ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
		_, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond})
		require.NoError(t, err)
		results := collect(t, c.QueryResults(ctx, models.RunResultQuery{RunID: created.ID}))
		apps := 5
		if split {
			apps = 15
		}
		assert.Len(t, results, 15+apps+15, "split=%v: input and evaluator cells ×3, the application ×%d", split, apps/5)
		rows := collect(t, c.StreamRunRows(ctx, created.ID, nil))
		require.Len(t, rows, 15)
		repeats := map[string][]int{}
		for _, row := range rows {
			repeats[row.TestcaseID] = append(repeats[row.TestcaseID], row.RepeatIdx)
			assert.Equal(t, row.RepeatIdx > 0, strings.Contains(row.Scenario.ID, "#"), row.Scenario.ID)
			assert.Len(t, row.Scenario.Results, 1)
		}
		for _, r := range repeats {
			assert.Equal(t, []int{0, 1, 2}, r)
		}
	}
	assert.Contains(t, string(srv.RequestsFor(agentatest.OpCreateSimpleEvaluation)[1].Body), `"is_split":true`)
}

func TestWaitRunNoWorker2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	srv.StopWorker()
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond, NoWorkerAfter: 200 * time.Millisecond})
	require.True(t, errors.Is(err, agenta.ErrNoWorker), "got %v", err)
	var nw *agenta.NoWorkerError
	require.True(t, errors.As(err, &nw))
	assert.Equal(t, created.ID, nw.RunID)
	assert.GreaterOrEqual(t, nw.Waited, 200*time.Millisecond)
	assert.Contains(t, err.Error(), "no worker is consuming the evaluation queue")
	require.NotNil(t, run)
	assert.Equal(t, models.RunRunning, run.Status)
	assert.True(t, run.Flags.IsActive)

	// A bounded wait without the detector ends with the context, naming the status.
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	_, err = c.WaitRun(short, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond, NoWorkerAfter: -1})
	var werr *agenta.WaitError
	require.True(t, errors.As(err, &werr), "got %v", err)
	assert.Equal(t, "running", string(werr.Status))
	assert.True(t, errors.Is(err, context.DeadlineExceeded))

	srv.StartWorker()
	run, err = c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond, NoWorkerAfter: 200 * time.Millisecond})
	require.NoError(t, err, "the queued run runs once a worker starts")
	assert.Equal(t, models.RunSuccess, run.Status)
}

func TestWaitRunRidesOutTrouble2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	srv.InjectFault(agentatest.OpFetchRun, 6, agentatest.Fault{Status: 503})
	var retries []agenta.WaitRetry
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 10 * time.Millisecond,
		OnRetry: func(r agenta.WaitRetry) { retries = append(retries, r) }})
	require.NoError(t, err)
	assert.Equal(t, models.RunSuccess, run.Status)
	assert.NotEmpty(t, retries, "the 503s were ridden out and reported")

	_, err = c.WaitRun(ctx, "0190b606-0000-7000-8000-000000000000", nil)
	assert.True(t, errors.Is(err, agenta.ErrNotFound), "an unknown run ends the wait at once: %v", err)
}

func TestRunRowsTracingDown2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	srv.StopTracing()
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: demo.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, models.RunSuccess, run.Status, "the run succeeds while its traces are missing")
	assert.Empty(t, collect(t, c.QueryMetrics(ctx, models.RunMetricsQuery{RunID: run.ID})), "and has no metrics")

	rows := collect(t, c.StreamRunRows(ctx, run.ID, &agenta.RunRowsOptions{TraceRetryWait: -1}))
	require.Len(t, rows, 5)
	for _, row := range rows {
		out, ok := row.Scenario.Output()
		require.True(t, ok)
		assert.Equal(t, models.ResultTypeMissing, out.Result.Type, "a missing trace is a missing output")
		assert.True(t, out.Result.Failed(), "it counts against the row")
		assert.Contains(t, out.Result.Error.Message, "output missing")
		assert.Empty(t, row.Scenario.OutputText(), "and never reads as an answer")
		require.Len(t, row.Scenario.Results, 1)
		assert.True(t, row.Scenario.Results[0].Result.Failed())
	}

	srv.StartTracing()
	rows = collect(t, c.StreamRunRows(ctx, run.ID, nil))
	for _, row := range rows {
		assert.False(t, row.Scenario.Failed(), "the backlog was ingested: %s", row.Scenario.InputsText())
	}
	refreshed, err := c.RefreshMetrics(ctx, run.ID)
	require.NoError(t, err)
	assert.Len(t, refreshed, 1, "refresh writes the global row once traces are in")
}

func TestRunRowsUnreachableApplication2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	app := srv.AddApplication2026(agentatest.Application2026{Slug: "down", URL: "http://127.0.0.1:1",
		Application: func(map[string]any, map[string]string) (string, error) { return "", agentatest.ErrUnreachable }})
	created := createRun(t, c, models.SimpleEvaluationCreate{TestsetRevisionID: demo.TestsetRevisionID,
		ApplicationRevisionID: app.RevisionID, EvaluatorRevisionIDs: []string{demo.EvaluatorRevisionID}})
	run, err := c.WaitRun(ctx, created.ID, &agenta.WaitRunOptions{Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, models.RunErrors, run.Status)
	results := collect(t, c.QueryResults(ctx, models.RunResultQuery{RunID: run.ID}))
	assert.Len(t, results, 5, "input cells only")
	for _, row := range collect(t, c.StreamRunRows(ctx, run.ID, nil)) {
		msg, failed := row.Scenario.AppError()
		assert.True(t, failed)
		assert.Contains(t, msg, "recorded no result for the application call")
	}
}
