package agentatest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// The seven operations. Each follows the service's order of checks: shape
// (422), then existence and permission, then the work.

func (s *Server) handleFetchScenarios(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.evaluations[id]
	if !ok {
		// The service does not check for a missing evaluation: the lookup
		// fails further down and the router turns that into a 500.
		writeDetail(w, http.StatusInternalServerError, fmt.Sprintf("Evaluation %s not found", id))
		return
	}
	list := []any{}
	for _, sc := range run.slots {
		if sc != nil {
			list = append(list, s.scenarioWire(run, sc))
		}
	}
	writeJSON(w, http.StatusOK, list)
}

// readModel validates a request body against a model as FastAPI does, and
// answers the 422 itself when it is refused.
func (s *Server) readModel(w http.ResponseWriter, r *http.Request, body []byte, model []fieldSpec) (map[string]any, bool) {
	v := &validator{version: s.version}
	doc, ok := v.readBody(body, r.Header.Get("Content-Type"))
	var in map[string]any
	if ok {
		in, ok = v.model([]any{"body"}, doc, model)
	}
	if !ok {
		writeJSON(w, http.StatusUnprocessableEntity, validationBody(s.version, v.errs))
	}
	return in, ok
}

// readQuery checks that the required query parameters are present, and
// answers the 422 itself when one is missing.
func (s *Server) readQuery(w http.ResponseWriter, r *http.Request, names ...string) (map[string]string, bool) {
	q := parseQuery(r.URL.RawQuery)
	v := &validator{version: s.version}
	v.requireQuery(q, names...)
	if !v.ok() {
		writeJSON(w, http.StatusUnprocessableEntity, validationBody(s.version, v.errs))
		return nil, false
	}
	return q, true
}

func (s *Server) handleCreateEvaluation(w http.ResponseWriter, r *http.Request, body []byte) {
	in, ok := s.readModel(w, r, body, newEvaluationModel)
	if !ok {
		return
	}
	appID := in["app_id"].(string)
	variantIDs := in["variant_ids"].([]string)
	configIDs := in["evaluators_configs"].([]string)
	testsetID := in["testset_id"].(string)
	providerKeys, _ := in["lm_providers_keys"].(map[string]string)
	answerColumn := "correct_answer"
	if c, ok := in["correct_answer_column"].(string); ok {
		answerColumn = c
	}

	status, message, answer := s.createRuns(appID, variantIDs, configIDs, testsetID, providerKeys, answerColumn)
	if status != http.StatusOK {
		writeDetail(w, status, message)
		return
	}
	writeJSON(w, http.StatusOK, answer)
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

func (s *Server) handleGetVariantByEnv(w http.ResponseWriter, r *http.Request, _ []byte) {
	q, ok := s.readQuery(w, r, "app_id", "environment")
	if !ok {
		return
	}
	appID, environment := q["app_id"], q["environment"]
	if strings.TrimSpace(appID) == "" {
		// The service parses the id first; its ValueError becomes a 400.
		writeDetail(w, http.StatusBadRequest, "badly formed hexadecimal UUID string")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	app, ok := s.apps[appID]
	if !ok {
		writeDetail(w, http.StatusInternalServerError, "App Variant not found")
		return
	}
	variant, ok := s.variants[app.environments[environment]]
	if !ok {
		writeDetail(w, http.StatusInternalServerError, "App Variant not found")
		return
	}
	writeJSON(w, http.StatusOK, s.variantWire(variant))
}

func (s *Server) handleAddVariantFromBase(w http.ResponseWriter, r *http.Request, body []byte) {
	in, ok := s.readModel(w, r, body, addVariantFromBaseModel)
	if !ok {
		return
	}
	baseID := in["base_id"].(string)
	configName := in["new_config_name"].(string)
	parameters := in["parameters"].(map[string]any)

	s.mu.Lock()
	defer s.mu.Unlock()
	base, ok := s.bases[baseID]
	if !ok {
		writeDetail(w, http.StatusInternalServerError, fmt.Sprintf("Base %s not found", baseID))
		return
	}
	var previous *variantRecord
	for _, other := range s.variants {
		if other.baseID != baseID {
			continue
		}
		if other.configName == configName {
			writeDetail(w, http.StatusInternalServerError, "App variant with the same name already exists")
			return
		}
		if previous == nil || other.order < previous.order {
			previous = other
		}
	}
	if previous == nil {
		writeDetail(w, http.StatusInternalServerError, "Previous app variant not found")
		return
	}
	params, err := copyParameters(parameters)
	if err != nil {
		writeDetail(w, http.StatusInternalServerError, err.Error())
		return
	}
	rec := &variantRecord{
		id: s.newID(), appID: base.AppID, baseID: base.ID, configName: configName,
		parameters: params, revision: 1,
		previousVariantName: base.Name + "." + previous.configName,
		userID:              s.user.ID, order: len(s.variants),
	}
	rec.revisionIDs = map[int]string{1: s.newID()}
	s.variants[rec.id] = rec
	writeJSON(w, http.StatusOK, s.variantWire(rec))
}

func (s *Server) handleGetVariant(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.variants[id]
	if !ok {
		writeDetail(w, http.StatusNotFound, fmt.Sprintf("Variant with ID '%s' not found", id))
		return
	}
	writeJSON(w, http.StatusOK, s.variantWire(v))
}

func (s *Server) handleGetSpan(w http.ResponseWriter, r *http.Request, id string) {
	q := parseQuery(r.URL.RawQuery)
	if t, ok := q["type"]; ok && t != "generation" {
		// Only generation spans are implemented; anything else is an
		// empty list, even though the operation promises one span.
		writeJSON(w, http.StatusOK, []any{})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.spans[id]
	if !ok {
		writeDetail(w, http.StatusInternalServerError, fmt.Sprintf("Span %s not found", id))
		return
	}
	writeJSON(w, http.StatusOK, s.spanWire(rec, true, 0))
}

func (s *Server) handleListHumanEvaluations(w http.ResponseWriter, r *http.Request, _ []byte) {
	q, ok := s.readQuery(w, r, "app_id")
	if !ok {
		return
	}
	appID := q["app_id"]
	if strings.TrimSpace(appID) == "" {
		writeDetail(w, http.StatusInternalServerError, "badly formed hexadecimal UUID string")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []any{}
	for i := range s.humanEvals {
		if s.humanEvals[i].AppID == appID {
			list = append(list, s.humanEvals[i].wire())
		}
	}
	writeJSON(w, http.StatusOK, list)
}

// handleFetchEvaluation answers the evaluation with its aggregated results,
// or the service's re-raised 404 for an id it does not hold.
func (s *Server) handleFetchEvaluation(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.evaluations[id]
	switch {
	case ok:
		writeJSON(w, http.StatusOK, s.evaluationWire(run, false))
	case !wellFormedUUID(id):
		writeDetail(w, http.StatusInternalServerError, badlyFormedUUID)
	default:
		writeDetail(w, http.StatusNotFound, fmt.Sprintf("404: Evaluation with id %s not found", id))
	}
}

// handleFetchEvaluationStatus answers {"status": <Result>}. The service
// turns every failure of this route into a 500, an unknown id included:
// its lookup returns None and reading .status from it raises.
func (s *Server) handleFetchEvaluationStatus(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.evaluations[id]
	switch {
	case ok:
		writeJSON(w, http.StatusOK, object{{"status", s.statusResult(run).wire()}})
	case !wellFormedUUID(id):
		writeDetail(w, http.StatusInternalServerError, badlyFormedUUID)
	default:
		writeDetail(w, http.StatusInternalServerError, "'NoneType' object has no attribute 'status'")
	}
}

// badlyFormedUUID is Python's uuid.UUID error for an id it cannot parse,
// which the service answers with a 500.
const badlyFormedUUID = "badly formed hexadecimal UUID string"

// wellFormedUUID reports whether Python's uuid.UUID would parse id: 32 hex
// digits once braces, a "urn:uuid:" prefix and hyphens are removed.
func wellFormedUUID(id string) bool {
	id = strings.ReplaceAll(id, "urn:", "")
	id = strings.ReplaceAll(id, "uuid:", "")
	id = strings.Trim(id, "{}")
	id = strings.ReplaceAll(id, "-", "")
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}
