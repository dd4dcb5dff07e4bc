package main

import (
	"testing"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
)

// TestHostURL checks the server URL from --host or AGENTA_HOST.
func TestHostURL(t *testing.T) {
	tests := []struct {
		flag, env, want string
		usage           bool
	}{
		{"", "https://cloud.agenta.ai", "https://cloud.agenta.ai/api", false},
		{"", "https://cloud.agenta.ai/", "https://cloud.agenta.ai/api", false},
		{"", "http://127.0.0.1:8080/api", "http://127.0.0.1:8080/api", false},
		{"", "http://host/prefix/api", "http://host/prefix/api", false},
		{"http://flag:1", "http://env:2/api", "http://flag:1/api", false},
		{"", "", "", true},
		{"", "cloud.agenta.ai", "", true},
	}
	for _, tt := range tests {
		f, _, _ := testFactory()
		f.Host = tt.flag
		f.getenv = func(name string) string {
			if name == "AGENTA_HOST" {
				return tt.env
			}
			return ""
		}
		got, err := f.hostURL()
		if tt.usage {
			if exitCode(err) != exitUsage {
				t.Errorf("--host %q, AGENTA_HOST %q: error %v, want a usage error", tt.flag, tt.env, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("--host %q, AGENTA_HOST %q: got %q, %v; want %q", tt.flag, tt.env, got, err, tt.want)
		}
	}
}

// --generation auto wins over AGENTA_API_GENERATION, as every flag wins
// over its variable.
func TestGenerationFlagAutoWinsOverEnv(t *testing.T) {
	srv := fake2026(t)
	demo := agentatest.SeedDemo2026(srv)
	t.Setenv("AGENTA_API_GENERATION", "2024")
	t.Setenv("AGENTA_API_KEY", "k26")
	code, out, errOut := runCommand(t, "--host", srv.URL(), "--generation", "auto", "variant", "get", demo.VariantID)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, demo.VariantID)
}
