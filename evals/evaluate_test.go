package evals_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
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

// The client satisfies the interface, so that the one-call evaluation takes
// it as it is; this stops compiling if either changes.
var _ evals.Service[*agenta.WaitOptions] = (*agenta.Client)(nil)

// And it stops the runs Evaluate gives up on, where the server can.
var _ evals.Stopper = (*agenta.Client)(nil)

// fastWait polls the fake quickly: its runs take a fraction of a second.
var fastWait = &agenta.WaitOptions{Interval: 10 * time.Millisecond}

// demoClient returns a client of a fresh demo fake.
func demoClient(t *testing.T, opts ...agentatest.Option) (*agentatest.Server, agentatest.Demo, *agenta.Client) {
	t.Helper()
	srv := agentatest.NewTestServer(t, opts...)
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	return srv, demo, client
}

func demoRequest(demo agentatest.Demo, variantIDs ...string) models.NewEvaluation {
	return models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: variantIDs, EvaluatorConfigIDs: demo.EvaluatorConfigIDs(),
		TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit(),
	}
}

func TestEvaluateRunsEveryVariantToTheEnd(t *testing.T) {
	srv, demo, client := demoClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var statuses []models.EvaluationStatus
	wait := &agenta.WaitOptions{Interval: 10 * time.Millisecond, OnStatus: func(s models.Result) {
		statuses = append(statuses, s.EvaluationStatus())
	}}
	// The verbose variant first: the runs come back in the order asked.
	runs, err := evals.Evaluate(ctx, client, demoRequest(demo, demo.VerboseVariantID, demo.VariantID), wait)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if len(runs) != 2 {
		t.Fatalf("Evaluate returned %d runs, want 2", len(runs))
	}
	for i, want := range []string{"capitals.verbose", "capitals.default"} {
		run := runs[i]
		if run.Variant() != want || run.Evaluation.Status.EvaluationStatus() != models.EvaluationFinished || len(run.Scenarios) != demo.TestsetRows {
			t.Errorf("run %d: variant %q, status %s, %d scenarios; want %q, FINISHED, %d", i, run.Variant(),
				run.Evaluation.Status.EvaluationStatus(), len(run.Scenarios), want, demo.TestsetRows)
		}
	}
	if got := len(srv.RequestsFor(agentatest.OpFetchEvaluationScenarios)); got != 2 {
		t.Errorf("the scenarios were read %d times, want once per run (2)", got)
	}
	if got := len(srv.RequestsFor(agentatest.OpCreateEvaluation)); got != 1 {
		t.Errorf("%d creates sent, want 1", got)
	}
	// The progress callback saw each run end.
	if n := strings.Count(fmt.Sprint(statuses), string(models.EvaluationFinished)); n != 2 {
		t.Errorf("OnStatus saw %v, want EVALUATION_FINISHED once per run", statuses)
	}
	report := evals.NewReport(runs[1], runs[0])
	if err := report.Check(evals.MinMean("Exact match", 0.5)); !errors.Is(err, evals.ErrGateFailed) {
		t.Errorf("the verbose variant as candidate: Check = %v, want a failed gate (its exact match is 0%%)", err)
	}
}

func TestEvaluateNamesTheRunThatFailed(t *testing.T) {
	srv, demo, client := demoClient(t)
	mismatch := srv.AddTestset(agentatest.Testset{AppID: demo.AppID, Name: "mismatch",
		Rows: []map[string]string{{"nation": "France", "correct_answer": "Paris"}}})
	req := demoRequest(demo, demo.VariantID, demo.VerboseVariantID)
	req.TestsetID = mismatch
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runs, err := evals.Evaluate(ctx, client, req, fastWait)

	var runErr *evals.RunError
	if !errors.As(err, &runErr) {
		t.Fatalf("Evaluate = %v, want a *RunError", err)
	}
	if !errors.Is(err, agenta.ErrEvaluationFailed) {
		t.Errorf("errors.Is(%v, ErrEvaluationFailed) = false, want true", err)
	}
	if runErr.Run != 0 || runErr.Runs != 2 || runErr.EvaluationID != runs[0].Evaluation.ID || runErr.Variant != "capitals.default" {
		t.Errorf("RunError names run %d of %d, %s (%s); want run 0 of 2, %s (capitals.default)",
			runErr.Run, runErr.Runs, runErr.EvaluationID, runErr.Variant, runs[0].Evaluation.ID)
	}
	// The second run was never waited for: it may run on, and the client
	// cannot stop it.
	if !slices.Equal(runErr.Unfinished, []string{runs[1].Evaluation.ID}) || len(runErr.Stopped) != 0 {
		t.Errorf("Unfinished %v, Stopped %v; want [%s] and none", runErr.Unfinished, runErr.Stopped, runs[1].Evaluation.ID)
	}
	for _, want := range []string{"evals: evaluation " + runs[0].Evaluation.ID + " (capitals.default, run 1 of 2): ", "EVALUATION_FAILED", "may still be running on the service"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	// The failed run comes back with the service's reason, which a report
	// turns into a failing gate.
	if runs[0].Evaluation.Status.EvaluationStatus() != models.EvaluationFailed {
		t.Errorf("run 0's status is %s, want EVALUATION_FAILED", runs[0].Evaluation.Status.EvaluationStatus())
	}
	report := evals.NewReport(evals.Run{}, runs[0])
	if err := report.Check(evals.MaxAppErrors(0)); err == nil || !strings.Contains(err.Error(), "EVALUATION_FAILED") {
		t.Errorf("Check on the failed run = %v, want a failure naming EVALUATION_FAILED", err)
	}
}

// stoppingClient is a client of a service that can stop a run.
type stoppingClient struct {
	*agenta.Client
	stopped []string
	ctxErr  []error
}

func (c *stoppingClient) StopEvaluation(ctx context.Context, id string) error {
	c.stopped = append(c.stopped, id)
	c.ctxErr = append(c.ctxErr, ctx.Err())
	if id == "" {
		return errors.New("no id")
	}
	return nil
}

func TestEvaluateWhenTheContextEnds(t *testing.T) {
	// No worker: the runs stay INITIALIZED until the context ends.
	_, demo, client := demoClient(t, agentatest.WithManualEvaluations())
	for _, tc := range []struct {
		name string
		svc  evals.Service[*agenta.WaitOptions]
	}{
		{"a client cannot stop the runs", client},
		{"a service that can stops them", &stoppingClient{Client: client}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			runs, err := evals.Evaluate(ctx, tc.svc, demoRequest(demo, demo.VariantID, demo.VerboseVariantID), fastWait)
			var runErr *evals.RunError
			if !errors.As(err, &runErr) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Evaluate = %v, want a *RunError matching context.DeadlineExceeded", err)
			}
			ids := []string{runs[0].Evaluation.ID, runs[1].Evaluation.ID}
			if runErr.Run != 0 {
				t.Errorf("RunError.Run = %d, want 0 (the first wait)", runErr.Run)
			}
			stopper, canStop := tc.svc.(*stoppingClient)
			switch {
			case !canStop:
				if !slices.Equal(runErr.Unfinished, ids) || len(runErr.Stopped) != 0 {
					t.Errorf("Unfinished %v, Stopped %v; want %v and none", runErr.Unfinished, runErr.Stopped, ids)
				}
				if !strings.Contains(err.Error(), "evaluations "+ids[0]+", "+ids[1]+" may still be running") {
					t.Errorf("the error %q does not name the runs left running", err)
				}
			default:
				if !slices.Equal(runErr.Stopped, ids) || len(runErr.Unfinished) != 0 || !slices.Equal(stopper.stopped, ids) {
					t.Errorf("Stopped %v, Unfinished %v, StopEvaluation called for %v; want %v, none, %v", runErr.Stopped, runErr.Unfinished, stopper.stopped, ids, ids)
				}
				for i, e := range stopper.ctxErr {
					if e != nil {
						t.Errorf("StopEvaluation %d got a context that had ended (%v): it must outlive the caller's", i, e)
					}
				}
			}
		})
	}
}

// scriptedService answers from fields: the created evaluations, a finished
// status per evaluation, and the scenarios with an error after them.
type scriptedService struct {
	created   []models.Evaluation
	scenarios []models.EvaluationScenario
	streamErr error
	waits     []string
}

func (s *scriptedService) CreateEvaluation(_ context.Context, ev models.NewEvaluation) ([]models.Evaluation, error) {
	return s.created, nil
}

func (s *scriptedService) WaitEvaluation(_ context.Context, id string, opts string) (*models.Evaluation, error) {
	s.waits = append(s.waits, id+":"+opts)
	for _, ev := range s.created {
		if ev.ID == id {
			ev.Status = models.Result{Type: models.ResultTypeStatus, Value: []byte(`"EVALUATION_FINISHED"`)}
			return &ev, nil
		}
	}
	return nil, errors.New("unknown evaluation")
}

func (s *scriptedService) StreamEvaluationScenarios(_ context.Context, id string) iter.Seq2[models.EvaluationScenario, error] {
	return func(yield func(models.EvaluationScenario, error) bool) {
		for _, sc := range s.scenarios {
			sc.EvaluationID = id
			if !yield(sc, nil) {
				return
			}
		}
		if s.streamErr != nil {
			yield(models.EvaluationScenario{}, s.streamErr)
		}
	}
}

func scripted(rows int, streamErr error) *scriptedService {
	return &scriptedService{
		created: []models.Evaluation{
			{ID: "ev-b", VariantIDs: []string{"b"}, VariantNames: []string{"app.b"}},
			{ID: "ev-a", VariantIDs: []string{"a"}, VariantNames: []string{"app.a"}},
		},
		scenarios: make([]models.EvaluationScenario, rows),
		streamErr: streamErr,
	}
}

var request = models.NewEvaluation{AppID: "app", VariantIDs: []string{"a", "b"}, EvaluatorConfigIDs: []string{"e"}, TestsetID: "t"}

func TestEvaluateWithAFakeOfYourOwn(t *testing.T) {
	svc := scripted(3, nil)
	// Any type of wait options: here a string, passed to every wait.
	runs, err := evals.Evaluate(context.Background(), svc, request, "fast")
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{runs[0].Evaluation.ID, runs[1].Evaluation.ID}; !slices.Equal(got, []string{"ev-a", "ev-b"}) {
		t.Errorf("runs %v, want them in the order of VariantIDs: ev-a, ev-b", got)
	}
	if !slices.Equal(svc.waits, []string{"ev-a:fast", "ev-b:fast"}) {
		t.Errorf("waits %v, want ev-a:fast then ev-b:fast", svc.waits)
	}
	if len(runs[0].Scenarios) != 3 || runs[0].Scenarios[0].EvaluationID != "ev-a" {
		t.Errorf("run 0 has %d scenarios (%+v), want the 3 of ev-a", len(runs[0].Scenarios), runs[0].Scenarios)
	}
}

func TestEvaluateAnAnswerCutShortIsAnError(t *testing.T) {
	cut := errors.New("connection reset mid-answer")
	svc := scripted(2, cut)
	runs, err := evals.Evaluate(context.Background(), svc, request, "")
	var runErr *evals.RunError
	if !errors.As(err, &runErr) || !errors.Is(err, cut) || runErr.EvaluationID != "ev-a" {
		t.Fatalf("Evaluate = %v, want a *RunError for ev-a wrapping %v", err, cut)
	}
	if len(runs[0].Scenarios) != 0 {
		t.Errorf("run 0 kept %d scenarios of an answer cut short, want none", len(runs[0].Scenarios))
	}
	// ev-b was never waited for.
	if !slices.Equal(runErr.Unfinished, []string{"ev-b"}) {
		t.Errorf("Unfinished = %v, want [ev-b]", runErr.Unfinished)
	}
	if !strings.Contains(err.Error(), "read the scenarios: connection reset mid-answer") {
		t.Errorf("the error %q does not say the read failed", err)
	}
}

func TestEvaluateWithStreamsEachRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		streamErr error
		consumer  func(seq iter.Seq2[models.EvaluationScenario, error]) error
		wantErr   string
	}{
		{name: "rows counted as they come", consumer: func(seq iter.Seq2[models.EvaluationScenario, error]) error {
			for _, err := range seq {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "a consumer that drops the stream's error", streamErr: errors.New("cut"), wantErr: "read the scenarios: cut",
			consumer: func(seq iter.Seq2[models.EvaluationScenario, error]) error {
				for range seq {
				}
				return nil
			}},
		{name: "a consumer's own error", wantErr: "full",
			consumer: func(iter.Seq2[models.EvaluationScenario, error]) error { return errors.New("full") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := scripted(4, tc.streamErr)
			var created []string
			var waited, consumed []int
			runs, err := evals.EvaluateWith(context.Background(), svc, request, evals.EvaluateOptions[string]{
				Wait: func(run int, ev models.Evaluation) string { return fmt.Sprint("run", run) },
				Created: func(evs []models.Evaluation) {
					for _, ev := range evs {
						created = append(created, ev.ID)
					}
				},
				Waited: func(run int, ev *models.Evaluation, err error) { waited = append(waited, run) },
				Scenarios: func(run int, ev models.Evaluation, seq iter.Seq2[models.EvaluationScenario, error]) error {
					consumed = append(consumed, run)
					return tc.consumer(seq)
				},
			})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(svc.waits, []string{"ev-a:run0", "ev-b:run1"}) || !slices.Equal(waited, []int{0, 1}) || !slices.Equal(consumed, []int{0, 1}) {
					t.Errorf("waits %v, Waited %v, Scenarios %v; want per-run options and both runs", svc.waits, waited, consumed)
				}
				if len(runs[0].Scenarios)+len(runs[1].Scenarios) != 0 {
					t.Errorf("EvaluateWith kept scenarios that a consumer took")
				}
			} else {
				var runErr *evals.RunError
				if !errors.As(err, &runErr) || runErr.Run != 0 || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("EvaluateWith = %v, want a *RunError of run 0 saying %q", err, tc.wantErr)
				}
			}
			if !slices.Equal(created, []string{"ev-a", "ev-b"}) {
				t.Errorf("Created saw %v, want [ev-a ev-b]", created)
			}
		})
	}
}

func TestEvaluateRefusesWhatItCannotUse(t *testing.T) {
	svc := scripted(0, nil)
	svc.created = svc.created[:1]
	if _, err := evals.Evaluate(context.Background(), svc, request, ""); err == nil || !strings.Contains(err.Error(), "created 1 evaluations for 2 variants: ev-b") {
		t.Errorf("one evaluation for two variants: %v, want an error naming it", err)
	}
	//lint:ignore SA1012 a nil context is what is tested
	if _, err := evals.Evaluate(nil, svc, request, ""); err == nil || !strings.Contains(err.Error(), "ctx is nil") {
		t.Errorf("nil ctx: %v, want an error", err)
	}
	if _, err := evals.Evaluate[string](context.Background(), nil, request, ""); err == nil || !strings.Contains(err.Error(), "service is nil") {
		t.Errorf("nil service: %v, want an error", err)
	}
	// The SDK refuses a bad request before sending anything; Evaluate
	// returns that error as it is.
	_, _, client := demoClient(t)
	if _, err := evals.Evaluate(context.Background(), client, models.NewEvaluation{}, nil); !errors.Is(err, agenta.ErrInvalidArgument) {
		t.Errorf("an empty request: %v, want ErrInvalidArgument", err)
	}
}

// undetected is a service whose generation cannot be found out.
type undetected struct {
	scriptedService
	creates int
}

func (u *undetected) DetectGeneration(context.Context) error { return errors.New("probe failed: 503") }

func (u *undetected) CreateEvaluation(ctx context.Context, ev models.NewEvaluation) ([]models.Evaluation, error) {
	u.creates++
	return u.scriptedService.CreateEvaluation(ctx, ev)
}

// Evaluate sends provider keys to no server whose API it could not find
// out: a 2026 server takes none, and would get them in a 2024 create.
// Without keys, a failed detection still lets the create say what is wrong.
func TestEvaluateKeepsProviderKeysFromAnUnknownServer(t *testing.T) {
	svc := &undetected{scriptedService: *scripted(1, nil)}
	req := request
	req.LMProvidersKeys = models.NewProviderKeys(map[string]string{"OPENAI_API_KEY": "sk-provider-secret-1234567890"})
	_, err := evals.Evaluate(context.Background(), svc, req, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "probe failed")
	assert.Equal(t, 0, svc.creates, "no create was sent")

	_, err = evals.Evaluate(context.Background(), svc, request, "")
	require.NoError(t, err)
	assert.Equal(t, 1, svc.creates)
}

// A gate naming an evaluator the evaluation lacks, or a mistyped measure,
// ends EvaluateWith before anything is created (issue 26); gates that
// resolve let it run.
func TestEvaluateResolvesGatesBeforeCreating(t *testing.T) {
	srv, demo, client := demoClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, text := range []string{"Exact mach >= 0.9", "wrose(Exact match) <= 0"} {
		gate, err := evals.ParseGate(text)
		require.NoError(t, err)
		_, err = evals.EvaluateWith(ctx, client, demoRequest(demo, demo.VariantID),
			evals.EvaluateOptions[*agenta.WaitOptions]{Gates: []evals.Gate{evals.MaxAppErrors(0), gate}})
		require.ErrorIs(t, err, evals.ErrInvalidGate, text)
		assert.Contains(t, err.Error(), "did you mean", text)
	}
	assert.Empty(t, srv.RequestsFor(agentatest.OpCreateEvaluation), "nothing created for an invalid gate")

	runs, err := evals.EvaluateWith(ctx, client, demoRequest(demo, demo.VariantID), evals.EvaluateOptions[*agenta.WaitOptions]{
		Gates: []evals.Gate{evals.MinMean("Exact match", 0.5), evals.MaxWorseRows("Edit distance", 0)},
		Wait:  func(int, models.Evaluation) *agenta.WaitOptions { return fastWait },
	})
	require.NoError(t, err)
	assert.Len(t, runs, 1)
}

// A Service with no preflight: the gates' evaluators cannot be checked,
// the rest of each gate can.
func TestEvaluateResolvesWhatItCanWithoutPreflight(t *testing.T) {
	_, demo, client := demoClient(t)
	svc := struct {
		evals.Service[*agenta.WaitOptions]
	}{client} // hides Preflight
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := evals.EvaluateWith(ctx, svc, demoRequest(demo, demo.VariantID), evals.EvaluateOptions[*agenta.WaitOptions]{
		Gates: []evals.Gate{{Evaluator: "Exact match", Op: ">=", Limit: math.NaN()}},
	})
	require.ErrorIs(t, err, evals.ErrInvalidGate)
	_, err = evals.EvaluateWith(ctx, svc, demoRequest(demo, demo.VariantID), evals.EvaluateOptions[*agenta.WaitOptions]{
		Gates: []evals.Gate{evals.MinMean("No such evaluator", 0.5)},
		Wait:  func(int, models.Evaluation) *agenta.WaitOptions { return fastWait },
	})
	require.NoError(t, err)
}
