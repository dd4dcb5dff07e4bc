package agenta

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's front door shows what `go test ./...` prints: one line per
// package of the module. A package added without its line makes the README
// untrue to a new user, so the list is checked against `go list ./...`.
func TestREADMEListsEveryPackage(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH: %v", err)
	}
	out, err := exec.Command(goTool, "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	want := strings.Fields(string(out))

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The block of "ok  <package>  <time>" lines under "Two commands".
	line := regexp.MustCompile(`(?m)^(?:ok|\?)\s+(github\.com/agenta-go/agenta\S*)\s`)
	var got []string
	for _, m := range line.FindAllStringSubmatch(string(readme), -1) {
		got = append(got, m[1])
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("README.md's `go test ./...` output lists the packages\n%s\nbut the module has\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
