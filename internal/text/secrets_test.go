package text

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// longKey is a provider key of a realistic length.
const longKey = "sk-proj-4fJk2LmN9pQrStUvWxYz0123456789abcdefABCDEF"

// leak returns the first run of MinRun characters of key that s holds, or
// "" when it holds none.
func leak(s, key string) string {
	for i := 0; i+MinRun <= len(key); i++ {
		if strings.Contains(s, key[i:i+MinRun]) {
			return key[i : i+MinRun]
		}
	}
	return ""
}

// encodings are the forms a server may echo a secret in.
var encodings = map[string]func(string) string{
	"raw":        func(s string) string { return s },
	"json":       func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) },
	"query":      url.QueryEscape,
	"path":       url.PathEscape,
	"base64":     func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"base64url":  func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) },
	"base64raw":  func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) },
	"hex":        func(s string) string { return hex.EncodeToString([]byte(s)) },
	"HEX":        func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) },
	"\\u-all":    func(s string) string { return everyEscaped(s)[0] },
	"\\U-all":    func(s string) string { return everyEscaped(s)[1] },
	"%xx-all":    func(s string) string { return everyEscaped(s)[2] },
	"%XX-all":    func(s string) string { return everyEscaped(s)[3] },
	"python":     asciiJSON,
	"json-nohtm": func(s string) string { return jsonEscape(s, false) },
	// The escapes the module's own reports apply (Markdown's, XML's), after
	// which they are scrubbed.
	"markdown": Markdown,
	"xml":      html.EscapeString,
}

// A secret is found whole in every form, and the text around it kept.
func TestScrubEveryForm(t *testing.T) {
	keys := []string{longKey, "key/with+odd=chars&<html>\"quoted\" ünï 日本 😀 0123456789"}
	for _, key := range keys {
		s := NewSecrets(key)
		for name, enc := range encodings {
			form := enc(key)
			in := "before " + form + " after"
			out := string(s.Scrub([]byte(in)))
			if strings.Contains(out, form) || leak(out, key) != "" {
				t.Errorf("%s form of %.12q… survives: %q", name, key, out)
			}
			if !strings.HasPrefix(out, "before ") || !strings.HasSuffix(out, " after") || !strings.Contains(out, Redacted) {
				t.Errorf("%s form: got %q, want the form replaced and the rest kept", name, out)
			}
			if got := s.ScrubString(in); got != out {
				t.Errorf("ScrubString %q, Scrub %q", got, out)
			}
			if !s.Holds(in) {
				t.Errorf("Holds(%s form) = false", name)
			}
		}
	}
}

// Any part of MinRun characters or more of a long secret is found, raw, in
// hex and in base64 from any offset: a cut, or a server that echoes a part.
func TestScrubEveryPart(t *testing.T) {
	s := NewSecrets(longKey)
	for i := 0; i < len(longKey); i++ {
		for j := i + MinRun; j <= len(longKey); j++ {
			part := longKey[i:j]
			for _, name := range []string{"raw", "hex", "base64raw", "json"} {
				in := "<" + encodings[name](part) + ">"
				out := string(s.Scrub([]byte(in)))
				if name == "raw" || name == "json" {
					if w := leak(out, longKey); w != "" {
						t.Fatalf("part [%d:%d] %s: %q holds %q", i, j, name, out, w)
					}
				}
				enc := encodings[name](part)
				width := map[string]int{"raw": 12, "json": 12, "hex": 24, "base64raw": 16}[name]
				for k := 0; k+width <= len(enc); k++ {
					if strings.Contains(out, enc[k:k+width]) {
						t.Fatalf("part [%d:%d] as %s: %q still holds %q", i, j, name, out, enc[k:k+width])
					}
				}
			}
		}
	}
	// A part shorter than a run is no leak, and is kept: text that happens
	// to share a few characters with a key must read as it was.
	in := "id " + longKey[5:5+MinRun-1]
	if out := s.ScrubString(in); out != in {
		t.Errorf("a %d-character part was scrubbed: %q", MinRun-1, out)
	}
}

// A key with characters that a report escapes (an Anthropic key's
// underscores, which Markdown escapes every few characters) is found in
// part in the escaped form too.
func TestScrubEscapedParts(t *testing.T) {
	const key = "sk-ant-api03-Ab3dE_fG5hI_jK7lM_nO9pQ_rS1tU_vW3xY_zA5bC_dE7fG"
	s := NewSecrets(key)
	for i := 0; i+MinRun <= len(key); i++ {
		for _, escape := range []func(string) string{Markdown, html.EscapeString} {
			part := key[i : i+MinRun]
			out := s.ScrubString("(" + escape(part) + ")")
			if strings.Contains(strings.ReplaceAll(out, `\`, ""), part) {
				t.Fatalf("part [%d:%d] escaped: %q holds it", i, i+MinRun, out)
			}
		}
	}
}

// Text scrubs, then cuts: whatever the cut, no part of a key stays, and
// a key echoed with some characters escaped is found once decoded.
func TestTextScrubsThenCuts(t *testing.T) {
	s := NewSecrets(longKey)
	mixed := `\u00` + fmt.Sprintf("%x", longKey[0]) + longKey[1:]
	percent := "%" + fmt.Sprintf("%X", longKey[0]) + longKey[1:]
	for _, form := range []string{longKey, mixed, percent, encodings["base64"](longKey)} {
		in := "Incorrect API key provided: " + form + ". You can find your key at…"
		for n := 0; n <= len(in)+2; n++ {
			out := s.Text(in, n)
			if w := leak(out, longKey); w != "" {
				t.Fatalf("Text(%.40q…, %d) = %q holds %q", in, n, out, w)
			}
			if strings.Contains(out, longKey[:8]) {
				t.Fatalf("Text(%.40q…, %d) = %q holds the key's first 8 characters", in, n, out)
			}
			if utf8.RuneCountInString(out) > n || !utf8.ValidString(out) {
				t.Fatalf("Text(%.40q…, %d) = %q: want valid UTF-8, at most %d runes", in, n, out, n)
			}
		}
	}
	// A key already cut by someone else before a "…" loses its start too.
	cut := "value " + longKey[:9] + "…"
	if out := s.Text(cut, 200); strings.Contains(out, longKey[:4]) {
		t.Errorf("Text(%q) = %q keeps the key's start before the cut", cut, out)
	}
	// Its work is bounded by n.
	huge := strings.Repeat("x", 10<<20) + longKey
	if out := s.Text(huge, 10); out != "xxxxxxxxx…" {
		t.Errorf("Text of a huge string = %q", out)
	}
}

func TestScrubCut(t *testing.T) {
	s := NewSecrets(longKey)
	body := []byte(strings.Repeat("a", 100) + longKey + strings.Repeat("b", 100))
	for n := 0; n < len(body)+5; n++ {
		out := s.ScrubCut(body, n)
		if len(out) > n || leak(string(out), longKey) != "" || bytes.Contains(out, []byte(longKey[:4])) {
			t.Fatalf("ScrubCut(%d) = %q", n, out)
		}
	}
	short := NewSecrets("s3cret-k")
	if out := short.ScrubCut([]byte("token s3cret-x and more"), 12); string(out) != "token " {
		t.Errorf("ScrubCut kept the start of a short key at the cut: %q", out)
	}
}

// A short secret is replaced where it stands alone only, so that a test
// key such as "k" never mangles the words around it.
func TestScrubShortSecrets(t *testing.T) {
	for _, tc := range []struct{ body, secret, want string }{
		{`{"loc":["body","lm_providers_keys"],"input":"k"}`, "k", `{"loc":["body","lm_providers_keys"],"input":"[REDACTED]"}`},
		{`key=abc&x=abcdef`, "abc", `key=[REDACTED]&x=abcdef`},
		{`token sk-live-0123456789 and xsk-live-0123456789`, "sk-live-0123456789", `token [REDACTED] and x[REDACTED]`},
		{`nothing here`, "secret", `nothing here`},
		{`abc`, "abc", `[REDACTED]`},
		{`a c2VjcmV0MTIz b`, "secret123", `a [REDACTED] b`},
		{`xc2VjcmV0MTIz`, "secret123", `x[REDACTED]`}, // 12 characters: replaced anywhere
		{`xc2VjcmV0`, "secret", `xc2VjcmV0`},          // too short to scrub its encodings
	} {
		if got := NewSecrets(tc.secret).ScrubString(tc.body); got != tc.want {
			t.Errorf("ScrubString(%q) with %q = %q, want %q", tc.body, tc.secret, got, tc.want)
		}
	}
}

// Text without a secret is kept as it is, the same slice.
func TestScrubKeepsCleanText(t *testing.T) {
	s := NewSecrets(longKey, "another-secret-value-0123456789")
	in := []byte(strings.Repeat(`{"id":"0190b5a2-7c1e-7b52-a0a7-3c3f2b1d9e01","v":"sk-proj-other"}`, 100))
	if out := s.Scrub(in); &out[0] != &in[0] || !bytes.Equal(out, in) {
		t.Error("clean text was copied or changed")
	}
	var none *Secrets
	if none.Len() != 0 || none.ScrubString("x") != "x" || none.Holds(longKey) || none.Text("abc", 2) != "a…" {
		t.Error("a nil *Secrets must hold nothing and change nothing but the cut")
	}
	if s.With(longKey) != s || s.With("") != s {
		t.Error("With of a secret already held must return the same set")
	}
	if got := s.With("third-secret-value").Values(); len(got) != 3 {
		t.Errorf("With added to %v", got)
	}
}

// A Writer never lets a key through, wherever the writes split it, and
// lets everything else through unchanged.
func TestWriter(t *testing.T) {
	const key = "sk-split-provider-key-0123456789"
	nearMiss := key[:MinRun-1]
	s := NewSecrets(key)
	for name, enc := range encodings {
		form := enc(key)
		text := "before " + form + " middle " + form + " after; " + nearMiss
		for chunk := 1; chunk <= len(text); chunk++ {
			var out bytes.Buffer
			w := s.NewWriter(&out)
			for i := 0; i < len(text); i += chunk {
				if _, err := w.Write([]byte(text[i:min(i+chunk, len(text))])); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if strings.Contains(got, form) || leak(got, key) != "" || !strings.HasPrefix(got, "before [REDACTED]") ||
				!strings.Contains(got, " middle [REDACTED]") || !strings.HasSuffix(got, " after; "+nearMiss) {
				t.Fatalf("%d-byte writes of the %s form: got %q, want it replaced twice and the rest unchanged", chunk, name, got)
			}
		}
	}
	var out bytes.Buffer
	NewSecrets().NewWriter(&out).Write([]byte("abc"))
	if out.String() != "abc" {
		t.Errorf("with no secret, a write came out as %q, want %q at once", out.String(), "abc")
	}
}

// A Reader scrubs however the reads split the text, and gives a complete
// JSON answer at once, without waiting for a body's end that never comes.
func TestReader(t *testing.T) {
	s := NewSecrets(longKey)
	text := `[{"output":"` + longKey + `","b64":"` + encodings["base64"](longKey) + `"},{"x":"` + longKey[3:30] + `"}]`
	want := string(s.Scrub([]byte(text)))
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r }, "one byte": iotest.OneByteReader,
		"half": iotest.HalfReader, "data+EOF": iotest.DataErrReader,
	} {
		got, err := io.ReadAll(s.NewReader(wrap(strings.NewReader(text))))
		if err != nil {
			t.Fatal(err)
		}
		if leak(string(got), longKey) != "" || !json.Valid(got) {
			t.Errorf("%s: %q", name, got)
		}
		if name == "whole" && string(got) != want {
			t.Errorf("whole: %q, want %q", got, want)
		}
	}
	// Reads into a large buffer scrub in place; into a small one, through
	// the Reader's own.
	for _, size := range []int{1, 7, 100, 4096, 1 << 16} {
		var got []byte
		r := s.NewReader(iotest.HalfReader(strings.NewReader(text + text)))
		buf := make([]byte, size)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if leak(string(got), longKey) != "" || !strings.HasPrefix(string(got), want[:len(want)-1]) || strings.Count(string(got), Redacted) != 6 {
			t.Errorf("reads of %d bytes: %q", size, got)
		}
	}
	if err := iotest.TestReader(s.NewReader(strings.NewReader("no secret here")), []byte("no secret here")); err != nil {
		t.Error(err)
	}

	held := &heldBack{data: []byte(`{"id":"v-1","name":"capitals.default"}` + "\n")}
	r := s.NewReader(held)
	buf := make([]byte, len(held.data))
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != string(held.data) {
		t.Errorf("read %q, %v; want the whole answer before the body ends", buf, err)
	}
}

// heldBack gives its data, then fails the test if read again: the body's
// end that a server holds back.
type heldBack struct {
	data []byte
	done bool
}

func (h *heldBack) Read(p []byte) (int, error) {
	if h.done {
		panic("read past a complete answer")
	}
	h.done = true
	return copy(p, h.data), nil
}

func FuzzScrub(f *testing.F) {
	f.Add("prefix", 3, uint8(0), 5, 40)
	f.Add(`{"detail":"`, 0, uint8(4), 0, len(longKey))
	f.Add("\u00e9\xff", 7, uint8(9), 10, 22)
	names := []string{"raw", "json", "query", "path", "base64", "hex", "\\u-all", "%XX-all", "python", "base64raw"}
	s := NewSecrets(longKey)
	f.Fuzz(func(t *testing.T, around string, at int, encoding uint8, from, to int) {
		if from < 0 || to > len(longKey) || from > to {
			return
		}
		part := longKey[from:to]
		name := names[int(encoding)%len(names)]
		if name != "raw" && name != "json" && name != "python" && to-from < len(longKey) {
			part = longKey // only raw parts are checked against every window
		}
		at = max(0, min(at, len(around)))
		text := around[:at] + encodings[name](part) + around[at:]
		for _, out := range []string{s.ScrubString(text), s.Text(text, 300), streamed(s, text)} {
			if w := leak(out, longKey); w != "" && !strings.Contains(around, w) {
				t.Fatalf("%s form of [%d:%d] in %q: %q holds %q", name, from, to, text, out, w)
			}
		}
	})
}

func streamed(s *Secrets, text string) string {
	out, _ := io.ReadAll(s.NewReader(iotest.HalfReader(strings.NewReader(text))))
	return string(out)
}

// BenchmarkScrub measures the scan of a clean answer, the common case.
func BenchmarkScrub(b *testing.B) {
	s := NewSecrets(longKey, "xK9sQ2vB.f00dfacecafe1234SECRET")
	body := bytes.Repeat([]byte(`{"id":"0190b5a2-7c1e-7b52-a0a7-3c3f2b1d9e01","inputs":[{"name":"country","type":"text","value":"France"}],"outputs":[{"result":{"type":"text","value":"The capital of France is Paris.","error":null},"cost":0.0001,"latency":0.53}]},`), 1000)
	b.Run("Scrub", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			s.Scrub(body)
		}
	})
	b.Run("Reader", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			io.Copy(io.Discard, s.NewReader(bytes.NewReader(body)))
		}
	})
}
