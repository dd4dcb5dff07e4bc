package agenta_test

// Preflight against the fake of both generations: wrong ids named with
// their kind, a test set without the app's input or an evaluator's
// correct-answer column, skipped checks noted, and nothing created.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const unknownID = "01a2248d-0000-7000-8000-00000000dead"

// requirePreflightError checks that err is a *PreflightError holding
// report, and returns the findings' messages.
func requirePreflightError(t *testing.T, report *models.PreflightReport, err error) []models.PreflightFinding {
	t.Helper()
	var pe *agenta.PreflightError
	require.True(t, errors.As(err, &pe), "want a *PreflightError, got %v", err)
	require.True(t, errors.Is(err, agenta.ErrPreflight))
	require.Same(t, report, pe.Report, "the error holds the report returned")
	require.NotEmpty(t, report.Findings)
	return report.Findings
}

// findingOf returns the finding of problem p about subject, failing the
// test when there is none.
func findingOf(t *testing.T, findings []models.PreflightFinding, p models.PreflightProblem, subject string) models.PreflightFinding {
	t.Helper()
	for _, f := range findings {
		if f.Problem == p && f.Subject == subject {
			return f
		}
	}
	t.Fatalf("no %q finding about the %s in %+v", p, subject, findings)
	return models.PreflightFinding{}
}

// assertNothingCreated checks the fake's log for creates.
func assertNothingCreated(t *testing.T, srv *agentatest.Server) {
	t.Helper()
	for _, r := range srv.Requests() {
		assert.NotContains(t, []agentatest.Operation{agentatest.OpCreateEvaluation, agentatest.OpCreateSimpleEvaluation}, r.Operation,
			"%s %s was sent by a preflight that found the evaluation misconfigured", r.Method, r.Path)
	}
}

// withInputs commits to the 2026 demo variant a revision whose input
// schema names these inputs.
func withInputs(t *testing.T, c *agenta.Client, demo agentatest.Demo2026, inputs ...string) {
	t.Helper()
	props := map[string]any{}
	for _, in := range inputs {
		props[in] = map[string]any{"type": "string"}
	}
	rev, err := c.RetrieveApplicationRevision(ctx26(t), models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: demo.VariantID}})
	require.NoError(t, err)
	data := *rev.Data
	schema, err := json.Marshal(map[string]any{"type": "object", "properties": props})
	require.NoError(t, err)
	data.Schemas = map[string]json.RawMessage{"inputs": schema}
	_, err = c.CommitApplicationRevision(ctx26(t), models.ApplicationRevisionCommit{ApplicationVariantID: demo.VariantID, Message: "inputs", Data: &data})
	require.NoError(t, err)
}

func request26(demo agentatest.Demo2026) models.PreflightRequest {
	return models.PreflightRequest{AppID: demo.ApplicationID, VariantIDs: []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.EvaluatorID}, TestsetID: demo.TestsetID}
}

func TestPreflight2026(t *testing.T) {
	t.Run("good", func(t *testing.T) {
		c, _, demo := fake26(t)
		withInputs(t, c, demo, "country")
		report, err := c.Preflight(ctx26(t), request26(demo))
		require.NoError(t, err)
		assert.Equal(t, "2026", report.Generation)
		assert.Empty(t, report.Findings)
		assert.Empty(t, report.Skipped, "every check ran")
		assert.Equal(t, []string{"country", "correct_answer"}, report.Columns)
		require.Len(t, report.Evaluators, 1)
		assert.Equal(t, "exact-capital", report.Evaluators[0].Slug)
	})
	t.Run("no input schema is a note", func(t *testing.T) {
		c, _, demo := fake26(t)
		report, err := c.Preflight(ctx26(t), request26(demo))
		require.NoError(t, err)
		require.Len(t, report.Skipped, 1)
		assert.Equal(t, "app inputs", report.Skipped[0].Check)
		assert.Contains(t, report.Skipped[0].Message, "no input schema")
	})
	t.Run("wrong ids", func(t *testing.T) {
		c, srv, demo := fake26(t)
		req := models.PreflightRequest{AppID: demo.ApplicationID, VariantIDs: []string{demo.VariantID, unknownID},
			EvaluatorConfigIDs: []string{unknownID}, TestsetID: unknownID}
		report, err := c.Preflight(ctx26(t), req)
		findings := requirePreflightError(t, report, err)
		require.Len(t, findings, 3, "%+v", findings)
		for _, subject := range []string{models.PreflightVariant, models.PreflightTestset, models.PreflightEvaluator} {
			f := findingOf(t, findings, models.PreflightNotFound, subject)
			assert.Equal(t, unknownID, f.ID)
			assert.True(t, strings.HasPrefix(f.Message, subject+" "+unknownID+" "), "message %q names the kind and the id", f.Message)
		}
		assert.True(t, report.Has(models.PreflightNotFound))
		assert.False(t, report.Has(models.PreflightMissingInput))
		assertNothingCreated(t, srv)
	})
	t.Run("variant of another app", func(t *testing.T) {
		c, _, demo := fake26(t)
		req := request26(demo)
		req.AppID = unknownID
		report, err := c.Preflight(ctx26(t), req)
		f := findingOf(t, requirePreflightError(t, report, err), models.PreflightNotFound, models.PreflightVariant)
		assert.Contains(t, f.Message, "is not a variant of app "+unknownID)
	})
	t.Run("missing input column", func(t *testing.T) {
		c, srv, demo := fake26(t)
		withInputs(t, c, demo, "country", "element")
		report, err := c.Preflight(ctx26(t), request26(demo))
		findings := requirePreflightError(t, report, err)
		require.Len(t, findings, 1)
		f := findingOf(t, findings, models.PreflightMissingInput, models.PreflightTestset)
		assert.Equal(t, "element", f.Column)
		assert.Equal(t, "the test set has no column 'element', which the app takes as input: rename the column, or change the app's inputs", f.Message)
		assert.Contains(t, err.Error(), "the test set has no column 'element', which the app takes as input")
		assertNothingCreated(t, srv)
	})
	t.Run("missing correct-answer column", func(t *testing.T) {
		c, srv, demo := fake26(t)
		withInputs(t, c, demo, "country")
		ev := srv.AddEvaluator2026(agentatest.Evaluator2026{Slug: "exact-expected", Name: "Exact expected",
			URI: "agenta:builtin:auto_exact_match:v0", Parameters: map[string]any{"correct_answer_key": "expected"}})
		req := request26(demo)
		req.EvaluatorConfigIDs = append(req.EvaluatorConfigIDs, ev.EvaluatorID)
		report, err := c.Preflight(ctx26(t), req)
		findings := requirePreflightError(t, report, err)
		require.Len(t, findings, 1)
		f := findingOf(t, findings, models.PreflightMissingCorrectAnswer, models.PreflightEvaluator)
		assert.Equal(t, "expected", f.Column)
		assert.Equal(t, "Exact expected", f.Name)
		assert.Contains(t, f.Message, "'Exact expected' ("+ev.EvaluatorID+")")
		assert.False(t, report.Has(models.PreflightNotFound))
	})
	t.Run("evals.Evaluate stops before creating", func(t *testing.T) {
		c, srv, demo := fake26(t)
		ev := models.NewEvaluation{AppID: demo.ApplicationID, VariantIDs: []string{demo.VariantID},
			EvaluatorConfigIDs: []string{unknownID}, TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit()}
		_, err := evals.Evaluate(ctx26(t), c, ev, (*agenta.WaitOptions)(nil))
		require.ErrorIs(t, err, agenta.ErrPreflight)
		assertNothingCreated(t, srv)
	})
}

// fake24 starts a 2024 fake with the demo seeded, and an app server whose
// OpenAPI document says the app takes country and element; a variant
// "capitals.element" of it is added.
func fake24(t *testing.T) (c *agenta.Client, srv *agentatest.Server, demo agentatest.Demo, elementVariant string) {
	t.Helper()
	srv = agentatest.NewTestServer(t, agentatest.WithEvaluationPace(2*time.Millisecond))
	demo = agentatest.SeedDemo(srv)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the app's OpenAPI document was read with an Authorization header")
		}
		if r.URL.Path != "/element/openapi.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"openapi":"3.1.0","paths":{"/generate":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Body_generate_generate_post"}}}}}}},
"components":{"schemas":{"Body_generate_generate_post":{"properties":{"country":{"type":"string"},"element":{"type":"string"},
"prompt_template":{"type":"string","x-parameter":"text"},"temperature":{"type":"number","x-parameter":"float"}}}}}}`))
	}))
	t.Cleanup(app.Close)
	base := srv.AddBase(agentatest.Base{AppID: demo.AppID, Name: "elements", URI: app.URL + "/element"})
	elementVariant = srv.AddVariant(agentatest.Variant{BaseID: base, Parameters: map[string]any{"temperature": 0.5}})
	return clientFor(t, srv, agenta.WithAPIKey("secret-24-key")), srv, demo, elementVariant
}

func request24(demo agentatest.Demo) models.PreflightRequest {
	return models.PreflightRequest{AppID: demo.AppID, VariantIDs: []string{demo.VariantID, demo.VerboseVariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID, demo.EditDistanceID}, TestsetID: demo.TestsetID}
}

func TestPreflight2024(t *testing.T) {
	ctx := func(t *testing.T) context.Context { return ctx26(t) }
	t.Run("good, the demo's app unreachable", func(t *testing.T) {
		c, _, demo, _ := fake24(t)
		report, err := c.Preflight(ctx(t), request24(demo))
		require.NoError(t, err)
		assert.Equal(t, "2024", report.Generation)
		assert.Equal(t, []string{"correct_answer", "country"}, report.Columns)
		require.Len(t, report.Evaluators, 2)
		assert.Equal(t, "Exact match", report.Evaluators[0].Name)
		// The demo's base URI is no server: its inputs were not read, and
		// the report says so (once per variant).
		require.Len(t, report.Skipped, 2, "%+v", report.Skipped)
		assert.Equal(t, "app inputs", report.Skipped[0].Check)
		assert.Contains(t, report.Skipped[0].Message, "the app could not be reached")
	})
	t.Run("wrong ids", func(t *testing.T) {
		c, srv, demo, _ := fake24(t)
		req := models.PreflightRequest{AppID: demo.AppID, VariantIDs: []string{unknownID},
			EvaluatorConfigIDs: []string{demo.ExactMatchID, unknownID}, TestsetID: unknownID}
		report, err := c.Preflight(ctx(t), req)
		findings := requirePreflightError(t, report, err)
		require.Len(t, findings, 3, "%+v", findings)
		for _, subject := range []string{models.PreflightVariant, models.PreflightTestset, models.PreflightEvaluator} {
			f := findingOf(t, findings, models.PreflightNotFound, subject)
			assert.Equal(t, unknownID, f.ID)
			assert.True(t, strings.HasPrefix(f.Message, subject+" "+unknownID+" "), "message %q names the kind and the id", f.Message)
		}
		assertNothingCreated(t, srv)
	})
	t.Run("missing input column", func(t *testing.T) {
		c, srv, demo, element := fake24(t)
		req := request24(demo)
		req.VariantIDs = []string{element}
		report, err := c.Preflight(ctx(t), req)
		findings := requirePreflightError(t, report, err)
		require.Len(t, findings, 1, "%+v", findings)
		f := findingOf(t, findings, models.PreflightMissingInput, models.PreflightTestset)
		assert.Equal(t, "the test set has no column 'element', which the app takes as input: rename the column, or change the app's inputs", f.Message)
		assert.Empty(t, report.Skipped)
		assert.NotContains(t, err.Error(), "secret-24-key")
		_, err = evals.Evaluate(ctx(t), c, models.NewEvaluation{AppID: demo.AppID, VariantIDs: []string{element},
			EvaluatorConfigIDs: []string{demo.ExactMatchID}, TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit()}, (*agenta.WaitOptions)(nil))
		require.ErrorIs(t, err, agenta.ErrPreflight)
		assertNothingCreated(t, srv)
	})
}

func TestPreflightCorrectAnswer2024(t *testing.T) {
	c, srv, demo, _ := fake24(t)
	noKey := srv.AddEvaluatorConfig(models.EvaluatorConfig{Name: "Exact no key", EvaluatorKey: "auto_exact_match", SettingsValues: map[string]any{}})
	expected := srv.AddEvaluatorConfig(models.EvaluatorConfig{Name: "Exact expected", EvaluatorKey: "auto_exact_match",
		SettingsValues: map[string]any{"correct_answer_key": "expected"}})
	regex := srv.AddEvaluatorConfig(models.EvaluatorConfig{Name: "Regex", EvaluatorKey: "auto_regex_test",
		SettingsValues: map[string]any{"regex_pattern": "x"}})
	req := request24(demo)
	req.EvaluatorConfigIDs = []string{noKey, expected, regex}
	report, err := c.Preflight(ctx26(t), req)
	findings := requirePreflightError(t, report, err)
	require.Len(t, findings, 2, "the regex test takes no correct answer: %+v", findings)
	assert.Equal(t, noKey, findings[0].ID)
	assert.Contains(t, findings[0].Message, "evaluator 'Exact no key' ("+noKey+") names no correct-answer column")
	assert.Equal(t, expected, findings[1].ID)
	assert.Equal(t, "expected", findings[1].Column)
	assert.Equal(t, "the test set has no column 'expected', which evaluator 'Exact expected' ("+expected+") reads its correct answer from", findings[1].Message)
	for _, f := range findings {
		assert.Equal(t, models.PreflightMissingCorrectAnswer, f.Problem)
	}
}

func TestPreflightArguments(t *testing.T) {
	c, _, demo, _ := fake24(t)
	for name, tc := range map[string]struct {
		edit func(*models.PreflightRequest)
		arg  string
	}{
		"no app":        {func(r *models.PreflightRequest) { r.AppID = "" }, "PreflightRequest.AppID"},
		"no variants":   {func(r *models.PreflightRequest) { r.VariantIDs = nil }, "PreflightRequest.VariantIDs"},
		"no evaluators": {func(r *models.PreflightRequest) { r.EvaluatorConfigIDs = nil }, "PreflightRequest.EvaluatorConfigIDs"},
		"no test set":   {func(r *models.PreflightRequest) { r.TestsetID = "" }, "PreflightRequest.TestsetID"},
	} {
		t.Run(name, func(t *testing.T) {
			req := request24(demo)
			tc.edit(&req)
			report, err := c.Preflight(ctx26(t), req)
			assert.Nil(t, report)
			requireArg(t, err, tc.arg)
		})
	}
}

// TestPreflightNotServed checks that a read the server does not serve
// skips its check with a note, and that any other failed read is an error.
func TestPreflightNotServed(t *testing.T) {
	c, srv, demo, _ := fake24(t)
	srv.InjectFault(agentatest.OpListEvaluatorConfigs, agentatest.Always, agentatest.Fault{Status: http.StatusNotFound, Body: `{"detail":"Not Found"}`})
	report, err := c.Preflight(ctx26(t), request24(demo))
	require.NoError(t, err)
	assert.Empty(t, report.Evaluators)
	var checks []string
	for _, n := range report.Skipped {
		checks = append(checks, n.Check)
	}
	assert.Contains(t, checks, "evaluators exist")

	c, srv, demo, _ = fake24(t)
	srv.InjectFault(agentatest.OpGetTestset, agentatest.Always, agentatest.Fault{Status: http.StatusUnauthorized})
	report, err = c.Preflight(ctx26(t), request24(demo))
	assert.Nil(t, report)
	require.ErrorIs(t, err, agenta.ErrUnauthorized)
	assert.False(t, errors.Is(err, agenta.ErrPreflight))
}

// TestPreflightReads counts the reads a preflight adds, as
// docs/performance.md states them, from the fake's request log.
func TestPreflightReads(t *testing.T) {
	count := func(srv *agentatest.Server) map[agentatest.Operation]int {
		n := map[agentatest.Operation]int{}
		for _, r := range srv.Requests() {
			assert.Contains(t, []string{http.MethodGet, http.MethodPost}, r.Method)
			n[r.Operation]++
		}
		return n
	}
	c, srv, demo, _ := fake24(t)
	_, err := c.Preflight(ctx26(t), request24(demo)) // two variants, two evaluators
	require.NoError(t, err)
	assert.Equal(t, map[agentatest.Operation]int{"": 1, // the generation probe
		agentatest.OpGetTestset: 1, agentatest.OpListAppVariants: 1, agentatest.OpListEvaluatorConfigs: 1}, count(srv))

	c26, srv26, demo26 := fake26(t)
	_, err = c26.Preflight(ctx26(t), request26(demo26))
	require.NoError(t, err)
	assert.Equal(t, map[agentatest.Operation]int{agentatest.OpFetchRun: 1, // the generation probe
		agentatest.OpRetrieveTestsetRevision: 1, agentatest.OpQueryTestcases: 1,
		agentatest.OpRetrieveApplicationRevision: 1, agentatest.OpRetrieveEvaluatorRevision: 1}, count(srv26))
}

// TestPreflightLargeTestset checks that a test set too large to read whole
// skips the column checks, with a note, rather than refusing the run.
func TestPreflightLargeTestset(t *testing.T) {
	_, srv, demo, element := fake24(t)
	c := clientFor(t, srv, agenta.WithResponseLimits(agenta.ResponseLimits{Single: 64}))
	req := request24(demo)
	req.VariantIDs = []string{element} // whose input the test set lacks
	report, err := c.Preflight(ctx26(t), req)
	require.NoError(t, err)
	assert.Nil(t, report.Columns)
	require.NotEmpty(t, report.Skipped)
	assert.Contains(t, report.Skipped[0].Message, "larger than ResponseLimits.Single")
}

// TestPreflightErrorBounded checks that the error lists ten findings and
// counts the rest: an app's document may name any number of inputs.
func TestPreflightErrorBounded(t *testing.T) {
	report := &models.PreflightReport{}
	for i := range 12 {
		report.Findings = append(report.Findings, models.PreflightFinding{Problem: models.PreflightMissingInput,
			Message: "finding " + string(rune('a'+i))})
	}
	msg := (&agenta.PreflightError{Report: report}).Error()
	assert.Contains(t, msg, "finding j; and 2 more")
	assert.NotContains(t, msg, "finding k")
}
