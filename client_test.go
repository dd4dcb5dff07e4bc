package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta/internal/sealed"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/h2non/gock.v1"
)

func TestNewClientRefusesBadInput(t *testing.T) {
	t.Parallel()
	secretKey := testKey
	for _, tc := range []struct {
		name string
		base string
		opts []Option
		want string // the refused argument, named in the error
	}{
		{"empty base URL", "", nil, "baseURL"},
		{"blank base URL", "   ", nil, "baseURL"},
		{"no scheme", "agenta.test/api", nil, "baseURL"},
		{"scheme-relative", "//agenta.test/api", nil, "baseURL"},
		{"ftp scheme", "ftp://agenta.test/api", nil, "baseURL"},
		{"mailto", "mailto:ops@agenta.test", nil, "baseURL"},
		{"no host", "https:///api", nil, "baseURL"},
		{"scheme only", "https://", nil, "baseURL"},
		{"port only", "http://:8080/api", nil, "baseURL"},
		{"bad port", "https://agenta.test:port/api", nil, "baseURL"},
		{"space in host", "https://agenta test/api", nil, "baseURL"},
		{"user info", "https://user:pw@agenta.test/api", nil, "baseURL"},
		{"query", "https://agenta.test/api?app_id=1", nil, "baseURL"},
		{"empty query", "https://agenta.test/api?", nil, "baseURL"},
		{"fragment", "https://agenta.test/api#top", nil, "baseURL"},
		{"control character", "https://agenta.test/a\npi", nil, "baseURL"},
		{"API key with CR LF", gockBase, []Option{WithAPIKey(secretKey + "\r\nX-Injected: 1")}, "WithAPIKey"},
		{"API key with LF", gockBase, []Option{WithAPIKey(secretKey + "\n")}, "WithAPIKey"},
		{"API key with CR", gockBase, []Option{WithAPIKey("\r" + secretKey)}, "WithAPIKey"},
		{"API key with NUL", gockBase, []Option{WithAPIKey(secretKey + "\x00")}, "WithAPIKey"},
		{"empty API key", gockBase, []Option{WithAPIKey("")}, "WithAPIKey"},
		{"empty header name", gockBase, []Option{WithHeader("", "v")}, "WithHeader"},
		{"header name with space", gockBase, []Option{WithHeader("X Session", "v")}, "WithHeader"},
		{"header name with colon", gockBase, []Option{WithHeader("X-Session:", "v")}, "WithHeader"},
		{"header value with LF", gockBase, []Option{WithHeader("Cookie", "s="+secretKey+"\nX: y")}, "WithHeader"},
		{"Host header", gockBase, []Option{WithHeader("Host", "evil.test")}, "WithHeader"},
		{"Content-Type header", gockBase, []Option{WithHeader("content-type", "text/plain")}, "WithHeader"},
		{"Content-Length header", gockBase, []Option{WithHeader("Content-Length", "1")}, "WithHeader"},
		{"nil HTTP client", gockBase, []Option{WithHTTPClient(nil)}, "WithHTTPClient"},
		{"empty user agent", gockBase, []Option{WithUserAgent(" ")}, "WithUserAgent"},
		{"user agent with LF", gockBase, []Option{WithUserAgent("me\nX: y")}, "WithUserAgent"},
		{"negative timeout", gockBase, []Option{WithTimeout(-time.Second)}, "WithTimeout"},
		{"negative idle timeout", gockBase, []Option{WithIdleTimeout(-time.Second)}, "WithIdleTimeout"},
		{"negative retries", gockBase, []Option{WithMaxRetries(-1)}, "WithMaxRetries"},
		{"absurd retries", gockBase, []Option{WithMaxRetries(1000)}, "WithMaxRetries"},
		{"negative min wait", gockBase, []Option{WithRetryWait(-time.Second, time.Second)}, "WithRetryWait"},
		{"max wait below min", gockBase, []Option{WithRetryWait(2*time.Second, time.Second)}, "WithRetryWait"},
		{"nil option", gockBase, []Option{nil}, "opts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(tc.base, tc.opts...)

			assert.Nil(t, c)
			requireArgumentError(t, err, tc.want)
			assertNoSecret(t, "error string", err.Error())
			assert.NotContains(t, err.Error(), "pw", "the base URL's password must not be echoed")
		})
	}
}

// NewClient does no network I/O: it succeeds for a host that does not
// resolve, and sends nothing.
func TestNewClientDoesNoIO(t *testing.T) {
	c := gockClient(t)
	assert.NotNil(t, c)
	assertNothingUnmatched(t)

	c, err := NewClient("https://no-such-host.invalid/api", WithAPIKey(testKey))
	require.NoError(t, err)
	assert.Equal(t, "https://no-such-host.invalid/api", c.BaseURL())
}

// Every operation path resolves under the base URL's path prefix, with or
// without a trailing slash.
func TestBaseURLPrefix(t *testing.T) {
	for _, tc := range []struct {
		base, wantBase, wantPath string
	}{
		{"https://agenta.test/api", "https://agenta.test/api", "/api/variants/v"},
		{"https://agenta.test/api/", "https://agenta.test/api", "/api/variants/v"},
		{"https://agenta.test/api//", "https://agenta.test/api", "/api/variants/v"},
		{"https://agenta.test", "https://agenta.test", "/variants/v"},
		{"https://agenta.test/", "https://agenta.test", "/variants/v"},
		{"https://agenta.test/eu/agenta/api", "https://agenta.test/eu/agenta/api", "/eu/agenta/api/variants/v"},
		{"https://agenta.test/my%20api", "https://agenta.test/my%20api", "/my%20api/variants/v"},
		{"HTTPS://agenta.test/api", "https://agenta.test/api", "/api/variants/v"},
	} {
		t.Run(tc.base, func(t *testing.T) {
			c, err := gockClientAt(t, tc.base, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.wantBase, c.BaseURL())
			expect("GET", tc.wantPath, "").replyJSON(200, `{"variant_id":"v"}`)

			v, err := c.GetVariant(context.Background(), "v")

			require.NoError(t, err)
			assert.Equal(t, "v", v.VariantID)
			assertAllSent(t)
		})
	}
	t.Run("every operation keeps the prefix", func(t *testing.T) {
		for _, op := range operations() {
			c := gockClient(t)
			require.True(t, strings.HasPrefix(op.path, "/api/"), op.path)
			expect(op.method, op.path, op.query).replyJSON(200, okBody(op.name))
			require.NoError(t, op.call(context.Background(), c), op.name)
			assertAllSent(t)
		}
	})
}

// The test matcher itself is exact: a lost prefix, a prefix of the id or an
// unescaped id does not match, where gock's own regexp matcher would.
func TestExactMatcherRefusesNearMisses(t *testing.T) {
	for _, tc := range []struct {
		name, base, id, mockPath string
	}{
		{"lost prefix", "https://agenta.test", "v", "/api/variants/v"},
		{"id is a prefix", gockBase, "10", "/api/variants/1"},
		{"unescaped slash", gockBase, "a/b", "/api/variants/a/b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := gockClientAt(t, tc.base, nil, WithMaxRetries(0))
			require.NoError(t, err)
			expect("GET", tc.mockPath, "").replyJSON(200, `{}`)

			_, err = c.GetVariant(context.Background(), tc.id)

			require.Error(t, err, "expected the request not to match %s", tc.mockPath)
			assert.True(t, gock.HasUnmatchedRequest())
			assert.False(t, gock.IsDone())
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	assert.Regexp(t, regexp.MustCompile(`^\d+\.\d+\.\d+`), Version)
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			c := gockClient(t, WithHeader("Cookie", "sessionId=abc"), WithHeader("X-Trace", "t1"))
			e := expect(op.method, op.path, op.query)
			e.replyJSON(200, okBody(op.name))

			require.NoError(t, op.call(context.Background(), c))

			h := e.only(t).Header
			assert.Equal(t, "application/json", h.Get("Accept"))
			assert.Equal(t, "agenta-go/"+Version, h.Get("User-Agent"))
			assert.Equal(t, []string{testKey}, h.Values("Authorization"), "the key is sent verbatim, once, without a prefix")
			assert.Equal(t, "sessionId=abc", h.Get("Cookie"))
			assert.Equal(t, "t1", h.Get("X-Trace"))
			if op.method == "POST" {
				assert.Equal(t, "application/json", h.Get("Content-Type"), "a request with a body declares it")
				assert.NotEmpty(t, e.only(t).Body)
			} else {
				assert.Empty(t, h.Values("Content-Type"), "a request without a body has no Content-Type")
				assert.Empty(t, e.only(t).Body)
			}
			assertAllSent(t)
		})
	}
	t.Run("custom user agent and bearer token", func(t *testing.T) {
		c := gockClient(t, WithUserAgent("my-app/2.0"), WithAPIKey("Bearer eyJhbGciOi.x.y"))
		e := expect("GET", "/api/variants/v", "")
		e.replyJSON(200, `{}`)
		_, err := c.GetVariant(context.Background(), "v")
		require.NoError(t, err)
		assert.Equal(t, "my-app/2.0", e.only(t).Header.Get("User-Agent"))
		assert.Equal(t, "Bearer eyJhbGciOi.x.y", e.only(t).Header.Get("Authorization"))
		assertAllSent(t)
	})
	t.Run("no key, no Authorization", func(t *testing.T) {
		gock.OffAll()
		gock.Intercept()
		t.Cleanup(gock.OffAll)
		hc := &http.Client{}
		gock.InterceptClient(hc)
		c, err := NewClient(gockBase, WithHTTPClient(hc))
		require.NoError(t, err)
		e := expect("GET", "/api/variants/v", "")
		e.replyJSON(200, `{}`)
		_, err = c.GetVariant(context.Background(), "v")
		require.NoError(t, err)
		assert.Empty(t, e.only(t).Header.Values("Authorization"))
		assertAllSent(t)
	})
}

// idOperations are the operations with an id in the path.
var idOperations = []struct {
	name   string
	prefix string
	suffix string
	call   func(c *Client, id string) error
}{
	{"FetchEvaluationScenarios", "/api/evaluations/", "/evaluation_scenarios", func(c *Client, id string) error {
		_, err := c.FetchEvaluationScenarios(context.Background(), id)
		return err
	}},
	{"GetVariant", "/api/variants/", "", func(c *Client, id string) error {
		_, err := c.GetVariant(context.Background(), id)
		return err
	}},
	{"GetSpan", "/api/observability/spans/", "/", func(c *Client, id string) error {
		_, err := c.GetSpan(context.Background(), id, nil)
		return err
	}},
	{"FetchEvaluation", "/api/evaluations/", "", func(c *Client, id string) error {
		_, err := c.FetchEvaluation(context.Background(), id)
		return err
	}},
	{"FetchEvaluationStatus", "/api/evaluations/", "/status", func(c *Client, id string) error {
		_, err := c.FetchEvaluationStatus(context.Background(), id)
		return err
	}},
}

func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	c, err := NewClient(gockBase, WithAPIKey(testKey), WithHeader("Cookie", "s="+testKey))
	require.NoError(t, err)
	ev := validNewEvaluation()
	ev.LMProvidersKeys = models.NewProviderKeys(map[string]string{models.OpenAIAPIKey: testProviderKey, models.AnthropicAPIKey: "sk-ant-SECRET-2"})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		for name, v := range map[string]any{
			"*Client":         c,
			"Client":          *c,
			"NewEvaluation":   ev,
			"*NewEvaluation":  &ev,
			"[]NewEvaluation": []models.NewEvaluation{ev},
			"ProviderKeys":    ev.LMProvidersKeys,
			"map in any":      map[string]any{"ev": ev},
		} {
			out := fmt.Sprintf(verb, v)
			assertNoSecret(t, verb+" of "+name, out)
			assert.NotContains(t, out, "sk-ant", "%s of %s", verb, name)
		}
	}
	assert.Contains(t, fmt.Sprintf("%v", ev), "OPENAI_API_KEY:[REDACTED]", "key names stay visible")
	assert.Contains(t, fmt.Sprintf("%v", c), gockBase)
	assert.Contains(t, fmt.Sprintf("%+v", ev), "app-1", "the rest of the request is printed")

	// A request encoded as JSON (as slog's JSON handler does) hides them;
	// what CreateEvaluation sends holds them (TestCreateEvaluation checks
	// the wire).
	encoded, err := jsonMarshal(ev)
	require.NoError(t, err)
	assertNoSecret(t, "JSON of NewEvaluation", encoded)
	assert.Contains(t, encoded, `"OPENAI_API_KEY":"[REDACTED]"`)
	body, err := jsonMarshal(newEvaluationBody{NewEvaluation: ev, LMProvidersKeys: sealed.ProviderKeys(ev.LMProvidersKeys)})
	require.NoError(t, err)
	assert.Contains(t, body, testProviderKey)
	assert.Contains(t, body, "sk-ant-SECRET-2")
	assert.Equal(t, 1, strings.Count(body, "lm_providers_keys"), "one lm_providers_keys in %s", body)
}

// The Client is safe for concurrent use (run with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	rec, logger := newLogRecorder()
	mux, c := setup(t, WithLogger(logger), WithMaxRetries(1))
	mux.HandleFunc("GET /variants/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"variant_id":%q}`, r.PathValue("id"))
	})
	mux.HandleFunc("GET /human-evaluations", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `[{"app_id":%q}]`, r.URL.Query().Get("app_id"))
	})
	mux.HandleFunc("POST /evaluations", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	})

	var wg sync.WaitGroup
	errs := make(chan error, 32*3)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("v%d", g)
			v, err := c.GetVariant(context.Background(), id)
			if err != nil || v.VariantID != id {
				errs <- fmt.Errorf("GetVariant(%s): %v, %+v", id, err, v)
			}
			hs, err := c.ListHumanEvaluations(context.Background(), id)
			if err != nil || len(hs) != 1 || hs[0].AppID != id {
				errs <- fmt.Errorf("ListHumanEvaluations(%s): %v, %+v", id, err, hs)
			}
			_, err = c.CreateEvaluation(context.Background(), validNewEvaluation())
			if !errors.Is(err, ErrRateLimited) {
				errs <- fmt.Errorf("CreateEvaluation: expected ErrRateLimited, got %v", err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Len(t, rec.lines(), 32*4, "one log line per attempt: 2 reads + 2 creates per goroutine")
}

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type nopJar struct{}

func (*nopJar) SetCookies(*url.URL, []*http.Cookie) {}
func (*nopJar) Cookies(*url.URL) []*http.Cookie     { return nil }

// The accessors of a nil Client do not panic.
func TestNilClientAccessors(t *testing.T) {
	var c *Client
	assert.NotPanics(t, func() {
		assert.Equal(t, "", c.BaseURL())
		c.CloseIdleConnections()
		(&Client{}).CloseIdleConnections()
	})
}

// Each Client built without WithHTTPClient has its own pool, so one
// Client's open streams never hold up another's calls.
func TestClientsHaveTheirOwnTransport(t *testing.T) {
	t.Parallel()
	a, err := NewClient("https://agenta.test/api")
	require.NoError(t, err)
	b, err := NewClient("https://agenta.test/api")
	require.NoError(t, err)
	ta := a.http.Transport.(poolKeeper).next
	tb := b.http.Transport.(poolKeeper).next
	assert.NotSame(t, ta, tb)
	assert.Equal(t, 64, ta.(*http.Transport).MaxConnsPerHost)
}

func TestNewClientFromEnv(t *testing.T) {
	const key = "ag-env-key-0123456789abcdef"
	tests := []struct {
		name     string
		host     string // "-" leaves AGENTA_HOST unset
		key      string // "-" leaves AGENTA_API_KEY unset
		opts     []Option
		wantBase string
		wantAuth string
		wantErr  string // a part of the error; "" means no error
	}{
		{name: "host without a path gets /api", host: "https://cloud.agenta.ai", key: "-",
			wantBase: "https://cloud.agenta.ai/api"},
		{name: "host with only a slash gets /api", host: "http://127.0.0.1:8080/", key: "-",
			wantBase: "http://127.0.0.1:8080/api"},
		{name: "host with /api is kept", host: "https://agenta.example.com/api/", key: "-",
			wantBase: "https://agenta.example.com/api"},
		{name: "host with another path is kept", host: "https://example.com/agenta/api", key: "-",
			wantBase: "https://example.com/agenta/api"},
		{name: "key is sent verbatim", host: "https://cloud.agenta.ai", key: key,
			wantBase: "https://cloud.agenta.ai/api", wantAuth: key},
		{name: "empty key sends no header", host: "https://cloud.agenta.ai", key: "",
			wantBase: "https://cloud.agenta.ai/api"},
		{name: "WithAPIKey overrides the key", host: "https://cloud.agenta.ai", key: key,
			opts:     []Option{WithAPIKey("ag-option-key-0123456789")},
			wantBase: "https://cloud.agenta.ai/api", wantAuth: "ag-option-key-0123456789"},
		{name: "an Authorization header overrides the key", host: "https://cloud.agenta.ai", key: key,
			opts:     []Option{WithHeader("Authorization", "Bearer jwt-0123456789")},
			wantBase: "https://cloud.agenta.ai/api", wantAuth: "Bearer jwt-0123456789"},
		{name: "WithBaseURL overrides the host", host: "https://cloud.agenta.ai", key: "-",
			opts:     []Option{WithBaseURL("http://127.0.0.1:9/prefix/api")},
			wantBase: "http://127.0.0.1:9/prefix/api"},
		{name: "WithBaseURL stands in for a missing host", host: "-", key: "-",
			opts:     []Option{WithBaseURL("http://127.0.0.1:9/api")},
			wantBase: "http://127.0.0.1:9/api"},
		{name: "missing host", host: "-", key: key,
			wantErr: "AGENTA_HOST: is not set; set it to your server's URL"},
		{name: "empty host", host: "", key: "-",
			wantErr: "AGENTA_HOST: is not set"},
		{name: "bad host is named", host: "ftp://example.com", key: "-",
			wantErr: `AGENTA_HOST: must use http or https, got scheme "ftp"`},
		{name: "bad WithBaseURL is named", host: "https://cloud.agenta.ai", key: "-",
			opts:    []Option{WithBaseURL("ftp://example.com")},
			wantErr: `WithBaseURL: must use http or https`},
		{name: "key with a newline is refused without echoing it", host: "https://cloud.agenta.ai", key: key + "\n",
			wantErr: "AGENTA_API_KEY: contains CR, LF or another control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setenv(t, "AGENTA_HOST", tt.host)
			setenv(t, "AGENTA_API_KEY", tt.key)
			c, err := NewClientFromEnv(tt.opts...)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("NewClientFromEnv() = %v, want an error containing %q", c, tt.wantErr)
				}
				if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewClientFromEnv() error = %q, want ErrInvalidArgument containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), key) {
					t.Fatalf("error %q shows the API key", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewClientFromEnv() error = %v, want none", err)
			}
			if got := c.BaseURL(); got != tt.wantBase {
				t.Errorf("BaseURL() = %q, want %q", got, tt.wantBase)
			}
			if got := c.header.Get("Authorization"); got != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", got, tt.wantAuth)
			}
			if n := len(c.header.Values("Authorization")); n > 1 {
				t.Errorf("%d Authorization headers, want at most 1", n)
			}
		})
	}
}

// TestNewClientFromEnvSendsNoHeaderWithoutKey checks on the wire that an
// unset AGENTA_API_KEY sends no Authorization header at all, where
// WithAPIKey(os.Getenv(...)) would have refused the empty key.
func TestNewClientFromEnvSendsNoHeaderWithoutKey(t *testing.T) {
	var got []string
	var seen bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, seen = r.Header.Values("Authorization"), true
		if r.URL.Path != "/api/variants/v1" {
			t.Errorf("path = %q, want /api/variants/v1", r.URL.Path)
		}
		w.Write([]byte(`{"variant_id":"v1"}`))
	}))
	t.Cleanup(srv.Close)
	setenv(t, "AGENTA_HOST", srv.URL)
	setenv(t, "AGENTA_API_KEY", "-")
	c, err := NewClientFromEnv()
	if err != nil {
		t.Fatalf("NewClientFromEnv() error = %v", err)
	}
	if _, err := c.GetVariant(context.Background(), "v1"); err != nil {
		t.Fatalf("GetVariant() error = %v", err)
	}
	if !seen || len(got) != 0 {
		t.Fatalf("request seen %v with Authorization %q, want one request without the header", seen, got)
	}
}

// setenv sets name to value for the test, or unsets it when value is "-".
func setenv(t *testing.T, name, value string) {
	t.Helper()
	t.Setenv(name, value) // restores the old value after the test
	if value == "-" {
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
	}
}

// A credential in AGENTA_HOST (user information, a query) never shows in
// the refusal, however the URL is malformed.
func TestHostCredentialsNeverShown(t *testing.T) {
	for _, host := range []string{
		"https://admin:pw-SECRET@cloud.example/api",
		"https://tok-SECRET@cloud.example",
		"http://127.0.0.1:8080/api?api_key=SECRET",
		"http://127.0.0.1:8080/api?SECRET",
		"http://127.0.0.1:8080/api#SECRET",
		"http://u:SECRET@[::1",
		"http://u:p%zzSECRET@host/api",
		"http://u:SECRET@host:port/api",
		"u:SECRET@host/api",
		"host:8080/api?key=SECRET",
		// A password with a character that ends the authority, unescaped.
		"https://user:SE/CRET@cloud.example/api",
		"https://user:1234/SECRET@cloud.example/api",
		"https://tok/SECRET@cloud.example/api",
		"https://user:SE#CRET@cloud.example/api",
		"https://user:SE?CRET@cloud.example/api",
	} {
		t.Setenv("AGENTA_HOST", host)
		_, err := NewClientFromEnv()
		if err == nil {
			t.Errorf("AGENTA_HOST=%q: accepted, want a refusal", host)
			continue
		}
		if strings.Contains(err.Error(), "CRET") { // SECRET, or the end of SE/CRET
			t.Errorf("AGENTA_HOST=%q: %q shows the credential", host, err)
		}
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("AGENTA_HOST=%q: %v, want ErrInvalidArgument", host, err)
		}
	}
}
