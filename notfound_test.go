package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each of the service's not-found-as-500 texts matches ErrNotFound on its
// own operation, and only there; ErrServer matches everywhere.
func TestNotFoundAs500(t *testing.T) {
	for _, op := range operations() {
		for _, answer := range notFoundAnswers {
			for _, prefix := range []string{"", "500: "} {
				t.Run(op.name+"/"+prefix+answer.message, func(t *testing.T) {
					c := gockClient(t)
					body, _ := json.Marshal(map[string]string{"detail": prefix + answer.message})
					expect(op.method, op.path, op.query).replyJSON(500, string(body))

					err := op.call(context.Background(), c)

					apiErr := requireAPIError(t, err, 500, op.method, op.path)
					assert.Equal(t, op.name, apiErr.Operation, "Operation")
					assert.Equal(t, answer.message, apiErr.Message, "Message")
					assert.True(t, errors.Is(err, ErrServer), "expected ErrServer to match a 500, got false: %v", err)
					own := answer.operation == op.name
					assert.Equal(t, own, errors.Is(err, ErrNotFound),
						"errors.Is(err, ErrNotFound) for %q on %s: want %v", answer.message, op.name, own)
					if own {
						assert.Contains(t, err.Error(), answer.missing+" does not exist", "the error says what is missing")
					}
					assertAllSent(t) // a 500 is never retried
				})
			}
		}
	}
}

// Operation and Message decide, so that an APIError a caller builds in a
// fake behaves as the SDK's own.
func TestNotFoundAs500Fields(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *APIError
		want bool
	}{
		{"the SDK's answer", &APIError{StatusCode: 500, Operation: "GetVariant", Message: "'NoneType' object has no attribute 'base_id'"}, true},
		{"another operation", &APIError{StatusCode: 500, Operation: "GetSpan", Message: "'NoneType' object has no attribute 'base_id'"}, false},
		{"no operation", &APIError{StatusCode: 500, Message: "App Variant not found"}, false},
		{"another status", &APIError{StatusCode: 502, Operation: "GetVariantByEnvironment", Message: "App Variant not found"}, false},
		{"another text", &APIError{StatusCode: 500, Operation: "AddVariantFromBase", Message: "App variant with the same name already exists"}, false},
		{"a plain 404", &APIError{StatusCode: 404}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, errors.Is(tc.err, ErrNotFound), "errors.Is(%+v, ErrNotFound)", *tc.err)
		})
	}
}

// docs/errors.md lists the table, with each operation.
func TestNotFoundTableDocumented(t *testing.T) {
	page, err := os.ReadFile("docs/errors.md")
	require.NoError(t, err)
	for _, a := range notFoundAnswers {
		row := "| `" + a.operation + "` | `" + a.message + "` |"
		assert.True(t, strings.Contains(string(page), row), "docs/errors.md lacks the row %q", row)
	}
}
