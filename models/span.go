package models

// SpanKind classifies what a span did. Values the SDK does not know are kept
// as they come.
type SpanKind string

// Span kinds the service defines.
const (
	SpanKindTool      SpanKind = "TOOL"
	SpanKindChain     SpanKind = "CHAIN"
	SpanKindLLM       SpanKind = "LLM"
	SpanKindWorkflow  SpanKind = "WORKFLOW"
	SpanKindRetriever SpanKind = "RETRIEVER"
	SpanKindEmbedding SpanKind = "EMBEDDING"
	SpanKindAgent     SpanKind = "AGENT"
	SpanKindUnknown   SpanKind = "UNKNOWN"
)

// Known reports whether k is one of the kinds the service defines.
func (k SpanKind) Known() bool {
	switch k {
	case SpanKindTool, SpanKindChain, SpanKindLLM, SpanKindWorkflow,
		SpanKindRetriever, SpanKindEmbedding, SpanKindAgent, SpanKindUnknown:
		return true
	}
	return false
}

// SpanStatus is a span's status code. Values the SDK does not know are kept
// as they come.
type SpanStatus string

// Span status codes the service defines.
const (
	SpanStatusUnset SpanStatus = "UNSET"
	SpanStatusOK    SpanStatus = "OK"
	SpanStatusError SpanStatus = "ERROR"
)

// Known reports whether s is one of the status codes the service defines.
func (s SpanStatus) Known() bool {
	return s == SpanStatusUnset || s == SpanStatusOK || s == SpanStatusError
}

// Span is one step of a trace, with its child spans.
//
// The span operation returns the span with Config set; its children come
// without it. Metadata usually holds cost, latency and usage; Content holds
// inputs, internals and outputs.
type Span struct {
	ID           string      `json:"id"`
	Name         string      `json:"name"`
	ParentSpanID string      `json:"parent_span_id,omitempty"`
	CreatedAt    Timestamp   `json:"created_at"`
	Variant      SpanVariant `json:"variant"`
	// Environment is where the span ran. Some servers send it here, others
	// inside Variant; see DeployedEnvironment.
	Environment string         `json:"environment,omitempty"`
	SpanKind    SpanKind       `json:"spankind"`
	Status      SpanStatus     `json:"status"`
	Metadata    map[string]any `json:"metadata"`
	TraceID     string         `json:"trace_id,omitempty"`
	UserID      string         `json:"user_id,omitempty"`
	Content     map[string]any `json:"content"`
	Children    []Span         `json:"children,omitempty"`
	Config      map[string]any `json:"config,omitempty"`
}

// SpanVariant identifies the application variant a span ran.
type SpanVariant struct {
	VariantID   string `json:"variant_id,omitempty"`
	VariantName string `json:"variant_name,omitempty"`
	Revision    int    `json:"revision,omitempty"`
	// Environment is set here by servers that follow the field list rather
	// than the sample response.
	Environment string `json:"environment,omitempty"`
}

// SpanDetail is the OpenAPI name of the span the span operation returns.
//
// Deprecated: Use Span, the one name the SDK uses for this type.
type SpanDetail = Span

// DeployedEnvironment returns the span's environment from whichever place
// the server put it: the span itself, or else its variant.
func (s *Span) DeployedEnvironment() string {
	if s.Environment != "" {
		return s.Environment
	}
	return s.Variant.Environment
}

// Walk calls fn for s and each of its descendants, depth first and in order,
// with the depth of each (0 for s). Returning false from fn skips that
// span's children.
func (s *Span) Walk(fn func(span *Span, depth int) bool) {
	s.walk(fn, 0)
}

func (s *Span) walk(fn func(*Span, int) bool, depth int) {
	if !fn(s, depth) {
		return
	}
	for i := range s.Children {
		s.Children[i].walk(fn, depth+1)
	}
}

// Cost returns metadata.cost when the server recorded it as a number.
func (s *Span) Cost() (float64, bool) { return metadataNumber(s.Metadata, "cost") }

// Latency returns metadata.latency, in seconds, when the server recorded it
// as a number.
func (s *Span) Latency() (float64, bool) { return metadataNumber(s.Metadata, "latency") }

func metadataNumber(m map[string]any, key string) (float64, bool) {
	return Number(m[key])
}
