package text

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"abcd", 1, "…"},
		{"abcd", 0, ""},
		{"abcd", -1, "abcd"},
		{"héllo wörld", 5, "héll…"},
		{"日本語テキスト", 4, "日本語…"},
		{"日本語", 3, "日本語"},
		{"a\xffb", 5, "a\uFFFDb"},
		{"a\xff\xfeb", 2, "a…"},
		{strings.Repeat("x", 1000), 10, "xxxxxxxxx…"},
	} {
		got := Clip(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q, not valid UTF-8", tc.in, tc.n, got)
		}
		if tc.n >= 0 && utf8.RuneCountInString(got) > tc.n {
			t.Errorf("Clip(%q, %d) = %q: %d runes, want at most %d", tc.in, tc.n, got, utf8.RuneCountInString(got), tc.n)
		}
	}
}

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcödé and 日本語", "plain text, ünïcödé and 日本語"},
		{"a\x1b[31mred\x1b[0m", `a\x1b[31mred\x1b[0m`},
		{"bell\a", `bell\x07`},
		{"tab\tnew\nline\rreturn", `tab\tnew\nline\rreturn`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`},
		{"isolates \u2066x\u2069 marks \u200e\u200f\u061c", `isolates \u2066x\u2069 marks \u200e\u200f\u061c`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"bad \xff byte", "bad \uFFFD byte"},
		{`C:\path\x1b`, `C:\path\x1b`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Line("a\nb\x1bc", 4); got != `a\n…` {
		t.Errorf("Line = %q, want the escape counted in the width", got)
	}
}

func TestCSVCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Paris", "Paris"},
		{`=HYPERLINK("http://evil","click")`, `'=HYPERLINK("http://evil","click")`},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1+1", `'\t=1+1`},
		{"\r=1+1", `'\r=1+1`},
		{"\n=1+1", "'\n=1+1"},
		{"  =1+1", "'  =1+1"},
		{"-0.5", "-0.5"},
		{"+3", "+3"},
		{"-1e-9", "-1e-9"},
		{"-", "'-"},
		{"-.", "'-."},
		{"-1e", "'-1e"},
		{"two\nlines", "two\nlines"},
		{"esc\x1b[2J", `esc\x1b[2J`},
		{"rtl\u202eabc", `rtl\u202eabc`},
		{"", ""},
	} {
		if got := CSVCell(tc.in); got != tc.want {
			t.Errorf("CSVCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://cloud.agenta.ai/api", "https://cloud.agenta.ai/api"},
		{"https://user:pw-SECRET@host.example/api", "https://***@host.example/api"},
		{"https://token-SECRET@host.example", "https://***@host.example"},
		{"http://127.0.0.1:8080/api?api_key=SECRET&x=1", "http://127.0.0.1:8080/api?api_key=***&x=***"},
		{"http://host/api?SECRET", "http://host/api?***"},
		{"http://host/api#SECRET", "http://host/api#***"},
		{"http://user:p%zzSECRET@host/api", "http://***@host/api"},
		{"user:SECRET@host", "***@host"},
		{"://x:SECRET@host/a?b=SECRET", "://***@host/a?***"},
		{"not a url", "not a url"},
		{"127.0.0.1:8080/api", "127.0.0.1:8080/api"},
		// A password holding a character that ends the authority, as
		// written unescaped: the @ after it still marks credentials.
		{"https://user:SE/CRET@host/api", "https://***@host/api"},
		{"https://user:1234/SECRET@host/api", "https://***@host/api"},
		{"https://token/SECRET@host/api", "https://***@host/api"},
		{"https://user:SE#CRET@host/api", "https://***@host/api"},
		{"https://user:SE?CRET@host/api?k=SECRET", "https://***@host/api?k=***"},
		{"user:SE/CRET@host/api", "***@host/api"},
	} {
		got := URL(tc.in)
		if got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "CRET") { // SECRET, or the end of SE/CRET
			t.Errorf("URL(%q) = %q shows the credential", tc.in, got)
		}
	}
}

// A document keeps its line breaks and tabs, and escapes the rest,
// however the writes split a character.
func TestDocumentWriter(t *testing.T) {
	in := "<a>line\tone\r\nrtl \u202eabc\u202c, esc \x1b[2J, c1 \u0085, é日😀</a>\n"
	want := "<a>line\tone\r\nrtl \\u202eabc\\u202c, esc \\x1b[2J, c1 \\u0085, é日😀</a>\n"
	if got := Document(in); got != want {
		t.Fatalf("Document = %q, want %q", got, want)
	}
	for chunk := 1; chunk <= len(in); chunk++ {
		var b strings.Builder
		w := NewDocumentWriter(&b)
		for i := 0; i < len(in); i += chunk {
			w.Write([]byte(in[i:min(i+chunk, len(in))]))
		}
		w.Flush()
		if b.String() != want {
			t.Fatalf("%d-byte writes: %q, want %q", chunk, b.String(), want)
		}
	}
}

// JSON output keeps the exact text, and what encoding/json leaves raw that
// a terminal acts on (DEL, C1 controls, bidirectional controls) becomes a
// \u escape: the same value once decoded, inert when printed.
func TestJSON(t *testing.T) {
	value := "rtl \u202eabc\u202c, c1 \u0085\u009b31m, del \x7f, é日😀 \"q\" \\"
	encoded, err := json.Marshal(map[string]string{"k\u202e": value})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"k\u202e":"rtl \u202eabc\u202c, c1 \u0085\u009b31m, del \u007f, é日😀 \"q\" \\"}`
	if got := string(JSON(encoded)); got != want {
		t.Fatalf("JSON = %s, want %s", got, want)
	}
	for chunk := 1; chunk <= len(encoded); chunk++ {
		var b strings.Builder
		w := NewJSONWriter(&b)
		for i := 0; i < len(encoded); i += chunk {
			w.Write(encoded[i:min(i+chunk, len(encoded))])
		}
		w.Flush()
		if b.String() != want {
			t.Fatalf("%d-byte writes: %s, want %s", chunk, b.String(), want)
		}
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(want), &back); err != nil || back["k\u202e"] != value {
		t.Fatalf("the escaped JSON reads back as %q (%v), want %q", back, err, value)
	}
	plain := []byte(`{"a":"é日😀"}`)
	if got := JSON(plain); &got[0] != &plain[0] {
		t.Error("JSON copied a text that needs no escape")
	}
}

// dangerousText is text a writer must never let through raw: ESC and
// CSI sequences, every bidirectional control, the C1 controls (CSI
// U+009B among them), DEL, the line and paragraph separators, next to
// multi-byte characters and invalid UTF-8.
func dangerousText() string {
	var b strings.Builder
	b.WriteString("a\x1b[31mred\x1b]0;title\x07 é日😀 \x7f\xc2\xe2\x80 x\xff")
	for r := rune(0x80); r <= 0x9f; r++ {
		b.WriteRune(r)
		b.WriteString("😀")
	}
	for r := rune(0); r <= 0x2100; r++ {
		if unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029 {
			b.WriteString("日")
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Split at every pair of byte boundaries (so every multi-byte character
// is cut at each of its inner bytes, in two or three writes), an
// EscapeWriter writes what its escape writes of the whole, and no
// dangerous character gets through raw.
func TestEscapeWriterEverySplit(t *testing.T) {
	in := []byte(dangerousText())
	for _, tc := range []struct {
		name string
		new  func(w *bytes.Buffer) *EscapeWriter
		want []byte
	}{
		{"document", func(w *bytes.Buffer) *EscapeWriter { return NewDocumentWriter(w) }, []byte(Document(string(in)))},
		{"json", func(w *bytes.Buffer) *EscapeWriter { return NewJSONWriter(w) }, JSON(bytes.Clone(in))},
	} {
		for i := 0; i <= len(in); i++ {
			for j := i; j <= len(in); j += 1 + (j-i)/16 {
				var out bytes.Buffer
				w := tc.new(&out)
				// The caller reuses its buffer between writes.
				scratch := make([]byte, 0, len(in))
				for _, part := range [][]byte{in[:i], in[i:j], in[j:]} {
					scratch = append(scratch[:0], part...)
					if n, err := w.Write(scratch); n != len(part) || err != nil {
						t.Fatalf("%s: Write = %d, %v", tc.name, n, err)
					}
					for k := range scratch {
						scratch[k] = 'Z'
					}
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out.Bytes(), tc.want) {
					t.Fatalf("%s: cut at %d and %d: %q, want %q", tc.name, i, j, out.Bytes(), tc.want)
				}
				for s := out.Bytes(); len(s) > 0; {
					r, size := utf8.DecodeRune(s)
					// JSON text holds no raw C0 control (encoding/json
					// escapes them), so JSON leaves them to it.
					if r == 0x1b && tc.name == "document" || r == 0x7f || unsafeRune(r) {
						t.Fatalf("%s: cut at %d and %d: %U raw in %q", tc.name, i, j, r, out.Bytes())
					}
					s = s[size:]
				}
			}
		}
	}
	// JSON text stays JSON that reads back as its value.
	value := dangerousText()
	value = strings.ToValidUTF8(value, "?")
	enc, _ := json.Marshal(value)
	var out bytes.Buffer
	w := NewJSONWriter(&out)
	for k := range enc {
		w.Write(enc[k : k+1])
	}
	w.Flush()
	var back string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back != value {
		t.Fatalf("byte-wise JSON reads back as %q (%v)", back, err)
	}
}

// A control character after a non-ASCII one is escaped like one before
// it: needsEscape looked only for C1 and bidirectional controls once it
// met a non-ASCII byte, so "é\x1b[2J" came out of Escape, Line, CSVCell
// and Document with its ESC raw.
func TestControlAfterNonASCII(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"Escape", Escape("é\x1b[2J"), `é\x1b[2J`},
		{"Line", Line("日 \x07\x7f\nx", 20), `日 \x07\x7f\nx`},
		{"CSVCell", CSVCell("é\x1b]0;t\x07"), `é\x1b]0;t\x07`},
		{"Document", Document("é\x1b[2J\ttab\n"), "é\\x1b[2J\ttab\n"},
		{"Document keeps", Document("é\r\n\t"), "é\r\n\t"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
