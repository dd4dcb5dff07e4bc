package agenta_test

// The 2026 operations against agentatest's 2026 generation: every method,
// its errors, generation detection, WaitRun and the row builder end to end.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fake26Key = "ag26-test-key-SECRET"

// fake26 starts a 2026 fake with the demo seeded and a client for it.
func fake26(t *testing.T, opts ...agentatest.Option) (*agenta.Client, *agentatest.Server, agentatest.Demo2026) {
	t.Helper()
	opts = append([]agentatest.Option{agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey(fake26Key),
		agentatest.WithEvaluationPace(2 * time.Millisecond)}, opts...)
	srv := agentatest.NewTestServer(t, opts...)
	demo := agentatest.SeedDemo2026(srv)
	return clientFor(t, srv, agenta.WithAPIKey("ApiKey "+fake26Key), agenta.WithRetryWait(0, time.Millisecond)), srv, demo
}

// clientFor is the one builder of the external tests' Clients: a Client
// for the fake srv with short retry waits, whose idle connections close
// when the test ends. What a test needs beyond that (a key, other waits,
// timeouts) it passes as opts, which come last and so win.
func clientFor(t testing.TB, srv *agentatest.Server, opts ...agenta.Option) *agenta.Client {
	t.Helper()
	opts = append([]agenta.Option{agenta.WithRetryWait(time.Millisecond, 5*time.Millisecond)}, opts...)
	c, err := agenta.NewClient(srv.URL(), opts...)
	require.NoError(t, err, "NewClient(%q)", srv.URL())
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func ctx26(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// collect drains a sequence, failing the test on an error.
func collect[T any](t *testing.T, seq func(func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

func requireArg(t *testing.T, err error, name string) {
	t.Helper()
	var argErr *agenta.ArgumentError
	require.True(t, errors.As(err, &argErr), "expected an *ArgumentError, got %v", err)
	assert.Equal(t, name, argErr.Name)
	assert.True(t, errors.Is(err, agenta.ErrInvalidArgument))
}

func collectErr[T any](seq func(func(T, error) bool)) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

func first[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		return err
	}
	return nil
}
