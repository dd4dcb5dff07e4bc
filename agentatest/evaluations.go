package agentatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/agenta-go/agenta/models"
)

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
	answerColumn           string
	created, updated       time.Time
	status                 string
	failure                string // why the run failed, when it did
	slots                  []*scenarioRecord
	claimed, completed     int
	aggregated             []aggregate
	done                   chan struct{}
}

type scenarioRecord struct {
	id      string
	inputs  []string // values, in the order of run.inputs
	output  result
	cost    *float64
	latency *float64
	answer  *string
	results []result // in the order of run.evaluators
}

type aggregate struct {
	evaluator *evaluatorRecord
	result    result
}

// runRow computes one scenario. It reads only what the run owns, so it
// needs no lock.
func (run *evaluationRun) runRow(i int) *scenarioRecord {
	row := run.rows[i]
	inputs := make(map[string]string, len(run.inputs))
	sc := &scenarioRecord{}
	for _, name := range run.inputs {
		inputs[name] = row[name]
		sc.inputs = append(sc.inputs, row[name])
	}
	if a, ok := row[run.answerColumn]; ok {
		sc.answer = &a
	}
	output, err := callApplication(run.application, run.parameters, inputs)
	if err != nil {
		sc.output = errorResult(err.Error(), "")
		for range run.evaluators {
			sc.results = append(sc.results, errorResult("Error during evaluation: the application failed: "+err.Error(), ""))
		}
		return sc
	}
	cost, latency := usage(run.parameters, inputs, output)
	sc.output, sc.cost, sc.latency = result{Type: "text", Value: output}, &cost, &latency
	for _, e := range run.evaluators {
		sc.results = append(sc.results, evaluate(e.key, e.settings, output, row, run.answerColumn))
	}
	return sc
}

// finish sets a run's final status and aggregates. Callers hold s.mu.
func (s *Server) finish(run *evaluationRun) {
	if run.failure != "" {
		run.status = models.EvaluationFailed
	} else {
		run.status = models.EvaluationFinished
		for _, sc := range run.slots {
			if sc.output.failed() {
				run.status = models.EvaluationFinishedWithErrors
			}
			for _, r := range sc.results {
				if r.failed() {
					run.status = models.EvaluationFinishedWithErrors
				}
			}
		}
		for i, e := range run.evaluators {
			run.aggregated = append(run.aggregated, aggregate{evaluator: e, result: aggregateResults(run.slots, i)})
		}
	}
	run.updated = s.clock()
	close(run.done)
}

// aggregateResults averages one evaluator's verdicts: booleans as the share
// of true, numbers as their mean.
func aggregateResults(slots []*scenarioRecord, i int) result {
	sum, n := 0.0, 0
	for _, sc := range slots {
		if i >= len(sc.results) || sc.results[i].failed() {
			continue
		}
		switch v := sc.results[i].Value.(type) {
		case bool:
			if v {
				sum++
			}
			n++
		case int:
			sum += float64(v)
			n++
		case float64:
			sum += v
			n++
		}
	}
	if n == 0 {
		return errorResult("Failed to compute the average score", "no scenario has a usable result")
	}
	return result{Type: "number", Value: round(sum/float64(n), 5)}
}

// Evaluation returns an evaluation's current state, as the service stores
// it: its status, and once finished its aggregated results, costs and
// latency. No operation of the SDK reads these; tests can.
func (s *Server) Evaluation(id string) (models.Evaluation, bool) {
	s.mu.Lock()
	run, ok := s.evaluations[id]
	var w object
	if ok {
		w = s.evaluationWire(run, false)
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

// createRuns creates and starts the runs of a valid request and returns
// the answer to send.
func (s *Server) createRuns(appID string, variantIDs, configIDs []string, testsetID string, providerKeys map[string]string, answerColumn string) (int, string, []any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	status, message, runs := s.newRuns(appID, variantIDs, configIDs, testsetID, providerKeys, answerColumn)
	if status != http.StatusOK {
		return status, message, nil
	}
	answer := make([]any, len(runs))
	for i, run := range runs {
		answer[i] = s.evaluationWire(run, true)
		s.evaluations[run.id] = run
		s.evalOrder = append(s.evalOrder, run.id)
	}
	for _, run := range runs {
		s.start(run)
	}
	return http.StatusOK, "", answer
}

// newRuns checks a create request against the stored state and builds one
// run per variant. Callers hold s.mu.
func (s *Server) newRuns(appID string, variantIDs, configIDs []string, testsetID string, providerKeys map[string]string, answerColumn string) (int, string, []*evaluationRun) {
	if _, ok := s.apps[appID]; !ok {
		return http.StatusNotFound, "App not found", nil
	}
	var evaluators []*evaluatorRecord
	failure := ""
	for _, id := range configIDs {
		e, ok := s.evaluators[id]
		if !ok {
			// The service accepts the request; the run then fails.
			if failure == "" {
				failure = fmt.Sprintf("Evaluator config %s not found", id)
			}
			continue
		}
		if e.key == "auto_ai_critique" && len(providerKeys) == 0 {
			return http.StatusBadRequest, "Missing LM provider Key", nil
		}
		copied := *e
		copied.settings, _ = copyParameters(e.settings)
		evaluators = append(evaluators, &copied)
	}
	testset, ok := s.testsets[testsetID]
	if !ok {
		return http.StatusInternalServerError, fmt.Sprintf("Testset %s not found", testsetID), nil
	}
	now := s.clock()
	var runs []*evaluationRun
	for _, id := range variantIDs {
		v, ok := s.variants[id]
		if !ok {
			return http.StatusInternalServerError, fmt.Sprintf("App variant %s not found", id), nil
		}
		base := s.bases[v.baseID]
		names := inputNames(v.parameters, testset.Rows, answerColumn)
		for _, row := range testset.Rows {
			for _, name := range names {
				if _, ok := row[name]; !ok {
					return http.StatusBadRequest, "columns in the test set should match the names of the inputs in the variant", nil
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
		runs = append(runs, &evaluationRun{
			id: s.newID(), appID: appID,
			variantID: v.id, variantName: base.Name + "." + v.configName,
			revisionID: v.revisionIDs[v.revision], revision: v.revision,
			parameters: params, application: app,
			testsetID: testset.ID, testsetName: testset.Name,
			rows: rows, inputs: names, evaluators: evaluators, answerColumn: answerColumn,
			created: now, updated: now, status: models.EvaluationStarted, failure: failure,
			slots: make([]*scenarioRecord, len(rows)), done: make(chan struct{}),
		})
	}
	return http.StatusOK, "", runs
}
