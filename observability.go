package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// may be nil. For a Type the service does not implement it answers an empty
// list, which GetSpan reports as an error matching ErrNotFound.
func (c *Client) GetSpan(ctx context.Context, spanID string, opts *GetSpanOptions) (*models.Span, error) {
	id, err := segment("spanID", "span_id", spanID)
	if err != nil {
		return nil, err
	}
	r := &request{operation: "GetSpan", method: http.MethodGet, path: "/observability/spans/" + id + "/"}
	if opts != nil {
		r.query = opts
	}
	span, err := getOne[models.Span](ctx, c, r)
	if answeredList(err) && opts != nil {
		// The service answers [] for a type it does not implement.
		return nil, fmt.Errorf("agenta: no span of type %q (the service implements only %q): %w: %w",
			opts.Type, "generation", ErrNotFound, err)
	}
	return span, err
}

// answeredList reports a DecodeError for a JSON array where one object was
// expected.
func answeredList(err error) bool {
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, new(*DecodeError)) && errors.As(err, &typeErr) &&
		typeErr.Value == "array" && typeErr.Field == ""
}
