package agentatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/agenta-go/agenta/models"
)

// An evaluation's life, as the mid-2024 service lives it: create stores one
// run per variant in EVALUATION_INITIALIZED and hands it to the worker (the
// scheduler). The worker sets EVALUATION_STARTED and calls the app on every
// row, in batches; only then does it write the scenarios, one row at a time
// in row order, so that a reader sees the list grow while the run is still
// STARTED. Then it stores the costs, aggregates, and sets the final status.
// A run that breaks ends EVALUATION_FAILED, keeping the scenarios written
// before it broke: none when the test set's columns do not match the app's
// inputs, since the first row already lacks them.

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
	// answerKeys are the columns each scenario's correct_answers lists: for
	// every evaluator config whose evaluator takes a correct answer, the
	// column its correct_answer_key names ("" when it names none).
	answerKeys []string
	// attempts is rate_limit.max_retries: how often the app is called for
	// a row before the row fails. 0 means never.
	attempts int
	// batchSize and batchDelay are rate_limit.batch_size and
	// delay_between_batches: the worker pauses batchDelay after every
	// batchSize rows, as the service's worker does between batches.
	batchSize  int
	batchDelay time.Duration
	// created is when create stored the run; the service never changes an
	// evaluation's updated_at after that, so neither does the fake.
	created     time.Time
	status      string
	statusError *resultError
	// breakage, when set, is the traceback with which the run breaks at
	// its first step, before any app call: a run with an evaluator config
	// that does not exist.
	breakage string
	// computed holds each row's outcome once its app call is done; a
	// scenario becomes visible when the worker writes it, after every
	// call.
	computed           []*scenarioRecord
	claimed, completed int
	// stored is the Server's count of the bytes clients made it hold,
	// to which each app answer adds; a row computed once it reaches
	// storedLimit gets the error storedFull instead of an answer.
	stored      *atomic.Int64
	storedLimit int64
	storedFull  string
	scenarios   []*scenarioRecord
	aggregated  []aggregate
	costs       [3]*result // average cost, total cost, average latency
	done        chan struct{}
}

type scenarioRecord struct {
	id      string
	inputs  []string // values, in the order of run.inputs
	output  result
	cost    *float64
	latency *float64
	// answers is nil for a row whose app call failed: the service writes
	// no correct answers for it.
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
		// The service sends "" for an input the row lacks.
		inputs[name] = row[name]
		sc.inputs = append(sc.inputs, row[name])
	}
	if run.attempts < 1 {
		// The service's verdict on a row whose app it never called
		// within rate_limit.max_retries attempts: its stacktrace is
		// str(None), the last exception there was none of.
		sc.failed(errorResult("Max retries reached", "None"), len(run.evaluators))
		return sc
	}
	if run.stored != nil && run.stored.Load() >= run.storedLimit {
		sc.failed(errorResult(run.storedFull, "None"), len(run.evaluators))
		return sc
	}
	// The fake's applications are deterministic, so a retry would fail
	// again: one call stands for every attempt.
	answer, err := callApplication(run.application, run.parameters, inputs)
	if err != nil {
		sc.failed(applicationError(err), len(run.evaluators))
		return sc
	}
	if run.stored != nil {
		run.stored.Add(int64(len(answer)))
	}
	cost, latency := usage(run.parameters, inputs, answer)
	sc.output, sc.cost, sc.latency = result{Type: "text", Value: answer}, &cost, &latency
	sc.answers = []correctAnswer{}
	for _, key := range run.answerKeys {
		value, ok := row[key]
		if !ok {
			value = "" // the service's stand-in for a column the row lacks
		}
		sc.answers = append(sc.answers, correctAnswer{key: key, value: value})
	}
	for _, e := range run.evaluators {
		sc.results = append(sc.results, evaluate(e.key, e.settings, answer, row))
	}
	return sc
}

// failed makes sc a row whose app call failed: an error output without
// cost or latency, no correct answers, and each evaluator's result a copy
// of the error.
func (sc *scenarioRecord) failed(r result, evaluators int) {
	sc.output = r
	for range evaluators {
		sc.results = append(sc.results, r)
	}
}

// applicationError is the error output of a row whose Application failed.
// The service keeps the message and the traceback the app sends, which the
// agenta SDK builds with Python's traceback module; the fake writes the
// traceback of a ValueError raised with the error's text.
func applicationError(err error) result {
	message := err.Error()
	return errorResult(message, "Traceback (most recent call last):\nValueError: "+message+"\n")
}

// writeScenario makes the worker's next write, once every app call of the
// run is done: the next row's scenario, in row order. A row that lacks one
// of the app's inputs breaks the run, as the service's worker fails
// reading row[input] for the scenario's inputs: it ends FAILED, keeping the
// scenarios written before. After the last row it finishes the run.
// Callers hold s.mu.
func (s *Server) writeScenario(run *evaluationRun) {
	if i := len(run.scenarios); i < len(run.rows) {
		for _, name := range run.inputs {
			if _, ok := run.rows[i][name]; !ok {
				s.fail(run, missingInputTraceback(name))
				return
			}
		}
		sc := run.computed[i]
		sc.id = s.newID()
		run.scenarios = append(run.scenarios, sc)
	}
	if len(run.scenarios) == len(run.rows) {
		s.finish(run)
	}
}

// fail ends a run EVALUATION_FAILED with the service's message and the
// traceback of what broke it. Callers hold s.mu.
func (s *Server) fail(run *evaluationRun, stacktrace string) {
	defer close(run.done)
	run.status = models.EvaluationFailed
	run.statusError = &resultError{Message: "Evaluation Failed", Stacktrace: &stacktrace}
	run.computed = nil
}

// finish stores the costs, aggregates, and sets the final status, once
// every scenario is written. Callers hold s.mu.
func (s *Server) finish(run *evaluationRun) {
	defer close(run.done)
	run.computed = nil
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
		averageOf("cost", costs),
		sumOf("cost", costs),
		averageOf("latency", latencies),
	}
	for i, e := range run.evaluators {
		if r, ok := aggregateResults(e.key, run.scenarios, i); ok {
			run.aggregated = append(run.aggregated, aggregate{evaluator: e, result: r})
		}
	}
	// The service reads the aggregates back unordered, and PostgreSQL
	// returns them in the order of the evaluator configs' rows: the order
	// the configs were created in, not the order of the request.
	slices.SortStableFunc(run.aggregated, func(a, b aggregate) int { return a.evaluator.order - b.evaluator.order })
	// The service's test: does any scenario have a result of type error?
	run.status = models.EvaluationFinished
	for _, sc := range run.scenarios {
		if slices.ContainsFunc(sc.results, func(r result) bool { return r.Type == "error" }) {
			run.status = models.EvaluationFinishedWithErrors
		}
	}
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
// provider keys), then for each variant the test set's id, the variant
// (500 when unknown: its revision is read from None) and the test set (500
// when unknown). Like the service it is not atomic: when a later variant
// fails, the runs of those before it are already scheduled.
func (s *Server) createRuns(req newEvaluationRequest) answer {
	// The limits, before anything is looked at: one create must not pass
	// them by what it names (a variant named 100,000 times is as many
	// runs, an evaluator config as many evaluations of every row).
	if len(req.configIDs) > s.limits.EvaluatorConfigs {
		return detailAnswer(http.StatusRequestEntityTooLarge, fmt.Sprintf(
			"agentatest: a create names %d evaluator configs, over its limit of %d (Limits.EvaluatorConfigs)", len(req.configIDs), s.limits.EvaluatorConfigs))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.evaluations)+len(req.variantIDs) > s.limits.Evaluations {
		a := detailAnswer(http.StatusTooManyRequests, fmt.Sprintf(
			"agentatest: a create of %d runs would pass the fake's limit of %d evaluations (Limits.Evaluations); use a new Server", len(req.variantIDs), s.limits.Evaluations))
		a.header = http.Header{"Retry-After": {"1"}}
		return a
	}
	if !s.wellFormed(req.appID) {
		return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
	}
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
			// on the missing config, before any app call.
			breakage = unknownEvaluatorTraceback()
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
		switch {
		case req.testsetID == "":
			return detailAnswer(http.StatusInternalServerError, "testset_id  must be a non-empty string")
		case !s.wellFormed(req.testsetID):
			return detailAnswer(http.StatusInternalServerError, fmt.Sprintf("testset_id %s is not a valid UUID", req.testsetID))
		case !s.wellFormed(id):
			return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
		}
		v, ok := find(s, s.variants, id)
		if !ok {
			return detailAnswer(http.StatusInternalServerError, "'NoneType' object has no attribute 'revision'")
		}
		testset, ok := find(s, s.testsets, req.testsetID)
		if !ok {
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
	app := base.Application
	if app == nil {
		app = TemplateApplication
	}
	// The run shares the variant's parameters, which nothing changes once
	// stored (callApplication gives the app a copy): a variant with a
	// large prompt is held once, however many runs it has.
	params := v.parameters
	rows := make([]map[string]string, len(testset.Rows))
	copy(rows, testset.Rows) // rows are never modified after seeding
	return &evaluationRun{
		id: s.newID(), appID: req.appID,
		variantID: v.id, variantName: base.Name + "." + v.configName,
		revisionID: v.revisionIDs[v.revision], revision: v.revision,
		parameters: params, application: app,
		testsetID: testset.ID, testsetName: testset.Name,
		rows: rows, inputs: inputNames(v.parameters, testset.Rows, keys),
		evaluators: evaluators, answerKeys: keys,
		attempts: req.attempts, batchSize: req.batchSize, batchDelay: req.batchDelay,
		created: s.clock(), status: models.EvaluationInitialized, breakage: breakage,
		computed: make([]*scenarioRecord, len(rows)), done: make(chan struct{}),
		stored: &s.admission.stored, storedLimit: s.limits.StoredBytes, storedFull: s.storedFull(),
	}
}

// groundTruthEvaluators are the evaluators whose settings template marks
// correct_answer_key as the name of a test-set column holding the correct
// answer.
var groundTruthEvaluators = map[string]bool{
	"auto_exact_match": true, "auto_similarity_match": true, "field_match_test": true,
	"auto_ai_critique": true, "auto_custom_code_run": true, "auto_webhook_test": true,
	"auto_levenshtein_distance": true,
}

// answerKeys lists the columns the scenarios' correct_answers name, as the
// service's worker gathers them: for every evaluator config, in request
// order, whose evaluator takes a correct answer, the column its
// settings_values.correct_answer_key names, or "" when it names none.
func answerKeys(evaluators []*evaluatorRecord) []string {
	var keys []string
	for _, e := range evaluators {
		if groundTruthEvaluators[e.key] {
			col, _ := e.settings["correct_answer_key"].(string)
			keys = append(keys, col)
		}
	}
	return keys
}
