package agenta

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileGzip returns the gzip members of prefix, n MiB of fill, and
// suffix, concatenated: net/http's transparent gzip inflates them as one
// stream. A 1 MiB member of one repeated byte is about 1 KiB.
func hostileGzip(prefix string, fill byte, mib int, suffix string) []byte {
	member := func(data []byte) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		return b.Bytes()
	}
	one := member(bytes.Repeat([]byte{fill}, 1<<20))
	var out bytes.Buffer
	out.Write(member([]byte(prefix)))
	for range mib {
		out.Write(one)
	}
	out.Write(member([]byte(suffix)))
	return out.Bytes()
}

// hostilePeakHeap runs fn and returns how far the heap grew above where it
// was before, sampled every half millisecond. The GC runs more often than
// by default while fn runs, so the peak follows live memory closely.
func hostilePeakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	before := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	<-sampled
	if p := peak.Load(); p > before {
		return p - before
	}
	return 0
}

// hostileBombServer answers every request with body, gzip-encoded.
func hostileBombServer(t *testing.T, body []byte) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s.URL + "/api"
}

// Item 2: a gzip bomb in a 2xx answer is refused at the default limit of
// its kind, with an error that names the limit and how to raise it, and the
// heap grows near that limit, not with the bomb.
func TestHostileGzipBombDefaults(t *testing.T) {

	cases := []struct {
		name  string
		op    hostileOp
		body  []byte
		limit int64
		// growth is how many times the limit the heap may grow by: the
		// SDK's buffer grows to the limit and no further, and the heap
		// holds it and the one it replaced.
		growth int64
	}{
		{"single answer, one huge string", hostileGetVariant,
			hostileGzip(`{"app_id":"`, 'a', 256, `"}`), 32 << 20, 2},
		{"streamed element, one endless row", hostileStream,
			hostileGzip(`[{"id":"`, 'a', 256, `"}]`), 16 << 20, 2},
		{"streamed element, endless whitespace after [", hostileStream,
			hostileGzip(`[`, ' ', 256, `]`), 16 << 20, 2},
		{"list element, one endless row", hostileListHuman,
			hostileGzip(`[{"id":"`, 'a', 256, `"}]`), 16 << 20, 2},
		{"list element, endless whitespace after [", hostileCreateEvaluation,
			hostileGzip(`[`, ' ', 256, `]`), 16 << 20, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, hostileBombServer(t, tc.body), WithTimeout(time.Minute))
			var err error
			grew := hostilePeakHeap(func() { err = tc.op.run(context.Background(), c) })
			if !errors.Is(err, ErrAnswerTooLarge) {
				t.Fatalf("%s: got %v, want an error matching ErrAnswerTooLarge", tc.op.name, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "WithResponseLimits") || !strings.Contains(msg, "MiB") {
				t.Errorf("the error should name the limit and WithResponseLimits, got %q", msg)
			}
			t.Logf("the heap grew by %d MiB for a %d MiB limit and 256 MiB inflated", grew>>20, tc.limit>>20)
			if max := uint64(tc.growth*tc.limit + 16<<20); grew > max {
				t.Errorf("the heap grew by %d MiB for a %d MiB limit, want at most %d MiB", grew>>20, tc.limit>>20, max>>20)
			}
			hostileCheckError(t, err)
		})
	}
}

// Item 4: the creating operations follow at most one 307 or 308, only to
// the same origin, and never 301, 302 or 303; the error names Location.
func TestHostileRedirectCreates(t *testing.T) {

	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(other.Close)

	cases := []struct {
		name     string
		status   int
		location string // "" means the other server
		maxSent  int64
	}{
		{"307 loop", http.StatusTemporaryRedirect, "/api/evaluations", 2},
		{"308 loop", http.StatusPermanentRedirect, "/api/evaluations", 2},
		{"307 to another origin", http.StatusTemporaryRedirect, "", 1},
		{"301", http.StatusMovedPermanently, "/api/evaluations", 1},
		{"302", http.StatusFound, "/api/evaluations", 1},
		{"303", http.StatusSeeOther, "/api/evaluations", 1},
	}
	for _, tc := range cases {
		for _, op := range []hostileOp{hostileCreateEvaluation, hostileAddVariant} {
			t.Run(tc.name+"/"+op.name, func(t *testing.T) {
				var sent atomic.Int64
				location := tc.location
				if location == "" {
					location = other.URL + "/api/evaluations"
				}
				s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					sent.Add(1)
					w.Header().Set("Location", location)
					w.WriteHeader(tc.status)
				}))
				t.Cleanup(s.Close)
				elsewhere.Store(0)
				c := hostileClient(t, s.URL+"/api", WithTimeout(5*time.Second))
				err := op.run(context.Background(), c)
				if n := sent.Load() + elsewhere.Load(); n > tc.maxSent {
					t.Errorf("the create was sent %d times, want at most %d", n, tc.maxSent)
				}
				if elsewhere.Load() != 0 {
					t.Errorf("the create was sent to another origin %d times, want never", elsewhere.Load())
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status {
					t.Fatalf("got %v (%T), want an *APIError with status %d", err, err, tc.status)
				}
				if !strings.Contains(err.Error(), location) {
					t.Errorf("the error should name the Location %q, got %q", location, err)
				}
				hostileCheckError(t, err)
			})
		}
	}
}

// A single same-origin 307 on a create is still followed: the body is
// sent again once, to where the server asked.
func TestHostileRedirectCreateFollowedOnce(t *testing.T) {
	var sent atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		if r.URL.Path == "/api/variants/from-base" {
			w.Header().Set("Location", "/api/v2/variants/from-base")
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, `{"app_id":"a-1","variant_id":"v-2","variant_name":"bot.precise","base_id":"b-1","revision":1}`)
	}))
	t.Cleanup(s.Close)
	c := hostileClient(t, s.URL+"/api")
	if err := hostileAddVariant.run(context.Background(), c); err != nil {
		t.Fatalf("AddVariantFromBase after one 307: %v, want success", err)
	}
	if n := sent.Load(); n != 2 {
		t.Errorf("the server saw %d requests, want 2 (the 307 and the one it pointed to)", n)
	}
}

// gzipBody reads what net/http's transparent gzip reads: members one after
// another, an empty body as no bytes, and a corrupt stream as an error.
func TestHostileGzipBody(t *testing.T) {
	members := hostileGzip(`{"a":`, ' ', 1, `1}`)
	cases := []struct {
		name    string
		body    []byte
		want    string
		wantErr bool
	}{
		{"members", members, `{"a":` + strings.Repeat(" ", 1<<20) + `1}`, false},
		{"empty", nil, "", false},
		{"header fields", hostileGzipHeader(`{"a":1}`), `{"a":1}`, false},
		{"bad checksum", hostileBadChecksum(`{"a":1}`), "", true},
		{"not gzip", []byte("plain"), "", true},
		{"cut", members[:len(members)-3], "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{Header: http.Header{"Content-Encoding": {"gzip"}}, Body: io.NopCloser(bytes.NewReader(tc.body))}
			inflate(resp)
			got, err := io.ReadAll(resp.Body)
			if tc.wantErr != (err != nil) {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if !tc.wantErr && string(got) != tc.want {
				t.Errorf("read %d bytes, want %d", len(got), len(tc.want))
			}
			if resp.Header.Get("Content-Encoding") != "" || !resp.Uncompressed {
				t.Errorf("the header still says gzip, or Uncompressed is false")
			}
		})
	}
}

// hostileGzipHeader is data as one member whose header has a name, a
// comment and an extra field.
func hostileGzipHeader(data string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Name, zw.Comment, zw.Extra = "answer.json", "from a proxy", []byte("xx")
	io.WriteString(zw, data)
	zw.Close()
	return b.Bytes()
}

// hostileBadChecksum is data as one member whose CRC-32 is wrong.
func hostileBadChecksum(data string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, data)
	zw.Close()
	out := b.Bytes()
	out[len(out)-8] ^= 0xff
	return out
}

// FuzzGzipBody checks the SDK's gzip reader against compress/gzip, which
// net/http uses: the same bytes for any stream compress/gzip reads, and an
// error for any it refuses.
func FuzzGzipBody(f *testing.F) {
	f.Add(append(hostileGzipHeader(`{"a":`), hostileGzipHeader(`1}`)...)) // two members
	f.Add(hostileGzipHeader(`{"a":1}`))
	f.Add(hostileBadChecksum(`{"a":1}`))
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b, 8, 0x1f, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := func() ([]byte, error) {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err == io.EOF {
				return nil, nil // an empty body
			}
			if err != nil {
				return nil, err
			}
			return io.ReadAll(zr)
		}()
		resp := &http.Response{Header: http.Header{"Content-Encoding": {"gzip"}}, Body: io.NopCloser(bytes.NewReader(data))}
		inflate(resp)
		got, err := io.ReadAll(resp.Body)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, compress/gzip says %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes, compress/gzip %d", len(got), len(want))
		}
	})
}

// A create meets a redirect and a retry together: the server that does
// the work receives the body once, whatever the order.
func TestCreateRedirectAndRetry(t *testing.T) {
	const created = `{"app_id":"a-1","variant_id":"v-2","variant_name":"bot.precise","base_id":"b-1","revision":1}`
	cases := []struct {
		name    string
		origin  func(n int64, w http.ResponseWriter) // the n-th request to the operation's path
		target  func(w http.ResponseWriter)          // every request to where the 307 points
		wantErr bool
	}{
		{"429 then 307", func(n int64, w http.ResponseWriter) {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.Header().Set("Location", "/api/v2/variants/from-base")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, func(w http.ResponseWriter) { io.WriteString(w, created) }, false},
		{"307 then 503", func(_ int64, w http.ResponseWriter) {
			w.Header().Set("Location", "/api/v2/variants/from-base")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, true},
		{"307 then a dropped connection", func(_ int64, w http.ResponseWriter) {
			w.Header().Set("Location", "/api/v2/variants/from-base")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, func(w http.ResponseWriter) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var origin, target atomic.Int64
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if r.URL.Path == "/api/variants/from-base" {
					tc.origin(origin.Add(1), w)
					return
				}
				target.Add(1)
				tc.target(w)
			}))
			t.Cleanup(s.Close)
			c := hostileClient(t, s.URL+"/api")
			err := hostileAddVariant.run(context.Background(), c)
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if n := target.Load(); n != 1 {
				t.Errorf("the redirect's target received the create %d times, want once", n)
			}
			hostileCheckError(t, err)
		})
	}
}

// Content-Encoding variants the SDK did not ask for, or layered: only one
// gzip layer named exactly "gzip" (in any case) is inflated, and whatever
// the rest holds, the call ends quickly, the heap stays near the limit and
// the error is bounded.
func TestContentEncodingVariants(t *testing.T) {
	bomb := hostileGzip(`{"app_id":"`, 'a', 64, `"}`)
	gzipOf := func(data []byte) []byte {
		var b strings.Builder
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		return []byte(b.String())
	}
	cases := []struct {
		name     string
		encoding string
		body     []byte
		want     error // nil: any error
	}{
		{"GZIP", "GZIP", bomb, ErrAnswerTooLarge},
		{"x-gzip", "x-gzip", bomb, nil},
		{"gzip, gzip", "gzip, gzip", gzipOf(bomb), nil},
		{"gzip inside gzip", "gzip", gzipOf(bomb), nil},
		{"deflate", "deflate", bomb, nil},
		{"br", "br", bomb, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", tc.encoding)
				w.Write(tc.body)
			}))
			t.Cleanup(s.Close)
			c := hostileClient(t, s.URL+"/api", WithResponseLimits(ResponseLimits{Single: 4 << 20}))
			var err error
			grew := hostilePeakHeap(func() { err = hostileGetVariant.run(context.Background(), c) })
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want an error matching %v", err, tc.want)
			}
			if grew > 32<<20 {
				t.Errorf("the heap grew by %d MiB for a 4 MiB limit, want at most 32 MiB", grew>>20)
			}
			hostileCheckError(t, err)
		})
	}
}

// A server that sends megabytes of headers (a huge Location) costs about
// the Client's header limit, not net/http's default of 10 MiB several
// times over.
func TestHugeHeadersBounded(t *testing.T) {
	huge := strings.Repeat("y", 8<<20)
	base, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) {
		// In pieces: a concatenation would count 8 MiB against the client.
		io.WriteString(conn, "HTTP/1.1 307 Temporary Redirect\r\nLocation: /api/")
		io.WriteString(conn, huge)
		io.WriteString(conn, "\r\nContent-Length: 0\r\n\r\n")
	})
	for _, op := range []hostileOp{hostileGetVariant, hostileAddVariant} {
		c := hostileClient(t, base, WithMaxRetries(0))
		var err error
		grew := hostilePeakHeap(func() { err = op.run(context.Background(), c) })
		if err == nil {
			t.Fatalf("%s succeeded, want an error", op.name)
		}
		if grew > 16<<20 {
			t.Errorf("%s: the heap grew by %d MiB for 8 MiB of headers, want at most 16 MiB", op.name, grew>>20)
		}
		hostileCheckError(t, err)
	}
}

// Gzip answers at the edges read as net/http with compress/gzip would read
// them: an empty body with Content-Length 0 and an empty member are an
// empty answer (a decoding error, at once), trailing garbage after a
// complete value does not undo it, and members concatenated are one answer.
func TestGzipEdges(t *testing.T) {
	gzipOf := func(data string) string {
		var b strings.Builder
		zw := gzip.NewWriter(&b)
		io.WriteString(zw, data)
		zw.Close()
		return b.String()
	}
	const variant = `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default"}`
	cases := []struct {
		name    string
		body    string
		wantErr bool
	}{
		{"Content-Length 0", "", true},
		{"an empty member", gzipOf(""), true},
		{"trailing garbage", gzipOf(variant) + "garbage!!", false},
		{"two members", gzipOf(variant[:20]) + gzipOf(variant[20:]), false},
		{"an empty member after", gzipOf(variant) + gzipOf(""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				w.Header().Set("Content-Length", strconv.Itoa(len(tc.body)))
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(s.Close)
			c := hostileClient(t, s.URL+"/api", WithMaxRetries(0))
			v, err := c.GetVariant(context.Background(), "v-1")
			if tc.wantErr {
				var decodeErr *DecodeError
				if !errors.As(err, &decodeErr) {
					t.Fatalf("got %v, want a *DecodeError", err)
				}
				return
			}
			if err != nil || v.VariantName != "bot.default" {
				t.Fatalf("got %+v, %v; want the variant bot.default", v, err)
			}
		})
	}
}

// A redirect to a "scheme" that is the key (keys are letters, digits and a
// dot, which a scheme may hold) is refused without naming it: net/http
// lowercases a scheme, so the scrub would not recognise it.
func TestRedirectSchemeNotQuoted(t *testing.T) {
	c := hostileClient(t, hostileServe(t, 302, http.Header{"Location": {hostileKey + ":x"}}, ""), WithMaxRetries(0))
	err := hostileGetVariant.run(context.Background(), c)
	if err == nil {
		t.Fatal("GetVariant succeeded, want an error")
	}
	lower := strings.ToLower(hostileKey)
	for _, e := range reviewChain(err) {
		if strings.Contains(strings.ToLower(e.Error()), lower) {
			t.Errorf("%T in the chain holds the key, lowercased: %.300q", e, e.Error())
		}
	}
}

// Credentials never follow a redirect to another origin (here another port
// of the same host, which net/http alone would trust), but do follow one to
// the same origin.
func TestRedirectDropsCredentialsAcrossOrigins(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]http.Header{}
	record := func(name string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen[name] = r.Header.Clone()
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("other", r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"variant_id":"elsewhere"}`)
	}))
	defer other.Close()
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/variants/away":
			record("origin", r)
			http.Redirect(w, r, other.URL+"/api/variants/x", http.StatusTemporaryRedirect)
		case "/api/variants/home":
			record("origin", r)
			http.Redirect(w, r, origin.URL+"/api/variants/moved", http.StatusFound)
		case "/api/variants/moved":
			record("moved", r)
			_, _ = io.WriteString(w, `{"variant_id":"moved"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer origin.Close()
	require.NotEqual(t, origin.URL, other.URL)
	ou, _ := url.Parse(origin.URL)
	tu, _ := url.Parse(other.URL)
	require.Equal(t, ou.Hostname(), tu.Hostname(), "same host, different ports")

	var policyCalls atomic.Int32
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { policyCalls.Add(1); return nil }}
	for _, withClient := range []bool{false, true} {
		opts := []Option{WithAPIKey(testKey), WithHeader("Cookie", "session=s3cret"), WithHeader("X-Session-Token", "tok")}
		if withClient {
			opts = append(opts, WithHTTPClient(hc))
		}
		c, err := NewClient(origin.URL+"/api", opts...)
		require.NoError(t, err)

		v, err := c.GetVariant(context.Background(), "away")
		require.NoError(t, err)
		assert.Equal(t, "elsewhere", v.VariantID)
		mu.Lock()
		assert.Equal(t, testKey, seen["origin"].Get("Authorization"), "the origin gets the key")
		for _, h := range []string{"Authorization", "Cookie", "X-Session-Token"} {
			assert.Empty(t, seen["other"].Values(h), "%s must not follow a redirect to another origin", h)
		}
		assert.Equal(t, "agenta-go/"+Version, seen["other"].Get("User-Agent"))
		mu.Unlock()

		v, err = c.GetVariant(context.Background(), "home")
		require.NoError(t, err)
		assert.Equal(t, "moved", v.VariantID)
		mu.Lock()
		assert.Equal(t, testKey, seen["moved"].Get("Authorization"), "a same-origin redirect keeps the key")
		assert.Equal(t, "session=s3cret", seen["moved"].Get("Cookie"))
		mu.Unlock()
	}
	assert.Equal(t, int32(2), policyCalls.Load(), "the caller's redirect policy still runs")
	assert.Nil(t, hc.Transport, "the caller's client is untouched")
}

// A redirect refused by the caller's policy is an answer, not a transient
// failure: it is not retried, and the policy's error is kept.
func TestRedirectRefusedByCallerPolicy(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/login", http.StatusFound)
	}))
	defer srv.Close()
	errNoRedirects := errors.New("no redirects, please")
	for _, tc := range []struct {
		name   string
		policy error
	}{
		{"policy error", errNoRedirects},
		{"use last response", http.ErrUseLastResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return tc.policy }}
			c, err := NewClient(srv.URL+"/api", WithHTTPClient(hc), WithRetryWait(0, time.Millisecond))
			require.NoError(t, err)

			_, err = c.GetVariant(context.Background(), "v")

			require.Error(t, err)
			assert.Equal(t, int32(1), hits.Load(), "expected one attempt")
			if tc.policy == http.ErrUseLastResponse {
				requireAPIError(t, err, http.StatusFound, "GET", "/api/variants/v")
			} else {
				assert.True(t, errors.Is(err, errNoRedirects), "expected the policy's error, got %v", err)
			}
		})
	}
}

// A redirect to a scheme the SDK cannot speak is refused at once, with a
// typed error that is never retried, whatever the caller's policy allows.
func TestRedirectToOtherSchemeNotRetried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"default client", nil},
		{"caller's policy accepts it", []Option{WithHTTPClient(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			mux, c := setup(t, tc.opts...)
			mux.HandleFunc("GET /variants/v", func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				http.Redirect(w, r, "ftp://127.0.0.1/file", http.StatusFound)
			})

			_, err := c.GetVariant(context.Background(), "v")

			require.Error(t, err)
			assert.Equal(t, int32(1), hits.Load(), "expected one attempt")
			var refused *redirectRefused
			assert.True(t, errors.As(err, &refused), "expected a *redirectRefused, got %T: %v", err, err)
			assert.Contains(t, err.Error(), `unsupported protocol scheme "ftp"`)
		})
	}
}

// Error bodies and success bodies are read to the end and closed, so one
// connection serves every call.
func TestConnectionsAreReused(t *testing.T) {
	var conns atomic.Int32
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch n.Add(1) % 3 {
		case 0:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"detail":"`+strings.Repeat("x", 8<<10)+`"}`)
		case 1:
			_, _ = io.WriteString(w, `[{"id":"h1"},{"id":"h2"}]`+"\n\n")
		default:
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, `<html><title>bad gateway</title></html>`)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := NewClient(srv.URL+"/api", WithMaxRetries(0))
	require.NoError(t, err)

	for i := 0; i < 30; i++ {
		_, _ = c.ListHumanEvaluations(context.Background(), "app")
	}

	assert.Equal(t, int32(30), n.Load())
	assert.Equal(t, int32(1), conns.Load(), "expected one connection for 30 sequential calls")
}
