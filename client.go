package agenta

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Version is the SDK's version, sent in the default User-Agent.
const Version = "0.1.0"

// Client calls the Agenta evaluation and variant service. Create one with
// NewClient and share it: it is safe for concurrent use and keeps a pool of
// connections.
type Client struct {
	base       string                // scheme://host/prefix, escaped, no trailing slash
	basePath   string                // the escaped prefix alone, for errors and logs
	header     http.Header           // sent with every request
	http       *http.Client          // the caller's view: transport, jar, the per-attempt timeout, redirects
	retry      *retryablehttp.Client // the settings each call's client copies: a copy of http without its Timeout, the retry bound; never sends itself
	waitMin    time.Duration
	waitMax    time.Duration
	logger     *slog.Logger
	secrets    *clientSecrets // what it scrubs: credentials it sent (see redact.go)
	limits     ResponseLimits
	gzip       bool             // ask for gzip and inflate it (see transport.go)
	generation *generationState // the server's API generation (generation.go)
}

// NewClient returns a Client for the service at baseURL, such as
// "https://cloud.agenta.ai/api". Every operation path resolves under the
// base URL's path. NewClient does no network I/O.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	return newClient(baseURLSetting{value: baseURL, name: "baseURL"}, opts)
}

func newClient(baseURL baseURLSetting, opts []Option) (*Client, error) {
	s := settings{
		baseURL:    baseURL,
		timeout:    -1, // unset
		idle:       -1, // unset: the per-attempt timeout
		maxRetries: DefaultMaxRetries,
		waitMin:    DefaultRetryWaitMin,
		waitMax:    DefaultRetryWaitMax,
		userAgent:  "agenta-go/" + Version,
	}
	for i, opt := range opts {
		if opt == nil {
			return nil, invalid("opts", "option %d is nil", i)
		}
		if err := opt(&s); err != nil {
			return nil, err
		}
	}
	base, err := s.baseURL.parse()
	if err != nil {
		return nil, err
	}

	c := &Client{
		base:       base,
		basePath:   basePathOf(base),
		header:     http.Header{},
		waitMin:    s.waitMin,
		waitMax:    s.waitMax,
		logger:     s.logger,
		limits:     s.limits.withDefaults(),
		secrets:    &clientSecrets{},
		generation: &generationState{known: s.generation},
	}
	var credentials []string
	for name, values := range s.headers {
		c.header[name] = append([]string(nil), values...)
		for _, v := range values {
			credentials = append(credentials, credentialParts(v, credentialHeader(name))...)
		}
	}
	c.header.Set("Accept", "application/json")
	c.header.Set("User-Agent", s.userAgent)
	if s.apiKey == "" && c.header.Get("Authorization") == "" {
		s.apiKey = s.envAPIKey
	}
	if s.apiKey != "" {
		c.header.Set("Authorization", s.apiKey)
		credentials = append(credentials, credentialParts(s.apiKey, true)...)
	}
	c.secrets.set.Store(newSecretSet(credentials, nil))

	// Copy the caller's client rather than modify it.
	hc := &http.Client{Timeout: DefaultTimeout}
	var own *http.Transport
	var userRedirect func(*http.Request, []*http.Request) error
	if s.httpClient == nil {
		own = newTransport()
		hc.Transport = own
	} else {
		hc.Transport = s.httpClient.Transport
		if hc.Transport == nil {
			hc.Transport = http.DefaultTransport
		}
		hc.Jar = s.httpClient.Jar
		if s.httpClient.Timeout > 0 {
			// A zero Timeout (as in &http.Client{}) keeps the default.
			hc.Timeout = s.httpClient.Timeout
		}
		userRedirect = s.httpClient.CheckRedirect
	}
	if s.timeout >= 0 {
		hc.Timeout = s.timeout
	}
	// go-retryablehttp closes idle connections after every failed call;
	// hiding CloseIdleConnections keeps the pool warm for other calls.
	_, known := hc.Transport.(*http.Transport)
	c.gzip = acceptGzip(hc.Transport)
	idle := s.idle
	if idle < 0 {
		idle = hc.Timeout
	}
	// poolKeeper applies the per-attempt timeout to the headers, and the
	// idle timeout to each read of the body; http.Client's Timeout would
	// cut off a long answer that keeps arriving.
	hc.Transport = poolKeeper{next: hc.Transport, guard: !known, timeout: hc.Timeout, idle: idle}
	hc.CheckRedirect = stripCredentialsOnRedirect(credentialNames(c.header), userRedirect)
	c.http = hc
	send := *hc
	send.Timeout = 0
	// Each call copies these into a retryablehttp.Client of its own, whose
	// hooks are bound to the call (see call in engine.go).
	c.retry = &retryablehttp.Client{HTTPClient: &send, RetryMax: s.maxRetries}
	if own != nil {
		// A Client dropped without CloseIdleConnections must not keep its
		// idle connections open until they time out.
		runtime.AddCleanup(c, (*http.Transport).CloseIdleConnections, own)
	}
	return c, nil
}

// BaseURL returns the base URL every operation path resolves under.
func (c *Client) BaseURL() string {
	if c == nil {
		return ""
	}
	return c.base
}

// Format prints the Client without its credentials, whatever the verb. It
// has a value receiver so that printing a dereferenced Client is safe too.
func (c Client) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "agenta.Client{BaseURL: %q}", c.base)
}

// CloseIdleConnections closes the idle connections of the Client's
// transport, for example before a program exits. With WithHTTPClient, that
// is the transport of the client given.
func (c *Client) CloseIdleConnections() {
	if c == nil || c.http == nil {
		return
	}
	if pk, ok := c.http.Transport.(poolKeeper); ok {
		if ci, ok := pk.next.(interface{ CloseIdleConnections() }); ok {
			ci.CloseIdleConnections()
		}
	}
}

// basePathOf returns the path part of a base URL from parseBaseURL.
func basePathOf(base string) string {
	rest := base[strings.Index(base, "://")+3:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return ""
}

// text is call.text for strings read outside a call's error path, such as
// an evaluation's failure message: it scrubs every secret of the Client.
func (c *Client) text(s string, n int) string { return c.secrets.load().all.Text(s, n) }

// NewClientFromEnv returns a Client configured from the environment, the way
// the examples and most programs want it:
//
//   - AGENTA_HOST is the server's URL. When it has no path, "/api" is added,
//     so "https://cloud.agenta.ai" and "https://cloud.agenta.ai/api" both
//     work; a URL with a path is used as it is.
//   - AGENTA_API_KEY, when set and not empty, is sent as WithAPIKey sends it.
//     When it is unset, no Authorization header is sent.
//   - AGENTA_API_GENERATION, when set to 2024 or 2026, says which API the
//     server speaks, as WithGeneration does; empty or "auto" detects it
//     (see Client.Generation).
//
// Options given override them: WithBaseURL replaces AGENTA_HOST,
// WithAPIKey or WithHeader("Authorization", …) replaces AGENTA_API_KEY,
// and WithGeneration replaces AGENTA_API_GENERATION.
// Without AGENTA_HOST (and without WithBaseURL) it returns an error wrapping
// ErrInvalidArgument that says to set it. Like NewClient, it does no network
// I/O.
func NewClientFromEnv(opts ...Option) (*Client, error) {
	host := os.Getenv(envHost)
	all := make([]Option, 0, len(opts)+1)
	all = append(all, func(s *settings) error {
		key := os.Getenv(envAPIKey)
		if key != "" && hasControl(key) {
			// Never echo the key: it is a secret.
			return invalid(envAPIKey, "contains CR, LF or another control character")
		}
		s.envAPIKey = key
		g, err := parseGeneration(os.Getenv(envGeneration))
		s.generation = g
		return err
	})
	all = append(all, opts...)
	return newClient(baseURLSetting{value: hostToBaseURL(host), name: envHost, fromEnv: true}, all)
}
