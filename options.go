package agenta

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agenta-go/agenta/internal/text"
)

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
	idle       time.Duration
	maxRetries int
	waitMin    time.Duration
	waitMax    time.Duration
	logger     *slog.Logger
	limits     ResponseLimits
	generation Generation // WithGeneration or AGENTA_API_GENERATION
}

// WithBaseURL replaces the base URL, such as "https://cloud.agenta.ai/api".
// It is how options override AGENTA_HOST in NewClientFromEnv; given to
// NewClient, it replaces NewClient's baseURL argument.
func WithBaseURL(baseURL string) Option {
	return func(s *settings) error {
		s.baseURL = baseURLSetting{value: baseURL, name: "WithBaseURL"}
		return nil
	}
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
// replaces the 60 s default per-attempt timeout; WithTimeout overrides
// both. The SDK applies it itself, to the wait for the answer's headers
// (see WithTimeout), so hc.Timeout never cuts off a long answer. The SDK
// asks for gzip and inflates it itself unless hc's transport is an
// *http.Transport with DisableCompression; with a transport that is not an
// *http.Transport, it also ends each attempt, and closes its body, when one
// of the attempt's timeouts or the context ends, in case the transport
// does not.
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

// WithTimeout limits each attempt's wait for the answer, from sending the
// request to the answer's headers (ErrAttemptTimeout). The default is 60 s;
// 0 means no limit. Reading the body is bounded by progress, not by a wall
// clock: each wait for its next bytes is limited by the idle timeout
// (WithIdleTimeout, by default this same duration), so that a long answer
// that keeps arriving is never cut off. The context passed to each call
// bounds all attempts together, bodies included.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return invalid("WithTimeout", "must not be negative, got %s", d)
		}
		s.timeout = d
		return nil
	}
}

// WithIdleTimeout limits how long a read of an answer's body waits for its
// next bytes; an answer that stalls longer ends the call with an error that
// matches ErrIdleTimeout (and ErrAttemptTimeout). Only the time spent
// waiting on the network counts: a caller that takes its time over each
// row of StreamEvaluationScenarios never trips it. The default is the
// per-attempt timeout (WithTimeout); 0 means no limit, leaving the body to
// the context's deadline.
func WithIdleTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return invalid("WithIdleTimeout", "must not be negative, got %s", d)
		}
		s.idle = d
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

func parseBaseURL(raw string) (string, error) {
	trimmed := strings.TrimSpace(raw)
	switch {
	case trimmed == "":
		return "", invalid("baseURL", "is empty")
	case trimmed != raw:
		// A trailing space would be escaped into the path (/api%20), a
		// leading one breaks parsing with a confusing message.
		return "", invalid("baseURL", "has leading or trailing spaces; remove them")
	case !strings.Contains(raw, "://") && hostAndPort(raw):
		scheme := "https://"
		if local(raw) {
			scheme = "http://"
		}
		return "", invalid("baseURL", "has no scheme; did you mean %s%s?", scheme, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", invalid("baseURL", "is not a valid URL: %v", unwrapURLError(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", invalid("baseURL", "must use http or https, got scheme %q", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return "", invalid("baseURL", "has no host")
	case u.User != nil:
		return "", invalid("baseURL", "must not carry credentials; use WithAPIKey or WithHeader")
	case strings.Contains(u.Path, "@"):
		// user:pass/word@host parses as host "user:pass" and path
		// "/word@host": a password written with a "/" in it.
		return "", invalid("baseURL", "must not carry credentials (an @ in its path); use WithAPIKey or WithHeader")
	case u.RawQuery != "" || u.ForceQuery:
		return "", invalid("baseURL", "must not have a query")
	case u.Fragment != "":
		return "", invalid("baseURL", "must not have a fragment")
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// hostAndPort reports a scheme-less base URL that starts with a host name
// or address and an optional port, such as "127.0.0.1:8080/api" or
// "cloud.agenta.ai/api", so that the error can suggest the URL meant. It
// holds no "@", query or fragment, so the suggestion never echoes
// credentials.
func hostAndPort(raw string) bool {
	if strings.ContainsAny(raw, "@?#") || hasControl(raw) {
		return false
	}
	hostPort, _, _ := strings.Cut(raw, "/")
	host, port, hasPort := strings.Cut(hostPort, ":")
	if host == "" || hasPort && port == "" {
		return false
	}
	for _, r := range port {
		if r < '0' || r > '9' {
			return false
		}
	}
	for _, r := range host {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// local reports a scheme-less base URL for this machine or a private
// network, which is most likely served over plain http.
func local(raw string) bool {
	host, _, _ := strings.Cut(raw, "/")
	host, _, _ = strings.Cut(host, ":")
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && (ip.IsLoopback() || ip.IsPrivate())
}

// Default limits on the decoded bytes of a 2xx answer. net/http inflates a
// gzip answer transparently, so a few hundred KiB on the wire can unpack to
// gigabytes; these bound what a call reads, whatever the server sends.
const (
	// DefaultSingleLimit bounds an answer that is one object, such as a
	// variant or a span tree.
	DefaultSingleLimit = 32 << 20
	// DefaultListLimit bounds a whole list answer, such as the scenarios
	// FetchEvaluationScenarios returns: 100,000 rows are about 100 MB.
	DefaultListLimit = 256 << 20
	// DefaultElementLimit bounds one element of a list or of a stream, and
	// the whitespace before it. StreamEvaluationScenarios has no limit on
	// the whole answer, which it never holds.
	DefaultElementLimit = 16 << 20
)

// ResponseLimits bounds the decoded bytes of 2xx answers, by kind. A zero
// field keeps its default. An answer over a limit ends the call with a
// *DecodeError wrapping a *LimitError, which errors.Is matches to
// ErrAnswerTooLarge.
type ResponseLimits struct {
	// Single bounds an answer that is one object; DefaultSingleLimit.
	Single int64
	// List bounds a whole list answer; DefaultListLimit.
	List int64
	// Element bounds one element of a list or stream; DefaultElementLimit.
	Element int64
}

// withDefaults returns l with each zero field set to its default.
func (l ResponseLimits) withDefaults() ResponseLimits {
	if l.Single == 0 {
		l.Single = DefaultSingleLimit
	}
	if l.List == 0 {
		l.List = DefaultListLimit
	}
	if l.Element == 0 {
		l.Element = DefaultElementLimit
	}
	return l
}

// whole returns the limit on a whole answer named by field, or 0 for none.
func (l ResponseLimits) whole(field string) int64 {
	switch field {
	case "Single":
		return l.Single
	case "List":
		return l.List
	}
	return 0
}

// WithResponseLimits replaces the default limits on the decoded size of 2xx
// answers (DefaultSingleLimit, DefaultListLimit, DefaultElementLimit). A
// zero field keeps its default; a negative one is refused.
func WithResponseLimits(l ResponseLimits) Option {
	return func(s *settings) error {
		for _, f := range []struct {
			name  string
			value int64
		}{{"Single", l.Single}, {"List", l.List}, {"Element", l.Element}} {
			if f.value < 0 {
				return invalid("WithResponseLimits", "ResponseLimits.%s must not be negative, got %d", f.name, f.value)
			}
		}
		s.limits = l
		return nil
	}
}

// The environment variables NewClientFromEnv reads.
const (
	envHost   = "AGENTA_HOST"
	envAPIKey = "AGENTA_API_KEY"
)

// baseURLSetting is the base URL a Client is built with and where it came
// from, so that a refusal names what the caller must fix: the baseURL
// argument, WithBaseURL or AGENTA_HOST.
type baseURLSetting struct {
	value   string
	name    string
	fromEnv bool
}

// parse checks the base URL, naming its origin in the error.
func (b baseURLSetting) parse() (string, error) {
	if b.fromEnv && b.value == "" {
		return "", invalid(envHost, "is not set; set it to your server's URL, such as https://cloud.agenta.ai, or pass WithBaseURL")
	}
	base, err := parseBaseURL(b.value)
	var argErr *ArgumentError
	if errors.As(err, &argErr) {
		argErr.Name = b.name
	}
	return base, err
}

// hostToBaseURL adds "/api" to a host URL without a path. Anything it cannot
// read is returned as it is, for parseBaseURL to refuse with its reason.
func hostToBaseURL(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return host
	}
	if u.Path == "" || u.Path == "/" {
		return strings.TrimSuffix(host, "/") + "/api"
	}
	return host
}

// Generation names which API a server speaks: the mid-2024 routes of the
// published interface (/evaluations/{id}, /variants/…, up to Agenta v0.95)
// or today's (runs, scenarios, results, traces: v0.103.4 on, the same
// slice from v0.111 to v0.113).
type Generation int

// The generations. GenerationUnknown is the zero value: not set, detect.
const (
	GenerationUnknown Generation = iota
	Generation2024
	Generation2026
)

// String returns "2024", "2026" or "unknown".
func (g Generation) String() string {
	switch g {
	case Generation2024:
		return "2024"
	case Generation2026:
		return "2026"
	}
	return "unknown"
}

// envGeneration is the environment variable NewClientFromEnv reads the
// generation from.
const envGeneration = "AGENTA_API_GENERATION"

// WithGeneration tells the Client which API the server speaks, so that
// Generation never probes it. GenerationUnknown means detect, the default.
func WithGeneration(g Generation) Option {
	return func(s *settings) error {
		if g < GenerationUnknown || g > Generation2026 {
			return invalid("WithGeneration", "%d is not a Generation: use Generation2024 or Generation2026", int(g))
		}
		s.generation = g
		return nil
	}
}

// parseGeneration reads AGENTA_API_GENERATION: "2024", "2026", or empty or
// "auto" to detect.
func parseGeneration(v string) (Generation, error) {
	switch v {
	case "", "auto":
		return GenerationUnknown, nil
	case "2024":
		return Generation2024, nil
	case "2026":
		return Generation2026, nil
	}
	return GenerationUnknown, invalid(envGeneration, "is %q: set it to 2024, 2026 or auto (or leave it unset to detect)", text.Clip(v, maxMessage))
}
