package agenta

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/agenta-go/agenta/agentatest"
)

// The README is the front door: what the SDK is, its two commands, install,
// a first program, the command in CI, mocking and links. Reference and
// design live in docs/, one page per subject (issue 19).
const maxREADMELines = 350

// readDoc reads a documentation file of the module, failing the test when
// it is absent.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

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

	readme := readDoc(t, "README.md")
	// The block of "ok  <package>  <time>" lines under "Two commands".
	line := regexp.MustCompile(`(?m)^(?:ok|\?)\s+(github\.com/agenta-go/agenta\S*)\s`)
	var got []string
	for _, m := range line.FindAllStringSubmatch(readme, -1) {
		got = append(got, m[1])
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("README.md's `go test ./...` output lists the packages\n%s\nbut the module has\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestREADMEIsShort keeps the README a front door: reference belongs in
// docs/.
func TestREADMEIsShort(t *testing.T) {
	readme := readDoc(t, "README.md")
	if n := strings.Count(readme, "\n"); n > maxREADMELines {
		t.Errorf("README.md has %d lines, want at most %d: move reference to a page of docs/", n, maxREADMELines)
	}
}

// markdownLink finds the target of an inline link or image: [text](target)
// or ![alt](target), with an optional "title".
var markdownLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// fencedCode matches a fenced code block, whose brackets are code, not
// links.
var fencedCode = regexp.MustCompile("(?ms)^```.*?^```")

// localLinks returns the targets of doc's links that stay in the
// repository: not a URL, not mail, not an anchor of doc itself.
func localLinks(doc string) []string {
	doc = fencedCode.ReplaceAllString(doc, "")
	var targets []string
	for _, m := range markdownLink.FindAllStringSubmatch(doc, -1) {
		target := m[1]
		if u, err := url.Parse(target); err == nil && u.Scheme != "" || strings.HasPrefix(target, "#") {
			continue
		}
		targets = append(targets, target)
	}
	return targets
}

// headingAnchors returns the anchors GitHub gives doc's headings: lower
// case, letters, digits, - and _ kept, spaces as -, other characters
// dropped, and -1, -2… on repeats.
func headingAnchors(doc string) map[string]bool {
	doc = fencedCode.ReplaceAllString(doc, "")
	anchors := map[string]bool{}
	seen := map[string]int{}
	heading := regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*$`)
	for _, m := range heading.FindAllStringSubmatch(doc, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			anchors[anchor+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[anchor] = true
		}
		seen[anchor]++
	}
	return anchors
}

// TestDocLinksResolve checks every link of the README and of the pages in
// docs/ that stays in the repository: its file or directory exists, and
// its #anchor, into a Markdown file, names one of that file's headings. A
// page moved or a heading renamed breaks no link unnoticed.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"README.md"}, pages...)
	if len(pages) < 10 {
		t.Fatalf("found %d documentation pages (%v), want the README and the pages of docs/", len(pages), pages)
	}
	readmeLinksToDocs := 0
	for _, page := range pages {
		doc := readDoc(t, page)
		check := func(target string) {
			path, fragment, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s links to %s, which does not exist: %v", page, target, err)
					return
				}
			}
			if fragment == "" || !strings.HasSuffix(file, ".md") {
				return
			}
			if !headingAnchors(readDoc(t, file))[fragment] {
				t.Errorf("%s links to %s, but %s has no heading with the anchor #%s", page, target, file, fragment)
			}
		}
		for _, target := range localLinks(doc) {
			if page == "README.md" && strings.HasPrefix(target, "docs/") {
				readmeLinksToDocs++
			}
			check(target)
		}
		for _, m := range regexp.MustCompile(`\]\((#[^)\s]+)\)`).FindAllStringSubmatch(fencedCode.ReplaceAllString(doc, ""), -1) {
			check(m[1])
		}
	}
	if readmeLinksToDocs < 10 {
		t.Errorf("README.md has %d links into docs/, want one to each page at least", readmeLinksToDocs)
	}
}

// TestREADMEMockingSnippet checks that the README's Mocking example is
// the test in examples/mocking that go test runs, so that it compiles and
// passes: each of its lines, but a "// ..." line standing for the ones
// left out, comes from that test, in order.
func TestREADMEMockingSnippet(t *testing.T) {
	readme := readDoc(t, "README.md")
	const start = "```go\nfunc TestPassRateWithAgentatest("
	i := strings.Index(readme, start)
	if i < 0 {
		t.Fatal("README.md's Mocking section does not show TestPassRateWithAgentatest")
	}
	snippet, _, _ := strings.Cut(readme[i+len("```go\n"):], "```")
	source := strings.Split(readDoc(t, filepath.Join("examples", "mocking", "mocking_test.go")), "\n")
	at := 0
	for _, line := range strings.Split(strings.TrimSuffix(snippet, "\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "// ...") {
			continue
		}
		for at < len(source) && source[at] != line {
			at++
		}
		if at == len(source) {
			t.Fatalf("README.md's Mocking example has the line\n%s\nwhich examples/mocking/mocking_test.go lacks, or has in another order", line)
		}
		at++
	}
}

// TestREADMEFirstProgramBuilds builds and vets the README's first program
// as a user would copy it, in a directory of testdata that go test ./...
// does not see.
func TestREADMEFirstProgramBuilds(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH: %v", err)
	}
	readme := readDoc(t, "README.md")
	_, section, ok := strings.Cut(readme, "\n## A first program\n")
	if !ok {
		t.Fatal("README.md has no section \"A first program\"")
	}
	_, program, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatal("README.md's first program has no Go block")
	}
	program, _, _ = strings.Cut(program, "```")
	if !strings.HasPrefix(program, "package main\n") {
		t.Fatalf("README.md's first program is not a whole program:\n%s", program)
	}
	dir, err := os.MkdirTemp("testdata", "readme-first-program-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := "./" + filepath.ToSlash(dir)
	bin := filepath.Join(t.TempDir(), "first")
	for _, args := range [][]string{{"build", "-o", bin, pkg}, {"vet", pkg}} {
		if out, err := exec.Command(goTool, args...).CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s\nthe program:\n%s", strings.Join(args, " "), err, out, program)
		}
	}

	// It runs unchanged against a server of mid-2024, whose lookup by
	// environment is a 500 (the fake with that bug, and in CI the real one).
	srv := agentatest.NewTestServer(t, agentatest.WithBrokenEnvironmentLookup())
	demo := agentatest.SeedDemo(srv)
	runFirstProgram(t, bin, srv.URL(), demo.AppID, "capitals.default 3 gpt-3.5-turbo\n")
	if host := os.Getenv("AGENTA_README_FIRST_HOST"); host != "" {
		runFirstProgram(t, bin, host, os.Getenv("AGENTA_README_FIRST_APP"), os.Getenv("AGENTA_README_FIRST_WANT")+"\n")
	}
}

// runFirstProgram runs the README's first program against host for appID
// and checks that it exits 0 printing want.
func runFirstProgram(t *testing.T, bin, host, appID, want string) {
	t.Helper()
	cmd := exec.Command(bin, appID)
	cmd.Env = append(os.Environ(), "AGENTA_HOST="+host, "AGENTA_API_KEY=")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != want {
		t.Errorf("the first program against %s: %v, printed %q, want %q", host, err, out, want)
	}
}
