package evals

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// Numbers for people never show NaN or Inf, and text from the server
// reaches a report bounded and on one line.
func TestFormat(t *testing.T) {
	tenth := 0.1 // a variable: constants add exactly
	tests := []struct {
		name, got, want string
	}{
		{"a whole number", formatNumber(3), "3"},
		{"four significant digits", formatNumber(2.0 / 3), "0.6667"},
		{"no mean", formatNumber(math.NaN()), "n/a"},
		{"an infinite number", formatNumber(math.Inf(1)), "n/a"},
		{"every digit for machines", pythonRepr(tenth + 0.2), "0.30000000000000004"},
		{"no number for machines", optional(math.NaN(), true), ""},
		{"a pass rate", formatPercent(0.625), "62.5%"},
		{"no pass rate", formatPercent(math.NaN()), "n/a"},
		{"a p-value", formatP(0.0625), "0.0625"},
		{"a tiny p-value", formatP(3.8e-6), "< 0.0001"},
		{"line breaks and tabs", oneLine("a\nb\r\tc"), "a b  c"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	if s := oneLine("bell\a, escape \x1b[31m"); strings.ContainsAny(s, "\a\x1b") {
		t.Errorf("oneLine kept a control character: %q", s)
	}
	long := strings.Repeat("é", 500)
	if s := bound(long, 120); utf8.RuneCountInString(s) > 120 || !strings.HasSuffix(s, "…") {
		t.Errorf("bound(500 runes, 120) = %d runes %q, want at most 120 ending in …", utf8.RuneCountInString(s), s)
	}
}
