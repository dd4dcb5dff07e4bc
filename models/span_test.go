package models

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func spanTree(t *testing.T) *Span {
	t.Helper()
	var s Span
	require.NoError(t, json.Unmarshal([]byte(`{"id":"a","children":[
		{"id":"b","children":[{"id":"c"},{"id":"d","children":[{"id":"e"}]}]},
		{"id":"f","children":null},
		{"id":"g","children":[{"id":"h"}]}]}`), &s))
	return &s
}

func TestSpanWalk(t *testing.T) {
	var ids []string
	var depths []int
	spanTree(t).Walk(func(s *Span, depth int) bool {
		ids = append(ids, s.ID)
		depths = append(depths, depth)
		return true
	})
	assert.Equal(t, []string{"a", "b", "c", "d", "e", "f", "g", "h"}, ids, "depth first, in order")
	assert.Equal(t, []int{0, 1, 2, 2, 3, 1, 1, 2}, depths)

	ids = nil
	spanTree(t).Walk(func(s *Span, _ int) bool {
		ids = append(ids, s.ID)
		return s.ID != "b" // skip b's subtree
	})
	assert.Equal(t, []string{"a", "b", "f", "g", "h"}, ids)

	// Walk hands out the spans themselves, so fn can edit the tree.
	tree := spanTree(t)
	tree.Walk(func(s *Span, _ int) bool { s.Name = "seen-" + s.ID; return true })
	assert.Equal(t, "seen-e", tree.Children[0].Children[1].Children[0].Name)

	count := 0
	(&Span{}).Walk(func(*Span, int) bool { count++; return true })
	assert.Equal(t, 1, count, "a lone span is visited once")
}

func TestSpanDeployedEnvironment(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"environment":"production"}`, "production"},
		{`{"variant":{"environment":"staging"}}`, "staging"},
		{`{"environment":"production","variant":{"environment":"staging"}}`, "production"},
		{`{"environment":null,"variant":{"environment":"playground"}}`, "playground"},
		{`{"environment":"","variant":null}`, ""},
		{`{}`, ""},
	} {
		var s Span
		require.NoError(t, json.Unmarshal([]byte(tc.doc), &s), tc.doc)
		assert.Equal(t, tc.want, s.DeployedEnvironment(), tc.doc)
	}
}

func TestSpanEnums(t *testing.T) {
	for _, k := range []SpanKind{SpanKindTool, SpanKindChain, SpanKindLLM, SpanKindWorkflow, SpanKindRetriever, SpanKindEmbedding, SpanKindAgent, SpanKindUnknown} {
		assert.True(t, k.Known(), string(k))
	}
	assert.Equal(t, []string{"TOOL", "CHAIN", "LLM", "WORKFLOW", "RETRIEVER", "EMBEDDING", "AGENT", "UNKNOWN"},
		[]string{string(SpanKindTool), string(SpanKindChain), string(SpanKindLLM), string(SpanKindWorkflow),
			string(SpanKindRetriever), string(SpanKindEmbedding), string(SpanKindAgent), string(SpanKindUnknown)})
	for _, s := range []SpanStatus{SpanStatusUnset, SpanStatusOK, SpanStatusError} {
		assert.True(t, s.Known(), string(s))
	}
	assert.Equal(t, []string{"UNSET", "OK", "ERROR"}, []string{string(SpanStatusUnset), string(SpanStatusOK), string(SpanStatusError)})
	assert.False(t, SpanKind("llm").Known(), "enum values are case-sensitive")
	assert.False(t, SpanStatus("").Known())

	var s Span
	require.NoError(t, json.Unmarshal([]byte(`{"spankind":"RERANKER","status":"TIMEOUT"}`), &s))
	assert.Equal(t, SpanKind("RERANKER"), s.SpanKind)
	assert.Equal(t, SpanStatus("TIMEOUT"), s.Status)
}

func TestSpanMetadataNumbers(t *testing.T) {
	for _, tc := range []struct {
		doc          string
		cost, lat    float64
		costOK, okLt bool
	}{
		{`{"metadata":{"cost":0.5,"latency":1.25}}`, 0.5, 1.25, true, true},
		{`{"metadata":{"cost":0,"latency":0}}`, 0, 0, true, true},
		{`{"metadata":{"cost":null,"latency":"1.2"}}`, 0, 0, false, false},
		{`{"metadata":{}}`, 0, 0, false, false},
		{`{"metadata":null}`, 0, 0, false, false},
	} {
		var s Span
		require.NoError(t, json.Unmarshal([]byte(tc.doc), &s))
		cost, ok := s.Cost()
		assert.Equal(t, tc.costOK, ok, tc.doc)
		assert.Equal(t, tc.cost, cost, tc.doc)
		lat, ok := s.Latency()
		assert.Equal(t, tc.okLt, ok, tc.doc)
		assert.Equal(t, tc.lat, lat, tc.doc)
	}
}
