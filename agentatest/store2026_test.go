package agentatest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Deploy2026 works on a Server whose environments nothing has read yet:
// they are created on first use, as the service's account route seeds
// them (agenta fake deploys the demo before any request).
func TestDeploy2026BeforeAnyRequest(t *testing.T) {
	s := NewServer(WithGeneration(Generation2026))
	defer s.Close()
	demo := SeedDemo2026(s)
	assert.NotPanics(t, func() { s.Deploy2026(demo.RevisionID, "production") })
	s.mu.Lock()
	defer s.mu.Unlock()
	env := s.v26.env(&refIn{slug: "production"})
	if assert.NotNil(t, env) {
		assert.Equal(t, demo.RevisionID, env.deployed["capitals.revision"])
	}
}
