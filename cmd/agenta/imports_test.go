package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSDKImportGraphStaysClean checks that the command's dependencies do
// not leak into the SDK's packages: importing github.com/agenta-go/agenta
// (or models, evals, agentatest) must not pull in the CLI library, the
// terminal library or testscript.
func TestSDKImportGraphStaysClean(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH; it lists the import graph")
	}
	cliOnly := []string{"github.com/spf13/", "golang.org/x/term", "golang.org/x/sys", "github.com/rogpeppe/go-internal", "github.com/inconshreveable/mousetrap"}
	for _, pkg := range []string{
		"github.com/agenta-go/agenta",
		"github.com/agenta-go/agenta/models",
		"github.com/agenta-go/agenta/evals",
		"github.com/agenta-go/agenta/agentatest",
	} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed %d packages, want the standard library ones at least: %q", pkg, len(deps), deps)
		}
		for _, dep := range deps {
			for _, banned := range cliOnly {
				if strings.HasPrefix(dep, banned) {
					t.Errorf("%s imports %s, a dependency only the command should have", pkg, dep)
				}
			}
		}
	}
}
