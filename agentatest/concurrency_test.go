package agentatest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

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
