// Package text is the module's one treatment of text that reaches a person,
// a log or a file: it scrubs secrets, then cuts; it clips by runes; it
// escapes control characters and bidirectional overrides visibly; and it
// neutralises spreadsheet cells. The SDK, the command, the fake and the
// reports all use it, so that nothing else in the module clips or scrubs.
//
// The order matters: text is scrubbed first and cut afterwards, so that a
// cut can never leave part of a secret the scrub would have recognised
// whole.
package text

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks a cut.
const Ellipsis = "…"

// Clip returns s cut to at most n runes, the last of them "…" when s was
// longer. Invalid UTF-8, which a raw body can carry, becomes U+FFFD, so
// that the result is always valid text. A negative n means no bound. The
// work is bounded by n, not by the length of s.
func Clip(s string, n int) string {
	if n < 0 || len(s) <= n {
		return valid(s)
	}
	// Find where the n-th rune ends and whether another follows.
	end, count := 0, 0
	keep := 0 // where the (n-1)-th rune ends: the cut, when there is one
	for end < len(s) {
		if count == n {
			if n == 0 {
				return ""
			}
			return valid(s[:keep]) + Ellipsis
		}
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
		count++
		if count == n-1 {
			keep = end
		}
	}
	return valid(s)
}

func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Escape returns s with every character that could drive a terminal, or
// make a line read other than it is, written visibly as an escape: the C0
// controls (ESC, BEL, tab, line breaks…) as \t, \n, \r or \xHH, DEL as
// \x7f, the C1 controls, the bidirectional controls (U+202E and the
// others) and the line and paragraph separators as \uHHHH. Invalid UTF-8
// becomes U+FFFD. Everything else, backslashes included, is kept as it is.
func Escape(s string) string { return escape(s, "") }

// Line is s for one cell or line of a terminal: escaped (see Escape), then
// clipped to n runes.
func Line(s string, n int) string { return Clip(Escape(s), n) }

// escape is Escape, but for the controls in keep, which are kept: a CSV
// cell keeps line feeds inside its quotes, a document its line breaks and
// tabs.
func escape(s, keep string) string {
	if !needsEscape(s, keep) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r < 0x20 && strings.IndexByte(keep, byte(r)) >= 0:
			b.WriteByte(byte(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			writeHex(&b, r, 2)
		case unsafeRune(r):
			b.WriteString(`\u`)
			writeHex(&b, r, 4)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsEscape reports whether escape would change s.
func needsEscape(s, keep string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && strings.IndexByte(keep, c) < 0 || c == 0x7f {
			return true
		}
		if c >= 0x80 {
			// Only non-ASCII text needs the slower look at each rune.
			// The rest may hold ASCII controls too: "é\x1b[2J".
			for _, r := range s[i:] {
				if r == utf8.RuneError || unsafeRune(r) || r == 0x7f || r < 0x20 && strings.IndexByte(keep, byte(r)) < 0 {
					return true
				}
			}
			return !utf8.ValidString(s[i:])
		}
	}
	return false
}

// unsafeRune reports a non-ASCII character to escape: a C1 control, a
// bidirectional control (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066
// to U+2069) or a line or paragraph separator.
func unsafeRune(r rune) bool {
	return 0x80 <= r && r <= 0x9f || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Bidi_Control, r)
}

func writeHex(b *strings.Builder, r rune, width int) {
	h := strconv.FormatInt(int64(r), 16)
	for range width - len(h) {
		b.WriteByte('0')
	}
	b.WriteString(h)
}

// CSVCell returns s fit for a CSV cell that a spreadsheet may open: control
// characters and bidirectional overrides escaped as Escape does, line feeds
// kept (the CSV writer quotes them), and a cell that a spreadsheet would
// read as a formula neutralised as OWASP recommends ("CSV Injection"): one
// that starts with =, +, -, @, a tab or a carriage return, or with spaces
// and then one of =, +, -, @, gets a leading single quote. A cell that is
// a plain number, such as -0.5, is left as it is: it cannot call anything,
// and it stays a number.
func CSVCell(s string) string {
	if formula(s) {
		s = "'" + s
	}
	return escape(s, "\n")
}

// JSON returns b, JSON text, with each character that encoding/json
// leaves raw in a string and a terminal may act on (DEL, the C1 controls,
// the bidirectional controls, the line and paragraph separators) written
// as a \u escape: the same value once decoded, inert when the JSON is
// printed. Outside strings, JSON holds none of them. It returns b itself
// when nothing needs an escape; invalid UTF-8 is left as it is.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		if c := b[i]; c < utf8.RuneSelf && c != 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x7f || unsafeRune(r) {
			break
		}
		i += size
	}
	if i == len(b) {
		return b
	}
	out := append(make([]byte, 0, len(b)+16), b[:i]...)
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x7f || unsafeRune(r) {
			out = append(out, fmt.Sprintf(`\u%04x`, r)...)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// markdownSpecial are the characters Markdown escapes with a backslash in
// a table cell: those that would end the cell or start markup.
const markdownSpecial = "\\|*_`<>[]#~!"

// Markdown returns s with each character that would end a Markdown table
// cell or start markup escaped with a backslash. Secrets knows this form.
func Markdown(s string) string {
	if !strings.ContainsAny(s, markdownSpecial) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(markdownSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Document escapes s as Escape does, but for line breaks and tabs, which
// it keeps: for a report (Markdown, XML) that is read as a whole.
func Document(s string) string { return escape(s, "\n\r\t") }

// formula reports a cell a spreadsheet may read as a formula.
func formula(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '=', '+', '-', '@':
		return !plainNumber(s)
	case '\t', '\r', '\n', ' ':
		t := strings.TrimLeft(s, " \t\r\n")
		return s[0] != ' ' || t != "" && strings.IndexByte("=+-@", t[0]) >= 0
	}
	return false
}

// plainNumber reports a decimal number such as -12, +3.5 or -1e-9.
func plainNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		exp := 0
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}
