package agenta

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"strconv"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// api2026 is today's API behind the Client's methods (see generationAPI):
// the 2024 operations done with runs, scenarios, results, revisions and
// traces, in the 2024 shapes. The methods get arguments their Client
// method has already checked.
type api2026 struct{ *Client }

// The 2024 evaluation operations on a 2026 server. Once a Client knows its
// server speaks the 2026 API (WithGeneration, AGENTA_API_GENERATION,
// Generation or DetectGeneration), CreateEvaluation, FetchEvaluation,
// FetchEvaluationStatus, WaitEvaluation, FetchEvaluationScenarios and
// StreamEvaluationScenarios do the same job with the 2026 operations, in
// the 2024 shapes: one run per variant, a run's id as the evaluation's, its
// rows as scenarios. docs/2026.md says what maps to what.

// createEvaluation is CreateEvaluation on a 2026 server: each variant
// (or application revision) id resolves to its latest application
// revision, the test set and each evaluator to their latest revisions,
// then one simple evaluation is created per variant, in order, each sent
// once.
func (c api2026) createEvaluation(ctx context.Context, ev models.NewEvaluation) ([]models.Evaluation, error) {
	if ev.LMProvidersKeys.Len() > 0 {
		return nil, invalidField("NewEvaluation.LMProvidersKeys", "lm_providers_keys",
			"a 2026 server takes no provider keys with an evaluation: it reads them from the project's secrets (the vault, under Settings in the web UI); store them there and leave this out")
	}
	testset, err := c.latestTestsetRevision(ctx, ev.TestsetID)
	if err != nil {
		return nil, err
	}
	evaluators := make([]string, len(ev.EvaluatorConfigIDs))
	for i, id := range ev.EvaluatorConfigIDs {
		rev, err := c.latestEvaluatorRevision(ctx, fmt.Sprintf("NewEvaluation.EvaluatorConfigIDs[%d]", i), id)
		if err != nil {
			return nil, err
		}
		evaluators[i] = rev.ID
	}
	applications := make([]*models.ApplicationRevision, len(ev.VariantIDs))
	for i, id := range ev.VariantIDs {
		if applications[i], err = c.latestApplicationRevision(ctx, ev.AppID, i, id); err != nil {
			return nil, err
		}
	}
	concurrency := runConcurrency(ev.RateLimit)
	created := make([]models.Evaluation, 0, len(applications))
	for i, app := range applications {
		token := newCreateToken()
		run, err := c.CreateSimpleEvaluation(ctx, models.SimpleEvaluationCreate{
			Name:                  variantName(app.ApplicationSlug, app.ApplicationVariantSlug),
			Description:           "created by agenta-go's CreateEvaluation",
			TestsetRevisionID:     testset.ID,
			ApplicationRevisionID: app.ID,
			EvaluatorRevisionIDs:  evaluators,
			Concurrency:           concurrency,
			Repeats:               ev.Repeats,
			Split:                 ev.Repeats > 1, // the app called once per repeat, or its noise stays hidden
			Tags:                  map[string]any{createTag: token},
		})
		lost := err != nil && answerLost(err)
		if lost {
			// The server may have made the run: find it by its tag,
			// never send the create again.
			if found, _ := c.findCreatedRun(ctx, token); found != nil {
				run, err = &models.SimpleEvaluation{ID: found.ID, Data: models.SimpleEvaluationData{Status: found.Status},
					CreatedAt: found.CreatedAt, UpdatedAt: found.UpdatedAt}, nil
			} else {
				err = lostCreateError(token, err)
			}
		}
		if err != nil {
			if len(created) == 0 && lost {
				return nil, fmt.Errorf("agenta: CreateEvaluation: the run of variant %s: %w", c.text(ev.VariantIDs[i], maxMessage), err)
			}
			if len(created) == 0 {
				return nil, err
			}
			ids := make([]string, len(created))
			for j, e := range created {
				ids[j] = e.ID
			}
			what := "was not created"
			if lost {
				what = "may have been created (see below)"
			}
			return created, fmt.Errorf("agenta: CreateEvaluation: the run of variant %s (%d of %d) %s, and the runs of the variants before it were, and run: %s: %w",
				c.text(ev.VariantIDs[i], maxMessage), i+1, len(applications), what, c.text(strings.Join(ids, ", "), 4*maxMessage), err)
		}
		e := models.Evaluation{
			ID: run.ID, AppID: app.ApplicationID,
			VariantIDs:         []string{app.ApplicationVariantID},
			VariantNames:       []string{variantName(app.ApplicationSlug, app.ApplicationVariantSlug)},
			VariantRevisionIDs: []string{app.ID},
			Revisions:          []string{app.Version},
			TestsetID:          testset.TestsetID,
			TestsetName:        testset.TestsetSlug,
			Status:             statusOfRun(run.Data.Status),
			AggregatedResults:  []models.AggregatedResult{},
		}
		if run.CreatedAt != nil {
			e.CreatedAt, e.UpdatedAt = *run.CreatedAt, *run.CreatedAt
		}
		if run.UpdatedAt != nil {
			e.UpdatedAt = *run.UpdatedAt
		}
		created = append(created, e)
	}
	return created, nil
}

// runConcurrency maps a 2024 rate limit onto a 2026 run's concurrency:
// BatchSize bounds the calls in flight, MaxRetries (attempts, on the 2024
// service) becomes max_retries (retries after the first attempt, on the
// 2026 one), RetryDelay is the pause between them in seconds.
// DelayBetweenBatches has no 2026 counterpart.
func runConcurrency(rl models.RateLimit) *models.RunConcurrency {
	batch, retries, delay := rl.BatchSize, rl.MaxRetries-1, float64(rl.RetryDelay)
	return &models.RunConcurrency{BatchSize: &batch, MaxRetries: &retries, RetryDelay: &delay}
}

// latestApplicationRevision resolves NewEvaluation.VariantIDs[i]: an
// application variant's id gives its latest revision; an application
// revision's id gives that revision. It must belong to appID (the
// application's id or slug).
func (c *Client) latestApplicationRevision(ctx context.Context, appID string, i int, id string) (*models.ApplicationRevision, error) {
	name := fmt.Sprintf("NewEvaluation.VariantIDs[%d]", i)
	rev, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: id}})
	if errors.Is(err, ErrNotFound) {
		rev, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRevisionRef: &models.Reference{ID: id}})
	}
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("agenta: CreateEvaluation: %s %s is neither an application variant nor an application revision on this 2026 server: %w",
			name, c.text(id, maxMessage), err)
	}
	if err != nil {
		return nil, err
	}
	if rev.ApplicationID != appID && rev.ApplicationSlug != appID {
		return nil, invalidField(name, "variant_ids", "%s is a variant of application %s (%s), not of NewEvaluation.AppID %s",
			c.text(id, maxMessage), c.text(rev.ApplicationSlug, maxMessage), c.text(rev.ApplicationID, maxMessage), c.text(appID, maxMessage))
	}
	return rev, nil
}

// latestTestsetRevision resolves NewEvaluation.TestsetID: a test set's id
// gives its latest revision, a test-set revision's id that revision.
func (c *Client) latestTestsetRevision(ctx context.Context, id string) (*models.TestsetRevision, error) {
	no := false
	q := models.TestsetRevisionRetrieve{TestsetRef: &models.Reference{ID: id}, IncludeTestcaseIDs: &no, IncludeTestcases: &no}
	rev, err := c.RetrieveTestsetRevision(ctx, q)
	if errors.Is(err, ErrNotFound) {
		q.TestsetRef, q.TestsetRevisionRef = nil, &models.Reference{ID: id}
		rev, err = c.RetrieveTestsetRevision(ctx, q)
	}
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("agenta: CreateEvaluation: NewEvaluation.TestsetID %s is neither a test set nor a test-set revision on this 2026 server: %w",
			c.text(id, maxMessage), err)
	}
	return rev, err
}

// latestEvaluatorRevision resolves an evaluator config id: an evaluator's
// id gives its latest revision, an evaluator revision's id that revision.
func (c *Client) latestEvaluatorRevision(ctx context.Context, name, id string) (*models.EvaluatorRevision, error) {
	rev, err := c.RetrieveEvaluatorRevision(ctx, models.EvaluatorRevisionRetrieve{EvaluatorRef: &models.Reference{ID: id}})
	if errors.Is(err, ErrNotFound) {
		rev, err = c.RetrieveEvaluatorRevision(ctx, models.EvaluatorRevisionRetrieve{EvaluatorRevisionRef: &models.Reference{ID: id}})
	}
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("agenta: CreateEvaluation: %s %s is neither an evaluator nor an evaluator revision on this 2026 server: %w",
			name, c.text(id, maxMessage), err)
	}
	return rev, err
}

// variantName names a 2026 variant as 2024 servers named theirs:
// "<application>.<variant>", by slugs.
func variantName(application, variant string) string {
	return application + "." + variant
}

// statusOfRun is a 2026 run's status as a 2024 evaluation status: pending
// and queued are EVALUATION_INITIALIZED, running EVALUATION_STARTED,
// success EVALUATION_FINISHED, errors (finished, some cells failed)
// EVALUATION_FINISHED_WITH_ERRORS, failure and cancelled EVALUATION_FAILED
// with a message. A status it does not know stays as it is, so that it
// never ends a wait.
func statusOfRun(s models.RunStatus) models.Result {
	status := func(v models.EvaluationStatus) models.Result {
		return models.Result{Type: models.ResultTypeStatus, Value: []byte(strconv.Quote(string(v)))}
	}
	switch s {
	case models.RunPending, models.RunQueued:
		return status(models.EvaluationInitialized)
	case models.RunRunning:
		return status(models.EvaluationStarted)
	case models.RunSuccess:
		return status(models.EvaluationFinished)
	case models.RunErrors:
		return status(models.EvaluationFinishedWithErrors)
	case models.RunFailure:
		r := status(models.EvaluationFailed)
		r.Error = &models.Error{Message: "the run ended failure: it could not execute (the service says no more; its log has the cause)"}
		return r
	case models.RunCancelled:
		r := status(models.EvaluationFailed)
		r.Error = &models.Error{Message: "the run was cancelled"}
		return r
	}
	return status(models.EvaluationStatus(s))
}

// fetchEvaluationStatus is FetchEvaluationStatus on a 2026 server: the
// run's status, mapped by statusOfRun.
func (c api2026) fetchEvaluationStatus(ctx context.Context, runID string) (*models.Result, error) {
	run, err := c.FetchRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	status := statusOfRun(models.RunStatus(c.text(string(run.Status), maxMessage)))
	return &status, nil
}

// fetchEvaluation is FetchEvaluation on a 2026 server: see
// evaluationOfRun.
func (c api2026) fetchEvaluation(ctx context.Context, runID string) (*models.Evaluation, error) {
	run, err := c.FetchRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	return c.evaluationOfRun(ctx, run)
}

// evaluationOfRun is a 2026 run in the 2024 shape: the application,
// variant and revision of its invocation step, the test set of its input
// step, its status (statusOfRun), and one aggregated result per evaluator
// step, named, keyed and set from the evaluator's revision. Once the run is
// over, the aggregates, cost and latency are computed from its rows with
// the 2024 rule: the mean over the rows whose application call succeeded,
// a bool counting 1 or 0, an error Result when one of those rows has no
// number (its result errored or is missing) or none has a value. Unlike a
// 2024 server's, an evaluator without values keeps its entry, with that
// error, so that it is known by name.
func (c *Client) evaluationOfRun(ctx context.Context, run *models.EvaluationRun) (*models.Evaluation, error) {
	ev := &models.Evaluation{ID: run.ID, Status: statusOfRun(models.RunStatus(c.text(string(run.Status), maxMessage))),
		AggregatedResults: []models.AggregatedResult{}}
	if run.CreatedAt != nil {
		ev.CreatedAt, ev.UpdatedAt = *run.CreatedAt, *run.CreatedAt
	}
	if run.UpdatedAt != nil {
		ev.UpdatedAt = *run.UpdatedAt
	}
	if steps := run.Steps(models.StepInvocation); len(steps) > 0 {
		refs := steps[0].References
		app, variant, revision := refs["application"], refs["application_variant"], refs["application_revision"]
		ev.AppID = app.ID
		ev.VariantIDs = []string{variant.ID}
		ev.VariantNames = []string{variantName(app.Slug, variant.Slug)}
		ev.VariantRevisionIDs = []string{revision.ID}
		ev.Revisions = []string{revision.Version}
	}
	if steps := run.Steps(models.StepInput); len(steps) > 0 {
		ts := steps[0].References["testset"]
		ev.TestsetID, ev.TestsetName = ts.ID, ts.Slug
	}
	for _, step := range run.Steps(models.StepAnnotation) {
		config := models.EvaluatorConfig{ID: step.References["evaluator"].ID, Slug: step.References["evaluator"].Slug}
		revision := step.Revision().ID
		if config.ID == "" {
			config.ID = revision // as the rows key their results
		}
		if revision != "" {
			rev, err := c.RetrieveEvaluatorRevision(ctx, models.EvaluatorRevisionRetrieve{EvaluatorRevisionRef: &models.Reference{ID: revision}})
			switch {
			case err == nil:
				config.Name, config.EvaluatorKey = rev.Name, rev.Key()
				if rev.EvaluatorSlug != "" {
					config.Slug = rev.EvaluatorSlug
				}
				if rev.Data != nil {
					config.URI, config.SettingsValues = rev.Data.URI, rev.Data.Parameters
				}
			case !errors.Is(err, ErrNotFound):
				return nil, err
			}
		}
		if config.Name == "" {
			config.Name = config.Slug
		}
		ev.AggregatedResults = append(ev.AggregatedResults, models.AggregatedResult{EvaluatorConfig: config})
	}
	if !run.Status.Terminal() {
		// A 2024 server aggregates at the end of a run only.
		ev.AggregatedResults = ev.AggregatedResults[:0]
		return ev, nil
	}
	var sums rowSums
	for s, err := range c.StreamRunScenarios(ctx, run.ID) {
		if err != nil {
			return nil, err
		}
		sums.add(s)
	}
	for i := range ev.AggregatedResults {
		ev.AggregatedResults[i].Result = sums.evaluator(ev.AggregatedResults[i].EvaluatorConfig.ID)
	}
	ev.AverageCost, ev.TotalCost = sums.cost.mean(models.ResultTypeCost, "cost"), sums.cost.total(models.ResultTypeCost, "cost")
	ev.AverageLatency = sums.latency.mean(models.ResultTypeLatency, "latency")
	return ev, nil
}

// rowSums gathers what the aggregates of a 2026 run need from its rows.
type rowSums struct {
	evaluators    map[string]*valueSum
	cost, latency valueSum
}

// valueSum sums a value over rows; broken counts the rows that should
// have had a number and had none.
type valueSum struct {
	sum           float64
	count, broken int
}

func (r *rowSums) add(s models.EvaluationScenario) {
	if r.evaluators == nil {
		r.evaluators = map[string]*valueSum{}
	}
	if out, ok := s.Output(); ok {
		if out.Cost != nil {
			r.cost.sum, r.cost.count = r.cost.sum+*out.Cost, r.cost.count+1
		}
		if out.Latency != nil {
			r.latency.sum, r.latency.count = r.latency.sum+*out.Latency, r.latency.count+1
		}
	}
	if s.Failed() {
		return // a failed call gives its evaluators nothing to aggregate
	}
	for _, res := range s.Results {
		v := r.evaluators[res.EvaluatorConfig]
		if v == nil {
			v = &valueSum{}
			r.evaluators[res.EvaluatorConfig] = v
		}
		x, ok := res.Result.Float64()
		if b, isBool := res.Result.Bool(); isBool && !res.Result.Failed() {
			x, ok = 0, true
			if b {
				x = 1
			}
		}
		if !ok || res.Result.Failed() {
			v.broken++
			continue
		}
		v.sum, v.count = v.sum+x, v.count+1
	}
}

// evaluator is the aggregate of one evaluator.
func (r *rowSums) evaluator(id string) models.Result {
	v := r.evaluators[id]
	switch {
	case v == nil || v.count == 0 && v.broken == 0:
		return models.Result{Type: models.ResultTypeError, Error: &models.Error{Message: "no row whose application call succeeded has a result of this evaluator"}}
	case v.broken > 0:
		return models.Result{Type: models.ResultTypeError, Error: &models.Error{
			Message: fmt.Sprintf("%d of %d rows whose application call succeeded have no number from this evaluator (an error, or a value that is no number)", v.broken, v.broken+v.count)}}
	}
	return numberResult(models.ResultTypeNumber, v.sum/float64(v.count))
}

func (v valueSum) mean(typ, what string) *models.Result {
	if v.count == 0 {
		return &models.Result{Type: models.ResultTypeError, Error: &models.Error{Message: "no row has a " + what}}
	}
	r := numberResult(typ, v.sum/float64(v.count))
	return &r
}

func (v valueSum) total(typ, what string) *models.Result {
	if v.count == 0 {
		return &models.Result{Type: models.ResultTypeError, Error: &models.Error{Message: "no row has a " + what}}
	}
	r := numberResult(typ, v.sum)
	return &r
}

func numberResult(typ string, x float64) models.Result {
	return models.Result{Type: typ, Value: []byte(strconv.FormatFloat(x, 'g', -1, 64))}
}

// streamEvaluationScenarios is StreamEvaluationScenarios on a 2026 server: the
// run's rows (StreamRunScenarios).
func (c api2026) streamEvaluationScenarios(ctx context.Context, runID string) iter.Seq2[models.EvaluationScenario, error] {
	return c.StreamRunScenarios(ctx, runID)
}

// fetchEvaluationScenarios is FetchEvaluationScenarios on a 2026 server: every
// row of the run, or none and the error.
func (c api2026) fetchEvaluationScenarios(ctx context.Context, runID string) ([]models.EvaluationScenario, error) {
	var out []models.EvaluationScenario
	for s, err := range c.StreamRunScenarios(ctx, runID) {
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if out == nil {
		out = []models.EvaluationScenario{}
	}
	return out, nil
}

// The 2024 variant operations on a 2026 server, once the Client knows it
// speaks the 2026 API (see DetectGeneration). A 2026 application has no
// base: its variants are forked from one another, and a variant's
// configuration is its latest revision's data. docs/2026.md has the
// mapping.

// getVariant is GetVariant on a 2026 server: the variant's latest
// revision (one request).
func (c api2026) getVariant(ctx context.Context, variantID string) (*models.AppVariantResponse, error) {
	rev, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: variantID}})
	if err != nil {
		return nil, err
	}
	return variantOfRevision(rev), nil
}

// getVariantByEnvironment is GetVariantByEnvironment on a 2026 server:
// the revision deployed to the environment for the application.
func (c api2026) getVariantByEnvironment(ctx context.Context, appID, environment string) (*models.AppVariantResponse, error) {
	rev, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{
		EnvironmentRef: &models.Reference{Slug: environment}, ApplicationRef: &models.Reference{ID: appID}})
	if err != nil {
		return nil, err
	}
	return variantOfRevision(rev), nil
}

// addVariantFromBase is AddVariantFromBase on a 2026 server, in two
// requests: a fork of the base (an application's id forks its default
// variant, a variant's id that variant) onto the slug NewConfigName, then
// a commit of the fork's data with exactly v.Parameters as its parameters,
// as a 2024 server sets them.
func (c api2026) addVariantFromBase(ctx context.Context, v models.AddVariantFromBase) (*models.AppVariantResponse, error) {
	base, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: v.BaseID}})
	if errors.Is(err, ErrNotFound) {
		base, err = c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationRef: &models.Reference{ID: v.BaseID}})
	}
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("agenta: AddVariantFromBase: BaseID %s is neither an application nor an application variant on this 2026 server: %w",
			c.text(v.BaseID, maxMessage), err)
	}
	if err != nil {
		return nil, err
	}
	fork, err := c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{
		ApplicationVariantRef:  models.Reference{ID: base.ApplicationVariantID},
		ApplicationRevisionRef: &models.Reference{ID: base.ID},
		ApplicationVariant:     models.NewApplicationVariant{Slug: v.NewConfigName, Name: v.NewVariantName},
	})
	if err != nil {
		return nil, err
	}
	data := models.ApplicationRevisionData{}
	if base.Data != nil {
		data = *base.Data
	}
	data.Parameters = maps.Clone(v.Parameters)
	rev, err := c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{
		ApplicationVariantID: fork.ID, Message: "AddVariantFromBase (agenta-go): new parameters", Data: &data})
	if err != nil {
		return nil, fmt.Errorf("agenta: AddVariantFromBase: variant %s was forked, but its new parameters were not committed, so it has those of the base: %w",
			c.text(fork.ID, maxMessage), err)
	}
	return variantOfRevision(rev), nil
}

// variantOfRevision is an application revision in the shape of a 2024
// variant: the application is its own base, and the variant's slug its
// configuration's name.
func variantOfRevision(rev *models.ApplicationRevision) *models.AppVariantResponse {
	out := &models.AppVariantResponse{
		AppID: rev.ApplicationID, AppName: rev.ApplicationSlug,
		VariantID:   rev.ApplicationVariantID,
		VariantName: variantName(rev.ApplicationSlug, rev.ApplicationVariantSlug),
		BaseName:    rev.ApplicationSlug, BaseID: rev.ApplicationID,
		ConfigName: rev.ApplicationVariantSlug,
	}
	out.Revision, _ = strconv.Atoi(rev.Version)
	if rev.Data != nil {
		out.Parameters, out.URI = rev.Data.Parameters, rev.Data.URL
	}
	return out
}

// waitEvaluation is WaitEvaluation on a 2026 server: WaitRun with the
// same interval, retries and progress (each status mapped by statusOfRun),
// then the run in the 2024 shape, read as FetchEvaluation reads it.
func (c api2026) waitEvaluation(ctx context.Context, runID string, opts *WaitOptions) (*models.Evaluation, error) {
	runOpts := &WaitRunOptions{}
	if opts != nil {
		runOpts.Interval, runOpts.OnRetry, runOpts.NoWorkerAfter = opts.Interval, opts.OnRetry, opts.NoWorkerAfter
		if onStatus := opts.OnStatus; onStatus != nil {
			runOpts.OnStatus = func(run models.EvaluationRun) {
				onStatus(statusOfRun(models.RunStatus(c.text(string(run.Status), maxMessage))))
			}
		}
	}
	run, err := c.WaitRun(ctx, runID, runOpts)
	if err != nil && !errors.Is(err, ErrEvaluationFailed) {
		return nil, err
	}
	// The last read rides out server trouble as the wait did.
	w := &waiter{c: c.Client, ctx: ctx, id: runID, interval: DefaultWaitInterval, seen: true}
	if opts != nil {
		w.onRetry = opts.OnRetry
		if opts.Interval > 0 {
			w.interval = opts.Interval
		}
	}
	defer w.stop()
	ev, readErr := retryRead(w, func(ctx context.Context, _ string) (*models.Evaluation, error) {
		return c.evaluationOfRun(ctx, run)
	})
	if readErr != nil {
		return nil, readErr
	}
	if err != nil {
		failure := &EvaluationFailedError{EvaluationID: runID, Status: models.EvaluationFailed}
		if ev.Status.Error != nil {
			failure.Message = ev.Status.Error.Message
		}
		return ev, failure
	}
	return ev, nil
}

// stopEvaluation is StopEvaluation on a 2026 server: StopSimpleEvaluation.
func (c api2026) stopEvaluation(ctx context.Context, evaluationID string) error {
	_, err := c.StopSimpleEvaluation(ctx, evaluationID)
	return err
}
