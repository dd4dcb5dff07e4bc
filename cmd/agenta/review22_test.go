package main

// Acceptance review of issue 22: the command on a 2026 server.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notFoundOn serves srv through a proxy that answers FastAPI's 404 Not
// Found on the paths ending in suffix, and counts the requests whose path
// ends in count.
func notFoundOn(t *testing.T, srv *agentatest.Server, suffix, count string) (string, *atomic.Int32) {
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	p := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	var n atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, count) {
			n.Add(1)
		}
		if strings.HasSuffix(r.URL.Path, suffix) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"detail":"Not Found"}`)
			return
		}
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL + u.Path, &n
}

// A command told the server speaks 2026 that meets a missing route after
// a create is not run again: the fork would be sent twice (and the second
// answer, "the slug is taken", would hide what went wrong). Left to
// detect, the command runs again only after its 2024 request found no
// route, which created nothing.
func TestToldGenerationNeverRunsTwice(t *testing.T) {
	srv := agentatest.NewServer(agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey("k26"))
	t.Cleanup(srv.Close)
	demo := agentatest.SeedDemo2026(srv)
	keyFile := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(keyFile, []byte("k26\n"), 0o600))
	host, forks := notFoundOn(t, srv, "/applications/revisions/commit", "/applications/variants/fork")
	for _, gen := range []string{"2026", "auto"} {
		forks.Store(0)
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"--host", host, "--api-key-file", keyFile, "--generation", gen,
			"variant", "fork", demo.ApplicationID, "--name", "candidate-" + gen, "--set", "temperature=0.1"},
			&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		assert.Equal(t, exitService, code, "--generation %s: %s", gen, errOut.String())
		assert.Equal(t, int32(1), forks.Load(), "--generation %s: forks sent", gen)
		assert.Contains(t, errOut.String(), "was forked, but its new parameters were not committed", "--generation %s", gen)
	}
}

// --generation auto wins over AGENTA_API_GENERATION, as every flag wins
// over its variable.
func TestGenerationFlagAutoWinsOverEnv(t *testing.T) {
	srv := agentatest.NewServer(agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey("k26"))
	t.Cleanup(srv.Close)
	demo := agentatest.SeedDemo2026(srv)
	t.Setenv("AGENTA_API_GENERATION", "2024")
	t.Setenv("AGENTA_API_KEY", "k26")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--host", srv.URL(), "--generation", "auto", "variant", "get", demo.VariantID},
		&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	assert.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), demo.VariantID)
}

// Provider keys never reach a 2026 server, which takes none: the command
// finds out which API the server speaks before it sends them in a 2024
// create. A mid-2024 server still gets them.
func TestProviderKeysNeverSentTo2026(t *testing.T) {
	const secret = "sk-provider-secret-1234567890"
	t.Setenv("OPENAI_API_KEY", secret)
	srv26 := agentatest.NewServer(agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey("k26"))
	t.Cleanup(srv26.Close)
	srv24 := agentatest.NewServer()
	t.Cleanup(srv24.Close)
	keyFile := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(keyFile, []byte("k26\n"), 0o600))
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
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		assert.Equal(t, c.exit, code, "%s: %s", c.ids.Generation, errOut.String())
		if c.ids.Generation == "2026" {
			assert.Empty(t, sent, "requests that carried the provider key to the 2026 server")
			assert.Contains(t, errOut.String(), "a 2026 server takes no provider keys")
		} else {
			assert.Equal(t, []string{"POST /api/evaluations"}, sent, "the 2024 create carries the key")
		}
		assert.NotContains(t, out.String()+errOut.String(), secret)
	}
}

// variant get shows the app's URL without the credentials it may carry
// (a 2026 revision's data.url is the URL the service calls).
func TestVariantURLCredentialsHidden(t *testing.T) {
	srv := agentatest.NewServer(agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey("k26"))
	t.Cleanup(srv.Close)
	app := srv.AddApplication2026(agentatest.Application2026{Slug: "capitals",
		URL: "http://user:hostpass-0123456789@127.0.0.1:19080/app?token=tok-0123456789abcdef", Parameters: map[string]any{"t": 1}})
	t.Setenv("AGENTA_API_KEY", "k26")
	for _, o := range []string{"table", "json"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"--host", srv.URL(), "variant", "get", app.VariantID, "-o", o},
			&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		require.Equal(t, exitOK, code, errOut.String())
		assert.Contains(t, out.String(), "http://***@127.0.0.1:19080/app?token=***", "-o %s", o)
		assert.NotContains(t, out.String(), "hostpass", "-o %s", o)
		assert.NotContains(t, out.String(), "tok-0123456789abcdef", "-o %s", o)
	}
}
