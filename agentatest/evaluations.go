package agentatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agenta-go/agenta/models"
)

// An evaluation's life, as the mid-2024 service lives it: create stores one
// run per variant in EVALUATION_INITIALIZED and hands it to the worker (the
// scheduler). The worker sets EVALUATION_STARTED, calls the app on every
// row, and only then writes every scenario at once, aggregates, and sets
// the final status. A run that breaks ends EVALUATION_FAILED without a
// single scenario.

// evaluationRun is one evaluation: one variant against one test set.
type evaluationRun struct {
	id, appID              string
	variantID, variantName string
	revisionID             string
	revision               int
	parameters             map[string]any
	application            Application
	testsetID, testsetName string
	rows                   []map[string]string
	inputs                 []string
	evaluators             []*evaluatorRecord
	// answerKeys are the evaluator configs' correct_answer keys, one per
	// config that has one, in config order: what each scenario's
	// correct_answers lists.
	answerKeys []string
	// attempts is rate_limit.max_retries: how often the app is called for
	// a row before the row fails. 0 means never.
	attempts int
	// batchSize and batchDelay are rate_limit.batch_size and
	// delay_between_batches: the worker pauses batchDelay after every
	// batchSize rows, as the service's worker does between batches.
	batchSize        int
	batchDelay       time.Duration
	created, updated time.Time
	status           string
	statusError      *resultError
	// breakage, when set, is the traceback with which the run will break
	// once its app calls are done: it then ends FAILED without scenarios.
	breakage string
	// computed holds the rows whose app call is done; nobody sees them
	// until every row is done and they become the scenarios.
	computed           []*scenarioRecord
	claimed, completed int
	scenarios          []*scenarioRecord
	aggregated         []aggregate
	costs              [3]*result // average cost, total cost, average latency
	done               chan struct{}
}

type scenarioRecord struct {
	id      string
	inputs  []string // values, in the order of run.inputs
	output  result
	cost    *float64
	latency *float64
	answers []correctAnswer
	results []result // in the order of run.evaluators
}

type correctAnswer struct{ key, value string }

type aggregate struct {
	evaluator *evaluatorRecord
	result    result
}

// finished reports whether the run has reached its final status.
func (run *evaluationRun) finished() bool {
	select {
	case <-run.done:
		return true
	default:
		return false
	}
}

// runRow calls the app on one row and evaluates its answer. It reads only
// what the run owns, so it needs no lock.
func (run *evaluationRun) runRow(i int) *scenarioRecord {
	row := run.rows[i]
	inputs := make(map[string]string, len(run.inputs))
	sc := &scenarioRecord{}
	for _, name := range run.inputs {
		inputs[name] = row[name]
		sc.inputs = append(sc.inputs, row[name])
	}
	// The service's verdict on a row whose app it never called
	// successfully within rate_limit.max_retries attempts.
	failure, failed := "Max retries reached", true
	var answer string
	if run.attempts > 0 {
		// The fake's applications are deterministic, so a retry would
		// fail again: one call stands for every attempt.
		var err error
		answer, err = callApplication(run.application, run.parameters, inputs)
		if failed = err != nil; failed {
			failure = err.Error()
		}
	}
	if failed {
		// A failed row: an error output without cost or latency, no
		// correct answers, and each evaluator's result a copy of the error.
		sc.output = errorResult(failure, "")
		sc.answers = []correctAnswer{}
		for range run.evaluators {
			sc.results = append(sc.results, sc.output)
		}
		return sc
	}
	cost, latency := usage(run.parameters, inputs, answer)
	sc.output, sc.cost, sc.latency = result{Type: "text", Value: answer}, &cost, &latency
	for _, key := range run.answerKeys {
		sc.answers = append(sc.answers, correctAnswer{key: key, value: row[key]})
	}
	for _, e := range run.evaluators {
		sc.results = append(sc.results, evaluate(e.key, e.settings, answer, row))
	}
	return sc
}

// finish writes every scenario at once, aggregates, and sets the final
// status. Callers hold s.mu.
func (s *Server) finish(run *evaluationRun) {
	defer close(run.done)
	run.updated = s.clock()
	if run.breakage != "" {
		run.status = models.EvaluationFailed
		run.statusError = &resultError{Message: "Evaluation Failed", Stacktrace: &run.breakage}
		run.computed = nil
		return
	}
	run.status = models.EvaluationFinished
	for _, sc := range run.computed {
		sc.id = s.newID()
		if sc.output.failed() || slices.ContainsFunc(sc.results, result.failed) {
			run.status = models.EvaluationFinishedWithErrors
		}
	}
	run.scenarios, run.computed = run.computed, nil
	for i, e := range run.evaluators {
		if r, ok := aggregateResults(run.scenarios, i); ok {
			run.aggregated = append(run.aggregated, aggregate{evaluator: e, result: r})
		}
	}
	var costs, latencies []float64
	for _, sc := range run.scenarios {
		if sc.cost != nil {
			costs = append(costs, *sc.cost)
		}
		if sc.latency != nil {
			latencies = append(latencies, *sc.latency)
		}
	}
	run.costs = [3]*result{
		averageOf("cost", costs, true),
		averageOf("cost", costs, false),
		averageOf("latency", latencies, true),
	}
}

// aggregateResults is the service's aggregate of one evaluator: the mean
// of its values over the rows whose app call succeeded (a bool counts 1 or
// 0), not rounded. One error among them makes the aggregate an error, as
// Python's sum meets None; without such rows there is no aggregate.
func aggregateResults(scenarios []*scenarioRecord, i int) (result, bool) {
	total, n := 0.0, 0
	for _, sc := range scenarios {
		if sc.output.failed() || i >= len(sc.results) {
			continue
		}
		n++
		switch v := sc.results[i].Value.(type) {
		case bool:
			if v {
				total++
			}
		case int:
			total += float64(v)
		case float64:
			total += v
		case string:
			return errorResult("unsupported operand type(s) for +: 'int' and 'str'", aggregationTraceback), true
		default:
			return errorResult("unsupported operand type(s) for +: 'int' and 'NoneType'", aggregationTraceback), true
		}
	}
	if n == 0 {
		return result{}, false
	}
	return result{Type: "number", Value: total / float64(n)}, true
}

const aggregationTraceback = "Traceback (most recent call last):\n" +
	"  File \"/app/agenta_backend/services/aggregation_service.py\", line 32, in aggregate_ai_critique\n" +
	"    average_value = sum(result.value for result in results) / len(results)\n"

// averageOf is the service's cost or latency aggregate: the mean (or,
// with mean false, the sum) of the rows that have a value, or an error
// Result when none has.
func averageOf(kind string, values []float64, mean bool) *result {
	if len(values) == 0 {
		r := errorResult(fmt.Sprintf("No valid values found for %s aggregation.", kind),
			fmt.Sprintf("ValueError: No valid values found for %s aggregation.", kind))
		return &r
	}
	total := 0.0
	for _, v := range values {
		total += v
	}
	if mean {
		total /= float64(len(values))
	}
	return &result{Type: kind, Value: total}
}

// Evaluation returns an evaluation's current state, as GET
// /evaluations/{id} answers it: its status, and once finished its
// aggregated results, costs and latency.
func (s *Server) Evaluation(id string) (models.Evaluation, bool) {
	s.mu.Lock()
	run, ok := s.evaluations[id]
	var w object
	if ok {
		w = s.evaluationWire(run)
	}
	s.mu.Unlock()
	if !ok {
		return models.Evaluation{}, false
	}
	var ev models.Evaluation
	data, err := json.Marshal(w)
	if err == nil {
		err = json.Unmarshal(data, &ev)
	}
	return ev, err == nil
}

// EvaluationIDs returns the ids of every evaluation created, oldest first.
func (s *Server) EvaluationIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.evalOrder...)
}

// newEvaluationRequest is a create request that passed validation.
type newEvaluationRequest struct {
	appID        string
	variantIDs   []string
	configIDs    []string
	testsetID    string
	providerKeys map[string]string
	attempts     int
	batchSize    int
	batchDelay   time.Duration
}

// createRuns checks a create request against the stored state in the
// service's order, and stores and schedules one run per variant, in the
// order of variant_ids. The service parses each id when it first looks it
// up, so a malformed id fails where its lookup comes: the app (404 when
// unknown), then every evaluator config (400 for an AI critique without
// provider keys), then each variant and the test set. Like the service it
// is not atomic: when a later variant fails, the runs of those before it
// are already scheduled.
func (s *Server) createRuns(req newEvaluationRequest) answer {
	if !s.wellFormed(req.appID) {
		return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	app, ok := find(s, s.apps, req.appID)
	if !ok {
		return detailAnswer(http.StatusNotFound, "404: App not found")
	}
	req.appID = app.ID // as stored, whatever form of it the request used
	var evaluators []*evaluatorRecord
	breakage := ""
	for _, id := range req.configIDs {
		if !s.wellFormed(id) {
			return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
		}
		e, ok := find(s, s.evaluators, id)
		if !ok {
			// The service accepts the request; the worker then breaks
			// on the missing config.
			if breakage == "" {
				breakage = traceback("AttributeError: 'NoneType' object has no attribute 'settings_values'")
			}
			continue
		}
		if e.key == "auto_ai_critique" && len(req.providerKeys) == 0 {
			return detailAnswer(http.StatusBadRequest, "Missing LM provider Key")
		}
		copied := *e
		copied.settings, _ = copyParameters(e.settings)
		evaluators = append(evaluators, &copied)
	}
	keys := answerKeys(evaluators)
	created := []any{}
	for _, id := range req.variantIDs {
		if !s.wellFormed(id) || !s.wellFormed(req.testsetID) {
			return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
		}
		v, okV := find(s, s.variants, id)
		testset, okT := find(s, s.testsets, req.testsetID)
		if !okV || !okT {
			return detailAnswer(http.StatusInternalServerError, "'NoneType' object has no attribute 'id'")
		}
		run := s.newRun(req, v, testset, evaluators, keys, breakage)
		s.evaluations[run.id] = run
		s.evalOrder = append(s.evalOrder, run.id)
		s.schedule(run)
		created = append(created, s.createdEvaluationWire(run))
	}
	return jsonAnswer(http.StatusOK, created)
}

// newRun builds the run of one variant. Callers hold s.mu.
func (s *Server) newRun(req newEvaluationRequest, v *variantRecord, testset *testsetRecord, evaluators []*evaluatorRecord, keys []string, breakage string) *evaluationRun {
	base := s.bases[v.baseID]
	names := inputNames(v.parameters, testset.Rows, keys)
	if breakage == "" {
	rows:
		for _, row := range testset.Rows {
			for _, name := range names {
				if _, ok := row[name]; !ok {
					// The worker reads row[name] when it writes the
					// scenarios, after every app call.
					breakage = traceback(fmt.Sprintf("KeyError: '%s'", name))
					break rows
				}
			}
		}
	}
	app := base.Application
	if app == nil {
		app = TemplateApplication
	}
	params, _ := copyParameters(v.parameters)
	rows := make([]map[string]string, len(testset.Rows))
	copy(rows, testset.Rows) // rows are never modified after seeding
	now := s.clock()
	return &evaluationRun{
		id: s.newID(), appID: req.appID,
		variantID: v.id, variantName: base.Name + "." + v.configName,
		revisionID: v.revisionIDs[v.revision], revision: v.revision,
		parameters: params, application: app,
		testsetID: testset.ID, testsetName: testset.Name,
		rows: rows, inputs: names, evaluators: evaluators, answerKeys: keys,
		attempts: req.attempts, batchSize: req.batchSize, batchDelay: req.batchDelay,
		created: now, updated: now,
		status: models.EvaluationInitialized, breakage: breakage,
		computed: make([]*scenarioRecord, len(rows)), done: make(chan struct{}),
	}
}

// answerKeys lists the columns the scenarios' correct_answers name: the
// value of every settings key starting with correct_answer, config by
// config, as the service's worker gathers them.
func answerKeys(evaluators []*evaluatorRecord) []string {
	var keys []string
	for _, e := range evaluators {
		var names []string
		for name := range e.settings {
			if strings.HasPrefix(name, "correct_answer") {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			if col, ok := e.settings[name].(string); ok {
				keys = append(keys, col)
			}
		}
	}
	return keys
}

// traceback is how the service's worker records why a run broke.
func traceback(last string) string {
	return "Traceback (most recent call last):\n" +
		"  File \"/app/agenta_backend/tasks/evaluations.py\", line 196, in evaluate\n" +
		last + "\n"
}
