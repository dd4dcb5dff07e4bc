package main

import (
	"testing"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

// A command told the server speaks 2026 that meets a missing route after
// a create is not run again: the fork would be sent twice (and the second
// answer, "the slug is taken", would hide what went wrong). Left to
// detect, the command runs again only after its 2024 request found no
// route, which created nothing.
func TestToldGenerationNeverRunsTwice(t *testing.T) {
	srv := fake2026(t)
	demo := agentatest.SeedDemo2026(srv)
	keyFile := fake2026KeyFile(t)
	host, forks := notFoundOn(t, srv, "/applications/revisions/commit", "/applications/variants/fork")
	for _, gen := range []string{"2026", "auto"} {
		forks.Store(0)
		code, _, errOut := runCommand(t, "--host", host, "--api-key-file", keyFile, "--generation", gen,
			"variant", "fork", demo.ApplicationID, "--name", "candidate-"+gen, "--set", "temperature=0.1")
		assert.Equal(t, exitService, code, "--generation %s: %s", gen, errOut)
		assert.Equal(t, int32(1), forks.Load(), "--generation %s: forks sent", gen)
		assert.Contains(t, errOut, "was forked, but its new parameters were not committed", "--generation %s", gen)
	}
}

// TestEveryCommandHasAnExample walks the whole command tree, the commands
// cobra generates included: each one's --help shows an example.
func TestEveryCommandHasAnExample(t *testing.T) {
	f, _, _ := testFactory()
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Example == "" && !cmd.Hidden {
			t.Errorf("%q has no example in its --help", cmd.CommandPath())
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	root := NewCmdRoot(f)
	walk(root)
	for _, name := range []string{"help", "completion"} {
		if sub, _, err := root.Find([]string{name}); err != nil || sub.Name() != name {
			t.Errorf("the root has no %s command before Execute (found %v, %v)", name, sub, err)
		}
	}
}
