package agenta

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzKey is the API key of FuzzHostileErrorPath. Its '+', '/' and '='
// make each encoding of it differ from the others.
const fuzzKey = "fz+Key/with=Specials.0123456789abcdef"

// fuzzEncodings are the ways a server may echo the key: raw, as JSON with
// some or all characters \u-escaped, percent-encoded, base64 and hex.
var fuzzEncodings = []func(string) string{
	func(s string) string { return s },
	hostileEscapeAll,
	func(s string) string { // every other character \u-escaped
		var b strings.Builder
		for i, r := range s {
			if i%2 == 0 {
				b.WriteString(hostileEscapeAll(string(r)))
			} else {
				b.WriteRune(r)
			}
		}
		return b.String()
	},
	url.QueryEscape,
	func(s string) string { // every byte percent-encoded
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{s[i]})))
		}
		return b.String()
	},
	func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
	func(s string) string { return hex.EncodeToString([]byte(s)) },
}

// fuzzAnswer is a fixed answer to every request.
type fuzzAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a *fuzzAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: a.status, Status: strconv.Itoa(a.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: a.header.Clone(), Body: io.NopCloser(bytes.NewReader(a.body)),
		ContentLength: int64(len(a.body)), Request: req,
	}, nil
}

// fuzzLeak returns the name of the form in which msg holds the key, or "".
// It looks for every encoding of fuzzEncodings, and for the raw key once
// \u escapes and percent escapes in msg are decoded.
func fuzzLeak(msg string) string {
	for i, enc := range fuzzEncodings {
		if strings.Contains(msg, enc(fuzzKey)) {
			return "encoding " + strconv.Itoa(i)
		}
	}
	if strings.Contains(unescapeUnicode(msg), fuzzKey) {
		return "\\u escapes"
	}
	if unescaped, err := url.PathUnescape(msg); err == nil && strings.Contains(unescaped, fuzzKey) {
		return "percent escapes"
	}
	return ""
}

// unescapeUnicode decodes each \uXXXX in s.
func unescapeUnicode(s string) string {
	return unicodeEscape.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.ParseUint(m[2:], 16, 32)
		return string(rune(n))
	})
}

var unicodeEscape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}`)

// FuzzHostileErrorPath sends the SDK's operations a random status, headers
// and body, with the API key echoed in a random encoding at a random place
// (the body or the Location header). Whatever comes back, err.Error() is
// bounded and never holds the key in any of those encodings, and no
// operation panics.
func FuzzHostileErrorPath(f *testing.F) {
	f.Add(uint16(404), "", []byte(`{"detail":"no variant "}`), uint8(0), uint16(21), uint8(0))
	f.Add(uint16(422), "", []byte(`{"detail":[{"loc":["body"],"msg":"bad ","type":"x"}]}`), uint8(1), uint16(44), uint8(1))
	f.Add(uint16(200), "", []byte(`[{"id":"h-1","created_at":""}]`), uint8(2), uint16(27), uint8(2))
	f.Add(uint16(200), "", []byte(`""`), uint8(1), uint16(1), uint8(2))
	f.Add(uint16(302), "Location: http://[::1%", []byte(``), uint8(3), uint16(0), uint8(0x80))
	f.Add(uint16(307), "Location: /api/x?k=", []byte(``), uint8(4), uint16(0), uint8(0x81))
	f.Add(uint16(500), "Content-Type: text/html", []byte(`<html><title>oops </title></html>`), uint8(5), uint16(19), uint8(0))
	f.Add(uint16(401), "", []byte(`{"detail":{"message":""}}`), uint8(6), uint16(22), uint8(0))
	f.Add(uint16(200), "", []byte(`[{"id":"s-1","evaluation_id":""}]`), uint8(7), uint16(30), uint8(3))
	f.Add(uint16(101), "Upgrade: x", []byte(`x`), uint8(0), uint16(0), uint8(0))

	f.Fuzz(func(t *testing.T, status uint16, headers string, body []byte, encoding uint8, at uint16, how uint8) {
		echo := fuzzEncodings[int(encoding)%len(fuzzEncodings)](fuzzKey)
		header := http.Header{}
		for _, line := range strings.Split(headers, "\n") {
			name, value, ok := strings.Cut(line, ":")
			if ok && validHeaderName(strings.TrimSpace(name)) {
				header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
			}
		}
		if how&0x80 != 0 {
			header.Set("Location", header.Get("Location")+echo)
		} else {
			i := int(at) % (len(body) + 1)
			body = append(append(append([]byte{}, body[:i]...), echo...), body[i:]...)
		}
		code := int(status) % 600
		if code < 100 {
			code += 100
		}
		answer := &fuzzAnswer{status: code, header: header, body: body}
		c, err := NewClient("http://127.0.0.1:1/api", WithAPIKey(fuzzKey), WithMaxRetries(0),
			WithTimeout(2*time.Second), WithHTTPClient(&http.Client{Transport: answer}))
		if err != nil {
			t.Fatal(err)
		}
		ops := []hostileOp{hostileGetVariant, hostileAddVariant, hostileListHuman, hostileStream}
		op := ops[int(how&0x7f)%len(ops)]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = op.run(ctx, c)
		if err == nil {
			return
		}
		msg := err.Error()
		if len(msg) > hostileMaxError {
			t.Errorf("%s: err.Error() is %d bytes, want at most %d: %.200q…", op.name, len(msg), hostileMaxError, msg)
		}
		if !utf8.ValidString(msg) {
			t.Errorf("%s: err.Error() is not valid UTF-8: %.200q", op.name, msg)
		}
		if form := fuzzLeak(msg); form != "" {
			t.Errorf("%s: err.Error() holds the key (%s): %q", op.name, form, msg)
		}
	})
}
