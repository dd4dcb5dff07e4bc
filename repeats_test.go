package agenta_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repeats2024 is a mid-2024 fake with the demo, and a request of its two
// variants asking for repeats.
func repeats2024(t *testing.T, repeats int) (*agenta.Client, *agentatest.Server, models.NewEvaluation) {
	t.Helper()
	srv := agentatest.NewTestServer(t, agentatest.WithEvaluationPace(time.Millisecond))
	demo := agentatest.SeedDemo(srv)
	return clientFor(t, srv), srv, models.NewEvaluation{AppID: demo.AppID, VariantIDs: demo.VariantIDs(),
		EvaluatorConfigIDs: []string{demo.ExactMatchID}, TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit(), Repeats: repeats}
}

// On a mid-2024 server, which has no repeats, K repeats are K creates, each
// sent once, answered with K evaluations per variant, repeat after repeat;
// the request never carries a repeats field the service does not know.
func TestCreateEvaluationRepeats2024(t *testing.T) {
	c, srv, req := repeats2024(t, 3)
	created, err := c.CreateEvaluation(context.Background(), req)
	require.NoError(t, err)
	creates := srv.RequestsFor(agentatest.OpCreateEvaluation)
	require.Len(t, creates, 3, "one create per repeat")
	for _, r := range creates {
		var body map[string]any
		require.NoError(t, json.Unmarshal(r.Body, &body))
		assert.NotContains(t, body, "repeats", "a mid-2024 request has no repeats")
		assert.Len(t, body["variant_ids"], 2)
	}
	require.Len(t, created, 6, "3 repeats of 2 variants")
	ids := map[string]bool{}
	for k, ev := range created {
		assert.Equal(t, req.VariantIDs[k%2], ev.VariantIDs[0], "evaluation %d is repeat %d of variant %d", k, k/2, k%2)
		ids[ev.ID] = true
	}
	assert.Len(t, ids, 6, "six evaluations, each its own")
}

// A create that the service answers 429 is retried, as it created
// nothing: the server still holds one evaluation per repeat and variant.
// One whose answer is lost after the service made it is never sent again:
// the repeats before it are returned, and the error names them.
func TestCreateEvaluationRepeats2024Faults(t *testing.T) {
	t.Run("429 retried", func(t *testing.T) {
		c, srv, req := repeats2024(t, 3)
		// The second create meets a 429 first.
		srv.InjectFault(agentatest.OpCreateEvaluation, 1, agentatest.Fault{})
		srv.InjectFault(agentatest.OpCreateEvaluation, 1, agentatest.Fault{Status: 429, RetryAfter: "0"})
		created, err := c.CreateEvaluation(context.Background(), req)
		require.NoError(t, err)
		require.Len(t, created, 6)
		made := 0
		for _, r := range srv.RequestsFor(agentatest.OpCreateEvaluation) {
			if r.Status == 200 {
				made++
			}
		}
		assert.Equal(t, 3, made, "creates the server carried out")
		assert.Len(t, srv.RequestsFor(agentatest.OpCreateEvaluation), 4, "three creates and the 429's retry")
	})
	t.Run("answer lost", func(t *testing.T) {
		c, srv, req := repeats2024(t, 3)
		srv.InjectFault(agentatest.OpCreateEvaluation, 1, agentatest.Fault{})
		srv.InjectFault(agentatest.OpCreateEvaluation, 1, agentatest.Fault{Drop: true, AfterHandling: true})
		created, err := c.CreateEvaluation(context.Background(), req)
		require.Error(t, err)
		assert.Len(t, srv.RequestsFor(agentatest.OpCreateEvaluation), 2, "the lost create is not sent again, nor the third")
		require.Len(t, created, 2, "the first repeat's evaluations are returned")
		assert.ErrorContains(t, err, "repeat 2 of 3 may have been created")
		for _, ev := range created {
			assert.ErrorContains(t, err, ev.ID, "the error names each evaluation created")
		}
		assert.True(t, errors.Is(err, agenta.ErrNoResponse), "the cause is kept: %v", err)
	})
	t.Run("refused", func(t *testing.T) {
		c, srv, req := repeats2024(t, 2)
		srv.InjectFault(agentatest.OpCreateEvaluation, 1, agentatest.Fault{})
		srv.InjectFault(agentatest.OpCreateEvaluation, 1, agentatest.Fault{Status: 500})
		created, err := c.CreateEvaluation(context.Background(), req)
		var apiErr *agenta.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 500, apiErr.StatusCode)
		assert.ErrorContains(t, err, "repeat 2 of 2 was not created")
		assert.Len(t, created, 2)
	})
	t.Run("first refused", func(t *testing.T) {
		c, srv, req := repeats2024(t, 2)
		srv.InjectFault(agentatest.OpCreateEvaluation, 1, agentatest.Fault{Status: 500})
		created, err := c.CreateEvaluation(context.Background(), req)
		require.Error(t, err)
		assert.Nil(t, created)
		assert.Len(t, srv.RequestsFor(agentatest.OpCreateEvaluation), 1, "no repeat after a refused first")
	})
}

// A negative count, or one past models.MaxRepeats, is refused before
// anything is sent, naming the field.
func TestCreateEvaluationRefusesRepeats(t *testing.T) {
	for _, n := range []int{-1, models.MaxRepeats + 1, 1 << 40} {
		c, srv, req := repeats2024(t, n)
		_, err := c.CreateEvaluation(context.Background(), req)
		var argErr *agenta.ArgumentError
		require.ErrorAs(t, err, &argErr, "Repeats %d", n)
		assert.Equal(t, "NewEvaluation.Repeats", argErr.Name)
		assert.Empty(t, srv.RequestsFor(agentatest.OpCreateEvaluation))
	}
	for _, n := range []int{0, 1, models.MaxRepeats} {
		c, srv, req := repeats2024(t, n)
		req.VariantIDs = req.VariantIDs[:1]
		_, err := c.CreateEvaluation(context.Background(), req)
		require.NoError(t, err, "Repeats %d", n)
		assert.Len(t, srv.RequestsFor(agentatest.OpCreateEvaluation), max(n, 1))
	}
}

// On a 2026 server, repeats are the run's: data.repeats with is_split, so
// that a noisy app is called once per repeat and its flaky cases show; one
// run per variant, whose rows are each case's repeats.
func TestCreateEvaluationRepeats2026(t *testing.T) {
	c, srv, demo := fake26(t)
	ctx := ctx26(t)
	require.NoError(t, c.DetectGeneration(ctx))
	noisy := srv.AddApplication2026(agentatest.Application2026{Slug: "noisy", Parameters: map[string]any{"temperature": 0.7},
		Application: agentatest.NoisyApplication(agentatest.StandInApplication, 27, agentatest.RightWith(0.6), nil)})
	created, err := c.CreateEvaluation(ctx, models.NewEvaluation{AppID: noisy.ApplicationID, VariantIDs: []string{noisy.VariantID},
		EvaluatorConfigIDs: []string{demo.EvaluatorID}, TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit(), Repeats: 3})
	require.NoError(t, err)
	require.Len(t, created, 1, "one run per variant")
	sent := srv.RequestsFor(agentatest.OpCreateSimpleEvaluation)
	require.Len(t, sent, 1)
	var body struct {
		Evaluation struct {
			Flags struct {
				IsSplit bool `json:"is_split"`
			} `json:"flags"`
			Data struct {
				Repeats int `json:"repeats"`
			} `json:"data"`
		} `json:"evaluation"`
	}
	require.NoError(t, json.Unmarshal(sent[0].Body, &body))
	assert.Equal(t, 3, body.Evaluation.Data.Repeats)
	assert.True(t, body.Evaluation.Flags.IsSplit, "the app is called once per repeat")

	_, err = c.WaitEvaluation(ctx, created[0].ID, &agenta.WaitOptions{Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	passes := map[string]int{}
	rows := collect(t, c.StreamEvaluationScenarios(ctx, created[0].ID))
	require.Len(t, rows, 15, "5 cases × 3 repeats")
	for _, s := range rows {
		require.NotEmpty(t, s.TestcaseID)
		ok, _ := s.Results[0].Result.Bool()
		passes[s.TestcaseID] += map[bool]int{true: 1}[ok]
	}
	require.Len(t, passes, 5)
	flaky := 0
	for _, n := range passes {
		if n > 0 && n < 3 {
			flaky++
		}
	}
	assert.Positive(t, flaky, "no flaky case at p=0.6 over 3 repeats: %v", passes)

	// Without repeats, the request is as before: one repeat, not split.
	_, err = c.CreateEvaluation(ctx, models.NewEvaluation{AppID: noisy.ApplicationID, VariantIDs: []string{noisy.VariantID},
		EvaluatorConfigIDs: []string{demo.EvaluatorID}, TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit()})
	require.NoError(t, err)
	sent = srv.RequestsFor(agentatest.OpCreateSimpleEvaluation)
	body.Evaluation.Flags.IsSplit, body.Evaluation.Data.Repeats = false, 0
	require.NoError(t, json.Unmarshal(sent[1].Body, &body))
	assert.Equal(t, 1, body.Evaluation.Data.Repeats)
	assert.False(t, body.Evaluation.Flags.IsSplit)
}
