package text

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redacted replaces a secret.
const Redacted = "[REDACTED]"

// MinRun is the length of the shortest run of a secret's characters that
// counts as a leak: output never holds MinRun or more consecutive
// characters of a secret of that length or more, in any encoding Secrets
// knows. A shorter secret is redacted whole, where it stands alone.
const MinRun = 12

// MinSecret is the length of the shortest secret whose encodings (base64,
// hex, percent and \u escapes) are scrubbed too: the encodings of a
// shorter one are short words that may occur anywhere.
const MinSecret = 8

// maxCandidates bounds where one 8-byte window of the forms is looked for:
// a secret that repeats an 8-byte sequence more often than that is
// scrubbed at the first places only, so that a crafted text cannot make the
// scan quadratic.
const maxCandidates = 16

// Secrets is a set of secret values and what is needed to find them in
// text: each secret in every form a server is known to echo it in (raw,
// JSON-escaped, percent-encoded, base64, hex), and for a secret of MinRun
// characters or more, any run of MinRun of its characters in any of those
// forms, so that a secret that was cut, or echoed in part, is found too.
// It is immutable and safe for concurrent use; a nil *Secrets holds none.
type Secrets struct {
	values []string
	forms  []form // every form, windowed ones first
	// windowed is how many of forms are found by window: the dense forms
	// of long secrets. The others are found whole.
	windowed int
	// index maps each 8-byte window of a windowed form, as a little-endian
	// uint64, to where it occurs; filter is a bit set over the windows'
	// hashes that rules most text out before a map lookup.
	index  map[uint64][]place
	filter *[1 << filterBits / 64]uint64
	// formByte marks the bytes that occur in some form: a stream holds
	// back a tail made of them only, which may be the start of a secret.
	formByte [256]bool
	// firsts are the first bytes of the forms found whole.
	firsts  []byte
	longest int
}

// form is one encoding of one secret.
type form struct {
	text string
	// run is the shortest run of the form that is redacted, for a windowed
	// form: the length MinRun characters of the secret take in it.
	run int
	// alone means the form is redacted only where it stands alone, not
	// inside a word: a short value, such as a test key "k", must not
	// mangle the words around it.
	alone bool
}

// place is where an 8-byte window occurs: in which form, at which byte.
type place struct {
	form int32
	at   int32
}

const filterBits = 17

// NewSecrets returns the set of the given secrets, ignoring empty and
// repeated values.
func NewSecrets(values ...string) *Secrets { return (*Secrets)(nil).With(values...) }

// With returns a set that holds the secrets of s and values, or s itself
// when values adds none.
func (s *Secrets) With(values ...string) *Secrets {
	var all []string
	if s != nil {
		all = s.values
	}
	added := false
	for _, v := range values {
		if v != "" && !slices.Contains(all, v) {
			if !added {
				all = slices.Clip(slices.Clone(all))
				added = true
			}
			all = append(all, v)
		}
	}
	if !added {
		return s
	}
	return compile(all)
}

// Values returns the secrets in the set, in the order they were added.
func (s *Secrets) Values() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.values)
}

// Len returns how many secrets the set holds.
func (s *Secrets) Len() int {
	if s == nil {
		return 0
	}
	return len(s.values)
}

// Longest returns the length of the longest form of a secret: how much of
// a stream must be held back before it is known to hold no secret.
func (s *Secrets) Longest() int {
	if s == nil {
		return 0
	}
	return s.longest
}

func compile(values []string) *Secrets {
	s := &Secrets{values: values, index: map[uint64][]place{}, filter: new([1 << filterBits / 64]uint64)}
	var exact []form
	for _, v := range values {
		dense, sparse := formsOf(v)
		for _, f := range dense {
			if !slices.ContainsFunc(s.forms, func(g form) bool { return g.text == f.text }) {
				s.forms = append(s.forms, f)
			}
		}
		for _, f := range sparse {
			if !slices.ContainsFunc(exact, func(g form) bool { return g.text == f.text }) {
				exact = append(exact, f)
			}
		}
	}
	s.windowed = len(s.forms)
	s.forms = append(s.forms, exact...)
	for i, f := range s.forms {
		s.longest = max(s.longest, len(f.text))
		for j := 0; j < len(f.text); j++ {
			s.formByte[f.text[j]] = true
		}
		if i >= s.windowed {
			if !slices.Contains(s.firsts, f.text[0]) {
				s.firsts = append(s.firsts, f.text[0])
			}
			continue
		}
		for j := 0; j+8 <= len(f.text); j++ {
			w := binary.LittleEndian.Uint64([]byte(f.text[j : j+8]))
			if places := s.index[w]; len(places) < maxCandidates {
				s.index[w] = append(places, place{form: int32(i), at: int32(j)})
			}
			h := hash(w)
			s.filter[h/64] |= 1 << (h % 64)
		}
	}
	return s
}

func hash(w uint64) uint64 { return (w * 0x9E3779B97F4A7C15) >> (64 - filterBits) }

// formsOf returns the forms of a secret: dense ones, found by window (for a
// secret of MinRun bytes or more), and sparse ones, found whole. A secret
// shorter than MinRun has only forms found whole, and only where they
// stand alone when they are short.
func formsOf(secret string) (dense, sparse []form) {
	type encoding func(string) string
	encodings := []encoding{
		func(s string) string { return s },
		func(s string) string { return jsonEscape(s, true) },
		func(s string) string { return jsonEscape(s, false) },
		asciiJSON,
		// The escapes the module's own reports apply before they are
		// scrubbed: Markdown's (an Anthropic key's underscores) and XML's.
		Markdown,
		html.EscapeString,
	}
	if len(secret) >= MinSecret {
		encodings = append(encodings, url.QueryEscape, url.PathEscape)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			encodings = append(encodings, func(s string) string { return enc.EncodeToString([]byte(s)) })
		}
		encodings = append(encodings,
			func(s string) string { return hex.EncodeToString([]byte(s)) },
			func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) })
	}
	var seen []string
	add := func(t string, enc encoding, part string) {
		if t == "" || slices.Contains(seen, t) {
			return
		}
		seen = append(seen, t)
		if len(secret) < MinRun || len(t) < 8 {
			sparse = append(sparse, form{text: t, run: len(t), alone: len(t) < MinRun})
			return
		}
		// The run to redact is what MinRun characters of the secret
		// take in this encoding, at the fewest.
		run := len(t)
		for i := 0; i+MinRun <= len(part); i++ {
			run = min(run, len(enc(part[i:i+MinRun])))
		}
		dense = append(dense, form{text: t, run: max(min(run, len(t)), min(MinRun, len(t)))})
	}
	for _, enc := range encodings {
		add(enc(secret), enc, secret)
	}
	if len(secret) >= MinRun {
		// The base64 of a part of the secret that starts at another
		// offset modulo 3 shares no text with the whole's: these make
		// any part of it found.
		for _, skip := range []int{1, 2} {
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				e := func(s string) string { return enc.EncodeToString([]byte(s)) }
				add(e(secret[skip:]), e, secret[skip:])
			}
		}
	}
	if len(secret) >= MinSecret {
		// Every character escaped: a window of these holds a character
		// or two of the secret, so they are found whole.
		for _, t := range everyEscaped(secret) {
			if t != "" && !slices.Contains(seen, t) {
				seen = append(seen, t)
				sparse = append(sparse, form{text: t, run: len(t)})
			}
		}
	}
	return dense, sparse
}

// jsonEscape returns secret as it reads inside a JSON string, with or
// without the HTML escapes (\u003c…) encoding/json adds by default.
func jsonEscape(secret string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if enc.Encode(secret) != nil {
		return ""
	}
	out := bytes.TrimSpace(b.Bytes())
	return string(out[1 : len(out)-1])
}

// asciiJSON returns secret JSON-escaped as Python's json module writes it:
// every non-ASCII character as \uXXXX.
func asciiJSON(secret string) string {
	s := jsonEscape(secret, false)
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		r1, r2 := r, rune(-1)
		if r > 0xFFFF {
			r -= 0x10000
			r1, r2 = 0xD800+(r>>10)&0x3FF, 0xDC00+r&0x3FF
		}
		for _, u := range []rune{r1, r2} {
			if u >= 0 {
				b.WriteString(`\u`)
				writeHex(&b, u, 4)
			}
		}
	}
	return b.String()
}

// everyEscaped returns secret with every character \u-escaped and with
// every byte percent-encoded, in lower and upper case.
func everyEscaped(secret string) []string {
	var lowerU, upperU, lowerP, upperP strings.Builder
	for _, r := range secret {
		h := strconv.FormatInt(int64(r), 16)
		if len(h) <= 4 {
			pad := strings.Repeat("0", 4-len(h))
			lowerU.WriteString(`\u` + pad + h)
			upperU.WriteString(`\u` + pad + strings.ToUpper(h))
		}
	}
	for i := 0; i < len(secret); i++ {
		h := hex.EncodeToString([]byte{secret[i]})
		lowerP.WriteString("%" + h)
		upperP.WriteString("%" + strings.ToUpper(h))
	}
	return []string{lowerU.String(), upperU.String(), lowerP.String(), upperP.String()}
}

// span is a run of text to redact: src[start:end].
type span struct{ start, end int }

// spans returns the runs of src to redact that start before limit, in
// order and without overlap; those of a windowed form may end anywhere in
// src. It reads each byte a bounded number of times.
func (s *Secrets) spans(src []byte, limit int) []span {
	var out []span
	// Windowed forms: a run of MinRun bytes or more holds an 8-byte window
	// at a position that is a multiple of step from any start (step + 8
	// <= MinRun + 1), so looking every step bytes finds it.
	const step = MinRun + 1 - 8
	lo := 0 // runs never reach back past the end of the last one
	for p := 0; p < limit+step-1 && p+8 <= len(src); {
		w := binary.LittleEndian.Uint64(src[p:])
		if h := hash(w); s.filter[h/64]&(1<<(h%64)) == 0 {
			p += step
			continue
		}
		best := span{}
		for _, c := range s.index[w] {
			f := s.forms[c.form]
			at := int(c.at)
			back := 0
			for p-back > lo && at-back > 0 && src[p-back-1] == f.text[at-back-1] {
				back++
			}
			ahead := 0
			for p+8+ahead < len(src) && at+8+ahead < len(f.text) && src[p+8+ahead] == f.text[at+8+ahead] {
				ahead++
			}
			if r := (span{p - back, p + 8 + ahead}); r.end-r.start >= f.run && r.end-r.start > best.end-best.start {
				best = r
			}
		}
		if best.end == 0 {
			p += step
			continue
		}
		if best.start >= limit {
			break
		}
		lo, p = best.end, best.end
		// A run that reaches a space at either end keeps the space: a
		// secret of several words ("Bearer x") must not eat the space
		// before a part of it that a message quotes.
		for best.start < best.end && isSpace(src[best.start]) {
			best.start++
		}
		for best.end > best.start && isSpace(src[best.end-1]) {
			best.end--
		}
		out = append(out, best)
	}
	// Forms found whole, looked for by their first byte: the escaped
	// forms all start with a backslash or a percent sign.
	for _, first := range s.firsts {
		for from := 0; from < limit; {
			i := bytes.IndexByte(src[from:limit], first)
			if i < 0 {
				break
			}
			start := from + i
			for _, f := range s.forms[s.windowed:] {
				if f.text[0] != first || !bytes.HasPrefix(src[start:], []byte(f.text)) {
					continue
				}
				end := start + len(f.text)
				if !f.alone || (start == 0 || !wordByte(src[start-1])) && (end == len(src) || !wordByte(src[end])) {
					out = append(out, span{start, end})
				}
			}
			from = start + 1
		}
	}
	if len(out) < 2 {
		return out
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	merged := out[:1]
	for _, r := range out[1:] {
		last := &merged[len(merged)-1]
		if r.start <= last.end {
			last.end = max(last.end, r.end)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// redact appends src[from:to] to dst with each of runs (inside it) replaced
// by Redacted.
func redact(dst, src []byte, runs []span, from, to int) []byte {
	for _, r := range runs {
		dst = append(dst, src[from:r.start]...)
		dst = append(dst, Redacted...)
		from = r.end
	}
	return append(dst, src[from:to]...)
}

// Scrub returns b with every secret replaced by [REDACTED]: whole, in each
// of its forms, and every run of MinRun or more of its characters. It
// returns b itself when b holds none.
func (s *Secrets) Scrub(b []byte) []byte {
	if s.Len() == 0 || len(b) == 0 {
		return b
	}
	runs := s.spans(b, len(b))
	if len(runs) == 0 {
		return b
	}
	return redact(make([]byte, 0, len(b)), b, runs, 0, len(b))
}

// ScrubString is Scrub for a string.
func (s *Secrets) ScrubString(str string) string {
	if s.Len() == 0 || str == "" {
		return str
	}
	b := []byte(str)
	runs := s.spans(b, len(b))
	if len(runs) == 0 {
		return str
	}
	return string(redact(make([]byte, 0, len(b)), b, runs, 0, len(b)))
}

// ScrubCut scrubs b, then cuts it to at most n bytes, dropping a secret's
// first bytes left at the cut.
func (s *Secrets) ScrubCut(b []byte, n int) []byte {
	b = s.Scrub(b)
	if len(b) <= n {
		return b
	}
	return s.dropPrefixAtEnd(b[:n])
}

// dropPrefixAtEnd drops the end of b when it is the first 4 or more bytes
// of a form (or all of a shorter one): what a cut left of a secret.
func (s *Secrets) dropPrefixAtEnd(b []byte) []byte {
	if s == nil {
		return b
	}
	for _, f := range s.forms {
		for k := min(len(f.text)-1, len(b)); k >= min(4, len(f.text)); k-- {
			if bytes.HasSuffix(b, []byte(f.text[:k])) {
				b = b[:len(b)-k]
				break
			}
		}
	}
	return b
}

// Text turns a string built from server data into one fit for an error, a
// log line or a report: scrubbed (also once its \u and percent escapes are
// decoded, so that a secret echoed with some characters escaped is found),
// then cut to n runes (no bound when n < 0), valid UTF-8. A secret's first
// bytes left before a "…", by a cut made before the text came here, are
// dropped. The work is bounded by n, not by the length of str.
func (s *Secrets) Text(str string, n int) string {
	if s.Len() == 0 {
		return Clip(str, n)
	}
	// Only the first n runes are kept: scrub no more than they can take
	// (4 bytes each) and a margin that holds any form of a secret starting
	// among them.
	if most := 4*n + 2*s.longest; n >= 0 && len(str) > most {
		str = str[:most]
	}
	str = s.ScrubString(str)
	for _, decode := range []func(string) string{unescapeJSON, unescapePercent} {
		if decoded := decode(str); decoded != str {
			if scrubbed := s.ScrubString(decoded); scrubbed != decoded {
				// An escaped secret: show the decoded text, scrubbed.
				str = scrubbed
			}
		}
	}
	return s.dropCut(Clip(str, n))
}

// dropCut drops, before each "…" in str, the first bytes of a secret that
// end there.
func (s *Secrets) dropCut(str string) string {
	if !strings.Contains(str, Ellipsis) {
		return str
	}
	var b strings.Builder
	for {
		before, after, cut := strings.Cut(str, Ellipsis)
		if !cut {
			b.WriteString(before)
			return b.String()
		}
		b.Write(s.dropPrefixAtEnd([]byte(before)))
		b.WriteString(Ellipsis)
		str = after
	}
}

// Holds reports whether str holds a secret, raw or in a form Secrets
// knows, also once its \u and percent escapes are decoded. Its work is
// linear in str.
func (s *Secrets) Holds(str string) bool {
	if s.Len() == 0 {
		return false
	}
	for _, t := range []string{str, unescapeJSON(str), unescapePercent(str)} {
		if len(s.spans([]byte(t), len(t))) > 0 {
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
	return valid(b.String())
}
