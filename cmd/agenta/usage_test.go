package main

import (
	"slices"
	"testing"
)

// TestClosest checks the suggestions a usage error makes: a swap of two
// neighbours is one edit, a prefix counts, and nothing far is guessed.
func TestClosest(t *testing.T) {
	formats := []string{"jsonl", "csv", "json", "table"}
	tests := []struct {
		word       string
		candidates []string
		want       []string
	}{
		{"jsnol", formats, []string{"jsonl"}},
		{"jsn", formats, []string{"json"}},
		{"jso", formats, []string{"json", "jsonl"}},
		{"JSON", formats, []string{"json", "jsonl"}},
		{"csb", formats, []string{"csv"}},
		{"yaml", formats, nil},
		{"evl", []string{"eval", "evaluation", "fake"}, []string{"eval"}},
		{"eva", []string{"eval", "evaluation", "fake"}, []string{"eval", "evaluation"}},
		{"gaet", []string{"gate", "junit", "app"}, []string{"gate"}},
		{"zzz", []string{"eval", "fake", "scenarios"}, nil},
	}
	for _, tt := range tests {
		if got := closest(tt.word, tt.candidates); !slices.Equal(got, tt.want) {
			t.Errorf("closest(%q, %q) = %q, want %q", tt.word, tt.candidates, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "abc", 3}, {"wiat", "wait", 1}, {"ca", "abc", 3}, {"kitten", "sitting", 3}, {"Türkiye", "Turkiye", 1}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
