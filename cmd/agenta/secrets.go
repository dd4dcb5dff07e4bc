package main

import (
	"io"
	"strings"

	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
)

// The command knows secrets the SDK may not have sent: the API key, and
// every LLM provider key in its environment. A provider's error that echoes
// its key is stored by the service as a scenario's result and comes back
// in a 200, so eval run would print it and write it into the JUnit report a
// CI job publishes. Standard output of every command (run wraps it in a
// scrubWriter), standard error (a messageWriter), eval run's reports and
// the error line are scrubbed of all of them, by internal/text, which the
// SDK uses too. The writers here are adapters of internal/text, not a
// second scrubber: scrubWriter defers text.Secrets.NewWriter until the
// secrets are known, messageWriter applies text.Secrets.Scrub to each
// write whole, and scrubbedWrite wraps a report's writer in one.

// providerKeyNames are the environment variables that hold LLM provider
// keys the service knows: the names models lists, so the two cannot drift.
var providerKeyNames = models.ProviderKeyNames()

// minSecretLength is the shortest value scrubbed: a shorter one is a word
// that may occur anywhere, and scrubbing it would mangle the text.
const minSecretLength = 8

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

// scrubWriter scrubs what goes through it (see text.Writer), the secrets
// known only at its first write, once the flags that name them
// (--api-key-file) are parsed.
type scrubWriter struct {
	w     io.Writer
	known func() []string
	tw    *text.Writer
}

// newScrubWriter returns w, scrubbed of the secrets known returns.
func newScrubWriter(w io.Writer, known func() []string) *scrubWriter {
	return &scrubWriter{w: w, known: known}
}

// Write scrubs p with what was held back before it, and writes all but a
// tail that may be the start of a secret.
func (s *scrubWriter) Write(p []byte) (int, error) {
	if s.tw == nil {
		s.tw = text.NewSecrets(s.known()...).NewWriter(s.w)
	}
	return s.tw.Write(p)
}

// Flush writes what was held back.
func (s *scrubWriter) Flush() error {
	if s.tw == nil {
		return nil
	}
	return s.tw.Flush()
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

// messageWriter scrubs each write whole, as standard error gets them: a
// progress line, a message. Nothing is held back, so that a live progress
// line shows at once.
type messageWriter struct {
	w       io.Writer
	known   func() []string
	secrets *text.Secrets
	started bool
}

func (m *messageWriter) Write(p []byte) (int, error) {
	if !m.started {
		m.secrets, m.started = text.NewSecrets(m.known()...), true
	}
	if _, err := m.w.Write(m.secrets.Scrub(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// scrubbedWrite writes what render writes, scrubbed of secrets.
func scrubbedWrite(w io.Writer, secrets []string, render func(io.Writer) error) error {
	sw := text.NewSecrets(secrets...).NewWriter(w)
	if err := render(sw); err != nil {
		return err
	}
	return sw.Flush()
}
