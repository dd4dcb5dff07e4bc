package agenta

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

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
		// The service's headers are a few hundred bytes. net/http's
		// default, 10 MiB, let a huge Location cost 48 MiB of heap on a
		// create and 240 MiB on a GET that follows it.
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// poolKeeper forwards RoundTrip only, so that go-retryablehttp cannot empty
// the idle pool. It also bounds each attempt by progress rather than by a
// wall clock: timeout bounds the wait for the answer's headers, and idle
// each wait for the next bytes of its body (see attemptBody), so that a long
// answer that keeps arriving is never cut off, and a stalled one is. The
// caller's context bounds the whole call. With guard set (any RoundTripper
// but an *http.Transport), it also ends the attempt when its context ends:
// a wait for the answer returns the context's error, and the answer's body
// is closed. net/http's transport does both by itself; a hand-written
// RoundTripper may do neither, and the SDK never waits past any limit.
type poolKeeper struct {
	next    http.RoundTripper
	guard   bool
	timeout time.Duration // for the answer's headers; 0: no limit
	idle    time.Duration // for each read of the body; 0: no limit
}

func (p poolKeeper) RoundTrip(r *http.Request) (*http.Response, error) {
	parent := r.Context()
	if p.timeout <= 0 && p.idle <= 0 && (!p.guard || parent.Done() == nil) {
		return p.next.RoundTrip(r)
	}
	a := &attemptBody{timeout: p.timeout, idle: p.idle}
	a.ctx, a.cancel = context.WithCancelCause(parent)
	if p.timeout > 0 {
		a.timer = time.AfterFunc(p.timeout, a.expire)
	}
	resp, err := p.send(r.WithContext(a.ctx))
	if a.timer != nil && !a.timer.Stop() && err == nil {
		// The timer fired as the headers came: the attempt is over.
		resp.Body.Close()
		resp, err = nil, context.Cause(a.ctx)
	}
	if err != nil {
		if cause, ok := context.Cause(a.ctx).(*timeoutError); ok {
			err = cause // name the limit that ended the attempt
		}
		a.cancel(nil)
		return nil, err
	}
	if resp.Body == nil {
		a.cancel(nil)
		return resp, nil
	}
	a.body = resp.Body
	a.reading.Store(true)
	if p.idle > 0 && a.timer == nil {
		a.timer = time.AfterFunc(p.idle, a.expire)
		a.timer.Stop()
	}
	if p.guard {
		body := resp.Body
		a.stop = context.AfterFunc(a.ctx, func() { body.Close() })
	}
	resp.Body = a
	return resp, nil
}

// send is the attempt itself. With guard set, a wait for the answer ends
// when the attempt's context does; an answer that comes too late is
// closed, since it holds a connection.
func (p poolKeeper) send(r *http.Request) (*http.Response, error) {
	if !p.guard {
		return p.next.RoundTrip(r)
	}
	ctx := r.Context()
	type answer struct {
		resp *http.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := p.next.RoundTrip(r)
		answered <- answer{resp, err}
	}()
	select {
	case a := <-answered:
		return a.resp, a.err
	case <-ctx.Done():
		go func() {
			if a := <-answered; a.resp != nil && a.resp.Body != nil {
				a.resp.Body.Close()
			}
		}()
		return nil, context.Cause(ctx)
	}
}

// attemptBody is the body of an answer as poolKeeper bounds it. One timer
// bounds the wait for the headers, then each Read: it runs only while a
// Read waits for bytes, so time the caller spends between reads (on each
// row of a stream) never counts. When it fires, it ends the attempt's
// context, which breaks off the read; the read then reports the limit
// that expired, or the caller's context's error.
type attemptBody struct {
	body    io.ReadCloser
	ctx     context.Context // the attempt's: the caller's, and ended by the timer
	cancel  context.CancelCauseFunc
	timer   *time.Timer // nil without a limit
	timeout time.Duration
	idle    time.Duration
	reading atomic.Bool // the headers have come: the timer bounds a read
	stop    func() bool // with guard: stops closing the body when ctx ends
}

// expire ends the attempt with the limit that expired.
func (a *attemptBody) expire() {
	if a.reading.Load() {
		a.cancel(&timeoutError{idle: true, limit: a.idle})
		return
	}
	a.cancel(&timeoutError{limit: a.timeout})
}

func (a *attemptBody) Read(p []byte) (int, error) {
	bounded := a.timer != nil && a.idle > 0
	if bounded {
		a.timer.Reset(a.idle)
	}
	n, err := a.body.Read(p)
	if bounded {
		a.timer.Stop()
	}
	if err != nil && err != io.EOF && a.ctx.Err() != nil {
		if cause, ok := context.Cause(a.ctx).(*timeoutError); ok {
			err = cause
		} else {
			err = a.ctx.Err() // the caller's context ended
		}
	}
	return n, err
}

func (a *attemptBody) Close() error {
	if a.timer != nil {
		a.timer.Stop()
	}
	if a.stop != nil {
		a.stop()
	}
	err := a.body.Close()
	a.cancel(nil)
	return err
}

// stripCredentialsOnRedirect drops credential headers from any redirected
// request whose origin (scheme, host and port) differs from the original
// request's. net/http alone keeps them across ports of one host. It ends a
// redirect loop, and refuses a redirect to a scheme other than http and
// https once the caller's policy (next) has accepted it.
func stripCredentialsOnRedirect(names []string, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errTooManyRedirects
		}
		if !followRedirect(req, via) {
			// The engine turns the redirect into an *APIError naming its
			// Location.
			return http.ErrUseLastResponse
		}
		if !sameOrigin(req.URL, via[0].URL) {
			for _, name := range names {
				req.Header.Del(name)
			}
		}
		if next != nil {
			if err := next(req, via); err != nil {
				if err == http.ErrUseLastResponse {
					return err
				}
				return &redirectRefused{err}
			}
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			// net/http would refuse it with an error that has no type. A
			// scheme is the server's text, lowercased, which the scrub would
			// not recognise as a key: only one too short to be a secret
			// (see credentialParts) is named.
			if len(req.URL.Scheme) < 8 {
				return &redirectRefused{errors.New("unsupported protocol scheme " + strconv.Quote(req.URL.Scheme))}
			}
			return &redirectRefused{errors.New("unsupported protocol scheme (a redirect to neither http nor https)")}
		}
		return nil
	}
}

// followRedirect reports whether a redirect may be followed. A request that
// creates something (any method but GET and HEAD) follows at most one 307 or
// 308, and only to the same origin: those resend the body, and a create is
// never sent twice but for that one hop. It never follows 301, 302 or 303,
// which would turn it into a GET.
func followRedirect(req *http.Request, via []*http.Request) bool {
	first := via[0]
	if first.Method == http.MethodGet || first.Method == http.MethodHead {
		return true
	}
	if req.Response == nil {
		return false
	}
	switch req.Response.StatusCode {
	case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return len(via) == 1 && sameOrigin(req.URL, first.URL)
	}
	return false
}

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

// The SDK inflates gzip answers itself instead of leaving it to net/http.
// compress/gzip, as net/http uses it, returns the last bytes of a member
// only once it has read the member's trailer and what follows it (the next
// member, or the end of the body), so a server that sends a complete answer
// and then holds back the trailer or the end of the body would hold back the
// end of the JSON as well. Here the inflated bytes are returned as soon as
// they are inflated; the trailer is checked, and a next member looked for,
// only when the caller reads on.

// acceptGzip reports whether the Client asks for gzip and inflates it
// itself: always, but with a caller's *http.Transport that has compression
// off. A RoundTripper that wraps an *http.Transport, such as a tracing
// one, would otherwise leave gzip to net/http, which holds back the end of
// a complete answer until the body ends (see above); asking for gzip in
// the request turns net/http's own inflation off.
func acceptGzip(rt http.RoundTripper) bool {
	t, ok := rt.(*http.Transport)
	return !ok || !t.DisableCompression
}

// inflate replaces the body of a gzip answer to a request that asked for
// gzip with its inflated bytes, as net/http would have.
func inflate(resp *http.Response) {
	if !strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		return
	}
	resp.Body = &gzipBody{body: resp.Body, r: bufio.NewReader(resp.Body)}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
}

// gzipBody inflates a gzip body of one or more members (RFC 1952).
type gzipBody struct {
	body    io.ReadCloser
	r       *bufio.Reader
	z       io.ReadCloser // the member's DEFLATE stream; nil between members
	crc     uint32
	size    uint32
	trailer bool  // the member's data has ended; its trailer comes next
	err     error // sticky
}

func (g *gzipBody) Read(p []byte) (int, error) {
	for g.err == nil {
		if g.trailer {
			g.err = g.checkTrailer()
			continue
		}
		if g.z == nil {
			if g.err = g.nextMember(); g.err != nil {
				break
			}
		}
		n, err := g.z.Read(p)
		g.crc = crc32.Update(g.crc, crc32.IEEETable, p[:n])
		g.size += uint32(n)
		switch {
		case err == io.EOF:
			// The data has ended: return it now, and read the trailer,
			// which could wait on the network, on the next Read.
			g.trailer = true
		case err != nil:
			g.err = err
		}
		if n > 0 || g.err != nil {
			return n, g.err
		}
	}
	return 0, g.err
}

// nextMember reads a member's header and starts inflating its data. At the
// end of the body after a member it returns io.EOF; an empty body is no
// bytes too, as net/http reports it.
func (g *gzipBody) nextMember() error {
	var h [10]byte
	if _, err := io.ReadFull(g.r, h[:]); err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return io.ErrUnexpectedEOF
	}
	if h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 {
		return gzip.ErrHeader
	}
	flags := h[3]
	if flags&0x04 != 0 { // FEXTRA: a length, then that many bytes
		var n [2]byte
		if _, err := io.ReadFull(g.r, n[:]); err != nil {
			return io.ErrUnexpectedEOF
		}
		if _, err := g.r.Discard(int(binary.LittleEndian.Uint16(n[:]))); err != nil {
			return io.ErrUnexpectedEOF
		}
	}
	for _, field := range []byte{0x08, 0x10} { // FNAME, FCOMMENT: zero-terminated
		if flags&field == 0 {
			continue
		}
		for i := 0; ; i++ {
			c, err := g.r.ReadByte()
			if err != nil {
				return io.ErrUnexpectedEOF
			}
			if c == 0 {
				break
			}
			if i >= 64<<10 {
				return gzip.ErrHeader // bounded, as any header should be
			}
		}
	}
	if flags&0x02 != 0 { // FHCRC
		if _, err := g.r.Discard(2); err != nil {
			return io.ErrUnexpectedEOF
		}
	}
	g.z = flate.NewReader(g.r) // g.r is an io.ByteReader: flate reads no further than its stream
	g.crc, g.size = 0, 0
	return nil
}

// checkTrailer reads the member's CRC-32 and size and checks them. It
// returns nil, so that the next Read looks for another member.
func (g *gzipBody) checkTrailer() error {
	g.trailer = false
	g.z.Close()
	g.z = nil
	var t [8]byte
	if _, err := io.ReadFull(g.r, t[:]); err != nil {
		return io.ErrUnexpectedEOF
	}
	if binary.LittleEndian.Uint32(t[:4]) != g.crc || binary.LittleEndian.Uint32(t[4:]) != g.size {
		return gzip.ErrChecksum
	}
	return nil
}

func (g *gzipBody) Close() error { return g.body.Close() }
