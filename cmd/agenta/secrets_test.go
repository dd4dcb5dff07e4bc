package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// TestScrubWriter checks that a key never gets through a scrubWriter,
// raw or encoded, wherever the writes split it, and that everything else
// does, unchanged.
func TestScrubWriter(t *testing.T) {
	const key = "sk-split-provider-key-0123456789"
	nearMiss := key[:len(key)-1] // not the key: it must come through
	for _, form := range []string{key, base64.StdEncoding.EncodeToString([]byte(key)), hex.EncodeToString([]byte(key))} {
		text := "before " + form + " middle " + form + " after; " + nearMiss
		for chunk := 1; chunk <= len(text); chunk++ {
			var out bytes.Buffer
			w := newScrubWriter(&out, func() []string { return []string{key} })
			for i := 0; i < len(text); i += chunk {
				if _, err := w.Write([]byte(text[i:min(i+chunk, len(text))])); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if strings.Contains(got, form) || !strings.HasPrefix(got, "before [REDACTED]") ||
				!strings.Contains(got, " middle [REDACTED]") || !strings.HasSuffix(got, " after; "+nearMiss) {
				t.Fatalf("%d-byte writes of the key as %.12s…: got %q, want the key replaced twice and the rest unchanged", chunk, form, got)
			}
		}
	}

	// Without a secret, writes pass through as they come.
	var out bytes.Buffer
	w := newScrubWriter(&out, func() []string { return nil })
	w.Write([]byte("abc"))
	if out.String() != "abc" {
		t.Errorf("with no secret, a write came out as %q, want %q at once", out.String(), "abc")
	}
	// A short value is no secret to scrub: it would mangle the text.
	f, _, _ := testFactory()
	f.getenv = func(name string) string {
		return map[string]string{"AGENTA_API_KEY": "short", "OPENAI_API_KEY": key}[name]
	}
	if got := f.secrets(); strings.Join(got, ",") != key {
		t.Errorf("secrets %q, want only %q", got, key)
	}
}
