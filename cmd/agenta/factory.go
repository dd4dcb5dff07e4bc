package main

import (
	"errors"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/internal/text"
)

// Factory holds what every command shares: the streams, and the global
// flags that say which server to call with which key. Commands take the
// client from it only when they run, so that --help and usage errors never
// need a server.
type Factory struct {
	IO *IOStreams

	// Host is --host; empty means AGENTA_HOST.
	Host string
	// APIKeyFile is --api-key-file; empty means AGENTA_API_KEY. The key is
	// never a flag value, which ps and shell history would show.
	APIKeyFile string

	// AttemptTimeout is the hidden --attempt-timeout: see idleTimeout.
	AttemptTimeout time.Duration
	// Generation is --generation: which API the server speaks, 2024, 2026
	// or auto (detect); empty means AGENTA_API_GENERATION. agenta fake
	// reads it as the API to serve, and takes both too.
	Generation string
	// NoWorkerAfter is the hidden --no-worker-after: see noWorkerAfter.
	NoWorkerAfter time.Duration

	// getenv reads the environment; tests may replace it.
	getenv func(string) string
	// args is the command line, for eval run to find its report paths
	// when its flags cannot be parsed.
	args []string

	// The key read from APIKeyFile, once: the file may be a pipe
	// (/dev/stdin), which a second read would find empty.
	fileKey    string
	fileKeyErr error
	fileRead   bool
}

// newFactory returns a Factory on the given streams and the process's
// environment.
func newFactory(streams *IOStreams) *Factory {
	return &Factory{IO: streams, getenv: os.Getenv}
}

// hostURL returns the server's base URL, from --host or AGENTA_HOST, with
// "/api" added when it has no path, as NewClientFromEnv does.
func (f *Factory) hostURL() (string, error) {
	host, from := f.hostSetting()
	if host == "" {
		return "", usageErrorf("no server: set AGENTA_HOST or pass --host (for a local fake service, run 'agenta fake')")
	}
	u, err := url.Parse(host)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", usageErrorf("%s %q is not a URL such as https://cloud.agenta.ai or http://127.0.0.1:8080/api", from, shownHost(host))
	}
	// A credential in the URL would be sent to every proxy on the way and
	// shown by every message that names the host: refuse it, naming the
	// host without it.
	if u.User != nil || strings.Contains(u.Path, "@") { // an @ in the path: a password with a "/"
		return "", usageErrorf("%s %q carries credentials; give the key in AGENTA_API_KEY or --api-key-file instead", from, shownHost(host))
	}
	if strings.Trim(u.Path, "/") == "" {
		u.Path = "/api"
	}
	return u.String(), nil
}

// hostSetting returns the configured host, trimmed, and where it comes
// from: --host or AGENTA_HOST.
func (f *Factory) hostSetting() (host, from string) {
	host, from = f.Host, "--host"
	if host == "" {
		host, from = f.getenv("AGENTA_HOST"), "AGENTA_HOST"
	}
	return strings.TrimSpace(host), from
}

// idleTimeout is the longest an answer may stay silent once it has begun,
// and the longest an attempt waits for an answer's headers: a download
// that keeps arriving is bounded only by --timeout, however long it takes,
// and one that stalls ends after this. The hidden --attempt-timeout flag
// sets it, for tests of stalls that must not take a minute; the messages
// name its value.
var idleTimeout = time.Minute

// noWorkerAfter is how long a wait lets a 2026 run stay unfinished with
// no scenario before it says that no worker is taking the evaluation
// queue: the SDK's default, or the hidden --no-worker-after, for tests
// that must not wait two minutes.
var noWorkerAfter time.Duration

// generationTold reports whether the client is told which API the server
// speaks, by --generation or else AGENTA_API_GENERATION, rather than left
// to detect it.
func (f *Factory) generationTold() bool {
	g := f.Generation
	if g == "" {
		g = f.getenv("AGENTA_API_GENERATION")
	}
	return g == "2024" || g == "2026"
}

// Client returns an SDK client for the configured server and key.
func (f *Factory) Client() (*agenta.Client, error) {
	base, err := f.hostURL()
	if err != nil {
		return nil, err
	}
	if f.AttemptTimeout < 0 {
		return nil, usageErrorf("--attempt-timeout %s: want a positive duration", f.AttemptTimeout)
	}
	if f.AttemptTimeout > 0 {
		idleTimeout = f.AttemptTimeout
	}
	if f.NoWorkerAfter < 0 {
		return nil, usageErrorf("--no-worker-after %s: want a positive duration", f.NoWorkerAfter)
	}
	noWorkerAfter = f.NoWorkerAfter
	opts := []agenta.Option{agenta.WithBaseURL(base), agenta.WithUserAgent("agenta-cli/" + agenta.Version),
		agenta.WithTimeout(idleTimeout), agenta.WithIdleTimeout(idleTimeout)}
	switch f.Generation {
	case "":
	case "auto":
		// The flag wins over AGENTA_API_GENERATION, auto too.
		opts = append(opts, agenta.WithGeneration(agenta.GenerationUnknown))
	case "2024":
		opts = append(opts, agenta.WithGeneration(agenta.Generation2024))
	case "2026":
		opts = append(opts, agenta.WithGeneration(agenta.Generation2026))
	case "both":
		return nil, usageErrorf("--generation both: only agenta fake serves both; a server speaks 2024 or 2026 (or give auto to detect it)")
	default:
		return nil, usageErrorf("--generation %q: want 2024, 2026 or auto", text.Clip(f.Generation, 100))
	}
	if f.APIKeyFile != "" {
		key, err := f.keyFromFile()
		if err != nil {
			return nil, err
		}
		opts = append(opts, agenta.WithAPIKey(key))
	}
	client, err := agenta.NewClientFromEnv(opts...)
	var argErr *agenta.ArgumentError
	if errors.As(err, &argErr) && argErr.Name == "WithBaseURL" {
		// Name the setting the user wrote, not the SDK's option.
		host, from := f.hostSetting()
		return nil, usageErrorf("%s %q: %s", from, shownHost(host), argErr.Reason)
	}
	if err != nil {
		return nil, withKind(err, kindUsage)
	}
	return client, nil
}

// serverHost returns the host:port the client calls, for error messages.
func (f *Factory) serverHost() string {
	base, err := f.hostURL()
	if err != nil {
		return "the server"
	}
	u, _ := url.Parse(base)
	return u.Host
}

// keyFromFile returns the key in --api-key-file, reading the file the
// first time only.
func (f *Factory) keyFromFile() (string, error) {
	if !f.fileRead {
		f.fileKey, f.fileKeyErr = readKeyFile(f.APIKeyFile)
		f.fileRead = true
	}
	return f.fileKey, f.fileKeyErr
}

// readKeyFile reads an API key from a file: its first line, trimmed. The
// key itself never appears in an error, nor does the name of a file that
// cannot be read: in --api-key-file "$AGENTA_API_KEY", a slip a CI script
// makes, that name is the key.
func readKeyFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", usageErrorf("--api-key-file: cannot read the file: %v", errorReason(err))
	}
	key, _, _ := strings.Cut(string(data), "\n")
	key = strings.TrimSpace(key)
	if key == "" {
		return "", usageErrorf("--api-key-file: %s is empty", text.Line(path, 200))
	}
	if strings.IndexFunc(key, unicode.IsControl) >= 0 {
		return "", usageErrorf("--api-key-file: the key in %s contains a control character", text.Line(path, 200))
	}
	return key, nil
}

// errorReason returns the reason of a file error without the operation
// and path its text repeats.
func errorReason(err error) error {
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err
	}
	return err
}

// shownHost is the host setting as a message shows it: its credentials
// hidden (https://***@host/api, ?api_key=***), and bounded.
func shownHost(host string) string { return text.Clip(text.URL(host), 200) }
