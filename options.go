package agenta

import (
	"log/slog"
	"net/http"
	"strings"
	"time"
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
