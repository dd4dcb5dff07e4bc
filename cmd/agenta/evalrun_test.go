package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Provider keys never reach a 2026 server, which takes none: the command
// finds out which API the server speaks before it sends them in a 2024
// create. A mid-2024 server still gets them.
func TestProviderKeysNeverSentTo2026(t *testing.T) {
	const secret = "sk-provider-secret-1234567890"
	t.Setenv("OPENAI_API_KEY", secret)
	srv26 := fake2026(t)
	srv24 := agentatest.NewServer()
	t.Cleanup(srv24.Close)
	keyFile := fake2026KeyFile(t)
	for _, c := range []struct {
		ids  crossIDs
		key  string
		exit int
	}{{seedCross2026(srv26), keyFile, exitUsage}, {seedCross2024(srv24), "", exitOK}} {
		var mu sync.Mutex
		var sent []string
		u, err := url.Parse(c.ids.Host)
		require.NoError(t, err)
		p := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			mu.Lock()
			if strings.Contains(string(b), secret) {
				sent = append(sent, r.Method+" "+r.URL.Path)
			}
			mu.Unlock()
			p.ServeHTTP(w, r)
		}))
		t.Cleanup(proxy.Close)
		args := []string{"--host", proxy.URL + u.Path}
		if c.key != "" {
			args = append(args, "--api-key-file", c.key)
		}
		args = append(args, "eval", "run", "--app", c.ids.App, "--testset", c.ids.Testset, "--variant", c.ids.Variant,
			"--evaluator", c.ids.Evaluator, "--lm-provider-key", "OPENAI_API_KEY", "--interval", "100ms")
		code, out, errOut := runCommand(t, args...)
		assert.Equal(t, c.exit, code, "%s: %s", c.ids.Generation, errOut)
		if c.ids.Generation == "2026" {
			assert.Empty(t, sent, "requests that carried the provider key to the 2026 server")
			assert.Contains(t, errOut, "a 2026 server takes no provider keys")
		} else {
			assert.Equal(t, []string{"POST /api/evaluations"}, sent, "the 2024 create carries the key")
		}
		assert.NotContains(t, out+errOut, secret)
	}
}
