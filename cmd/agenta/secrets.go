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
// and write it into the JUnit report a CI job publishes. Everything eval
// run writes, and every error line, goes through scrub.

// providerKeyNames are the environment variables that hold LLM provider
// keys the service knows.
var providerKeyNames = []string{models.OpenAIAPIKey, models.MistralAPIKey, models.CohereAPIKey, models.AnthropicAPIKey,
	models.AnyscaleAPIKey, models.PerplexityAIAPIKey, models.DeepInfraAPIKey, models.TogetherAIAPIKey,
	models.AlephAlphaAPIKey, models.OpenRouterAPIKey, models.GroqAPIKey,
	"GEMINI_API_KEY", // accepted by the service; models has no constant for it
}

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
		if key, err := readKeyFile(f.APIKeyFile); err == nil {
			add(key)
		}
	}
	for _, name := range providerKeyNames {
		add(f.getenv(name))
	}
	return out
}

// secretForms returns a secret and the encodings of it a server may echo:
// JSON-escaped, percent-encoded, base64 and hex.
func secretForms(secret string) []string {
	forms := []string{secret}
	if quoted, err := json.Marshal(secret); err == nil {
		forms = append(forms, string(quoted[1:len(quoted)-1]))
	}
	raw := []byte(secret)
	return append(forms,
		url.QueryEscape(secret), url.PathEscape(secret),
		base64.StdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw),
		base64.RawStdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw),
		hex.EncodeToString(raw), strings.ToUpper(hex.EncodeToString(raw)))
}

// scrub replaces every form of every secret in b with [REDACTED].
func scrub(b []byte, secrets []string) []byte {
	for _, secret := range secrets {
		for _, form := range secretForms(secret) {
			if form != "" && bytes.Contains(b, []byte(form)) {
				b = bytes.ReplaceAll(b, []byte(form), []byte(redacted))
			}
		}
	}
	return b
}

// scrubbedWrite writes what render writes, scrubbed: the whole of
// it is rendered first, so that no secret is split between two writes.
func scrubbedWrite(w io.Writer, secrets []string, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	_, err := w.Write(scrub(buf.Bytes(), secrets))
	return err
}
