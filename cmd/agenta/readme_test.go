package main

import (
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestREADMEShowsRealOutput checks that the README's Command line example
// prints what testdata/script/readme.txtar checks the real binary prints.
func TestREADMEShowsRealOutput(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("read the README: %v", err)
	}
	archive, err := txtar.ParseFile("testdata/script/readme.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range archive.Files {
		if f.Name != "readme-stdout.txt" {
			continue
		}
		if !strings.Contains(string(readme), "```text\n"+string(f.Data)+"```\n") {
			t.Errorf("README.md's Command line section does not show the output the script checks:\n%s", f.Data)
		}
		return
	}
	t.Fatal("readme.txtar has no readme-stdout.txt")
}
