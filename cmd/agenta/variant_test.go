package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/agentatest"
)

// runCommand runs the agenta command in this process, with the
// environment set by t.Setenv, and returns its exit code, stdout and
// stderr.
func runCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// variant fork --from sends the parameters it read exactly as the server
// wrote them: an integer past 2^53 and a long decimal keep their text.
func TestForkSendsExactNumbers(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	demo := agentatest.SeedDemo(srv)
	from := srv.AddVariant(agentatest.Variant{BaseID: demo.BaseID, ConfigName: "exact", Parameters: map[string]any{
		"seed": json.Number("9007199254740993"), "top_p": json.Number("0.1000000000000000055511151231257827")}})
	t.Setenv("AGENTA_HOST", srv.URL())
	t.Setenv("AGENTA_API_KEY", "")
	code, _, stderr := runCommand(t, "variant", "fork", demo.BaseID, "--name", "copy", "--from", from, "--set", "n=12345678901234567890123")
	if code != 0 {
		t.Fatalf("fork exited %d: %s", code, stderr)
	}
	sent := srv.RequestsFor(agentatest.OpAddVariantFromBase)
	if len(sent) != 1 {
		t.Fatalf("%d forks sent, want 1", len(sent))
	}
	for _, want := range []string{`"seed":9007199254740993`, `"top_p":0.1000000000000000055511151231257827`, `"n":12345678901234567890123`} {
		if !strings.Contains(string(sent[0].Body), want) {
			t.Errorf("the fork sent %s, want %s in it", sent[0].Body, want)
		}
	}
}
