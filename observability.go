package agenta

import (
	"context"
	"net/http"

	"github.com/agenta-go/agenta/models"
)

// GetSpanOptions are the optional query parameters of GetSpan.
type GetSpanOptions struct {
	// Type selects the kind of span. Empty means the server's default,
	// "generation", the only type the service implements.
	Type string `url:"type,omitempty"`
}

// GetSpan returns a span of a trace with its child spans, recursively. opts
// may be nil.
func (c *Client) GetSpan(ctx context.Context, spanID string, opts *GetSpanOptions) (*models.Span, error) {
	id, err := segment("spanID", "span_id", spanID)
	if err != nil {
		return nil, err
	}
	r := &request{method: http.MethodGet, path: "/observability/spans/" + id + "/"}
	if opts != nil {
		r.query = opts
	}
	return getOne[models.Span](ctx, c, r)
}
