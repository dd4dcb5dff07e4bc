package sealed

import (
	"bytes"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	for _, value := range []string{"", "k", "sk-proj-" + strings.Repeat("0123456789", 20), "ünïcödé 😀"} {
		sealed := Seal("OPENAI_API_KEY", value)
		if len(value) >= 8 && bytes.Contains(sealed, []byte(value[:8])) {
			t.Errorf("Seal(%q) = %q holds the value", value, sealed)
		}
		if got := Open("OPENAI_API_KEY", sealed); got != value {
			t.Errorf("Open(Seal(%q)) = %q", value, got)
		}
		if !bytes.Equal(sealed, Seal("OPENAI_API_KEY", value)) {
			t.Errorf("Seal(%q) is not deterministic: keys built alike must compare equal", value)
		}
	}
	if bytes.Equal(Seal("A", "same value here"), Seal("B", "same value here")) {
		t.Error("two names seal a value alike")
	}
}
