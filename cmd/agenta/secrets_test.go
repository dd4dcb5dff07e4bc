package main

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/internal/text"
)

// TestScrubWriter checks that a key never gets through a scrubWriter,
// raw or encoded, wherever the writes split it, and that everything else
// does, unchanged.
func TestScrubWriter(t *testing.T) {
	const key = "sk-split-provider-key-0123456789"
	nearMiss := key[:text.MinRun-1] // too short a part of the key to be a leak: it must come through
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

// echoKey is an OpenAI-like key of 56 characters: every run of 12 of its
// characters is checked in every output.
const echoKey = "sk-proj-Zq7Lw2Xv9Nr4Tb6Yc1Md8Kf3Hg5Jp0Sx2Qa7We4Ru9Io6Pm1"

// hostile is server text that would drive a spreadsheet or a terminal.
const hostile = "=HYPERLINK(\"http://evil.example\",\"open\")\x1b]0;pwned\a\x1b[2J\u202egnp.exe\u0085"

// keyLeak returns the first run of 12 characters of echoKey in s, raw, or
// the key whole in one of its encodings; "" when s holds neither.
func keyLeak(s string) string {
	for i := 0; i+12 <= len(echoKey); i++ {
		if strings.Contains(s, echoKey[i:i+12]) {
			return echoKey[i : i+12]
		}
	}
	for _, form := range []string{base64.StdEncoding.EncodeToString([]byte(echoKey)), hex.EncodeToString([]byte(echoKey))} {
		if strings.Contains(s, form[:24]) {
			return form[:24]
		}
	}
	return ""
}

// A provider key the app echoes, in its output or its error, raw, cut or
// encoded, shows in no output of the command: not stdout or stderr of eval
// run, not its JUnit, CSV, JSON Lines or Markdown report, not any format
// of agenta scenarios. And the app's hostile text reaches no spreadsheet
// or terminal live.
func TestEchoedProviderKeyNeverShown(t *testing.T) {
	srv, app, testset, variant, evaluator := echoServer(t)
	dir := t.TempDir()
	t.Setenv("AGENTA_HOST", srv.URL())
	t.Setenv("AGENTA_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", echoKey)
	reports := map[string]string{"--junit": "report.xml", "--csv": "report.csv", "--json": "report.jsonl", "--markdown": "report.md"}
	args := []string{"eval", "run", "--app", app, "--testset", testset, "--variant", variant, "--evaluator", evaluator,
		"--lm-provider-key", "OPENAI_API_KEY", "--interval", "100ms", "--gate", "Exact match >= 0"}
	for flag, file := range reports {
		args = append(args, flag, filepath.Join(dir, file))
	}
	outputs := map[string]string{}
	code, stdout, stderr := runCommand(t, args...)
	if code != 0 {
		t.Fatalf("eval run exited %d: %s", code, stderr)
	}
	outputs["eval run stdout"], outputs["eval run stderr"] = stdout, stderr
	for _, file := range reports {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		outputs[file] = string(data)
	}
	ids := srv.EvaluationIDs()
	evaluation := ids[len(ids)-1]
	for _, format := range []string{"jsonl", "json", "csv", "table"} {
		code, stdout, stderr := runCommand(t, "scenarios", evaluation, "--format", format)
		if code != 0 {
			t.Fatalf("scenarios --format %s exited %d: %s", format, code, stderr)
		}
		outputs["scenarios "+format], outputs["scenarios "+format+" stderr"] = stdout, stderr
	}
	for _, cmd := range [][]string{{"evaluation", "get", evaluation}, {"evaluation", "get", evaluation, "-o", "json"}} {
		_, stdout, stderr := runCommand(t, cmd...)
		outputs[strings.Join(cmd, " ")], outputs[strings.Join(cmd, " ")+" stderr"] = stdout, stderr
	}

	// The rows really echoed the key: the service holds it.
	if stored := srv.RequestsFor(agentatest.OpFetchEvaluationScenarios); len(stored) == 0 {
		t.Fatal("no scenarios were read")
	}
	if !strings.Contains(outputs["scenarios jsonl"], "[REDACTED]") {
		t.Errorf("scenarios jsonl shows no [REDACTED]: the rows must echo the key for this test to mean anything:\n%s", outputs["scenarios jsonl"])
	}
	for name, out := range outputs {
		if w := keyLeak(out); w != "" {
			t.Errorf("%s holds %q of the key:\n%s", name, w, out)
		}
		// JSON keeps the exact text, escaped: encoding/json escapes ESC and
		// BEL, and the command the bidirectional and C1 controls it leaves.
		for _, c := range []string{"\x1b", "\a", "\u202e", "\u0085"} {
			if strings.Contains(out, c) {
				t.Errorf("%s holds the control %q raw:\n%q", name, c, out)
			}
		}
	}
	for _, name := range []string{"scenarios csv", "report.csv"} {
		records, err := csv.NewReader(strings.NewReader(outputs[name])).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, record := range records {
			for _, cell := range record {
				if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && cell != "-1+1" {
					if !strings.HasPrefix(cell, "'") {
						t.Errorf("%s: cell %q would be a formula", name, cell)
					}
				}
				if strings.HasPrefix(cell, "=") || strings.HasPrefix(cell, "-1+1") {
					t.Errorf("%s: cell %q starts a formula", name, cell)
				}
			}
		}
		if !strings.Contains(outputs[name], `'=HYPERLINK(`) {
			t.Errorf("%s: the formula is not there, neutralised: %s", name, outputs[name])
		}
	}
	if !strings.Contains(outputs["scenarios jsonl"], `\u202egnp.exe\u0085`) {
		t.Errorf("the JSON Lines do not keep the text, escaped:\n%s", outputs["scenarios jsonl"])
	}
	if !strings.Contains(outputs["scenarios table"], `\x1b]0;pwned\x07`) {
		t.Errorf("the table shows the escape otherwise than visibly:\n%s", outputs["scenarios table"])
	}
}

// A key the command knows (in its environment, not sent) that a failed
// run's message echoes is scrubbed from the reports, whatever their own
// escapes do to it: Markdown escapes an Anthropic key's underscores every
// few characters, which left the runs between them unrecognised.
func TestKeyEscapedByAReportNeverShown(t *testing.T) {
	const antKey = "sk-ant-api03-Ab3dE_fG5hI_jK7lM_nO9pQ_rS1tU_vW3xY_zA5bC_dE7fG"
	srv, app, testset, variant, evaluator := echoServer(t)
	t.Setenv("AGENTA_HOST", srv.URL())
	t.Setenv("AGENTA_API_KEY", "")
	t.Setenv("ANTHROPIC_API_KEY", antKey)
	failure := `{"message":"Evaluation Failed","stacktrace":"Traceback\nanthropic.AuthenticationError: invalid x-api-key ` + antKey + `"}`
	status := `{"type":"status","value":"EVALUATION_FAILED","error":` + failure + `}`
	srv.InjectFaultFor(agentatest.OpFetchEvaluationStatus, time.Minute, agentatest.Fault{Status: 200, Body: `{"status":` + status + `}`})
	srv.InjectFaultFor(agentatest.OpFetchEvaluation, time.Minute, agentatest.Fault{Status: 200, Body: `{"id":"x","status":` + status + `}`})
	dir := t.TempDir()
	code, stdout, stderr := runCommand(t, "eval", "run", "--app", app, "--testset", testset, "--variant", variant, "--evaluator", evaluator,
		"--interval", "100ms", "--gate", "Exact match >= 0", "--markdown", filepath.Join(dir, "r.md"), "--junit", filepath.Join(dir, "r.xml"))
	if code != exitEvalFailed {
		t.Fatalf("eval run exited %d, want %d: %s", code, exitEvalFailed, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "r.md"))
	xml, _ := os.ReadFile(filepath.Join(dir, "r.xml"))
	if !strings.Contains(string(md), "[REDACTED]") {
		t.Fatalf("the Markdown report does not show the failure's message: %s", md)
	}
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr, "Markdown": string(md), "JUnit": string(xml)} {
		read := strings.ReplaceAll(out, `\`, "") // as a reader reads the escapes
		for i := 0; i+12 <= len(antKey); i++ {
			if strings.Contains(read, antKey[i:i+12]) {
				t.Errorf("%s holds %q once its escapes are read:\n%s", name, antKey[i:i+12], out)
				break
			}
		}
	}
}
