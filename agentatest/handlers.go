package agentatest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The operations. Each is a handler: it follows the service's order of
// checks (shape, answered 422; then existence and permission; then the
// work) and returns its whole answer, built while it holds s.mu and
// written by the caller after the lock is released.

// readModel validates a request body against a model as FastAPI does; when
// the body is refused it returns the 422 answer and false.
func (s *Server) readModel(c *call, model []fieldSpec) (map[string]any, answer, bool) {
	v := &validator{version: s.version}
	doc, ok := v.readBody(c.body, c.r.Header.Get("Content-Type"))
	var in map[string]any
	if ok {
		in, ok = v.model([]any{"body"}, doc, model)
	}
	if !ok {
		return nil, v.refusal(), false
	}
	return in, answer{}, true
}

// refusal is the 422 answer listing what the validator found.
func (v *validator) refusal() answer {
	return jsonAnswer(http.StatusUnprocessableEntity, validationBody(v.version, v.errs))
}

// readQuery checks that the required query parameters are present; when
// one is missing it returns the 422 answer and false.
func (s *Server) readQuery(c *call, names ...string) (map[string]string, answer, bool) {
	q := parseQuery(c.r.URL.RawQuery)
	v := &validator{version: s.version}
	v.requireQuery(q, names...)
	if !v.ok() {
		return nil, v.refusal(), false
	}
	return q, answer{}, true
}

func (s *Server) handleFetchScenarios(c *call) answer {
	return answerRecord(s, s.evaluations, c, http.StatusNotFound, evaluationNotFound(c.id), func(run *evaluationRun) answer {
		list := []any{}
		for _, sc := range run.scenarios {
			list = append(list, s.scenarioWire(run, sc))
		}
		return jsonAnswer(http.StatusOK, list)
	})
}

func (s *Server) handleCreateEvaluation(c *call) answer {
	in, refused, ok := s.readModel(c, newEvaluationModel)
	if !ok {
		return refused
	}
	rateLimit := in["rate_limit"].(map[string]any)
	providerKeys, _ := in["lm_providers_keys"].(map[string]string)
	// correct_answer_column is accepted and ignored, as by the service:
	// evaluators read settings_values.correct_answer_key.
	return s.createRuns(newEvaluationRequest{
		appID:        in["app_id"].(string),
		variantIDs:   in["variant_ids"].([]string),
		configIDs:    in["evaluators_configs"].([]string),
		testsetID:    in["testset_id"].(string),
		providerKeys: providerKeys,
		attempts:     int(rateLimit["max_retries"].(int64)),
		batchSize:    int(rateLimit["batch_size"].(int64)),
		batchDelay:   batchDelay(rateLimit["delay_between_batches"].(int64)),
	})
}

// batchDelay is delay_between_batches, in seconds, as a duration: none when
// it is not positive, and at most a day, so that no value overflows.
func batchDelay(seconds int64) time.Duration {
	return time.Duration(min(max(seconds, 0), 24*60*60)) * time.Second
}

func (s *Server) handleGetVariantByEnv(c *call) answer {
	q, refused, ok := s.readQuery(c, "app_id", "environment")
	if !ok {
		return refused
	}
	if s.brokenEnvironmentLookup {
		return detailAnswer(http.StatusInternalServerError, environmentLookupBug)
	}
	appID, environment := q["app_id"], q["environment"]
	if strings.TrimSpace(appID) == "" || !s.wellFormed(appID) {
		// The service parses the id first; its ValueError becomes a 400.
		return detailAnswer(http.StatusBadRequest, badlyFormedUUID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if app, ok := find(s, s.apps, appID); ok {
		if variant, ok := s.variants[app.environments[environment]]; ok {
			return jsonAnswer(http.StatusOK, s.variantWire(variant))
		}
	}
	return detailAnswer(http.StatusInternalServerError, "App Variant not found")
}

func (s *Server) handleAddVariantFromBase(c *call) answer {
	in, refused, ok := s.readModel(c, addVariantFromBaseModel)
	if !ok {
		return refused
	}
	baseID := in["base_id"].(string)
	configName := in["new_config_name"].(string)
	parameters := in["parameters"].(map[string]any)

	if !s.wellFormed(baseID) {
		return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	base, ok := find(s, s.bases, baseID)
	if !ok {
		return detailAnswer(http.StatusInternalServerError, "'NoneType' object has no attribute 'base_name'")
	}
	var previous *variantRecord
	for _, other := range s.variants {
		if other.baseID != base.ID {
			continue
		}
		if other.configName == configName {
			return detailAnswer(http.StatusInternalServerError, "App variant with the same name already exists")
		}
		if previous == nil || other.order < previous.order {
			previous = other
		}
	}
	if previous == nil {
		return detailAnswer(http.StatusInternalServerError, "Previous app variant not found")
	}
	params, err := copyParameters(pythonFloats(parameters))
	if err != nil {
		return detailAnswer(http.StatusInternalServerError, err.Error())
	}
	rec := &variantRecord{
		id: s.newID(), appID: base.AppID, baseID: base.ID, configName: configName,
		parameters: params, revision: 1,
		previousVariantName: base.Name + "." + previous.configName,
		userID:              s.user.ID, order: len(s.variants),
	}
	rec.revisionIDs = map[int]string{1: s.newID()}
	s.variants[rec.id] = rec
	s.admission.stored.Add(int64(len(c.body))) // see Limits.StoredBytes
	return jsonAnswer(http.StatusOK, s.variantWire(rec))
}

func (s *Server) handleGetVariant(c *call) answer {
	// The service has no 404 here: reading base_id from the missing
	// variant raises, and the router answers 500.
	return answerRecord(s, s.variants, c, http.StatusInternalServerError, "'NoneType' object has no attribute 'base_id'",
		func(v *variantRecord) answer { return jsonAnswer(http.StatusOK, s.variantWire(v)) })
}

func (s *Server) handleGetSpan(c *call) answer {
	if !s.servesSpans() {
		return routeNotFoundAnswer()
	}
	q := parseQuery(c.r.URL.RawQuery)
	if t, ok := q["type"]; ok && t != "generation" {
		// Only generation spans are implemented; anything else is an
		// empty list, even though the operation promises one span.
		return jsonAnswer(http.StatusOK, []any{})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.spans[c.id]
	if !ok {
		return detailAnswer(http.StatusInternalServerError, fmt.Sprintf("Span %s not found", c.id))
	}
	return jsonAnswer(http.StatusOK, s.spanWire(rec, true, 0))
}

func (s *Server) handleListHumanEvaluations(c *call) answer {
	q, refused, ok := s.readQuery(c, "app_id")
	if !ok {
		return refused
	}
	appID := q["app_id"]
	if strings.TrimSpace(appID) == "" || !s.wellFormed(appID) {
		return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []any{}
	for i := range s.humanEvals {
		if id := s.humanEvals[i].AppID; id == appID || id == s.key(appID) {
			list = append(list, s.humanEvaluationWire(&s.humanEvals[i]))
		}
	}
	return jsonAnswer(http.StatusOK, list)
}

// handleFetchEvaluation answers the evaluation with its aggregated results,
// or the service's re-raised 404 for an id it does not hold.
func (s *Server) handleFetchEvaluation(c *call) answer {
	return answerRecord(s, s.evaluations, c, http.StatusNotFound, evaluationNotFound(c.id),
		func(run *evaluationRun) answer { return jsonAnswer(http.StatusOK, s.evaluationWire(run)) })
}

// evaluationNotFound is the service's re-raised 404 for an evaluation it
// does not hold.
func evaluationNotFound(id string) string { return "404: Evaluation with id " + id + " not found" }

// handleFetchEvaluationStatus answers {"status": <Result>}. The service
// turns every failure of this route into a 500, an unknown id included:
// its lookup returns None and reading .status from it raises.
func (s *Server) handleFetchEvaluationStatus(c *call) answer {
	// The route answers the stored jsonb value, not a model: its keys come
	// in jsonb's order, "type", "error", "value".
	return answerRecord(s, s.evaluations, c, http.StatusInternalServerError, "'NoneType' object has no attribute 'status'",
		func(run *evaluationRun) answer {
			return jsonAnswer(http.StatusOK, object{{"status", jsonb(s.statusResult(run).wire())}})
		})
}

// handleFetchEvaluationResults answers {"results": [...], "evaluation_id":
// id}, the route's dict: each aggregate with its evaluator config as the
// service reads both back from storage (the result's keys in jsonb order),
// and the id as the path gave it. The route turns every failure into a
// 500, an unknown id included: it reads .id from the None its lookup
// returns.
func (s *Server) handleFetchEvaluationResults(c *call) answer {
	if !s.wellFormed(c.id) {
		return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
	}
	return answerRecord(s, s.evaluations, c, http.StatusInternalServerError, "'NoneType' object has no attribute 'id'", func(run *evaluationRun) answer {
		results := []any{}
		for _, a := range run.aggregated {
			results = append(results, object{{"evaluator_config", s.evaluatorWire(a.evaluator)}, {"result", jsonb(a.result.wire())}})
		}
		return jsonAnswer(http.StatusOK, object{{"results", results}, {"evaluation_id", c.id}})
	})
}
