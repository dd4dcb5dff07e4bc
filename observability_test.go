package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realSpanBody is a SpanDetail as a real server sends it: environment at
// span level on the root and inside the variant on a child, recursive
// children, explicit nulls, unknown enum values and unknown fields.
const realSpanBody = `{
  "id": "sp-1", "name": "workflow", "parent_span_id": null,
  "created_at": "2024-06-26T12:22:31.775000",
  "variant": {"variant_id": "var-1", "variant_name": "app.default", "revision": 3},
  "environment": "production",
  "spankind": "WORKFLOW", "status": "OK",
  "metadata": {"cost": 0.0042, "latency": 2.5, "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}},
  "trace_id": "tr-1", "user_id": null,
  "content": {"inputs": {"country": "France"}, "internals": null, "outputs": ["Paris"]},
  "config": {"temperature": 0.7, "model": "gpt-4o"},
  "children": [
    {
      "id": "sp-2", "name": "retrieve", "parent_span_id": "sp-1",
      "created_at": "2024-06-26T12:22:31.800000+00:00",
      "variant": {"variant_id": "var-1", "variant_name": "app.default", "revision": 3, "environment": "staging"},
      "spankind": "RETRIEVER", "status": "UNSET",
      "metadata": {"cost": null, "latency": 0.2},
      "content": {"inputs": {}, "outputs": []},
      "children": [
        {
          "id": "sp-3", "name": "rerank", "parent_span_id": "sp-2",
          "created_at": "2024-06-26T12:22:31.9",
          "variant": {"variant_id": null, "variant_name": null, "revision": null},
          "environment": null,
          "spankind": "RERANKER", "status": "CANCELLED",
          "metadata": {}, "content": {}, "children": null, "brand_new": {"x": 1}
        }
      ]
    },
    {
      "id": "sp-4", "name": "llm", "parent_span_id": "sp-1",
      "created_at": "2024-06-26T14:22:32+02:00",
      "variant": {"variant_id": "var-1", "variant_name": "app.default", "revision": 3},
      "spankind": "LLM", "status": "ERROR",
      "metadata": {"cost": 0.004, "latency": 2.1}, "content": {"outputs": null}
    }
  ]
}`

func TestGetSpan(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/observability/spans/sp-1/", "").replyJSON(200, realSpanBody)

	s, err := c.GetSpan(context.Background(), "sp-1", nil)

	require.NoError(t, err)
	assertAllSent(t)
	require.NotNil(t, s)
	assert.Equal(t, "sp-1", s.ID)
	assert.Equal(t, "", s.ParentSpanID)
	assert.True(t, s.CreatedAt.Equal(time.Date(2024, 6, 26, 12, 22, 31, 775000000, time.UTC)), "got %s", s.CreatedAt)
	assert.Equal(t, models.SpanVariant{VariantID: "var-1", VariantName: "app.default", Revision: 3}, s.Variant)
	assert.Equal(t, "production", s.Environment)
	assert.Equal(t, "production", s.DeployedEnvironment())
	assert.Equal(t, models.SpanKindWorkflow, s.SpanKind)
	assert.Equal(t, models.SpanStatusOK, s.Status)
	cost, ok := s.Cost()
	assert.True(t, ok)
	assert.Equal(t, 0.0042, cost)
	latency, ok := s.Latency()
	assert.True(t, ok)
	assert.Equal(t, 2.5, latency)
	assert.Equal(t, map[string]any{"prompt_tokens": json.Number("120"), "completion_tokens": json.Number("30"), "total_tokens": json.Number("150")}, s.Metadata["usage"])
	assert.Equal(t, "tr-1", s.TraceID)
	assert.Equal(t, "", s.UserID)
	assert.Equal(t, map[string]any{"country": "France"}, s.Content["inputs"])
	assert.Equal(t, map[string]any{"temperature": json.Number("0.7"), "model": "gpt-4o"}, s.Config)

	require.Len(t, s.Children, 2)
	child := s.Children[0]
	assert.Equal(t, "sp-1", child.ParentSpanID)
	assert.Equal(t, "", child.Environment)
	assert.Equal(t, "staging", child.Variant.Environment)
	assert.Equal(t, "staging", child.DeployedEnvironment(), "the environment inside the variant is found too")
	assert.Equal(t, models.SpanKindRetriever, child.SpanKind)
	_, ok = child.Cost()
	assert.False(t, ok, "a null cost is no cost")
	assert.Nil(t, child.Config)

	require.Len(t, child.Children, 1)
	grandchild := child.Children[0]
	assert.Equal(t, models.SpanKind("RERANKER"), grandchild.SpanKind, "an unknown kind is kept")
	assert.False(t, grandchild.SpanKind.Known())
	assert.Equal(t, models.SpanStatus("CANCELLED"), grandchild.Status, "an unknown status is kept")
	assert.False(t, grandchild.Status.Known())
	assert.Nil(t, grandchild.Children)
	assert.Equal(t, "", grandchild.DeployedEnvironment())
	assert.Equal(t, 900000000, grandchild.CreatedAt.Nanosecond())

	llm := s.Children[1]
	assert.Equal(t, models.SpanStatusError, llm.Status)
	assert.True(t, llm.CreatedAt.Equal(time.Date(2024, 6, 26, 12, 22, 32, 0, time.UTC)), "got %s", llm.CreatedAt)

	var order []string
	var depths []int
	s.Walk(func(span *models.Span, depth int) bool {
		order = append(order, span.ID)
		depths = append(depths, depth)
		return true
	})
	assert.Equal(t, []string{"sp-1", "sp-2", "sp-3", "sp-4"}, order)
	assert.Equal(t, []int{0, 1, 2, 1}, depths)
}

// The span path keeps its trailing slash (without it the server redirects),
// and the type query parameter is sent only when set.
func TestGetSpanPathAndQuery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  *GetSpanOptions
		query string
	}{
		{"nil options", nil, ""},
		{"empty options", &GetSpanOptions{}, ""},
		{"generation", &GetSpanOptions{Type: "generation"}, "type=generation"},
		{"other type", &GetSpanOptions{Type: "trace span"}, "type=trace+span"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t)
			e := expect("GET", "/api/observability/spans/sp%2F1/", tc.query)
			e.replyJSON(200, `{"id":"sp/1","children":null}`)

			s, err := c.GetSpan(context.Background(), "sp/1", tc.opts)

			require.NoError(t, err)
			assert.Equal(t, "sp/1", s.ID)
			assert.Equal(t, "/api/observability/spans/sp%2F1/", e.only(t).Path)
			assertAllSent(t)
		})
	}
}

// The service answers [] for a span type it does not implement: that is
// "not found", said plainly, not a puzzling decode error.
func TestGetSpanUnimplementedType(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/observability/spans/sp-1/", "type=trace").replyJSON(200, `[]`)

	span, err := c.GetSpan(context.Background(), "sp-1", &GetSpanOptions{Type: "trace"})

	assert.Nil(t, span)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNotFound), "got %v", err)
	assert.Contains(t, err.Error(), `no span of type "trace"`)
	var derr *DecodeError
	assert.True(t, errors.As(err, &derr), "the DecodeError is kept")
	assertAllSent(t)
}
