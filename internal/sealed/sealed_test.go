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

// Two values sealed under one name share no keystream: with one of them
// known (a test's fake key beside the real one, as testify's diff of two
// requests prints both), the XOR of the two sealed forms must not give the
// other away, at any alignment of the two.
func TestSealedValuesShareNoKeystream(t *testing.T) {
	const name = "OPENAI_API_KEY"
	real := "sk-proj-Zq7Lw2Xv9Nr4Tb6Yc1Md8Kf3Hg5Jp0Sx2Qa7We4Ru9Io6Pm1"
	known := "sk-test-0000000000000000000000000000000000000000000000000"
	a, b := Seal(name, real), Seal(name, known)
	for at := 0; at < min(len(a), len(b)); at++ {
		var recovered []byte
		for i := 0; at+i < min(len(a), len(b)) && i < len(known); i++ {
			recovered = append(recovered, a[at+i]^b[at+i]^known[i])
		}
		if bytes.Contains(recovered, []byte(real[:12])) || bytes.Contains(recovered, []byte(real[20:32])) {
			t.Fatalf("Seal(real) XOR Seal(known) XOR known gives the real key back (at byte %d): %q", at, recovered)
		}
	}
}
