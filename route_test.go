package agenta

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FastAPI's route-level 404 matches ErrRouteNotFound and ErrNotFound on every
// operation, and its error says what to check.
func TestRouteNotFound(t *testing.T) {
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			c := gockClient(t)
			expect(op.method, op.path, op.query).replyJSON(404, `{"detail":"Not Found"}`)

			err := op.call(context.Background(), c)

			apiErr := requireAPIError(t, err, 404, op.method, op.path)
			assert.True(t, errors.Is(err, ErrRouteNotFound), "expected ErrRouteNotFound, got false: %v", err)
			assert.True(t, errors.Is(err, ErrNotFound), "expected ErrNotFound, got false: %v", err)
			assert.Equal(t, "Not Found", apiErr.Message, "Message keeps the server's text")
			want := "404 Not Found: the server has no route for this path; check that the base URL ends in the service's prefix, usually /api, and that the server's version has " + op.name
			assert.Contains(t, err.Error(), want)
			assertAllSent(t)
		})
	}
}

// Only FastAPI's exact route answer is a missing route; a 404 about a
// missing object is not.
func TestRouteNotFoundIsExact(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"FastAPI's answer", 404, `{"detail":"Not Found"}`, true},
		{"with whitespace", 404, " {\"detail\" : \"Not Found\"}\n", true},
		{"a missing object", 404, `{"detail":"404: App not found"}`, false},
		{"a missing variant", 404, `{"detail":"Variant with ID 'x' not found"}`, false},
		{"another field too", 404, `{"detail":"Not Found","hint":"x"}`, false},
		{"other case", 404, `{"detail":"not found"}`, false},
		{"plain text", 404, `Not Found`, false},
		{"empty", 404, ``, false},
		{"another status", 410, `{"detail":"Not Found"}`, false},
		{"a 500", 500, `{"detail":"Not Found"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newAPIError(tc.status, "GET", "/api/x", []byte(tc.body))
			assert.Equal(t, tc.want, errors.Is(err, ErrRouteNotFound), "errors.Is(%d %s, ErrRouteNotFound)", tc.status, tc.body)
			assert.Equal(t, tc.want, strings.Contains(err.Error(), "usually /api"), "the hint in %q", err)
			if tc.status == 404 {
				assert.True(t, errors.Is(err, ErrNotFound), "every 404 matches ErrNotFound")
			}
		})
	}
	assert.True(t, errors.Is(ErrRouteNotFound, ErrNotFound), "ErrRouteNotFound is a case of ErrNotFound")
	assert.False(t, errors.Is(ErrNotFound, ErrRouteNotFound), "ErrNotFound is not a case of ErrRouteNotFound")
}

// The reproduction: a base URL without /api against a server whose
// API lives under /api.
func TestBaseURLWithoutPrefixIsRouteNotFound(t *testing.T) {
	srv := agentatest.NewServer()
	t.Cleanup(srv.Close)
	root, ok := strings.CutSuffix(srv.URL(), "/api")
	require.True(t, ok, "the fake's URL %q should end in /api", srv.URL())
	c, err := NewClient(root)
	require.NoError(t, err)

	_, err = c.GetVariant(context.Background(), "0190b5a2-7c1e-7d3a-9f00-4b1d2c3e4f50")

	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrRouteNotFound), "expected ErrRouteNotFound, got %v", err)
	assert.Contains(t, err.Error(), "usually /api")
}
