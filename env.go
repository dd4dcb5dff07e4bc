package agenta

import (
	"errors"
	"net/url"
	"os"
	"strings"
)

// The environment variables NewClientFromEnv reads.
const (
	envHost   = "AGENTA_HOST"
	envAPIKey = "AGENTA_API_KEY"
)

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
