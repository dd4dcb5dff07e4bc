package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// TestVariantForkSettings checks how --set values are read: JSON when they
// parse, else text.
func TestVariantForkSettings(t *testing.T) {
	f, _, _ := testFactory()
	var got *VariantForkOptions
	cmd := NewCmdVariantFork(f, func(o *VariantForkOptions) error { got = o; return nil })
	err := execute(cmd, "base", "--name", "precise", "--set", "temperature=0", "--set", "prompt=Answer: {x}",
		"--set", "stop=[\"\\n\"]", "--set", "stream=false", "--set", "empty=", "--set", "eq=a=b",
		"--set", "seed=12345678901234567890", "--set", "top_p= 0.95")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"temperature": json.Number("0"), "prompt": "Answer: {x}", "stop": []any{"\n"}, "stream": false, "empty": "", "eq": "a=b",
		"seed": json.Number("12345678901234567890"), "top_p": json.Number("0.95")}
	if !reflect.DeepEqual(got.Set, want) {
		t.Errorf("--set values: got %#v, want %#v", got.Set, want)
	}
	// A number is sent as written: a float64 would send 12345678901234567000.
	if body, _ := json.Marshal(got.Set["seed"]); string(body) != "12345678901234567890" {
		t.Errorf("--set seed=12345678901234567890 is sent as %s, want it as written", body)
	}
	if got.VariantName != "precise" || got.BaseID != "base" {
		t.Errorf("variant name %q and base %q, want precise and base", got.VariantName, got.BaseID)
	}
}

// variant get shows the app's URL without the credentials it may carry
// (a 2026 revision's data.url is the URL the service calls).
func TestVariantURLCredentialsHidden(t *testing.T) {
	srv := fake2026(t)
	app := srv.AddApplication2026(agentatest.Application2026{Slug: "capitals",
		URL: "http://user:hostpass-0123456789@127.0.0.1:19080/app?token=tok-0123456789abcdef", Parameters: map[string]any{"t": 1}})
	t.Setenv("AGENTA_API_KEY", "k26")
	for _, o := range []string{"table", "json"} {
		code, out, errOut := runCommand(t, "--host", srv.URL(), "variant", "get", app.VariantID, "-o", o)
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, "http://***@127.0.0.1:19080/app?token=***", "-o %s", o)
		assert.NotContains(t, out, "hostpass", "-o %s", o)
		assert.NotContains(t, out, "tok-0123456789abcdef", "-o %s", o)
	}
}
