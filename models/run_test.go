package models

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunStatus(t *testing.T) {
	for _, tc := range []struct {
		s                RunStatus
		terminal, failed bool
	}{
		{RunPending, false, false}, {RunQueued, false, false}, {RunRunning, false, false},
		{RunSuccess, true, false}, {RunErrors, true, false}, {RunFailure, true, true},
		{RunCancelled, true, true}, {"paused", false, false},
	} {
		assert.Equal(t, tc.terminal, tc.s.Terminal(), "%s terminal", tc.s)
		assert.Equal(t, tc.failed, tc.s.Failed(), "%s failed", tc.s)
	}
}

func TestSimpleEvaluationCreateWire(t *testing.T) {
	three := 3
	b, err := json.Marshal(SimpleEvaluationCreate{Name: "n", TestsetRevisionID: "t", ApplicationRevisionID: "a",
		EvaluatorRevisionIDs: []string{"e1", "e2"}, Split: true, Concurrency: &RunConcurrency{BatchSize: &three}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"evaluation":{"name":"n","flags":{"is_split":true},"data":{
		"testset_steps":{"t":"auto"},"application_steps":{"a":"auto"},"evaluator_steps":{"e1":"auto","e2":"auto"},
		"repeats":1,"concurrency":{"batch_size":3}}}}`, string(b))
	b, err = json.Marshal(SimpleEvaluationCreate{TestsetRevisionID: "t", ApplicationRevisionID: "a", Repeats: 2})
	require.NoError(t, err)
	assert.JSONEq(t, `{"evaluation":{"data":{"testset_steps":{"t":"auto"},"application_steps":{"a":"auto"},"evaluator_steps":{},"repeats":2}}}`, string(b))
}

func TestSimpleEvaluationDataReadsListSteps(t *testing.T) {
	var d SimpleEvaluationData
	require.NoError(t, json.Unmarshal([]byte(`{"status":"running","testset_steps":["t"],"evaluator_steps":{"e":"human"},"repeats":1}`), &d))
	assert.Equal(t, map[string]string{"t": "custom"}, d.TestsetSteps, "the list form's origin is custom")
	assert.Equal(t, map[string]string{"e": "human"}, d.EvaluatorSteps)
	assert.Equal(t, RunRunning, d.Status)
	require.NotNil(t, d.Repeats)
}

func TestColumnsKeepOrder(t *testing.T) {
	const raw = `{"zeta":"z","alpha":1,"mid":{"a":[1,2]},"nul":null}`
	var c Columns
	require.NoError(t, json.Unmarshal([]byte(raw), &c))
	names := make([]string, len(c))
	for i, col := range c {
		names[i] = col.Name
	}
	assert.Equal(t, []string{"zeta", "alpha", "mid", "nul"}, names)
	text, ok := c.Text("zeta")
	assert.True(t, ok)
	assert.Equal(t, "z", text)
	_, ok = c.Get("nope")
	assert.False(t, ok)
	back, err := json.Marshal(c)
	require.NoError(t, err)
	assert.Equal(t, raw, string(back), "it marshals back in order")
	assert.Error(t, json.Unmarshal([]byte(`["x"]`), &c))
	require.NoError(t, json.Unmarshal([]byte(`null`), &c))
	assert.Nil(t, c)
}

func TestTraceShapes(t *testing.T) {
	const raw = `{"trace_id":"abc","spans":{"root":{"trace_id":"abc","span_id":"1","start_time":1700000000,
		"end_time":"2026-11-26T03:56:19.550896Z","status_code":"STATUS_CODE_ERROR","status_message":"ValueError: x",
		"attributes":{"ag":{"data":{"inputs":{}},"metrics":{"costs":{},"duration":{"cumulative":101.5}}}},
		"spans":{"child":[{"trace_id":"abc","span_id":"2","parent_id":"1"},{"trace_id":"abc","span_id":"3","parent_id":"1"}]}}}}`
	var tr Trace
	require.NoError(t, json.Unmarshal([]byte(raw), &tr))
	root, ok := tr.Root()
	require.True(t, ok)
	assert.Equal(t, "1", root.SpanID)
	require.NotNil(t, root.StartTime.Integer, "an integer time is kept")
	assert.EqualValues(t, 1700000000, *root.StartTime.Integer)
	assert.Equal(t, 2026, root.EndTime.Time.Year())
	assert.Len(t, root.Spans["child"].Nodes, 2)
	assert.True(t, root.Spans["child"].List)
	_, ok = root.Outputs()
	assert.False(t, ok, "a failed call has no outputs")
	ms, ok := root.DurationMillis()
	assert.True(t, ok)
	assert.Equal(t, 101.5, ms)
	_, ok = root.Cost()
	assert.False(t, ok, "costs:{} is no cost")
	msg, failed := root.Failed()
	assert.True(t, failed)
	assert.Equal(t, "ValueError: x", msg)

	back, err := json.Marshal(tr)
	require.NoError(t, err)
	var a, b any
	require.NoError(t, json.Unmarshal([]byte(raw), &a))
	require.NoError(t, json.Unmarshal(back, &b))
	assert.Equal(t, a, b, "a trace marshals back to what it was decoded from")
}

func TestNormalizeTraceID(t *testing.T) {
	for in, want := range map[string]string{
		"2ce06221-5417-ab97-7a73-a6c69f13bf1e": "2ce062215417ab977a73a6c69f13bf1e",
		"2CE062215417AB977A73A6C69F13BF1E":     "2ce062215417ab977a73a6c69f13bf1e",
		"2ce062215417ab977a73a6c69f13bf1e":     "2ce062215417ab977a73a6c69f13bf1e",
		"not-a-trace":                          "not-a-trace",
		"2ce06221-5417-ab97-7a73-a6c69f13bf1z": "2ce06221-5417-ab97-7a73-a6c69f13bf1z",
		"2ce062215-417-ab97-7a73-a6c69f13bf1e": "2ce062215-417-ab97-7a73-a6c69f13bf1e",
	} {
		assert.Equal(t, want, NormalizeTraceID(in), in)
	}
}

func TestRunErrorStacktrace(t *testing.T) {
	var e RunError
	require.NoError(t, json.Unmarshal([]byte(`{"code":500,"message":"m","stacktrace":["a\n","b\n"]}`), &e))
	assert.Equal(t, "a\nb\n", e.StacktraceText())
	require.NoError(t, json.Unmarshal([]byte(`{"stacktrace":"one"}`), &e))
	assert.Equal(t, "one", e.StacktraceText())
	assert.Equal(t, "", RunError{}.StacktraceText())
}

func TestEvaluatorRevisionKeys(t *testing.T) {
	var ev EvaluatorRevision
	require.NoError(t, json.Unmarshal([]byte(`{"id":"e","data":{"uri":"agenta:builtin:auto_exact_match:v0","parameters":{},
		"schemas":{"parameters":{"properties":{"correct_answer_key":{"type":"string","default":"correct_answer"}}}}}}`), &ev))
	assert.Equal(t, "auto_exact_match", ev.Key())
	assert.Equal(t, "correct_answer", ev.CorrectAnswerKey(), "the schema's default")
	ev.Data.Parameters = map[string]any{"correct_answer_key": "expected"}
	assert.Equal(t, "expected", ev.CorrectAnswerKey())
	assert.Equal(t, "", EvaluatorRevision{}.Key())
	assert.Equal(t, "", EvaluatorRevision{Data: &EvaluatorRevisionData{URI: "custom:x"}}.Key())
}

func TestApplicationRevisionDataHidesHeaders(t *testing.T) {
	d := ApplicationRevisionData{URL: "https://app", Headers: map[string]json.RawMessage{"Authorization": json.RawMessage(`"Bearer sk-SECRET"`)}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, d)
		assert.NotContains(t, out, "SECRET", verb)
		assert.Contains(t, out, "Authorization", verb)
	}
	assert.False(t, strings.Contains(fmt.Sprint(d.LogValue()), "SECRET"))
}

func TestCommitAndForkWire(t *testing.T) {
	b, err := json.Marshal(ApplicationRevisionCommit{ApplicationVariantID: "v", Delta: &RevisionDelta{Remove: []string{"parameters.x"}}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"application_revision":{"application_variant_id":"v","delta":{"remove":["parameters.x"]}}}`, string(b))
	b, err = json.Marshal(ApplicationVariantFork{ApplicationVariantRef: Reference{ID: "v"}, ApplicationVariant: NewApplicationVariant{Slug: "s"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"application_variant_ref":{"id":"v"},"application_variant":{"slug":"s"}}`, string(b))
}
