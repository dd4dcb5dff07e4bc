package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
)

// Not parallel: the program reads and sets AGENTA_HOST.

func TestEvaluateEmbedded(t *testing.T) {
	t.Setenv("AGENTA_HOST", "")
	dir := t.TempDir()
	junitPath, csvPath := filepath.Join(dir, "report.xml"), filepath.Join(dir, "report.csv")
	var out, progress bytes.Buffer
	if err := evaluate(context.Background(), []string{"-junit", junitPath, "-csv", csvPath}, &out, &progress); err != nil {
		t.Fatalf("the demo's candidate must pass the demo's gates, got %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"### `capitals.precise` against `capitals.default`\n",
		"| Exact match | 62.5% (30.6% – 86.3%) | 100.0% (67.6% – 100.0%) | +37.5 pts | 3 / 0 / 5 | 0 / 0 | 0.25 |\n",
		"| Edit distance (lower is better) | 2.125 (-0.3806 – 4.631) | 0 (0 – 0) | -2.125 | 3 / 0 / 5 | 0 / 0 | 0.25 |\n",
		"| `low(Exact match) >= 0.6` | 0.7473 | ✅ pass (Wilson's score bound at 95%, estimate 1 over 8 cases) |\n",
		"| `diff_low(Exact match) >= -0.05` | 0.02751 | ✅ pass (Tango's score bound at 95%, estimate 0.375 over 8 paired cases) |\n",
		"| `worse(Edit distance) <= 0` | 0 | ✅ pass |\n",
		"| `app_errors <= 0` | 0 | ✅ pass |\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, out.String())
		}
	}
	for _, want := range []string{"capitals.default: EVALUATION_FINISHED\n", "capitals.precise: EVALUATION_FINISHED\n"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("the progress lacks %q:\n%s", want, progress.String())
		}
	}

	// JUnit: a suite per variant with a case per row, which never fail,
	// and one for the gates, which all hold.
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(readFile(t, junitPath), &junit); err != nil {
		t.Fatalf("-junit wrote no valid XML: %v", err)
	}
	suites := map[string]string{}
	for _, s := range junit.Suites {
		suites[s.Name] = fmt.Sprintf("%d cases, %d failed", len(s.Cases), s.Failures)
	}
	wantSuites := map[string]string{
		"capitals.default": "8 cases, 0 failed", // Australia, Nigeria, Switzerland name the largest city: data, not failures
		"capitals.precise": "8 cases, 0 failed",
		"gates":            "4 cases, 0 failed",
	}
	if fmt.Sprint(suites) != fmt.Sprint(wantSuites) {
		t.Errorf("JUnit suites = %v, want %v", suites, wantSuites)
	}

	// CSV: a header, then one line per row of each variant.
	records, err := csv.NewReader(bytes.NewReader(readFile(t, csvPath))).ReadAll()
	if err != nil {
		t.Fatalf("-csv wrote no valid CSV: %v", err)
	}
	if len(records) != 17 {
		t.Fatalf("CSV has %d lines, want a header and 2×8 rows", len(records))
	}
	header := strings.Join(records[0], ",")
	if want := "variant,row,input.country,expected,output,app_error,cost,latency,Edit distance,Exact match,Terse answer"; header != want {
		t.Errorf("CSV header = %s, want %s", header, want)
	}
	if got, want := strings.Join(records[4][:5], ","), "capitals.default,4,Australia,Canberra,Sydney"; got != want {
		t.Errorf("CSV line 4 starts %s, want %s", got, want)
	}
}

func TestEvaluateGateFails(t *testing.T) {
	t.Setenv("AGENTA_HOST", "")
	var out, progress bytes.Buffer
	err := evaluate(context.Background(), []string{"-set", "temperature=1", "-name", "warm"}, &out, &progress)
	if !errors.Is(err, evals.ErrGateFailed) {
		t.Fatalf("a warmer candidate names the largest city more often: want a gate failure, got %v", err)
	}
	if code := exitCode(err, false); code != 1 {
		t.Errorf("exit code %d for a failed gate, want 1", code)
	}
	var gateErr *evals.GateError
	if !errors.As(err, &gateErr) {
		t.Fatalf("error %T, want a *evals.GateError", err)
	}
	var failed []string
	for _, g := range gateErr.Failed {
		failed = append(failed, fmt.Sprintf("%s: %v", g.Gate, g.Measured))
	}
	if got, want := strings.Join(failed, "; "), "low(Exact match) >= 0.6: 0.16117233776067347; diff_low(Exact match) >= -0.05: -0.5398469545128195; worse(Edit distance) <= 0: 2"; got != want {
		t.Errorf("failed gates %q, want %q", got, want)
	}
	// The report is written all the same, for the person who reads the CI log.
	for _, want := range []string{"### `capitals.warm` against `capitals.default`", "| `low(Exact match) >= 0.6` | 0.1612 | ❌ fail: the estimate itself, 0.375, is not within the limit 0.6"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestEvaluateAgainstAHost points AGENTA_HOST at a fake, as a user would at
// their server, with the ids and gates passed in.
func TestEvaluateAgainstAHost(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithAPIKey("key.secret"))
	d := agentatest.SeedDemo(srv)
	t.Setenv("AGENTA_HOST", srv.URL())
	t.Setenv("AGENTA_API_KEY", "key.secret")

	var out, progress bytes.Buffer
	err := evaluate(context.Background(), []string{
		"-app", d.AppID, "-testset", d.TestsetID, "-name", "chatty", "-baseline", d.VariantID,
		"-evaluators", d.ExactMatchID + "," + d.EditDistanceID,
		"-set", "temperature=0", "-set", `prompt_system="Be chatty."`,
		"-gate", "Exact match >= 50%",
	}, &out, &progress)
	var gateErr *evals.GateError
	if !errors.As(err, &gateErr) || len(gateErr.Failed) != 1 || gateErr.Failed[0].Measured != 0 {
		t.Fatalf("a chatty candidate never matches exactly: want Exact match failing at 0, got %v", err)
	}
	if !regexp.MustCompile("### `capitals\\.chatty-[0-9]+` against `capitals\\.default`").MatchString(out.String()) {
		t.Errorf("a real server gets a candidate named with a timestamp:\n%s", out.String())
	}
	if n := len(srv.RequestsFor(agentatest.OpCreateEvaluation)); n != 1 {
		t.Errorf("%d creates, want one for both variants", n)
	}
	if n := len(srv.RequestsFor(agentatest.OpGetVariantByEnvironment)); n != 0 {
		t.Errorf("-baseline names the variant: want no lookup by environment, got %d", n)
	}

	before := len(srv.Requests())
	err = evaluate(context.Background(), []string{"-app", d.AppID, "-testset", d.TestsetID, "-evaluators", d.ExactMatchID}, &out, &progress)
	if err == nil || !strings.Contains(err.Error(), "-gate") {
		t.Errorf("without -gate on a real server: want a refusal naming -gate, got %v", err)
	}
	if code := exitCode(err, false); code != 2 {
		t.Errorf("exit code %d for a refused run, want 2", code)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("a refused run sent %d requests, want none", n)
	}
}

// On a mid-2024 server, which answers every lookup by environment with a
// 500 (its bug), evaluate without -baseline compares with the variant the
// app's environments say is in production; an app with nothing there says
// to pass -baseline.
func TestEvaluateOnAMid2024Server(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithBrokenEnvironmentLookup())
	d := agentatest.SeedDemo(srv)
	t.Setenv("AGENTA_HOST", srv.URL())
	t.Setenv("AGENTA_API_KEY", "")
	var out, progress bytes.Buffer
	err := evaluate(context.Background(), []string{"-app", d.AppID, "-testset", d.TestsetID, "-evaluators", d.ExactMatchID,
		"-gate", "Exact match >= 50%"}, &out, &progress)
	if err != nil {
		t.Fatalf("without -baseline: %v\n%s", err, progress.String())
	}
	if !strings.Contains(out.String(), "capitals.default") {
		t.Errorf("the report does not name the production variant:\n%s", out.String())
	}

	undeployed := srv.AddApp(agentatest.App{Name: "undeployed"})
	err = evaluate(context.Background(), []string{"-app", undeployed, "-testset", d.TestsetID, "-evaluators", d.ExactMatchID,
		"-gate", "Exact match >= 50%"}, &out, &progress)
	if err == nil || !strings.Contains(err.Error(), `has no variant deployed to "production"`) || !strings.Contains(err.Error(), "with -baseline ID") {
		t.Fatalf("nothing deployed: got %v, want the reason and what to pass instead", err)
	}
	if !errors.Is(err, agenta.ErrNotFound) {
		t.Errorf("the error %v must match agenta.ErrNotFound", err)
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		err         error
		interrupted bool
		want        int
	}{
		{nil, false, 0},
		{flag.ErrHelp, false, 0},
		{fmt.Errorf("judging: %w", &evals.GateError{Total: 1}), false, 1},
		{&evals.GateError{Total: 1, Failed: []evals.GateResult{{Invalid: true}}}, false, 2},
		{usageError{errors.New("flag provided but not defined: -gat")}, false, 2},
		{errors.New("create evaluation: 500"), false, 3},
		{&agenta.PreflightError{Report: &models.PreflightReport{Findings: []models.PreflightFinding{{Problem: models.PreflightNotFound}}}}, false, 2},
		{&agenta.PreflightError{Report: &models.PreflightReport{Findings: []models.PreflightFinding{{Problem: models.PreflightMissingInput}}}}, false, 3},
		{&evals.RunError{Err: context.Canceled}, true, 130},
		{fmt.Errorf("judging: %w", &evals.GateError{Total: 1}), true, 130},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err, tt.interrupted); got != tt.want {
			t.Errorf("exitCode(%v, %v) = %d, want %d", tt.err, tt.interrupted, got, tt.want)
		}
	}
}

// A gate that names an evaluator the run does not have is a typo, exit 2,
// not a regression (exit 1), found before any evaluation is created.
func TestEvaluateInvalidGate(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	t.Setenv("AGENTA_HOST", srv.URL())
	t.Setenv("AGENTA_API_KEY", "")
	var out, progress bytes.Buffer
	err := evaluate(context.Background(), []string{"-app", d.AppID, "-testset", d.TestsetID, "-evaluators", d.ExactMatchID,
		"-baseline", d.VariantID, "-gate", "Exact mach >= 0.9"}, &out, &progress)
	if !errors.Is(err, evals.ErrInvalidGate) || !strings.Contains(err.Error(), `did you mean "Exact match"?`) {
		t.Fatalf("want an invalid gate with a suggestion, got %v", err)
	}
	if code := exitCode(err, false); code != 2 {
		t.Errorf("exit code %d for a gate naming no evaluator, want 2", code)
	}
	if n := len(srv.RequestsFor(agentatest.OpCreateEvaluation)); n != 0 {
		t.Errorf("%d evaluations created for a gate typo, want none", n)
	}
}

// SIGINT while the runs go on: exit 130, the report written (its gates
// fail: the runs were not judged), and the error saying which runs may
// still be running on a server that cannot stop them.
func TestEvaluateInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example")
	}
	srv := agentatest.NewTestServer(t, agentatest.WithManualEvaluations())
	d := agentatest.SeedDemo(srv)
	bin := filepath.Join(t.TempDir(), "evaluate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	junit := filepath.Join(t.TempDir(), "report.xml")
	cmd := exec.Command(bin, "-app", d.AppID, "-testset", d.TestsetID, "-evaluators", d.ExactMatchID,
		"-baseline", d.VariantID, "-gate", "Exact match >= 90%", "-junit", junit, "-timeout", "1m")
	cmd.Env = append(os.Environ(), "AGENTA_HOST="+srv.URL(), "AGENTA_API_KEY=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once both runs exist; the manual fake never starts them.
	deadline := time.Now().Add(30 * time.Second)
	for len(srv.RequestsFor(agentatest.OpFetchEvaluationStatus)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "The runs could not be judged") {
		t.Errorf("the report does not say the runs were not judged:\n%s", stdout.String())
	}
	if !strings.Contains(string(readFile(t, junit)), "<failure") {
		t.Errorf("the JUnit report has no failing gate:\n%s", readFile(t, junit))
	}
	if !strings.Contains(stderr.String(), "may still be running on the service") {
		t.Errorf("the error does not say what may still run:\n%s", stderr.String())
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// -repeats runs each test case that many times: on the mid-2024 demo, that
// many evaluations of each variant, whose rows each variant's run holds.
func TestEvaluateRepeats(t *testing.T) {
	t.Setenv("AGENTA_HOST", "")
	csvPath := filepath.Join(t.TempDir(), "report.csv")
	var out, progress bytes.Buffer
	err := evaluate(context.Background(), []string{"-repeats", "2", "-gate", "Exact match >= 0.5", "-csv", csvPath}, &out, &progress)
	if err != nil {
		t.Fatalf("the demo's candidate, twice: %v\n%s", err, out.String())
	}
	records, err := csv.NewReader(bytes.NewReader(readFile(t, csvPath))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 1+2*2*8 {
		t.Errorf("CSV has %d lines, want a header and 2 variants × 2 repeats × 8 rows", len(records))
	}
	if n := strings.Count(progress.String(), "capitals.precise: EVALUATION_FINISHED\n"); n != 2 {
		t.Errorf("the candidate's evaluations finished %d times in the progress, want 2 (one per repeat):\n%s", n, progress.String())
	}
}
