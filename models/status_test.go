package models

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEvaluationStatus(t *testing.T) {
	for _, tc := range []struct {
		status                    string
		terminal, failed, running bool
	}{
		{EvaluationInitialized, false, false, true},
		{EvaluationStarted, false, false, true},
		{EvaluationFinished, true, false, false},
		{EvaluationFinishedWithErrors, true, false, false},
		{EvaluationFailed, true, true, false},
		{EvaluationAggregationFailed, true, true, false},
		{"EVALUATION_QUEUED", false, false, false},
		{"", false, false, false},
		{strings.ToLower(EvaluationFinished), false, false, false},
	} {
		want := [3]bool{tc.terminal, tc.failed, tc.running}
		s := EvaluationStatus(tc.status)
		assert.Equal(t, want, [3]bool{s.Terminal(), s.Failed(), s.Running()}, "%q: terminal, failed, running", tc.status)

		raw, err := json.Marshal(tc.status)
		require.NoError(t, err)
		r := Result{Type: ResultTypeStatus, Value: raw}
		assert.Equal(t, s, r.EvaluationStatus(), "Result.EvaluationStatus of %s", raw)
		ev := Evaluation{Status: r}
		assert.Equal(t, want, [3]bool{ev.Terminal(), ev.Failed(), ev.Running()}, "Evaluation in %q: terminal, failed, running", tc.status)
	}
}

func TestResultEvaluationStatusOfNonText(t *testing.T) {
	for _, raw := range []string{``, `null`, `42`, `{"value":"EVALUATION_FINISHED"}`, `["EVALUATION_FINISHED"]`} {
		r := Result{Type: ResultTypeStatus, Value: json.RawMessage(raw)}
		assert.Equal(t, EvaluationStatus(""), r.EvaluationStatus(), "status of value %q", raw)
		assert.False(t, Evaluation{Status: r}.Terminal(), "a value %q is not terminal", raw)
	}
}
