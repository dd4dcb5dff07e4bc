package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// The command knows secrets the SDK cannot scrub from successful answers:
// the API key, and the LLM provider keys it sends for an AI critique. A
// provider's error that echoes its key is stored by the service as a
// scenario's result and comes back in a 200, so eval run would print it
// and write it into the JUnit report a CI job publishes. Standard output of
// every command (run wraps it in a scrubWriter), eval run's reports and
// every error line go through scrub; progress lines on stderr hold ids and
// statuses only.

// providerKeyNames are the environment variables that hold LLM provider
// keys the service knows: the names models lists, so the two cannot drift.
var providerKeyNames = models.ProviderKeyNames()

// minSecretLength is the shortest value scrubbed: a shorter one is a word
// that may occur anywhere, and scrubbing it would mangle the text.
const minSecretLength = 8

// redacted replaces a secret.
const redacted = "[REDACTED]"

// secrets returns the secret values this run knows: the API key, and
// every provider key set in the environment.
func (f *Factory) secrets() []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); len(s) >= minSecretLength {
			out = append(out, s)
		}
	}
	add(f.getenv("AGENTA_API_KEY"))
	if f.APIKeyFile != "" {
		if key, err := f.keyFromFile(); err == nil {
			add(key)
		}
	}
	for _, name := range providerKeyNames {
		add(f.getenv(name))
	}
	return out
}

// secretForms returns each secret and the encodings of it a server may
// echo: JSON-escaped, percent-encoded, base64 and hex.
func secretForms(secrets []string) [][]byte {
	var forms [][]byte
	for _, secret := range secrets {
		texts := []string{secret}
		if quoted, err := json.Marshal(secret); err == nil {
			texts = append(texts, string(quoted[1:len(quoted)-1]))
		}
		raw := []byte(secret)
		texts = append(texts,
			url.QueryEscape(secret), url.PathEscape(secret),
			base64.StdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw),
			base64.RawStdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw),
			hex.EncodeToString(raw), strings.ToUpper(hex.EncodeToString(raw)))
		for _, text := range texts {
			if text != "" {
				forms = append(forms, []byte(text))
			}
		}
	}
	return forms
}

// scrub replaces every form (see secretForms) in b with [REDACTED].
func scrub(b []byte, forms [][]byte) []byte {
	for _, form := range forms {
		if bytes.Contains(b, form) {
			b = bytes.ReplaceAll(b, form, []byte(redacted))
		}
	}
	return b
}

// scrubWriter scrubs what goes through it, however the writes split it:
// it holds back the bytes that could be the start of a secret's form,
// fewer than the longest form, until the next write or Flush shows what
// follows them.
type scrubWriter struct {
	w io.Writer
	// known returns the secrets; it is called at the first write, once the
	// flags that name them (--api-key-file) are parsed.
	known func() []string
	// forms are the secrets' forms, computed once at the first write.
	forms   [][]byte
	keep    int // the longest form's length, less one
	started bool
	pending []byte
}

// newScrubWriter returns w, scrubbed of the secrets known returns.
func newScrubWriter(w io.Writer, known func() []string) *scrubWriter {
	return &scrubWriter{w: w, known: known}
}

func (s *scrubWriter) start() {
	if s.started {
		return
	}
	s.started = true
	s.forms = secretForms(s.known())
	for _, form := range s.forms {
		s.keep = max(s.keep, len(form)-1)
	}
}

// Write scrubs p with what was held back before it, and writes all but
// the bytes a form could still be starting in. Every form that starts
// before them is whole in the buffer, and so was replaced.
func (s *scrubWriter) Write(p []byte) (int, error) {
	s.start()
	if len(s.forms) == 0 {
		return s.w.Write(p)
	}
	s.pending = scrub(append(s.pending, p...), s.forms)
	if n := len(s.pending) - s.keep; n > 0 {
		if _, err := s.w.Write(s.pending[:n]); err != nil {
			return 0, err
		}
		s.pending = append(s.pending[:0], s.pending[n:]...)
	}
	return len(p), nil
}

// Flush writes what was held back.
func (s *scrubWriter) Flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	_, err := s.w.Write(s.pending)
	s.pending = s.pending[:0]
	return err
}

// Close flushes, then closes the underlying writer when it can be closed.
func (s *scrubWriter) Close() error {
	err := s.Flush()
	if c, ok := s.w.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// scrubbedWrite writes what render writes, scrubbed of secrets.
func scrubbedWrite(w io.Writer, secrets []string, render func(io.Writer) error) error {
	sw := newScrubWriter(w, func() []string { return secrets })
	if err := render(sw); err != nil {
		return err
	}
	return sw.Flush()
}
