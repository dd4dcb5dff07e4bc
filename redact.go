package agenta

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The scrub: credentials never reach an error, a log line or a printed
// value, whatever the server echoes and however it encodes the echo. Bodies
// are scrubbed as bytes, in every encoding of each secret that a server is
// known to echo (raw, JSON-escaped, percent-encoded, base64, hex). Strings
// built from server data (messages, decoding errors, transport errors) are
// scrubbed after decoding, and also checked once their \u and percent
// escapes are decoded, then bounded with clip.

// maxSecretLength is how far past a cut the scrub reads, so that a secret
// (in any of its forms) that the cut would split is recognised whole.
const maxSecretLength = 4 << 10

// secretForms returns secret and each encoding of it a server may echo.
func secretForms(secret string) []string {
	if secret == "" {
		return nil
	}
	forms := []string{secret}
	add := func(f string) {
		for _, g := range forms {
			if g == f {
				return
			}
		}
		forms = append(forms, f)
	}
	if quoted, err := json.Marshal(secret); err == nil {
		add(string(quoted[1 : len(quoted)-1]))
	}
	if len(secret) < 8 {
		// Encodings of a short value are short words that may occur
		// anywhere: scrubbing them would mangle the text around them.
		return forms
	}
	var lowerU, upperU, lowerP, upperP strings.Builder
	for _, r := range secret {
		h := strconv.FormatInt(int64(r), 16)
		if len(h) <= 4 {
			lowerU.WriteString(`\u` + strings.Repeat("0", 4-len(h)) + h)
			upperU.WriteString(`\u` + strings.Repeat("0", 4-len(h)) + strings.ToUpper(h))
		}
	}
	for i := 0; i < len(secret); i++ {
		h := hex.EncodeToString([]byte{secret[i]})
		lowerP.WriteString("%" + h)
		upperP.WriteString("%" + strings.ToUpper(h))
	}
	for _, f := range []string{
		lowerU.String(), upperU.String(), lowerP.String(), upperP.String(),
		url.QueryEscape(secret), url.PathEscape(secret),
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.URLEncoding.EncodeToString([]byte(secret)),
		base64.RawStdEncoding.EncodeToString([]byte(secret)),
		base64.RawURLEncoding.EncodeToString([]byte(secret)),
		hex.EncodeToString([]byte(secret)),
		strings.ToUpper(hex.EncodeToString([]byte(secret))),
	} {
		add(f)
	}
	return forms
}

// secretsOf returns the secrets a call carries: the Client's and the
// request's own (such as provider keys in a body).
func (st *call) secretsOf() [][]string {
	return [][]string{st.c.secrets, st.r.secrets}
}

// scrub replaces every form of every credential the request carried with
// [REDACTED], in case the server echoes one (FastAPI echoes refused input).
func (st *call) scrub(body []byte) []byte { return scrubBytes(st.secretsOf(), body) }

func scrubBytes(lists [][]string, body []byte) []byte {
	for form := range allForms(lists) {
		body = redact(body, form)
	}
	return body
}

// allForms yields each form (see secretForms) of each secret in lists.
func allForms(lists [][]string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, list := range lists {
			for _, secret := range list {
				for _, form := range secretForms(secret) {
					if !yield(form) {
						return
					}
				}
			}
		}
	}
}

// scrubCut scrubs body and then cuts it to n bytes, dropping a secret's
// first bytes left at the cut: the part of a secret the cut split from the
// rest, which the scrub cannot recognise on its own.
func (st *call) scrubCut(body []byte, n int) []byte {
	body = st.scrub(body)
	if len(body) <= n {
		return body
	}
	body = body[:n]
	for form := range allForms(st.secretsOf()) {
		body = dropPrefixAtEnd(body, form)
	}
	return body
}

// dropPrefixAtEnd drops the end of body when it is the first 4 or more
// bytes of form (or all of a shorter form).
func dropPrefixAtEnd(body []byte, form string) []byte {
	for k := min(len(form)-1, len(body)); k >= min(4, len(form)); k-- {
		if bytes.HasSuffix(body, []byte(form[:k])) {
			return body[:len(body)-k]
		}
	}
	return body
}

// text turns a string built from server data into one fit for an error or
// a log: scrubbed, checked in its decoded forms, valid UTF-8, and cut to n
// runes.
func (st *call) text(s string, n int) string { return scrubText(st.secretsOf(), s, n) }

// text is call.text for strings read outside a call's error path, such as
// an evaluation's failure message: it scrubs the Client's credentials.
func (c *Client) text(s string, n int) string { return scrubText([][]string{c.secrets}, s, n) }

func scrubText(lists [][]string, s string, n int) string {
	// Only the first n runes are kept: scrub no more than they can take
	// (4 bytes each) and a margin that holds any form of a secret starting
	// among them, so that the work is bounded by n, not by the server.
	if most := 4*n + 2*maxSecretLength; n >= 0 && len(s) > most {
		s = s[:most]
	}
	s = string(scrubBytes(lists, []byte(s)))
	for _, decode := range []func(string) string{unescapeJSON, unescapePercent} {
		if decoded := decode(s); decoded != s {
			if scrubbed := string(scrubBytes(lists, []byte(decoded))); scrubbed != decoded {
				// An escaped secret: show the decoded text, scrubbed.
				s = scrubbed
			}
		}
	}
	return clip(dropCutSecrets(lists, s), n)
}

// dropCutSecrets drops, before each "…" in s, the first bytes of a secret
// that end there: a message cut before it could be scrubbed (a detail the
// error body parser clipped, a timestamp models quotes in part) may have
// split a secret that was echoed in an encoding the scrub of the raw body
// missed, such as one \u-escaped character.
func dropCutSecrets(lists [][]string, s string) string {
	if !strings.Contains(s, "…") {
		return s
	}
	var b strings.Builder
	for {
		before, after, cut := strings.Cut(s, "…")
		if !cut {
			b.WriteString(before)
			return b.String()
		}
		head := []byte(before)
		for form := range allForms(lists) {
			head = dropPrefixAtEnd(head, form)
		}
		b.Write(head)
		b.WriteString("…")
		s = after
	}
}

// holdsSecret reports whether s holds a credential, raw or in a form the
// scrub knows, also once its \u and percent escapes are decoded. Its work
// is linear in s.
func holdsSecret(lists [][]string, s string) bool {
	for _, t := range []string{s, unescapeJSON(s), unescapePercent(s)} {
		if !bytes.Equal(scrubBytes(lists, []byte(t)), []byte(t)) {
			return true
		}
	}
	return false
}

// unescapeJSON decodes each \uXXXX in s and leaves everything else.
func unescapeJSON(s string) string {
	if !strings.Contains(s, `\u`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+6 <= len(s) && s[i+1] == 'u' {
			if n, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
				b.WriteRune(rune(n))
				i += 5
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapePercent decodes each %XX in s and leaves everything else.
func unescapePercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+3 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	if !utf8.ValidString(b.String()) {
		return strings.ToValidUTF8(b.String(), "\uFFFD")
	}
	return b.String()
}

// redact replaces secret in body with [REDACTED]. A long secret is replaced
// wherever it occurs; a short one (a test key such as "k") only where it
// stands alone, so that it cannot mangle the words around it.
func redact(body []byte, secret string) []byte {
	if secret == "" || !bytes.Contains(body, []byte(secret)) {
		return body
	}
	const long = 12
	var out []byte
	rest := body
	for {
		i := bytes.Index(rest, []byte(secret))
		if i < 0 {
			break
		}
		end := i + len(secret)
		alone := len(secret) >= long ||
			(i == 0 || !wordByte(rest[i-1])) && (end == len(rest) || !wordByte(rest[end]))
		if alone {
			out = append(out, rest[:i]...)
			out = append(out, "[REDACTED]"...)
		} else {
			out = append(out, rest[:end]...)
		}
		rest = rest[end:]
	}
	return append(out, rest...)
}

func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
