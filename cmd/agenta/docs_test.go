package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/spf13/cobra"
)

// commandPage is the page of docs/ about the command: its table of
// commands and its example against the fake.
const commandPage = "../../docs/the-command.md"

// TestCommandPageShowsRealOutput checks that the example of
// docs/the-command.md is the one testdata/script/readme.txtar runs, and
// prints what the script checks the real binary prints.
func TestCommandPageShowsRealOutput(t *testing.T) {
	readme, err := os.ReadFile(commandPage)
	if err != nil {
		t.Fatalf("read the command's page: %v", err)
	}
	archive, err := txtar.ParseFile("testdata/script/readme.txtar")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range archive.Files {
		switch f.Name {
		case "readme-stdout.txt":
			found++
			if !strings.Contains(string(readme), "```text\n"+string(f.Data)+"```\n") {
				t.Errorf("docs/the-command.md's example does not show the output the script checks:\n%s", f.Data)
			}
		case "readme-commands.sh":
			found++
			if !strings.Contains(string(readme), "```sh\n"+string(f.Data)+"```\n") {
				t.Errorf("docs/the-command.md's example does not show the commands the script runs:\n%s", f.Data)
			}
		}
	}
	if found != 2 {
		t.Fatal("readme.txtar lacks readme-stdout.txt or readme-commands.sh")
	}
}

// workflowStep returns the script of the step named name in a GitHub
// Actions workflow: the lines of its "run: |" block, without their common
// indentation. It reads only that shape of YAML, which the recipe uses.
func workflowStep(workflow, name string) (string, error) {
	lines := strings.Split(workflow, "\n")
	inStep := false
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "- ") {
			inStep = strings.TrimSpace(strings.TrimPrefix(trimmed, "- ")) == "name: "+name
			continue
		}
		if !inStep || trimmed != "run: |" {
			continue
		}
		keyIndent := len(line) - len(strings.TrimLeft(line, " "))
		var block []string
		indent := -1
		for _, l := range lines[i+1:] {
			if strings.TrimSpace(l) == "" {
				block = append(block, "")
				continue
			}
			n := len(l) - len(strings.TrimLeft(l, " "))
			if n <= keyIndent {
				break
			}
			if indent < 0 {
				indent = n
			}
			if n < indent {
				return "", fmt.Errorf("step %q: line %q is indented less than the block", name, l)
			}
			block = append(block, l[indent:])
		}
		return strings.TrimRight(strings.Join(block, "\n"), "\n") + "\n", nil
	}
	return "", fmt.Errorf("no step named %q with a \"run: |\" block", name)
}

// maxRecipeLines bounds the shell of the CI recipe's job: the commands,
// without plumbing.
const maxRecipeLines = 15

// TestREADMECIRecipe checks that the README's CI section shows the
// workflow that testdata/script/ci_recipe.txtar runs, as it is, and that
// its job stays within maxRecipeLines lines of shell.
func TestREADMECIRecipe(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("read the README: %v", err)
	}
	archive, err := txtar.ParseFile("testdata/script/ci_recipe.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range archive.Files {
		if f.Name != "release-gate.yml" {
			continue
		}
		if !strings.Contains(string(readme), "```yaml\n"+string(f.Data)+"```\n") {
			t.Errorf("README.md's CI section does not show ci_recipe.txtar's release-gate.yml as it is:\n%s", f.Data)
		}
		script, err := workflowStep(string(f.Data), "Release gate")
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(script, "\n"); n > maxRecipeLines {
			t.Errorf("the recipe's job is %d lines of shell, want at most %d:\n%s", n, maxRecipeLines, script)
		}
		return
	}
	t.Fatal("ci_recipe.txtar has no release-gate.yml")
}

// TestWorkflowStep checks the reading of a step's script.
func TestWorkflowStep(t *testing.T) {
	workflow := "steps:\n  - uses: a\n    with: { run: x }\n  - name: Gate\n    env:\n      A: b\n    run: |\n      one \\\n        two\n\n      three\n  - name: Next\n    run: |\n      four\n"
	got, err := workflowStep(workflow, "Gate")
	if want := "one \\\n  two\n\nthree\n"; err != nil || got != want {
		t.Errorf("workflowStep(Gate) = %q, %v; want %q", got, err, want)
	}
	if _, err := workflowStep(workflow, "Missing"); err == nil {
		t.Error("workflowStep(Missing) found a step")
	}
}

// TestCommandPageDefaultOutputs checks that the table of commands in
// docs/the-command.md says what each reading command prints by default, as
// its --output or --format flag (and so its --help) does.
func TestCommandPageDefaultOutputs(t *testing.T) {
	readme, err := os.ReadFile(commandPage)
	if err != nil {
		t.Fatalf("read the command's page: %v", err)
	}
	// The rows of the table of commands: | command | what it does | prints |.
	var rows [][]string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| `agenta ") {
			cells := strings.Split(strings.ReplaceAll(line, `\|`, "/"), " | ")
			if len(cells) == 3 {
				rows = append(rows, cells)
			}
		}
	}
	if len(rows) < 7 {
		t.Fatalf("found %d rows in docs/the-command.md's table of commands, want one per command group", len(rows))
	}
	f, _, _ := testFactory()
	checked := 0
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		flag := cmd.Flags().Lookup("output")
		if flag == nil {
			flag = cmd.Flags().Lookup("format")
		}
		if flag == nil || cmd.Name() == "completion" || cmd.HasParent() && cmd.Parent().Name() == "completion" {
			return
		}
		group := "`agenta " + strings.Fields(commandName(cmd))[0]
		for _, cells := range rows {
			if strings.HasPrefix(cells[0], "| "+group) {
				checked++
				if want := "`" + flag.DefValue + "` (default)"; !strings.Contains(cells[2], want) {
					t.Errorf("docs/the-command.md: %s prints %q; want it to say %s, as --%s's default", commandName(cmd), cells[2], want, flag.Name)
				}
				return
			}
		}
		t.Errorf("docs/the-command.md's table of commands has no row for %s", commandName(cmd))
	}
	walk(NewCmdRoot(f))
	if checked < 9 {
		t.Errorf("checked %d commands, want every reading command (9)", checked)
	}
}

// TestREADMEInstallLine checks that the README's install line is the one
// CI runs (.ci/run installs the command with it), so that it works as
// printed while the module is unpublished.
func TestREADMEInstallLine(t *testing.T) {
	const line = "go install ./cmd/agenta"
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("read the README: %v", err)
	}
	if !strings.Contains(string(readme), "```sh\n"+line+"\n```\n") {
		t.Errorf("README.md does not give the install line %q", line)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Skipf("no .ci/run beside the module: %v", err)
	}
	if !strings.Contains(string(ci), line) {
		t.Errorf(".ci/run does not run the README's install line %q", line)
	}
}

// TestCIRecipeOnServer runs the README's CI recipe against a real server,
// as its comment says to: without its two lines of the fake, with
// AGENTA_HOST and the ids from the environment. .ci/run runs it against the
// real mid-2024 server; elsewhere it skips unless AGENTA_CI_RECIPE_SERVER=1.
func TestCIRecipeOnServer(t *testing.T) {
	if os.Getenv("AGENTA_CI_RECIPE_SERVER") != "1" {
		t.Skip("set AGENTA_CI_RECIPE_SERVER=1, AGENTA_HOST and the recipe's AGENTA_* ids to run the CI recipe against that server")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("the recipe is a bash script: %v", err)
	}
	archive, err := txtar.ParseFile("testdata/script/ci_recipe.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var script string
	for _, f := range archive.Files {
		if f.Name == "release-gate.yml" {
			if script, err = workflowStep(string(f.Data), "Release gate"); err != nil {
				t.Fatal(err)
			}
		}
	}
	var kept []string
	dropped := 0
	for _, line := range strings.SplitAfter(script, "\n") {
		if strings.Contains(line, "agenta fake") {
			dropped++
			continue
		}
		kept = append(kept, line)
	}
	if dropped != 2 {
		t.Fatalf("the recipe has %d lines of the fake, want the two its comment says to drop", dropped)
	}
	dir := t.TempDir()
	cmd := exec.Command(bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", strings.Join(kept, ""))
	cmd.Dir = dir
	// The recipe names its candidate after the time, in seconds: a name used
	// twice on a base is a 500, and a rerun of a GitHub job keeps its run id.
	out, err := cmd.CombinedOutput()
	t.Logf("the recipe printed:\n%s", out)
	// The kits' test sets have 5 rows, and their stand-in apps ignore the
	// candidate's parameters: the two agree on every case, which 5 cases
	// cannot show to be within 5 points. The release gate must say so,
	// exit 1, and every other gate hold.
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitGateFailed {
		t.Fatalf("the recipe ended with %v, want exit %d: diff_low inconclusive on 5 cases", err, exitGateFailed)
	}
	if !regexp.MustCompile(`diff_low\(Exact match\) >= -0.05 failed: inconclusive: the bound is -0\.35\d*; about \d+ paired cases would be needed`).Match(out) {
		t.Errorf("the release gate did not fail as inconclusive")
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), `<testsuite name="gates" tests="4" failures="1"`) || strings.Count(string(report), "<failure") != 1 {
		t.Errorf("report.xml does not fail the release gate alone of four gates:\n%s", report)
	}
}

// TestCommandPageExitCodes checks that docs/the-command.md's table of exit
// codes has a row for each code --help lists, and that it gives the order
// --help gives for several outcomes.
func TestCommandPageExitCodes(t *testing.T) {
	page, err := os.ReadFile(commandPage)
	if err != nil {
		t.Fatalf("read the command's page: %v", err)
	}
	codes := 0
	for _, line := range strings.Split(exitCodesHelp, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.HasPrefix(line, "  ") || strings.Trim(fields[0], "0123456789") != "" {
			continue
		}
		codes++
		if !strings.Contains(string(page), "\n| "+fields[0]+" | ") {
			t.Errorf("docs/the-command.md's table of exit codes has no row for %s, which --help lists:\n%s", fields[0], line)
		}
	}
	if codes != len(exitOrder)+1 {
		t.Errorf("read %d codes in --help's table, want %d (0 and each of exitOrder)", codes, len(exitOrder)+1)
	}
	order := make([]string, len(exitOrder))
	for i, k := range exitOrder {
		order[i] = fmt.Sprint(k.code())
	}
	if want := "**" + strings.Join(order, ", ") + "**"; !strings.Contains(string(page), want) {
		t.Errorf("docs/the-command.md does not give the order of exit codes as %s", want)
	}
}
