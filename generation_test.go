package agenta_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGenerationDetected(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  agentatest.Generation
		want agenta.Generation
	}{
		{"2024", agentatest.Generation2024, agenta.Generation2024},
		{"2026", agentatest.Generation2026, agenta.Generation2026},
		{"both", agentatest.GenerationBoth, agenta.Generation2026},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentatest.NewTestServer(t, agentatest.WithGeneration(tc.gen))
			c := clientFor(t, srv, agenta.WithAPIKey("k"))
			for range 3 {
				g, err := c.Generation(ctx26(t))
				require.NoError(t, err)
				assert.Equal(t, tc.want, g)
			}
			probes := 0
			for _, r := range srv.Requests() {
				if strings.HasSuffix(r.Path, "/evaluations/runs/00000000-0000-0000-0000-000000000000") {
					probes++
				}
			}
			assert.Equal(t, 1, probes, "the generation is detected once per client")
		})
	}
}

func TestGenerationFailedProbeIsNotCached(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithGeneration(agentatest.Generation2026))
	c := clientFor(t, srv, agenta.WithAPIKey("k"), agenta.WithMaxRetries(0))
	srv.InjectFault(agentatest.OpFetchRun, 1, agentatest.Fault{Status: 503})
	_, err := c.Generation(ctx26(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "detecting the server's API generation")
	assert.Contains(t, err.Error(), "AGENTA_API_GENERATION")
	assert.True(t, errors.Is(err, agenta.ErrServer), "the answer stays in the chain: %v", err)
	g, err := c.Generation(ctx26(t))
	require.NoError(t, err, "a failed probe is not remembered")
	assert.Equal(t, agenta.Generation2026, g)

	// Without a credential, v0.113 answers 401: no generation, no cache.
	anon := clientFor(t, srv)
	_, err = anon.Generation(ctx26(t))
	assert.True(t, errors.Is(err, agenta.ErrUnauthorized), "got %v", err)
}

func TestGenerationConcurrentCallsShareOneProbe(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithGeneration(agentatest.Generation2026))
	c := clientFor(t, srv, agenta.WithAPIKey("k"))
	srv.InjectFault(agentatest.OpFetchRun, 1, agentatest.Fault{Stall: 200 * time.Millisecond})
	var wg sync.WaitGroup
	got := make([]agenta.Generation, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = c.Generation(ctx26(t))
		}()
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		assert.Equal(t, agenta.Generation2026, got[i])
	}
	assert.Len(t, srv.RequestsFor(agentatest.OpFetchRun), 1, "eight first calls, one probe")
}

func TestGenerationSetExplicitly(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithGeneration(agentatest.Generation2026))
	c := clientFor(t, srv, agenta.WithGeneration(agenta.Generation2024))
	g, err := c.Generation(ctx26(t))
	require.NoError(t, err)
	assert.Equal(t, agenta.Generation2024, g, "WithGeneration wins over the server")
	assert.Empty(t, srv.Requests(), "no probe is sent")

	_, err = agenta.NewClient(srv.URL(), agenta.WithGeneration(agenta.Generation(7)))
	assert.True(t, errors.Is(err, agenta.ErrInvalidArgument))

	t.Setenv("AGENTA_HOST", srv.URL())
	t.Setenv("AGENTA_API_GENERATION", "2026")
	c, err = agenta.NewClientFromEnv()
	require.NoError(t, err)
	g, err = c.Generation(ctx26(t))
	require.NoError(t, err)
	assert.Equal(t, agenta.Generation2026, g)
	assert.Empty(t, srv.Requests())

	t.Setenv("AGENTA_API_GENERATION", "2025")
	_, err = agenta.NewClientFromEnv()
	var argErr *agenta.ArgumentError
	require.True(t, errors.As(err, &argErr), "got %v", err)
	assert.Equal(t, "AGENTA_API_GENERATION", argErr.Name)

	t.Setenv("AGENTA_API_GENERATION", "auto")
	c, err = agenta.NewClientFromEnv(agenta.WithAPIKey("k"))
	require.NoError(t, err)
	g, err = c.Generation(ctx26(t))
	require.NoError(t, err)
	assert.Equal(t, agenta.Generation2026, g, "auto detects")
}
