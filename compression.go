package agenta

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
)

// The SDK inflates gzip answers itself instead of leaving it to net/http.
// compress/gzip, as net/http uses it, holds back the last bytes of a member
// until it has read what follows it (the next member, or the end of the
// body), so a server that sends a complete gzip answer and then holds back
// the end of the body would hold back the end of the JSON as well. Here a
// member's last bytes are returned as soon as its trailer is read; what
// follows is read only if the caller asks for more.

// acceptGzip reports whether the Client asks for gzip and inflates it
// itself: with its own transport, or a caller's *http.Transport that has
// compression on. Any other RoundTripper keeps its own behaviour.
func acceptGzip(rt http.RoundTripper) bool {
	t, ok := rt.(*http.Transport)
	return ok && !t.DisableCompression
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

// gzipBody inflates a gzip body of one or more members.
type gzipBody struct {
	body io.ReadCloser
	r    *bufio.Reader
	zr   *gzip.Reader
	next bool  // the member before has ended; look for another on the next Read
	err  error // sticky
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil || g.next {
		var err error
		if g.zr == nil {
			g.zr, err = gzip.NewReader(g.r)
		} else {
			err = g.zr.Reset(g.r)
		}
		if err != nil {
			if err == io.EOF {
				// An empty body, as net/http reports it, or the end of the
				// last member.
				g.err = io.EOF
			} else {
				g.err = err
			}
			return 0, g.err
		}
		g.zr.Multistream(false)
		g.next = false
	}
	n, err := g.zr.Read(p)
	if err == io.EOF {
		// The member has ended and its checksum matched. Another may
		// follow, but reading its header could wait on the network: do it
		// on the next Read.
		g.next = true
		if n == 0 {
			return g.Read(p)
		}
		return n, nil
	}
	if err != nil {
		g.err = err
	}
	return n, err
}

func (g *gzipBody) Close() error { return g.body.Close() }
