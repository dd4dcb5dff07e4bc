package agentatest

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// The mid-2024 reads that agenta.Client.Preflight makes before it creates:
// a test set by id, an app's variants and an app's evaluator configs,
// answered as the mid-2024 service answers them.

// The operations of the reads a preflight makes.
const (
	// OpGetTestset is GET /testsets/{id}/: the test set with its rows, or
	// 404 {"detail":"404: testset not found"}.
	OpGetTestset Operation = "get_single_testset"
	// OpListAppVariants is GET /apps/{app_id}/variants/: the app's
	// variants, [] for an unknown app.
	OpListAppVariants Operation = "list_app_variants"
	// OpListEvaluatorConfigs is GET /evaluators/configs/?app_id=: the
	// evaluator configs, [] for an unknown app.
	OpListEvaluatorConfigs Operation = "get_evaluator_configs"
)

func (s *Server) handleGetTestset(c *call) answer {
	if !s.wellFormed(c.id) {
		return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
	}
	return answerRecord(s, s.testsets, c, http.StatusNotFound, "404: testset not found", func(t *testsetRecord) answer {
		rows := make([]any, len(t.Rows))
		for i, row := range t.Rows {
			rows[i] = row
		}
		now := s.pythonTime(s.clock())
		return jsonAnswer(http.StatusOK, object{{"id", t.ID}, {"name", t.Name}, {"csvdata", rows}, {"created_at", now}, {"updated_at", now}})
	})
}

func (s *Server) handleListAppVariants(c *call) answer {
	if !s.wellFormed(c.id) {
		return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	app, ok := find(s, s.apps, c.id)
	if !ok {
		return jsonAnswer(http.StatusOK, []any{})
	}
	var variants []*variantRecord
	for _, v := range s.variants {
		if v.appID == app.ID {
			variants = append(variants, v)
		}
	}
	return jsonAnswer(http.StatusOK, inOrder(variants, func(v *variantRecord) int { return v.order }, s.variantWire))
}

// inOrder wires records in their creation order, as the service lists them.
func inOrder[T any](records []T, order func(T) int, wire func(T) object) []any {
	slices.SortFunc(records, func(a, b T) int { return cmp.Compare(order(a), order(b)) })
	list := []any{}
	for _, r := range records {
		list = append(list, wire(r))
	}
	return list
}

// handleListEvaluatorConfigs answers every config for a known app: the
// fake's configs belong to no app in particular.
func (s *Server) handleListEvaluatorConfigs(c *call) answer {
	q, refused, ok := s.readQuery(c, "app_id")
	if !ok {
		return refused
	}
	if strings.TrimSpace(q["app_id"]) == "" || !s.wellFormed(q["app_id"]) {
		return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := find(s, s.apps, q["app_id"]); !ok {
		return jsonAnswer(http.StatusOK, []any{})
	}
	configs := slices.Collect(maps.Values(s.evaluators))
	return jsonAnswer(http.StatusOK, inOrder(configs, func(e *evaluatorRecord) int { return e.order }, s.evaluatorWire))
}
