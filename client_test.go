package agenta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
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

// Each id is escaped as exactly one path segment, so no id reaches another
// endpoint.
func TestIDsAreEscapedAsOneSegment(t *testing.T) {
	for _, tc := range []struct{ id, segment string }{
		{"plain-id_1", "plain-id_1"},
		{"a/b", "a%2Fb"},
		{"../../admin", "..%2F..%2Fadmin"},
		{"a?b=c", "a%3Fb=c"},
		{"a#frag", "a%23frag"},
		{"100%", "100%25"},
		{"%2F", "%252F"},
		{"a b", "a%20b"},
		{"a..b", "a..b"},
		{"...", "..."},
		{"a;b", "a%3Bb"},
		{"a+b", "a+b"},
		{"über", "%C3%BCber"},
		{"/", "%2F"},
		{"\\..\\x", "%5C..%5Cx"},
	} {
		for _, op := range idOperations {
			t.Run(op.name+"/"+tc.id, func(t *testing.T) {
				c := gockClient(t, WithMaxRetries(0))
				path := op.prefix + tc.segment + op.suffix
				expect("GET", path, "").replyJSON(200, okBody(op.name))

				require.NoError(t, op.call(c, tc.id), "expected a request to %s", path)
				assertAllSent(t)
				assert.NotContains(t, tc.segment, "/", "one segment")
				got, err := url.PathUnescape(tc.segment)
				require.NoError(t, err)
				assert.Equal(t, tc.id, got, "the segment decodes back to the id")
			})
		}
	}
}

// Empty or meaningless ids are refused before anything is sent.
func TestMeaninglessIDsAreRefused(t *testing.T) {
	bad := []string{"", " ", "\t\n", ".", "..", "a\nb", "a\rb", "a\x00b", "a\x7fb"}
	type refusal struct {
		name, arg string
		inPath    bool
		call      func(c *Client, v string) error
	}
	var cases []refusal
	for _, op := range idOperations {
		cases = append(cases, refusal{op.name, map[string]string{
			"FetchEvaluationScenarios": "evaluationID", "GetVariant": "variantID", "GetSpan": "spanID",
			"FetchEvaluation": "evaluationID", "FetchEvaluationStatus": "evaluationID",
		}[op.name], true, op.call})
	}
	cases = append(cases,
		refusal{"GetVariantByEnvironment(app)", "appID", false, func(c *Client, v string) error {
			_, err := c.GetVariantByEnvironment(context.Background(), v, "production")
			return err
		}},
		refusal{"GetVariantByEnvironment(env)", "environment", false, func(c *Client, v string) error {
			_, err := c.GetVariantByEnvironment(context.Background(), "app-1", v)
			return err
		}},
		refusal{"WaitEvaluation", "evaluationID", true, func(c *Client, v string) error {
			_, err := c.WaitEvaluation(context.Background(), v, nil)
			return err
		}},
		refusal{"ListHumanEvaluations", "appID", false, func(c *Client, v string) error {
			_, err := c.ListHumanEvaluations(context.Background(), v)
			return err
		}},
	)
	for _, tc := range cases {
		for _, v := range bad {
			if (v == "." || v == "..") && !tc.inPath {
				continue // dot ids matter only in paths; query values are escaped
			}
			t.Run(fmt.Sprintf("%s/%q", tc.name, v), func(t *testing.T) {
				c := gockClient(t)

				err := tc.call(c, v)

				requireArgumentError(t, err, tc.arg)
				assertNothingUnmatched(t)
			})
		}
	}
}

func TestNilContextAndClientAreRefused(t *testing.T) {
	c := gockClient(t)
	var nilCtx context.Context
	_, err := c.GetVariant(nilCtx, "v")
	requireArgumentError(t, err, "ctx")
	_, err = c.CreateEvaluation(nilCtx, validNewEvaluation())
	requireArgumentError(t, err, "ctx")

	var nilClient *Client
	_, err = nilClient.GetVariant(context.Background(), "v")
	requireArgumentError(t, err, "Client")
	_, err = (&Client{}).ListHumanEvaluations(context.Background(), "app")
	requireArgumentError(t, err, "Client")
	assert.NotPanics(t, func() { _ = fmt.Sprintf("%v %+v", nilClient, Client{}) })
	assertNothingUnmatched(t)
}

// Query values are encoded: a value with & or = stays one value.
func TestQueryValuesAreEncoded(t *testing.T) {
	for _, tc := range []struct {
		name, path, query string
		call              func(c *Client) error
		want              url.Values
	}{
		{"variant by env", "/api/apps/get_variant_by_env", "app_id=a%26environment%3Dstaging&environment=prod+%2F+eu",
			func(c *Client) error {
				_, err := c.GetVariantByEnvironment(context.Background(), "a&environment=staging", "prod / eu")
				return err
			}, url.Values{"app_id": {"a&environment=staging"}, "environment": {"prod / eu"}}},
		{"human evaluations", "/api/human-evaluations", "app_id=x%26app_id%3Dy%23z",
			func(c *Client) error {
				_, err := c.ListHumanEvaluations(context.Background(), "x&app_id=y#z")
				return err
			}, url.Values{"app_id": {"x&app_id=y#z"}}},
		{"span type", "/api/observability/spans/sp-1/", "type=generation%26debug%3D1",
			func(c *Client) error {
				_, err := c.GetSpan(context.Background(), "sp-1", &GetSpanOptions{Type: "generation&debug=1"})
				return err
			}, url.Values{"type": {"generation&debug=1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t)
			e := expect("GET", tc.path, tc.query)
			e.replyJSON(200, okBody(map[bool]string{true: "ListHumanEvaluations"}[strings.Contains(tc.path, "human")]))

			require.NoError(t, tc.call(c))

			got, err := url.ParseQuery(e.only(t).Query)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "the server reads exactly these values")
			assertAllSent(t)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		op         operation
	}{
		{"HTML on 200", "<html><body>login</body></html>", operations()[4]},
		{"null object", "null", operations()[5]},
		{"truncated object", `{"variant_id":"v"`, operations()[2]},
		{"object instead of array", `{"detail":"x"}`, operations()[0]},
		{"truncated array", `[{"id":"h1"},`, operations()[6]},
		{"wrong type", `[{"id":42}]`, operations()[1]},
		{"bad timestamp", `{"id":"s","created_at":"yesterday"}`, operations()[5]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t)
			expect(tc.op.method, tc.op.path, tc.op.query).replyJSON(200, tc.body)

			err := tc.op.call(context.Background(), c)

			require.Error(t, err)
			var derr *DecodeError
			require.True(t, errors.As(err, &derr), "expected *DecodeError, got %T: %v", err, err)
			assert.Equal(t, 200, derr.StatusCode)
			assert.Equal(t, tc.op.method, derr.Method)
			assert.Equal(t, tc.op.path, derr.Path)
			assert.NotNil(t, errors.Unwrap(err), "the cause is wrapped")
			var apiErr *APIError
			assert.False(t, errors.As(err, &apiErr), "a 2xx answer is not an APIError")
			assertAllSent(t) // decoding failures are not retried
		})
	}
	t.Run("null list is empty", func(t *testing.T) {
		c := gockClient(t)
		expect("GET", "/api/human-evaluations", "app_id=a").replyJSON(200, "null")
		got, err := c.ListHumanEvaluations(context.Background(), "a")
		require.NoError(t, err)
		assert.Empty(t, got)
		assertAllSent(t)
	})
	t.Run("empty list is not nil", func(t *testing.T) {
		c := gockClient(t)
		expect("GET", "/api/human-evaluations", "app_id=a").replyJSON(200, "[]")
		got, err := c.ListHumanEvaluations(context.Background(), "a")
		require.NoError(t, err)
		assert.NotNil(t, got)
		assert.Len(t, got, 0)
		assertAllSent(t)
	})
}

// The Client writes nothing anywhere unless given a logger: not to
// slog.Default, not to the standard logger.
func TestLoggingSilentByDefault(t *testing.T) {
	var slogBuf, stdBuf bytes.Buffer
	prevSlog := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&slogBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	prevOut, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(&stdBuf)
	t.Cleanup(func() {
		slog.SetDefault(prevSlog)
		log.SetOutput(prevOut)
		log.SetFlags(prevFlags)
	})
	c := gockClient(t)
	expect("GET", "/api/variants/v", "").times(2).replyJSON(503, `{"detail":"busy"}`)
	expect("GET", "/api/variants/v", "").replyJSON(200, `{}`)
	expect("POST", "/api/evaluations", "").replyJSON(500, `{"detail":"boom"}`)

	_, err := c.GetVariant(context.Background(), "v")
	require.NoError(t, err)
	_, err = c.CreateEvaluation(context.Background(), validNewEvaluation())
	require.Error(t, err)

	assert.Empty(t, slogBuf.String(), "nothing logged to slog.Default")
	assert.Empty(t, stdBuf.String(), "nothing logged to the standard logger")
	assertAllSent(t)
}

// With a logger, one line per attempt: method, path, status, attempt and the
// planned wait; never query values, headers, bodies or credentials.
func TestLoggingOneLinePerAttempt(t *testing.T) {
	rec, logger := newLogRecorder()
	c := gockClient(t, WithLogger(logger), WithHeader("Cookie", "session=COOKIESECRET"))
	path := "/api/apps/get_variant_by_env"
	query := "app_id=app-QUERYVALUE&environment=production"
	expect("GET", path, query).replyJSON(503, `{"detail":"BODYTEXT busy"}`).SetHeader("Retry-After", "0")
	expect("GET", path, query).times(1).ReplyError(errors.New("connection reset by peer"))
	expect("GET", path, query).replyJSON(200, `{"variant_id":"RESPONSEBODY"}`)

	_, err := c.GetVariantByEnvironment(context.Background(), "app-QUERYVALUE", "production")
	require.NoError(t, err)
	assertAllSent(t)

	lines := rec.lines()
	require.Len(t, lines, 3, "one line per attempt")
	for i, l := range lines {
		assert.Equal(t, "GET", l["method"], "line %d", i)
		assert.Equal(t, path, l["path"], "line %d", i)
		assert.Equal(t, int64(i+1), l["attempt"], "line %d", i)
	}
	assert.Equal(t, int64(503), lines[0]["status"])
	assert.Equal(t, time.Duration(0), lines[0]["wait"])
	assert.Equal(t, slog.LevelWarn, lines[0]["level"])
	assert.NotContains(t, lines[1], "status", "a transport error has no status")
	assert.Contains(t, lines[1]["error"], "connection reset by peer")
	assert.Contains(t, lines[1], "wait")
	assert.Equal(t, int64(200), lines[2]["status"])
	assert.NotContains(t, lines[2], "wait", "no wait after the last attempt")
	assert.Equal(t, slog.LevelInfo, lines[2]["level"])

	text := rec.text()
	for _, leak := range []string{"QUERYVALUE", "app_id", "BODYTEXT", "RESPONSEBODY", "COOKIESECRET", "Authorization", "User-Agent", "Cookie", "agenta.test"} {
		assert.NotContains(t, text, leak, "log output must not contain %q", leak)
	}
	assertNoSecret(t, "log output", text)
}

// Secrets never reach logs at any level, even when the server echoes them.
func TestLoggingNeverShowsSecrets(t *testing.T) {
	rec, logger := newLogRecorder()
	c := gockClient(t, WithLogger(logger))
	echo := `{"detail":"bad key ` + testProviderKey + ` for ` + testKey + `"}`
	expect("POST", "/api/evaluations", "").replyJSON(429, echo)
	expect("POST", "/api/evaluations", "").replyJSON(400, echo)

	_, err := c.CreateEvaluation(context.Background(), validNewEvaluation())

	require.Error(t, err)
	assert.Len(t, rec.lines(), 2)
	assertNoSecret(t, "log output", rec.text())
	assertNoSecret(t, "error string", err.Error())
	assertAllSent(t)
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

// WithHTTPClient copies the caller's client and never changes it.
func TestWithHTTPClientNeverMutatesCallerClient(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	transport := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"variant_id":"v"}`)), Request: r}, nil
	})
	redirects := 0
	policy := func(*http.Request, []*http.Request) error { redirects++; return nil }
	jar := &nopJar{}
	hc := &http.Client{Transport: transport, CheckRedirect: policy, Jar: jar, Timeout: 7 * time.Second}
	snapshot := *hc

	c, err := NewClient(gockBase, WithHTTPClient(hc), WithAPIKey(testKey), WithTimeout(3*time.Second))
	require.NoError(t, err)
	_, err = c.GetVariant(context.Background(), "v")
	require.NoError(t, err)

	assert.Equal(t, int32(1), calls.Load(), "the caller's transport is used")
	assert.Equal(t, reflect.ValueOf(snapshot.Transport).Pointer(), reflect.ValueOf(hc.Transport).Pointer(), "Transport unchanged")
	assert.Equal(t, reflect.ValueOf(policy).Pointer(), reflect.ValueOf(hc.CheckRedirect).Pointer(), "CheckRedirect unchanged")
	assert.Same(t, jar, hc.Jar.(*nopJar), "Jar unchanged")
	assert.Equal(t, 7*time.Second, hc.Timeout, "Timeout unchanged")
	assert.Equal(t, 3*time.Second, c.http.Timeout, "WithTimeout applies to the SDK's copy")
}

func TestPerAttemptTimeoutSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []Option
		want time.Duration
	}{
		{"default", nil, 60 * time.Second},
		{"WithTimeout", []Option{WithTimeout(5 * time.Second)}, 5 * time.Second},
		{"WithTimeout(0) means no limit", []Option{WithTimeout(0)}, 0},
		{"caller's client without a timeout keeps the default", []Option{WithHTTPClient(&http.Client{})}, 60 * time.Second},
		{"caller's client timeout", []Option{WithHTTPClient(&http.Client{Timeout: 9 * time.Second})}, 9 * time.Second},
		{"WithTimeout wins over the caller's client", []Option{WithHTTPClient(&http.Client{Timeout: 9 * time.Second}), WithTimeout(2 * time.Second)}, 2 * time.Second},
	} {
		c, err := NewClient(gockBase, tc.opts...)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, c.http.Timeout, tc.name)
	}
	for _, tc := range []struct {
		name          string
		opts          []Option
		headers, idle time.Duration
	}{
		{"default", nil, 60 * time.Second, 60 * time.Second},
		{"the idle timeout follows WithTimeout", []Option{WithTimeout(5 * time.Second)}, 5 * time.Second, 5 * time.Second},
		{"and the caller's client's timeout", []Option{WithHTTPClient(&http.Client{Timeout: 9 * time.Second})}, 9 * time.Second, 9 * time.Second},
		{"WithIdleTimeout", []Option{WithIdleTimeout(2 * time.Second)}, 60 * time.Second, 2 * time.Second},
		{"WithIdleTimeout(0) means no limit", []Option{WithTimeout(time.Second), WithIdleTimeout(0)}, time.Second, 0},
		{"WithTimeout(0) and no idle limit", []Option{WithTimeout(0)}, 0, 0},
	} {
		c, err := NewClient(gockBase, tc.opts...)
		require.NoError(t, err, tc.name)
		pk := c.http.Transport.(poolKeeper)
		assert.Equal(t, [2]time.Duration{tc.headers, tc.idle}, [2]time.Duration{pk.timeout, pk.idle}, "%s: headers and idle timeouts", tc.name)
		assert.Zero(t, c.retry.HTTPClient.Timeout, "%s: http.Client's Timeout would cut off a long answer", tc.name)
	}
	assert.Equal(t, 3, DefaultMaxRetries)
	assert.Equal(t, 250*time.Millisecond, DefaultRetryWaitMin)
	assert.Equal(t, 5*time.Second, DefaultRetryWaitMax)
	assert.Equal(t, 60*time.Second, DefaultTimeout)
	c, err := NewClient(gockBase)
	require.NoError(t, err)
	assert.Equal(t, DefaultMaxRetries, c.maxRetries)
	assert.Equal(t, DefaultRetryWaitMin, c.waitMin)
	assert.Equal(t, DefaultRetryWaitMax, c.waitMax)
	assert.Nil(t, c.logger, "silent by default")
}

// A stalled attempt ends at the per-attempt timeout with an error that says
// so, and the context error stays visible.
func TestPerAttemptTimeoutEndsStalledCall(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := NewClient(srv.URL+"/api", WithTimeout(20*time.Millisecond), WithMaxRetries(0))
	require.NoError(t, err)

	_, err = c.GetVariant(context.Background(), "v")

	require.Error(t, err)
	var netErr net.Error
	isTimeout := errors.As(err, &netErr) && netErr.Timeout()
	assert.True(t, isTimeout || errors.Is(err, context.DeadlineExceeded), "expected a timeout error, got %T: %v", err, err)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	c, err = NewClient(srv.URL+"/api", WithMaxRetries(0))
	require.NoError(t, err)
	_, err = c.GetVariant(ctx, "v")
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "expected context.DeadlineExceeded, got %v", err)
}

// Credentials never follow a redirect to another origin (here another port
// of the same host, which net/http alone would trust), but do follow one to
// the same origin.
func TestRedirectDropsCredentialsAcrossOrigins(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]http.Header{}
	record := func(name string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen[name] = r.Header.Clone()
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("other", r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"variant_id":"elsewhere"}`)
	}))
	defer other.Close()
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/variants/away":
			record("origin", r)
			http.Redirect(w, r, other.URL+"/api/variants/x", http.StatusTemporaryRedirect)
		case "/api/variants/home":
			record("origin", r)
			http.Redirect(w, r, origin.URL+"/api/variants/moved", http.StatusFound)
		case "/api/variants/moved":
			record("moved", r)
			_, _ = io.WriteString(w, `{"variant_id":"moved"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer origin.Close()
	require.NotEqual(t, origin.URL, other.URL)
	ou, _ := url.Parse(origin.URL)
	tu, _ := url.Parse(other.URL)
	require.Equal(t, ou.Hostname(), tu.Hostname(), "same host, different ports")

	var policyCalls atomic.Int32
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { policyCalls.Add(1); return nil }}
	for _, withClient := range []bool{false, true} {
		opts := []Option{WithAPIKey(testKey), WithHeader("Cookie", "session=s3cret"), WithHeader("X-Session-Token", "tok")}
		if withClient {
			opts = append(opts, WithHTTPClient(hc))
		}
		c, err := NewClient(origin.URL+"/api", opts...)
		require.NoError(t, err)

		v, err := c.GetVariant(context.Background(), "away")
		require.NoError(t, err)
		assert.Equal(t, "elsewhere", v.VariantID)
		mu.Lock()
		assert.Equal(t, testKey, seen["origin"].Get("Authorization"), "the origin gets the key")
		for _, h := range []string{"Authorization", "Cookie", "X-Session-Token"} {
			assert.Empty(t, seen["other"].Values(h), "%s must not follow a redirect to another origin", h)
		}
		assert.Equal(t, "agenta-go/"+Version, seen["other"].Get("User-Agent"))
		mu.Unlock()

		v, err = c.GetVariant(context.Background(), "home")
		require.NoError(t, err)
		assert.Equal(t, "moved", v.VariantID)
		mu.Lock()
		assert.Equal(t, testKey, seen["moved"].Get("Authorization"), "a same-origin redirect keeps the key")
		assert.Equal(t, "session=s3cret", seen["moved"].Get("Cookie"))
		mu.Unlock()
	}
	assert.Equal(t, int32(2), policyCalls.Load(), "the caller's redirect policy still runs")
	assert.Nil(t, hc.Transport, "the caller's client is untouched")
}

// A redirect refused by the caller's policy is an answer, not a transient
// failure: it is not retried, and the policy's error is kept.
func TestRedirectRefusedByCallerPolicy(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/login", http.StatusFound)
	}))
	defer srv.Close()
	errNoRedirects := errors.New("no redirects, please")
	for _, tc := range []struct {
		name   string
		policy error
	}{
		{"policy error", errNoRedirects},
		{"use last response", http.ErrUseLastResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return tc.policy }}
			c, err := NewClient(srv.URL+"/api", WithHTTPClient(hc), WithRetryWait(0, time.Millisecond))
			require.NoError(t, err)

			_, err = c.GetVariant(context.Background(), "v")

			require.Error(t, err)
			assert.Equal(t, int32(1), hits.Load(), "expected one attempt")
			if tc.policy == http.ErrUseLastResponse {
				requireAPIError(t, err, http.StatusFound, "GET", "/api/variants/v")
			} else {
				assert.True(t, errors.Is(err, errNoRedirects), "expected the policy's error, got %v", err)
			}
		})
	}
}

// A redirect to a scheme the SDK cannot speak is refused at once, with a
// typed error that is never retried, whatever the caller's policy allows.
func TestRedirectToOtherSchemeNotRetried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"default client", nil},
		{"caller's policy accepts it", []Option{WithHTTPClient(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			mux, c := setup(t, tc.opts...)
			mux.HandleFunc("GET /variants/v", func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				http.Redirect(w, r, "ftp://127.0.0.1/file", http.StatusFound)
			})

			_, err := c.GetVariant(context.Background(), "v")

			require.Error(t, err)
			assert.Equal(t, int32(1), hits.Load(), "expected one attempt")
			var refused *redirectRefused
			assert.True(t, errors.As(err, &refused), "expected a *redirectRefused, got %T: %v", err, err)
			assert.Contains(t, err.Error(), `unsupported protocol scheme "ftp"`)
		})
	}
}

// Error bodies and success bodies are read to the end and closed, so one
// connection serves every call.
func TestConnectionsAreReused(t *testing.T) {
	var conns atomic.Int32
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch n.Add(1) % 3 {
		case 0:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"detail":"`+strings.Repeat("x", 8<<10)+`"}`)
		case 1:
			_, _ = io.WriteString(w, `[{"id":"h1"},{"id":"h2"}]`+"\n\n")
		default:
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, `<html><title>bad gateway</title></html>`)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := NewClient(srv.URL+"/api", WithMaxRetries(0))
	require.NoError(t, err)

	for i := 0; i < 30; i++ {
		_, _ = c.ListHumanEvaluations(context.Background(), "app")
	}

	assert.Equal(t, int32(30), n.Load())
	assert.Equal(t, int32(1), conns.Load(), "expected one connection for 30 sequential calls")
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

// Headers the SDK manages cannot be set with WithHeader: Accept-Encoding
// would turn off transparent gzip, and Accept and User-Agent would be
// silently overwritten.
func TestWithHeaderRefusesManagedHeaders(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Accept", "accept-encoding", "User-Agent", "Content-Type", "Host"} {
		t.Run(name, func(t *testing.T) {
			_, err := NewClient(gockBase, WithHeader(name, "x"))
			requireArgumentError(t, err, "WithHeader")
		})
	}
}

// A credential in any header set with WithHeader is scrubbed when the server
// echoes it, not only in the well-known credential headers.
func TestWithHeaderCustomCredentialScrubbed(t *testing.T) {
	const secret = "s3cr3t-session-0123456789"
	c := gockClient(t, WithHeader("X-Agenta-Session", secret), WithHeader("X-Trace", "1"))
	expect("GET", "/api/variants/v", "").replyJSON(400, `{"detail":"bad token `+secret+`","loc":["body",1]}`)

	_, err := c.GetVariant(context.Background(), "v")

	apiErr := requireAPIError(t, err, 400, "GET", "/api/variants/v")
	assert.NotContains(t, err.Error(), secret)
	assert.NotContains(t, string(apiErr.Body), secret)
	assert.Contains(t, string(apiErr.Body), `"loc":["body",1]`, "a short header value is not scrubbed from other text")
	assertAllSent(t)
}

// A body JSON cannot carry is refused before sending, naming the request.
func TestUnencodableBodyIsInvalidArgument(t *testing.T) {
	c := gockClient(t)
	v := validAddVariant()
	v.Parameters = map[string]any{"temperature": math.NaN()}

	_, err := c.AddVariantFromBase(context.Background(), v)

	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrInvalidArgument), "got %v", err)
	assert.Contains(t, err.Error(), "AddVariantFromBase")
	assertNothingUnmatched(t)
}

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

// A base URL with spaces around it or without a scheme is refused with a
// message that says what to fix.
func TestBaseURLRefusalsSayWhy(t *testing.T) {
	for _, tc := range []struct {
		base string
		want string
	}{
		{"http://127.0.0.1:8080/api ", "agenta: invalid argument baseURL: has leading or trailing spaces; remove them"},
		{" http://127.0.0.1:8080/api", "agenta: invalid argument baseURL: has leading or trailing spaces; remove them"},
		{"https://cloud.agenta.ai/api\t", "agenta: invalid argument baseURL: has leading or trailing spaces; remove them"},
		{"127.0.0.1:8080/api", "agenta: invalid argument baseURL: has no scheme; did you mean http://127.0.0.1:8080/api?"},
		{"localhost:8080", "agenta: invalid argument baseURL: has no scheme; did you mean http://localhost:8080?"},
		{"192.168.1.20/api", "agenta: invalid argument baseURL: has no scheme; did you mean http://192.168.1.20/api?"},
		{"cloud.agenta.ai/api", "agenta: invalid argument baseURL: has no scheme; did you mean https://cloud.agenta.ai/api?"},
		{"user:pw@agenta.test/api", "agenta: invalid argument baseURL: "},
		{"agenta.test/api?key=x", "agenta: invalid argument baseURL: "},
	} {
		t.Run(tc.base, func(t *testing.T) {
			c, err := NewClient(tc.base)
			require.Error(t, err, "NewClient(%q) = %v, want an error", tc.base, c)
			assert.True(t, errors.Is(err, ErrInvalidArgument), "expected ErrInvalidArgument, got %v", err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q, want it to start with %q", err, tc.want)
			assert.NotContains(t, err.Error(), "pw", "no credentials echoed")
			assert.NotContains(t, err.Error(), "key=x", "no query echoed")
		})
	}
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
