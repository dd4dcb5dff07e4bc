package evals

import (
	"encoding/json"
	"testing"
)

func TestDirectionOf(t *testing.T) {
	tests := []struct {
		key      string
		settings map[string]any
		want     Direction
	}{
		{"auto_levenshtein_distance", nil, LowerIsBetter},
		{"auto_levenshtein_distance", map[string]any{"threshold": 3.0}, HigherIsBetter},
		// As the SDK decodes settings: numbers exact, as json.Number.
		{"auto_levenshtein_distance", map[string]any{"threshold": json.Number("3")}, HigherIsBetter},
		{"auto_levenshtein_distance", map[string]any{"threshold": "3"}, LowerIsBetter},
		{"auto_exact_match", nil, HigherIsBetter},
		{"auto_similarity_match", map[string]any{"similarity_threshold": 0.5}, HigherIsBetter},
		{"auto_webhook_test", nil, HigherIsBetter},
	}
	for _, tt := range tests {
		if got := DirectionOf(tt.key, tt.settings); got != tt.want {
			t.Errorf("DirectionOf(%q, %v) = %v, want %v", tt.key, tt.settings, got, tt.want)
		}
	}
}
