package evals_test

import (
	"strings"
	"testing"

	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
)

// TestOrderByVariant: the evaluations come back in the order of the
// variants asked for, whatever order the service answered in; one that
// names no variant takes a place left free, in the service's order; a
// count other than one a variant is refused, naming what was created.
func TestOrderByVariant(t *testing.T) {
	ev := func(id string, variants ...string) models.Evaluation {
		return models.Evaluation{ID: id, VariantIDs: variants}
	}
	ids := func(evs []models.Evaluation) string {
		var out []string
		for _, e := range evs {
			out = append(out, e.ID)
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name     string
		created  []models.Evaluation
		variants []string
		want     string
	}{
		{"in order", []models.Evaluation{ev("e1", "v1"), ev("e2", "v2")}, []string{"v1", "v2"}, "e1,e2"},
		{"reversed", []models.Evaluation{ev("e2", "v2"), ev("e1", "v1")}, []string{"v1", "v2"}, "e1,e2"},
		{"a variant twice", []models.Evaluation{ev("e1", "v1"), ev("e2", "v1")}, []string{"v1", "v1"}, "e1,e2"},
		{"one names no variant", []models.Evaluation{ev("e9"), ev("e2", "v2"), ev("e3", "v3")}, []string{"v1", "v2", "v3"}, "e9,e2,e3"},
	}
	for _, tt := range tests {
		got, err := evals.OrderByVariant(tt.created, tt.variants)
		if err != nil || ids(got) != tt.want {
			t.Errorf("%s: OrderByVariant = %s, %v; want %s", tt.name, ids(got), err, tt.want)
		}
	}
	_, err := evals.OrderByVariant([]models.Evaluation{ev("e1", "v1")}, []string{"v1", "v2"})
	if err == nil || !strings.Contains(err.Error(), "created 1 evaluations for 2 variants: e1") {
		t.Errorf("one evaluation for two variants: %v; want an error naming e1", err)
	}
}
