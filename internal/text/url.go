package text

import (
	"net/url"
	"strings"
)

// URL returns a URL fit for a message: its user information shown as ***
// (https://***@host/api), the value of each query parameter and the
// fragment too, since they may hold a credential (?api_key=…). Whatever
// stands before the last "@" (after the scheme) is user information, even
// where a password written unescaped holds a "/", "?" or "#". A text that
// does not parse as a URL is treated the same way as far as it can be:
// everything after a "?" or "#" is hidden.
func URL(raw string) string {
	// An @ after the scheme marks credentials, wherever a character of a
	// password written unescaped (/, ?, #) makes a parser end the
	// authority: everything before the last @ is hidden.
	scheme, rest, hasScheme := strings.Cut(raw, "://")
	if !hasScheme {
		scheme, rest = "", raw
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if !hasScheme {
			return "***@" + URL(rest[at+1:])
		}
		return strings.Replace(URL(scheme+"://"+rest[at+1:]), "://", "://***@", 1)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Scheme == "" || u.Host == "" {
		// Not a URL with a host: shown as given, less what may be a
		// credential.
		return looseURL(raw)
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme)
		b.WriteString(":")
	}
	if u.Host != "" || u.User != nil || strings.HasPrefix(raw[len(u.Scheme):], "://") {
		b.WriteString("//")
	}
	if u.User != nil {
		b.WriteString("***@")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteString("?")
		for i, pair := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteString("&")
			}
			// A name without a value may be the credential itself.
			if name, _, hasValue := strings.Cut(pair, "="); hasValue {
				b.WriteString(name + "=***")
			} else if pair != "" {
				b.WriteString("***")
			}
		}
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		b.WriteString("#***")
	}
	return b.String()
}

// looseURL is URL for a text that does not parse.
func looseURL(raw string) string {
	s := raw
	tail := ""
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s, tail = s[:i], s[i:i+1]+"***"
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		authority, path := rest, ""
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			authority, path = rest[:i], rest[i:]
		}
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			authority = "***@" + authority[at+1:]
		}
		s = scheme + "://" + authority + path
	} else if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s = "***@" + s[at+1:]
	}
	return s + tail
}
