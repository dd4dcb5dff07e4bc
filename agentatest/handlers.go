package agentatest

import (
	"fmt"
	"net/http"
	"strings"
)

// The operations. Each follows the service's order of checks: shape
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
