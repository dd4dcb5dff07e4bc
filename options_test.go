package agenta

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WithResponseLimits sets each limit; the error names the one exceeded.
func TestHostileResponseLimitsOption(t *testing.T) {
	variant := `{"app_id":"a-1","variant_id":"v-1","variant_name":"` + strings.Repeat("v", 3000) + `"}`
	row := `{"id":"h-1","app_id":"` + strings.Repeat("a", 3000) + `"}`
	rows := "[" + strings.Repeat(row+",", 9) + row + "]"
	scenario := `{"id":"s-1","evaluation_id":"` + strings.Repeat("e", 3000) + `"}`
	scenarios := "[" + strings.Repeat(scenario+",", 9) + scenario + "]"
	cases := []struct {
		name   string
		limits ResponseLimits
		op     hostileOp
		body   string
		field  string // "" for success
	}{
		{"single under", ResponseLimits{Single: 4000}, hostileGetVariant, variant, ""},
		{"single over", ResponseLimits{Single: 2000}, hostileGetVariant, variant, "Single"},
		{"list under", ResponseLimits{List: 40000, Element: 4000}, hostileListHuman, rows, ""},
		{"list over", ResponseLimits{List: 20000, Element: 4000}, hostileListHuman, rows, "List"},
		{"list element over", ResponseLimits{Element: 2000}, hostileListHuman, rows, "Element"},
		{"scenario list over", ResponseLimits{List: 20000, Element: 4000}, hostileFetchScenarios, scenarios, "List"},
		{"scenario element over", ResponseLimits{Element: 2000}, hostileFetchScenarios, scenarios, "Element"},
		{"stream has no whole limit", ResponseLimits{List: 1000, Element: 4000}, hostileStream, scenarios, ""},
		{"stream element over", ResponseLimits{Element: 2000}, hostileStream, scenarios, "Element"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, hostileServe(t, 200, nil, tc.body), WithResponseLimits(tc.limits))
			err := tc.op.run(context.Background(), c)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("%s: %v, want success under the limits %+v", tc.op.name, err, tc.limits)
				}
				return
			}
			var limit *LimitError
			if !errors.As(err, &limit) || !errors.Is(err, ErrAnswerTooLarge) {
				t.Fatalf("%s: got %v, want a *LimitError matching ErrAnswerTooLarge", tc.op.name, err)
			}
			if limit.Field != tc.field {
				t.Errorf("the limit exceeded is %q, want %q", limit.Field, tc.field)
			}
			var decodeErr *DecodeError
			if !errors.As(err, &decodeErr) || decodeErr.StatusCode != 200 {
				t.Errorf("got %T, want it inside a *DecodeError with status 200", err)
			}
			if !strings.Contains(err.Error(), "ResponseLimits{"+tc.field) {
				t.Errorf("the message should say how to raise ResponseLimits.%s, got %q", tc.field, err)
			}
		})
	}
	if _, err := NewClient("http://127.0.0.1:1/api", WithResponseLimits(ResponseLimits{Element: -1})); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a negative limit: got %v, want ErrInvalidArgument", err)
	}
}

// A careless user turns a limit off with math.MaxInt64: every answer still
// decodes, and no limit overflows into refusing everything.
func TestHugeResponseLimits(t *testing.T) {
	variant := `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default"}`
	rows := `[{"id":"h-1","app_id":"a-1"},{"id":"h-2","app_id":"a-1"}]`
	scenarios := `[{"id":"s-1","evaluation_id":"e-1"},{"id":"s-2","evaluation_id":"e-1"}]`
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/evaluation_scenarios"):
			io.WriteString(w, scenarios)
		case strings.HasSuffix(r.URL.Path, "/human-evaluations"):
			io.WriteString(w, rows)
		default:
			io.WriteString(w, variant)
		}
	}))
	t.Cleanup(s.Close)
	for _, limits := range []ResponseLimits{
		{Single: math.MaxInt64},
		{List: math.MaxInt64},
		{Element: math.MaxInt64},
		{Single: math.MaxInt64, List: math.MaxInt64, Element: math.MaxInt64},
		{List: math.MaxInt64 - 1, Element: math.MaxInt64 - 1},
	} {
		c := hostileClient(t, s.URL+"/api", WithResponseLimits(limits))
		for _, op := range []hostileOp{hostileGetVariant, hostileListHuman, hostileFetchScenarios, hostileStream} {
			if err := op.run(context.Background(), c); err != nil {
				t.Errorf("%+v, %s: %v, want the answer", limits, op.name, err)
			}
		}
	}
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
	assert.Equal(t, DefaultMaxRetries, c.retry.RetryMax)
	assert.Equal(t, DefaultRetryWaitMin, c.waitMin)
	assert.Equal(t, DefaultRetryWaitMax, c.waitMax)
	assert.Nil(t, c.logger, "silent by default")
}

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
