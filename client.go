package agenta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-querystring/query"
	"github.com/hashicorp/go-retryablehttp"
)

// Version is the SDK's version, sent in the default User-Agent.
const Version = "0.1.0"

// Client calls the Agenta evaluation and variant service. Create one with
// NewClient and share it: it is safe for concurrent use and keeps a pool of
// connections.
type Client struct {
	base       string      // scheme://host/prefix, escaped, no trailing slash
	basePath   string      // the escaped prefix alone, for errors and logs
	header     http.Header // sent with every request
	http       *http.Client
	maxRetries int
	waitMin    time.Duration
	waitMax    time.Duration
	logger     *slog.Logger
	secrets    []string // credential values to scrub from error bodies
}

// Option configures a Client. Options check their input: NewClient returns
// an error wrapping ErrInvalidArgument that names the refused option.
type Option func(*settings) error

type settings struct {
	baseURL    baseURLSetting
	envAPIKey  string // AGENTA_API_KEY, used when no option sets a credential
	apiKey     string
	headers    http.Header
	httpClient *http.Client
	userAgent  string
	timeout    time.Duration
	maxRetries int
	waitMin    time.Duration
	waitMax    time.Duration
	logger     *slog.Logger
}

// WithAPIKey sets the credential sent, verbatim, as the Authorization header.
// Agenta keys are sent as they are; newer deployments also accept
// "ApiKey <key>" or "Bearer <jwt>", which can be passed the same way.
func WithAPIKey(key string) Option {
	return func(s *settings) error {
		if key == "" {
			return invalid("WithAPIKey", "the key is empty")
		}
		if hasControl(key) {
			// Never echo the key: it is a secret.
			return invalid("WithAPIKey", "the key contains CR, LF or another control character")
		}
		s.apiKey = key
		return nil
	}
}

// WithHeader adds a header to every request, for example a session cookie.
// Its value is treated as a credential: it is dropped on redirects to
// another host and scrubbed from errors. Headers the SDK manages (Accept,
// Accept-Encoding, Content-Type, User-Agent and the framing headers) are
// refused; use WithUserAgent for the User-Agent.
func WithHeader(name, value string) Option {
	return func(s *settings) error {
		if !validHeaderName(name) {
			return invalid("WithHeader", "%q is not a valid header name", name)
		}
		switch canonical := http.CanonicalHeaderKey(name); canonical {
		case "User-Agent":
			return invalid("WithHeader", "set the User-Agent with WithUserAgent")
		case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Content-Type",
			"Accept", "Accept-Encoding":
			// Accept-Encoding would turn off net/http's transparent gzip.
			return invalid("WithHeader", "%s is managed by the SDK and cannot be set", canonical)
		}
		if hasControl(value) {
			return invalid("WithHeader", "the value of %s contains CR, LF or another control character", name)
		}
		if s.headers == nil {
			s.headers = http.Header{}
		}
		s.headers.Add(name, value)
		return nil
	}
}

// WithHTTPClient makes the Client send through hc's transport, cookie jar and
// redirect policy. hc is copied, never modified. A non-zero hc.Timeout
// replaces the 60 s default; WithTimeout overrides both.
func WithHTTPClient(hc *http.Client) Option {
	return func(s *settings) error {
		if hc == nil {
			return invalid("WithHTTPClient", "the client is nil")
		}
		s.httpClient = hc
		return nil
	}
}

// WithUserAgent replaces the default User-Agent, agenta-go/<Version>.
func WithUserAgent(ua string) Option {
	return func(s *settings) error {
		if strings.TrimSpace(ua) == "" {
			return invalid("WithUserAgent", "the user agent is empty")
		}
		if hasControl(ua) {
			return invalid("WithUserAgent", "the user agent contains CR, LF or another control character")
		}
		s.userAgent = ua
		return nil
	}
}

// WithTimeout limits each attempt, from sending the request to reading the
// last byte of the answer. The default is 60 s; 0 means no limit. The
// context passed to each call bounds all attempts together.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return invalid("WithTimeout", "must not be negative, got %s", d)
		}
		s.timeout = d
		return nil
	}
}

// WithMaxRetries sets how many times a failed attempt is retried; 0 means
// never. The default is 3.
func WithMaxRetries(n int) Option {
	return func(s *settings) error {
		if n < 0 || n > 100 {
			return invalid("WithMaxRetries", "must be between 0 and 100, got %d", n)
		}
		s.maxRetries = n
		return nil
	}
}

// WithRetryWait bounds the wait between attempts. Waits grow exponentially
// from min, with jitter, up to max; a server's Retry-After is honoured up to
// max. The defaults are 250 ms and 5 s.
func WithRetryWait(min, max time.Duration) Option {
	return func(s *settings) error {
		if min < 0 {
			return invalid("WithRetryWait", "min must not be negative, got %s", min)
		}
		if max < min {
			return invalid("WithRetryWait", "max (%s) must not be less than min (%s)", max, min)
		}
		s.waitMin, s.waitMax = min, max
		return nil
	}
}

// WithLogger logs one structured line per attempt: method, path, status,
// attempt and, before a retry, the wait. Bodies, headers and query values are
// never logged. Without it the Client is silent; a nil logger silences it.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) error {
		s.logger = l
		return nil
	}
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
		maxRetries: s.maxRetries,
		waitMin:    s.waitMin,
		waitMax:    s.waitMax,
		logger:     s.logger,
	}
	for name, values := range s.headers {
		c.header[name] = append([]string(nil), values...)
		for _, v := range values {
			c.secrets = append(c.secrets, credentialParts(v, credentialHeader(name))...)
		}
	}
	c.header.Set("Accept", "application/json")
	c.header.Set("User-Agent", s.userAgent)
	if s.apiKey == "" && c.header.Get("Authorization") == "" {
		s.apiKey = s.envAPIKey
	}
	if s.apiKey != "" {
		c.header.Set("Authorization", s.apiKey)
		c.secrets = append(c.secrets, credentialParts(s.apiKey, true)...)
	}

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
	hc.Transport = poolKeeper{hc.Transport}
	hc.CheckRedirect = stripCredentialsOnRedirect(credentialNames(c.header), userRedirect)
	c.http = hc
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

func parseBaseURL(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", invalid("baseURL", "is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return "", invalid("baseURL", "is not a valid URL: %v", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", invalid("baseURL", "must use http or https, got scheme %q", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return "", invalid("baseURL", "has no host")
	case u.User != nil:
		return "", invalid("baseURL", "must not carry credentials; use WithAPIKey or WithHeader")
	case u.RawQuery != "" || u.ForceQuery:
		return "", invalid("baseURL", "must not have a query")
	case u.Fragment != "":
		return "", invalid("baseURL", "must not have a fragment")
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// newTransport returns the pooled transport of a Client built without
// WithHTTPClient, sized for many concurrent calls to one host: up to 64
// connections per host, all kept idle between calls. Beyond 64 concurrent
// calls to one host, a call waits for a free connection rather than open
// and then discard extra ones (without the cap, 64 busy workers opened up
// to 100 connections on loopback). Each Client has its own, so that one
// Client's long streams never hold up another's calls.
func newTransport() *http.Transport {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		MaxConnsPerHost:       64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// poolKeeper forwards RoundTrip only, so that go-retryablehttp cannot empty
// the idle pool.
type poolKeeper struct{ next http.RoundTripper }

func (p poolKeeper) RoundTrip(r *http.Request) (*http.Response, error) { return p.next.RoundTrip(r) }

// stripCredentialsOnRedirect drops credential headers from any redirected
// request whose origin (scheme, host and port) differs from the original
// request's. net/http alone keeps them across ports of one host.
func stripCredentialsOnRedirect(names []string, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errTooManyRedirects
		}
		if !sameOrigin(req.URL, via[0].URL) {
			for _, name := range names {
				req.Header.Del(name)
			}
		}
		if next != nil {
			err := next(req, via)
			if err != nil && err != http.ErrUseLastResponse {
				return &redirectRefused{err}
			}
			return err
		}
		return nil
	}
}

// errTooManyRedirects ends a redirect loop; it is never retried.
var errTooManyRedirects = errors.New("stopped after 10 redirects")

// redirectRefused marks a refusal by the caller's redirect policy, which
// another attempt would only repeat: it is never retried.
type redirectRefused struct{ err error }

func (e *redirectRefused) Error() string { return e.err.Error() }
func (e *redirectRefused) Unwrap() error { return e.err }

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// credentialParts returns the secrets in a header's value: the whole value,
// the token after a scheme such as "Bearer", and each cookie's value, so
// that a server echoing only a part of it is scrubbed too. Parts shorter
// than 8 bytes are not secrets worth scrubbing everywhere, and neither is a
// short whole value unless the header is a known credential header.
func credentialParts(value string, credential bool) []string {
	var parts []string
	if credential || len(value) >= 8 {
		parts = append(parts, value)
	}
	add := func(part string) {
		if part = strings.Trim(strings.TrimSpace(part), `"`); len(part) >= 8 && part != value {
			parts = append(parts, part)
		}
	}
	if _, token, ok := strings.Cut(value, " "); ok {
		add(token)
	}
	for _, cookie := range strings.Split(value, ";") {
		if _, v, ok := strings.Cut(cookie, "="); ok {
			add(v)
		}
	}
	return parts
}

// credentialHeader reports headers whose values are credentials.
func credentialHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key":
		return true
	}
	return false
}

// credentialNames lists the headers to drop on a cross-origin redirect: the
// credential headers, and every header the caller added, which may carry a
// session.
func credentialNames(h http.Header) []string {
	names := []string{"Authorization", "Cookie", "Proxy-Authorization"}
	for name := range h {
		switch name {
		case "Accept", "User-Agent", "Authorization", "Cookie", "Proxy-Authorization":
		default:
			names = append(names, name)
		}
	}
	return names
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// request describes one operation call for the engine.
type request struct {
	method string
	path   string // escaped, relative to the base URL, starting with "/"
	query  any    // a struct for go-querystring, or nil
	body   any    // marshalled as JSON, or nil
	// secrets are credential values in the body, scrubbed from errors.
	secrets []string
}

// idempotent reports whether a request may be sent twice without harm.
func (r *request) idempotent() bool {
	return r.method == http.MethodGet || r.method == http.MethodHead
}

// call is the state of one operation call across its attempts.
type call struct {
	c       *Client
	r       *request
	path    string // the full escaped path, for errors and logs
	attempt int
	wait    time.Duration
	wrote   atomic.Bool // some of this attempt's request was written
	last    error       // the last answer before a retry
	deadln  time.Time   // the context's deadline, if any
	hasDL   bool

	// Pooled with the call, so that a call allocates none of them: the
	// request (r points here), and a retryablehttp.Client whose hooks are
	// bound to this call once, when the pool makes it.
	req request
	rc  retryablehttp.Client
}

// callPool recycles call states; see newCall and release.
var callPool = sync.Pool{New: func() any {
	st := new(call)
	st.rc.CheckRetry = st.check
	st.rc.Backoff = st.backoff
	st.rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	return st
}}

// newCall returns a fresh call state for r, which it copies.
func newCall(c *Client, r *request, path string) *call {
	st := callPool.Get().(*call)
	st.c, st.req, st.path = c, *r, path
	st.r = &st.req
	st.attempt, st.wait, st.last = 0, 0, nil
	st.deadln, st.hasDL = time.Time{}, false
	st.wrote.Store(false)
	st.rc.HTTPClient = c.http
	st.rc.RetryMax = c.maxRetries
	st.rc.RetryWaitMin, st.rc.RetryWaitMax = c.waitMin, c.waitMax
	return st
}

// release returns st to the pool once its response is done with. A call
// that sent a body is left to the garbage collector instead: its request
// trace holds it, and a late trace event must not reach a reused call.
func (st *call) release() {
	if !st.r.idempotent() {
		return
	}
	st.c, st.r, st.req, st.last, st.rc.HTTPClient = nil, nil, request{}, nil, nil
	callPool.Put(st)
}

// start runs the request with retries. It returns a 2xx response, whose body
// the caller must close, or an error: non-2xx answers become *APIError or
// *ValidationError.
func (c *Client) start(ctx context.Context, r *request) (*call, *http.Response, error) {
	if ctx == nil {
		return nil, nil, invalid("ctx", "is nil")
	}
	if c == nil || c.http == nil {
		return nil, nil, invalid("Client", "is nil or not made by NewClient")
	}
	target := c.base + r.path
	// The path for errors and logs is the tail of target: no allocation.
	path := target[len(c.base)-len(c.basePath):]
	if err := ctx.Err(); err != nil {
		// Send nothing for a context that has already ended.
		return nil, nil, fmt.Errorf("agenta: %s %s: %w", r.method, path, err)
	}
	st := newCall(c, r, path)
	if r.query != nil {
		values, err := query.Values(r.query)
		if err != nil {
			return nil, nil, fmt.Errorf("agenta: %s %s: encode query: %w", r.method, st.path, err)
		}
		if encoded := values.Encode(); encoded != "" {
			target += "?" + encoded
		}
	}
	var body any
	if r.body != nil {
		data, err := json.Marshal(r.body)
		if err != nil {
			// A value JSON cannot carry, such as NaN in Parameters.
			return nil, nil, invalid(reflect.TypeOf(r.body).Name(), "cannot be sent as JSON: %v", err)
		}
		body = data
	}

	st.deadln, st.hasDL = ctx.Deadline()
	if !r.idempotent() {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteHeaders: func() { st.wrote.Store(true) },
		})
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, nil, fmt.Errorf("agenta: %s %s: build request: %w", r.method, st.path, err)
	}
	// Share the Client's header values instead of cloning them: net/http
	// only reads them, and the capped capacity makes an Add copy, not write.
	for name, values := range c.header {
		req.Header[name] = values[:len(values):len(values)]
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}

	resp, err := st.rc.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, nil, st.transportError(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, st.readError(resp)
	}
	return st, resp, nil
}

// check is the CheckRetry hook: it applies shouldRetry, logs the attempt and
// plans the wait.
func (st *call) check(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st.attempt++
	wrote := st.wrote.Swap(false)
	retry := ctx.Err() == nil && st.attempt <= st.c.maxRetries &&
		shouldRetry(st.r.idempotent(), wrote, resp, err)
	if retry {
		st.wait = backoff(st.c.waitMin, st.c.waitMax, st.attempt-1, resp, time.Now())
		// A wait that outlasts the caller's deadline would only turn the
		// last answer into a deadline error: give the answer instead.
		if st.hasDL && time.Until(st.deadln) < st.wait {
			retry = false
		}
	}
	if retry && resp != nil {
		// Keep what the server said, in case the context ends while we wait.
		st.last = st.readError(resp)
	}
	st.log(ctx, resp, err, retry)
	return retry, nil
}

// backoff is the Backoff hook: it returns the wait check planned.
func (st *call) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return st.wait
}

func (st *call) log(ctx context.Context, resp *http.Response, err error, retry bool) {
	l := st.c.logger
	if l == nil {
		return
	}
	level := slog.LevelInfo
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs,
		slog.String("method", st.r.method),
		slog.String("path", st.path),
		slog.Int("attempt", st.attempt))
	if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
		if resp.StatusCode >= 400 {
			level = slog.LevelWarn
		}
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", unwrapURLError(err).Error()))
		level = slog.LevelWarn
	}
	if retry {
		attrs = append(attrs, slog.Duration("wait", st.wait))
	}
	l.LogAttrs(ctx, level, "agenta request", attrs...)
}

func (st *call) transportError(err error) error {
	err = unwrapURLError(err)
	suffix := ""
	if st.attempt > 1 {
		suffix = " (after " + strconv.Itoa(st.attempt) + " attempts)"
	}
	if st.last != nil {
		// An earlier attempt had an answer: keep it for errors.As.
		return fmt.Errorf("agenta: %s %s: %w%s; last answer: %w", st.r.method, st.path, err, suffix, st.last)
	}
	return fmt.Errorf("agenta: %s %s: %w%s", st.r.method, st.path, err, suffix)
}

// readError turns a non-2xx answer into an error, keeping up to
// maxErrorBody of its body with credentials scrubbed, and closes the body.
func (st *call) readError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return newAPIError(resp.StatusCode, st.r.method, st.path, st.scrub(body))
}

// scrub replaces every credential the request carried with [REDACTED], in
// case the server echoes one (FastAPI echoes refused input).
func (st *call) scrub(body []byte) []byte {
	for _, list := range [][]string{st.c.secrets, st.r.secrets} {
		for _, secret := range list {
			body = redact(body, secret)
			if quoted, err := json.Marshal(secret); err == nil {
				if escaped := string(quoted[1 : len(quoted)-1]); escaped != secret {
					body = redact(body, escaped)
				}
			}
		}
	}
	return body
}

// redact replaces secret in body with [REDACTED]. A long secret is replaced
// wherever it occurs; a short one (a test key such as "k") only where it
// stands alone, so that it cannot mangle the words around it.
func redact(body []byte, secret string) []byte {
	if secret == "" || !bytes.Contains(body, []byte(secret)) {
		return body
	}
	const long = 12
	var out []byte
	rest := body
	for {
		i := bytes.Index(rest, []byte(secret))
		if i < 0 {
			break
		}
		end := i + len(secret)
		alone := len(secret) >= long ||
			(i == 0 || !wordByte(rest[i-1])) && (end == len(rest) || !wordByte(rest[end]))
		if alone {
			out = append(out, rest[:i]...)
			out = append(out, "[REDACTED]"...)
		} else {
			out = append(out, rest[:end]...)
		}
		rest = rest[end:]
	}
	return append(out, rest...)
}

func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// unwrapURLError drops net/http's *url.Error wrapper, whose message repeats
// the full URL with its query.
func unwrapURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) && uerr.Err != nil {
		return uerr.Err
	}
	return err
}

// DecodeError is a 2xx answer whose body is not the JSON the operation
// returns, or that broke off while being read. It keeps the status and,
// from the point where decoding stopped, up to 1 MiB of the body.
type DecodeError struct {
	StatusCode int
	Method     string
	Path       string
	// Offset is the byte offset in the body where decoding failed.
	Offset int64
	// Body is what was left unread of the answer where decoding stopped, up
	// to 1 MiB: for a syntax error, from the start of the failing value, so
	// an answer that is not JSON at all, such as an HTML page, is kept
	// whole; for a complete value of the wrong type it may be empty.
	Body []byte
	Err  error
}

func (e *DecodeError) Error() string {
	if readFailure(e.Err) {
		return fmt.Sprintf("agenta: %s %s: read %d answer: %v", e.Method, e.Path, e.StatusCode, e.Err)
	}
	return fmt.Sprintf("agenta: %s %s: decode %d answer at byte %d: %v", e.Method, e.Path, e.StatusCode, e.Offset, e.Err)
}

// readFailure reports an answer that broke off while being read (a reset,
// a timeout, the context ending), rather than one that is not valid JSON.
func readFailure(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Unwrap returns the underlying decoding error.
func (e *DecodeError) Unwrap() error { return e.Err }

func (st *call) decodeError(resp *http.Response, dec *json.Decoder, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	rest, _ := io.ReadAll(io.LimitReader(io.MultiReader(dec.Buffered(), resp.Body), maxErrorBody))
	return &DecodeError{
		StatusCode: resp.StatusCode,
		Method:     st.r.method,
		Path:       st.path,
		Offset:     dec.InputOffset(),
		Body:       st.scrub(rest),
		Err:        err,
	}
}

// finish closes a response body. After a complete read it drains what is
// left (at most a little whitespace) so the connection returns to the pool.
func finish(body io.ReadCloser, complete bool) {
	if complete {
		lr := drainPool.Get().(*io.LimitedReader) // io.CopyN would allocate one
		lr.R, lr.N = body, 64<<10
		_, _ = io.Copy(io.Discard, lr)
		lr.R = nil
		drainPool.Put(lr)
	}
	body.Close()
}

var drainPool = sync.Pool{New: func() any { return new(io.LimitedReader) }}

// getOne runs a request whose answer is one JSON object.
func getOne[T any](ctx context.Context, c *Client, r *request) (*T, error) {
	st, resp, err := c.start(ctx, r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(resp.Body)
	var v *T
	if err := dec.Decode(&v); err != nil {
		derr := st.decodeError(resp, dec, err)
		finish(resp.Body, false)
		return nil, derr
	}
	if v == nil {
		derr := st.decodeError(resp, dec, errors.New("the answer is null"))
		finish(resp.Body, false)
		return nil, derr
	}
	finish(resp.Body, true)
	st.release()
	return v, nil
}

// getList runs a request whose answer is a JSON array, decoding it one
// element at a time.
func getList[T any](ctx context.Context, c *Client, r *request) ([]T, error) {
	out := []T{}
	for v, err := range streamList[T](ctx, c, r) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// streamList runs a request whose answer is a JSON array and yields its
// elements as they are decoded, so memory does not grow with the array.
// Stopping the loop early closes the response at once.
func streamList[T any](ctx context.Context, c *Client, r *request) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		st, resp, err := c.start(ctx, r)
		if err != nil {
			yield(zero, err)
			return
		}
		complete := false
		defer func() { finish(resp.Body, complete); st.release() }()
		if streamScenariosFast(st, resp, yield, &complete) {
			return
		}
		dec := json.NewDecoder(resp.Body)
		tok, err := dec.Token()
		if err != nil {
			yield(zero, st.decodeError(resp, dec, err))
			return
		}
		if tok == nil { // null: no elements
			complete = true
			return
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			yield(zero, st.decodeError(resp, dec, fmt.Errorf("expected a JSON array, got %v", tok)))
			return
		}
		// One holder for all elements: decoding into a fresh variable would
		// allocate one per element. It is zeroed first, so no element shares
		// memory with the one before.
		v := new(T)
		for dec.More() {
			*v = zero
			if err := dec.Decode(v); err != nil {
				yield(zero, st.decodeError(resp, dec, err))
				return
			}
			if !yield(*v, nil) {
				return
			}
		}
		if _, err := dec.Token(); err != nil {
			yield(zero, st.decodeError(resp, dec, err))
			return
		}
		complete = true
	}
}
