package agenta

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry defaults. They suit an interactive service: a caller waits at most a
// few seconds per retry, and three retries ride out a rolling restart.
const (
	DefaultMaxRetries   = 3
	DefaultRetryWaitMin = 250 * time.Millisecond
	DefaultRetryWaitMax = 5 * time.Second
	DefaultTimeout      = 60 * time.Second
)

// shouldRetry is the retry policy, as a pure function of one attempt's
// outcome.
//
// Reads (idempotent) retry transport errors, 429, 502, 503 and 504. Creates
// retry only 429, which the server sends before doing any work, and
// connection failures before any byte of the request was written (wrote is
// false and the error is from dialling). 500 is never retried: this service
// uses it for deterministic failures such as a missing variant.
func shouldRetry(idempotent, wrote bool, resp *http.Response, err error) bool {
	if err != nil {
		if permanent(err) {
			return false
		}
		return idempotent || !wrote && dialFailure(err)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return idempotent
	}
	return false
}

// permanent reports transport errors that another attempt cannot fix: a
// certificate the client does not trust, a redirect loop, a redirect the
// caller's policy refused or one to a scheme other than http and https
// (see stripCredentialsOnRedirect). The caller's own cancellation is
// handled before this is asked.
func permanent(err error) bool {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var verification *tls.CertificateVerificationError
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalidCert) || errors.As(err, &verification) {
		return true
	}
	var refused *redirectRefused
	return errors.As(err, &refused) || errors.Is(err, errTooManyRedirects)
}

// backoff returns the wait before retry number attempt+1 (attempt counts
// from 0). A Retry-After header, in seconds or as an HTTP date, is honoured
// but never beyond max; otherwise the wait grows exponentially from min with
// "equal jitter": a random point in the upper half of the step
// min·2^(attempt+1), capped at max and never below min, so that clients
// retrying together spread out. With the defaults the first wait is
// 250–500 ms.
func backoff(min, max time.Duration, attempt int, resp *http.Response, now time.Time) time.Duration {
	if max < min {
		max = min
	}
	if resp != nil {
		if wait, ok := retryAfter(resp.Header.Get("Retry-After"), now); ok {
			return clamp(wait, 0, max)
		}
	}
	upper := min
	for i := 0; i <= attempt && upper < max; i++ {
		if upper > max/2 {
			upper = max
			break
		}
		upper *= 2
	}
	upper = clamp(upper, min, max)
	if upper <= 0 {
		return 0
	}
	lower := upper / 2
	if lower < min {
		lower = min
	}
	return lower + rand.N(upper-lower+1)
}

// retryAfter parses a Retry-After value: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	// A number too big for int64 is still delay-seconds (ParseInt then
	// returns ±MaxInt64 with ErrRange): a huge wait, capped, not garbage.
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			return 24 * time.Hour, true
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return at.Sub(now), true
	}
	return 0, false
}

func clamp(d, lo, hi time.Duration) time.Duration {
	if d < lo {
		return lo
	}
	if d > hi {
		return hi
	}
	return d
}

// dialFailure reports an error from establishing the connection (DNS,
// connect, proxy CONNECT), when the request cannot have reached the server.
// Anything later is treated as possibly received.
func dialFailure(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && (opErr.Op == "dial" || opErr.Op == "proxyconnect")
}
