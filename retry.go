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
// within [least, most]; otherwise the wait grows exponentially from least with
// "equal jitter": a random point in the upper half of the step
// least·2^(attempt+1), capped at most and never below least, so that clients
// retrying together spread out. With the defaults the first wait is
// 250–500 ms. A Retry-After of 0 or a date already past says no more than
// "retry", and gets the exponential wait: honoured, it would send every
// client back at once, without a pause or jitter.
func backoff(least, most time.Duration, attempt int, resp *http.Response, now time.Time) time.Duration {
	most = max(most, least)
	if resp != nil {
		if wait, ok := retryAfter(resp.Header.Get("Retry-After"), now); ok && wait > 0 {
			return clamp(wait, least, most)
		}
	}
	upper := least
	for i := 0; i <= attempt && upper < most; i++ {
		if upper > most/2 {
			upper = most
			break
		}
		upper *= 2
	}
	upper = clamp(upper, least, most)
	if upper <= 0 {
		return 0
	}
	lower := max(upper/2, least)
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

// clamp returns d within [least, most], least <= most.
func clamp(d, least, most time.Duration) time.Duration { return min(max(d, least), most) }

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

// transientWaitFailure is WaitEvaluation's retry policy, as a pure function
// of a failed read's error; seen reports that a status read of this wait
// had succeeded before. The wait rides out what another read later may
// not meet: no answer (a refused or reset connection, a timeout), an answer
// cut short or stalled, 408, 429 and the 5xx of a server in trouble. It ends
// at once on what another read would only repeat: a refused argument, a
// 4xx, an unknown evaluation (404, or the status route's not-found 500,
// which matches ErrNotFound), a malformed id, a redirect not followed, an
// answer that is not the JSON expected or is over its limit, an untrusted
// certificate. Since the service answers an unknown or malformed id with
// 500, a 500 before any status was read is no evidence of trouble either,
// and ends the wait.
func transientWaitFailure(err error, seen bool) bool {
	if errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrAnswerTooLarge) || permanent(err) {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return transientAnswer(apiErr, seen)
	}
	var notFound *NotFoundError
	if errors.As(err, &notFound) {
		// A 2026 read answers its own internal errors with {"count":0}:
		// after it has shown the run, that is trouble, not absence.
		return seen
	}
	var decodeErr *DecodeError
	if errors.As(err, &decodeErr) {
		// An answer that broke off while being read, not one that is not
		// the JSON expected.
		var f *failure
		return errors.As(decodeErr.Err, &f)
	}
	var f *failure
	return errors.As(err, &f) // a transport failure, classified by call.reason
}

// malformedID is the service's 500 message for an id that is not a UUID.
const malformedID = "badly formed hexadecimal UUID string"

// transientAnswer is transientWaitFailure for a non-2xx answer.
func transientAnswer(e *APIError, seen bool) bool {
	switch code := e.StatusCode; {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code < 500, code == http.StatusNotImplemented, code == http.StatusHTTPVersionNotSupported:
		return false
	case e.Is(ErrNotFound), e.Message == malformedID:
		return false
	case code == http.StatusInternalServerError:
		return seen
	}
	return true
}

// waitPause returns WaitEvaluation's pause after its failures-th failed read
// in a row (from 1): the Client's backoff between its retries (least to most,
// exponential, with jitter), and at least the wait's interval or 250 ms,
// whichever is less, so that a Client without retry waits does not poll a
// server in trouble in a tight loop.
func waitPause(least, most, interval time.Duration, failures int) time.Duration {
	return max(backoff(least, most, failures-1, nil, time.Time{}), min(interval, DefaultRetryWaitMin))
}

// lastReadMargin bounds the time a wait keeps for its last read before its
// deadline (see planRead).
const lastReadMargin = 2 * time.Second

// planRead returns how long a wait pauses before its next read, given the
// pause it wants and the time left before its deadline. A pause that would reach the deadline is cut short, so that one last read
// ends before it: the deadline less a tenth of the time left, at most
// lastReadMargin; last then reports that no read follows that one. A wait
// never sleeps through its deadline without a read: a run that finished in
// the meantime is seen. after < 0 means there is no time left for a read.
func planRead(pause, left time.Duration) (after time.Duration, last bool) {
	margin := min(left/10, lastReadMargin)
	room := left - margin
	if pause < room {
		return pause, false
	}
	if room <= 0 {
		return -1, true
	}
	return room, true
}
