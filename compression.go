package agenta

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
)

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
