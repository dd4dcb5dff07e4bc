package agenta_test

// Preflight against the real servers, when the environment names them: a
// mid-2024 one (AGENTA_REAL_SERVER and the seed's RS_* ids, as .ci/run
// exports them) and a v0.113 one (AGENTA_RS26_URL, AGENTA_RS26_KEY and
// AGENTA_RS26_IDS, the kit's ids.json).

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realEnv returns the environment variables named, skipping the test
// when one is unset.
func realEnv(t *testing.T, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		v := os.Getenv(n)
		if v == "" {
			t.Skipf("skipped: set %v to run it against a real server (%s is unset)", names, n)
		}
		out[n] = v
	}
	return out
}

func TestPreflightRealServer2024(t *testing.T) {
	env := realEnv(t, "AGENTA_REAL_SERVER", "RS_APP_ID", "RS_VARIANT_ID", "RS_TESTSET_ID", "RS_TESTSET_MISMATCH_ID",
		"RS_EV_EXACT", "RS_EV_LEV", "RS_EV_EXACT_NOKEY")
	c, err := agenta.NewClient(env["AGENTA_REAL_SERVER"], agenta.WithTimeout(time.Minute))
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	good := models.PreflightRequest{AppID: env["RS_APP_ID"], VariantIDs: []string{env["RS_VARIANT_ID"]},
		EvaluatorConfigIDs: []string{env["RS_EV_EXACT"], env["RS_EV_LEV"]}, TestsetID: env["RS_TESTSET_ID"]}

	report, err := c.Preflight(ctx26(t), good)
	require.NoError(t, err)
	assert.Equal(t, "2024", report.Generation)
	assert.Empty(t, report.Skipped, "the seeded app's OpenAPI document is served: every check runs")
	require.Len(t, report.Evaluators, 2)
	assert.Equal(t, "Exact match", report.Evaluators[0].Name)

	mismatch := good
	mismatch.TestsetID = env["RS_TESTSET_MISMATCH_ID"]
	report, err = c.Preflight(ctx26(t), mismatch)
	f := findingOf(t, requirePreflightError(t, report, err), models.PreflightMissingInput, models.PreflightTestset)
	assert.Equal(t, "the test set has no column 'country', which the app takes as input: rename the column, or change the app's inputs", f.Message)

	wrong := models.PreflightRequest{AppID: env["RS_APP_ID"], VariantIDs: []string{unknownID},
		EvaluatorConfigIDs: []string{unknownID}, TestsetID: unknownID}
	report, err = c.Preflight(ctx26(t), wrong)
	findings := requirePreflightError(t, report, err)
	t.Logf("wrong ids: %v", err)
	for _, subject := range []string{models.PreflightVariant, models.PreflightTestset, models.PreflightEvaluator} {
		findingOf(t, findings, models.PreflightNotFound, subject)
	}

	noKey := good
	noKey.EvaluatorConfigIDs = []string{env["RS_EV_EXACT_NOKEY"]}
	report, err = c.Preflight(ctx26(t), noKey)
	f = findingOf(t, requirePreflightError(t, report, err), models.PreflightMissingCorrectAnswer, models.PreflightEvaluator)
	assert.Equal(t, env["RS_EV_EXACT_NOKEY"], f.ID)
}

func TestPreflightRealServer2026(t *testing.T) {
	env := realEnv(t, "AGENTA_RS26_URL", "AGENTA_RS26_KEY", "AGENTA_RS26_IDS")
	raw, err := os.ReadFile(env["AGENTA_RS26_IDS"])
	require.NoError(t, err)
	var seeded struct {
		IDs struct {
			ApplicationID        string `json:"application_id"`
			ApplicationVariantID string `json:"application_variant_id"`
			TestsetID            string `json:"testset_id"`
			EvaluatorID          string `json:"evaluator_id"`
		} `json:"ids"`
	}
	require.NoError(t, json.Unmarshal(raw, &seeded))
	ids := seeded.IDs
	c, err := agenta.NewClient(env["AGENTA_RS26_URL"], agenta.WithAPIKey("ApiKey "+env["AGENTA_RS26_KEY"]), agenta.WithTimeout(time.Minute))
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	good := models.PreflightRequest{AppID: ids.ApplicationID, VariantIDs: []string{ids.ApplicationVariantID},
		EvaluatorConfigIDs: []string{ids.EvaluatorID}, TestsetID: ids.TestsetID}

	report, err := c.Preflight(ctx26(t), good)
	require.NoError(t, err)
	assert.Equal(t, "2026", report.Generation)
	assert.Equal(t, []string{"country", "correct_answer"}, report.Columns)
	require.Len(t, report.Evaluators, 1)
	assert.Equal(t, "Exact capital", report.Evaluators[0].Name)
	require.Len(t, report.Skipped, 1, "the seeded app has no input schema: %+v", report.Skipped)
	assert.Equal(t, "app inputs", report.Skipped[0].Check)

	wrong := models.PreflightRequest{AppID: ids.ApplicationID, VariantIDs: []string{unknownID},
		EvaluatorConfigIDs: []string{unknownID}, TestsetID: unknownID}
	report, err = c.Preflight(ctx26(t), wrong)
	findings := requirePreflightError(t, report, err)
	t.Logf("wrong ids: %v", err)
	for _, subject := range []string{models.PreflightVariant, models.PreflightTestset, models.PreflightEvaluator} {
		findingOf(t, findings, models.PreflightNotFound, subject)
	}

	// A variant of its own, whose revision takes "element": the seeded
	// variant is left as it is.
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	rev, err := c.RetrieveApplicationRevision(ctx26(t), models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: ids.ApplicationVariantID}})
	require.NoError(t, err)
	fork, err := c.ForkApplicationVariant(ctx26(t), models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: ids.ApplicationVariantID},
		ApplicationVariant: models.NewApplicationVariant{Slug: "preflight-" + hex.EncodeToString(suffix[:])}})
	require.NoError(t, err)
	data := *rev.Data
	data.Schemas = map[string]json.RawMessage{"inputs": json.RawMessage(`{"type":"object","properties":{"country":{"type":"string"},"element":{"type":"string"}}}`)}
	_, err = c.CommitApplicationRevision(ctx26(t), models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, Message: "preflight test: takes element", Data: &data})
	require.NoError(t, err)
	mismatch := good
	mismatch.VariantIDs = []string{fork.ID}
	report, err = c.Preflight(ctx26(t), mismatch)
	f := findingOf(t, requirePreflightError(t, report, err), models.PreflightMissingInput, models.PreflightTestset)
	assert.Equal(t, "the test set has no column 'element', which the app takes as input: rename the column, or change the app's inputs", f.Message)
}
