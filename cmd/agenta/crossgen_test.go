package main

// One job across generations: agenta eval run, given the same flags,
// gives the same verdict, the same exit code and reports of the same
// structure against a mid-2024 server and a 2026 one seeded alike. The
// cases run against agentatest's two generations here, and against the
// two real servers in CI (TestEvalRunOnServer, from .ci/run and
// .ci/realserver2026.sh), whose digests are then compared.

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crossIDs are the objects the cases name on one server: an app, its
// variant (run twice, as baseline and candidate), a test set of five
// countries, one of four rows two of which fail in the app (ERR-1,
// ERR-2) and one expects the wrong capital (Bonn), and an exact-match
// evaluator named "Exact match".
type crossIDs struct {
	Host, KeyFile, Generation                    string
	App, Variant, Testset, ErrTestset, Evaluator string
	// MismatchTestset has a "nation" column where the app takes
	// "country"; InputVariant is a variant whose app declares that input
	// ("" on 2024, whose app declares it in its own OpenAPI document, so
	// Variant does; on 2026 runCross forks Variant to declare it in the
	// revision's input schema).
	MismatchTestset, InputVariant string
	// Evaluations, if set, counts the evaluations created so far (a
	// fake's create requests); nil reads the server's own listing.
	Evaluations func() int
}

// crossUnknownID is an evaluator id of the servers' form that neither has.
const crossUnknownID = "01a2248d-0000-7000-8000-00000000dead"

// crossEvaluations counts the evaluations on the server of ids: on a
// mid-2024 server GET /evaluations/?app_id=…, on a 2026 one the runs of
// POST /evaluations/runs/query.
func crossEvaluations(t *testing.T, ids crossIDs) int {
	t.Helper()
	if ids.Evaluations != nil {
		return ids.Evaluations()
	}
	key := ""
	if ids.KeyFile != "" {
		b, err := os.ReadFile(ids.KeyFile)
		require.NoError(t, err)
		key = strings.TrimSpace(string(b))
	}
	var opts []agenta.Option
	if key != "" {
		opts = append(opts, agenta.WithAPIKey(key))
	}
	c, err := agenta.NewClient(ids.Host, opts...)
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gen, err := c.Generation(ctx)
	require.NoError(t, err, "the generation of %s", ids.Host)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL()+"/evaluations/?app_id="+url.QueryEscape(ids.App), nil)
	if gen == agenta.Generation2026 {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL()+"/evaluations/runs/query", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
	}
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %s", req.Method, req.URL.Path, body)
	var listed []json.RawMessage
	if gen == agenta.Generation2026 {
		var page struct {
			Runs []json.RawMessage `json:"runs"`
		}
		require.NoError(t, json.Unmarshal(body, &page))
		listed = page.Runs
	} else {
		require.NoError(t, json.Unmarshal(body, &listed))
	}
	return len(listed)
}

// crossInputVariant forks the variant of a 2026 server (ids.KeyFile set)
// into one whose revision declares its input, "country", in its input
// schema: the seeded variant declares none, and the preflight then
// leaves the inputs unchecked, as it must.
func crossInputVariant(t *testing.T, ids crossIDs) string {
	t.Helper()
	b, err := os.ReadFile(ids.KeyFile)
	require.NoError(t, err)
	c, err := agenta.NewClient(ids.Host, agenta.WithAPIKey(strings.TrimSpace(string(b))), agenta.WithGeneration(agenta.Generation2026))
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rev, err := c.RetrieveApplicationRevision(ctx, models.ApplicationRevisionRetrieve{ApplicationVariantRef: &models.Reference{ID: ids.Variant}})
	require.NoError(t, err)
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	fork, err := c.ForkApplicationVariant(ctx, models.ApplicationVariantFork{ApplicationVariantRef: models.Reference{ID: ids.Variant},
		ApplicationVariant: models.NewApplicationVariant{Slug: "inputs-" + hex.EncodeToString(suffix[:])}})
	require.NoError(t, err)
	data := models.ApplicationRevisionData{}
	if rev.Data != nil {
		data = *rev.Data
	}
	data.Schemas = map[string]json.RawMessage{"inputs": json.RawMessage(`{"type":"object","properties":{"country":{"type":"string"}}}`)}
	_, err = c.CommitApplicationRevision(ctx, models.ApplicationRevisionCommit{ApplicationVariantID: fork.ID, Message: "declares its input", Data: &data})
	require.NoError(t, err)
	return fork.ID
}

// crossCase is one eval run and the exit code it must give on either
// generation.
type crossCase struct {
	name     string
	errors   bool // on the test set with failing rows
	gates    []string
	wantExit int
	// mistake, if set, is a mistake of the job that must end it before
	// anything is created (issue 26): mistakeEvaluatorID names an
	// evaluator that does not exist, mistakeInputs runs the test set that
	// lacks the app's input. Every case with a usage or preflight exit
	// counts the server's evaluations before and after.
	mistake string
}

const (
	mistakeEvaluatorID = "evaluator id"
	mistakeInputs      = "inputs"
)

var crossCases = []crossCase{
	{"good", false, []string{"Exact match >= 0.9", "worse(Exact match) <= 0", "regression_p(Exact match) >= 0.05",
		"app_errors <= baseline", "latency.p95 <= 5", "errors(Exact match) <= 0"}, exitOK, ""},
	{"errors", true, []string{"Exact match >= 0.5", "app_errors <= baseline", "latency.p95 <= 5",
		"latency.p95 <= 5 allowing 2 failed rows", "errors(Exact match) <= 1"}, exitGateFailed, ""},
	{"typo", false, []string{"Exact macth >= 0.9"}, exitUsage, ""},
	// The four mistakes of issue 26, each found before a create on both
	// generations: the evaluator a gate names is not in the run, a
	// mistyped measure, an evaluator id the server does not have, a test
	// set without the app's input.
	{"missing evaluator", false, []string{"Exact capital >= 0.9"}, exitUsage, ""},
	{"mistyped measure", false, []string{"wrose(Exact match) <= 0"}, exitUsage, ""},
	{"wrong evaluator id", false, []string{"Exact match >= 0.9"}, exitUsage, mistakeEvaluatorID},
	{"no input column", false, []string{"Exact match >= 0.9"}, exitEvalFailed, mistakeInputs},
}

// crossTestset rows, as both real kits' stand-in apps answer them: the
// capital of France, Germany, Italy, Spain and Japan; a failure for a
// country that starts with ERR.
var (
	crossRows = [][2]string{{"France", "Paris"}, {"Germany", "Berlin"}, {"Italy", "Rome"}, {"Spain", "Madrid"}, {"Japan", "Tokyo"}}
	crossErrs = [][2]string{{"France", "Paris"}, {"ERR-1", "x"}, {"Germany", "Bonn"}, {"ERR-2", "y"}}
)

// crossMismatch renames the rows' "country" column "nation", as the
// kits' wrong-columns test set has it.
func crossMismatch[V any](rows []map[string]V) []map[string]V {
	for _, r := range rows {
		r["nation"] = r["country"]
		delete(r, "country")
	}
	return rows
}

// crossAppURI serves the OpenAPI document of the 2024 kit's stand-in app,
// from which the preflight reads the app's input, "country": the fake's
// own app URIs lead nowhere, and the inputs are then not checked.
var crossAppURI = func() string {
	doc := `{"openapi":"3.1.0","paths":{"/generate":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Body_generate_generate_post"}}}}}}},
"components":{"schemas":{"Body_generate_generate_post":{"properties":{"country":{"type":"string"},
"prompt_template":{"type":"string","x-parameter":"text"},"temperature":{"type":"number","x-parameter":"float"}}}}}}`
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/capitals/openapi.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, doc)
	}))
	return app.URL + "/capitals"
}()

// seedCross2024 seeds a 2024 fake as the 2024 kit's seed.py does, the
// stand-in app answering as the 2026 kit's.
func seedCross2024(srv *agentatest.Server) crossIDs {
	app := srv.AddApp(agentatest.App{Name: "capitals"})
	base := srv.AddBase(agentatest.Base{AppID: app, Name: "capitals", Application: agentatest.StandInApplication, URI: crossAppURI})
	variant := srv.AddVariant(agentatest.Variant{BaseID: base, ConfigName: "default",
		Parameters: map[string]any{"prompt_template": "What is the capital of {country}?", "temperature": 0.7}})
	rows := func(pairs [][2]string) []map[string]string {
		out := make([]map[string]string, len(pairs))
		for i, p := range pairs {
			out[i] = map[string]string{"country": p[0], "correct_answer": p[1]}
		}
		return out
	}
	return crossIDs{Host: srv.URL(), Generation: "2024", App: app, Variant: variant,
		Testset:         srv.AddTestset(agentatest.Testset{AppID: app, Name: "capitals", Rows: rows(crossRows)}),
		ErrTestset:      srv.AddTestset(agentatest.Testset{AppID: app, Name: "with-errors", Rows: rows(crossErrs)}),
		MismatchTestset: srv.AddTestset(agentatest.Testset{AppID: app, Name: "wrong-columns", Rows: crossMismatch(rows(crossRows[:3]))}),
		Evaluations:     func() int { return len(srv.EvaluationIDs()) },
		Evaluator: srv.AddEvaluatorConfig(models.EvaluatorConfig{Name: "Exact match", EvaluatorKey: "auto_exact_match",
			SettingsValues: map[string]any{"correct_answer_key": "correct_answer"}}),
	}
}

// seedCross2026 seeds a 2026 fake as the 2026 kit's seed.py does, with
// the same test sets and evaluator as seedCross2024.
func seedCross2026(srv *agentatest.Server) crossIDs {
	app := srv.AddApplication2026(agentatest.Application2026{Slug: "capitals", URL: "http://127.0.0.1:19080",
		Parameters: map[string]any{"prompt_template": "What is the capital of {country}?", "temperature": 0.7}})
	rows := func(pairs [][2]string) []map[string]any {
		out := make([]map[string]any, len(pairs))
		for i, p := range pairs {
			out[i] = map[string]any{"country": p[0], "correct_answer": p[1]}
		}
		return out
	}
	columns := []string{"country", "correct_answer"}
	return crossIDs{Host: srv.URL(), Generation: "2026", App: app.ApplicationID, Variant: app.VariantID,
		Testset:    srv.AddTestset2026(agentatest.Testset2026{Slug: "capitals", Columns: columns, Rows: rows(crossRows)}).TestsetID,
		ErrTestset: srv.AddTestset2026(agentatest.Testset2026{Slug: "with-errors", Columns: columns, Rows: rows(crossErrs)}).TestsetID,
		MismatchTestset: srv.AddTestset2026(agentatest.Testset2026{Slug: "wrong-columns", Columns: []string{"nation", "correct_answer"},
			Rows: crossMismatch(rows(crossRows[:3]))}).TestsetID,
		Evaluations: func() int { return len(srv.RequestsFor(agentatest.OpCreateSimpleEvaluation)) },
		Evaluator: srv.AddEvaluator2026(agentatest.Evaluator2026{Slug: "exact-match", Name: "Exact match",
			URI: "agenta:builtin:auto_exact_match:v0", Parameters: map[string]any{"correct_answer_key": "correct_answer"}}).EvaluatorID,
	}
}

// crossDigest is what must be the same on both generations: the exit
// code, the printed tables and the reports, normalised (see crossNormal).
type crossDigest struct {
	Case     string   `json:"case"`
	Exit     int      `json:"exit"`
	Stdout   []string `json:"stdout"`
	JUnit    []string `json:"junit"`
	Markdown []string `json:"markdown"`
	CSV      []string `json:"csv"`
	JSON     []string `json:"json"`
}

// runCross runs a case with the command in this process and digests what
// it printed and wrote. The generation is left to detect unless ids.Generation
// says "both" (then 2026 is forced, to test the flag too).
func runCross(t *testing.T, ids crossIDs, c crossCase) crossDigest {
	t.Helper()
	dir := t.TempDir()
	testset, variant, evaluator := ids.Testset, ids.Variant, ids.Evaluator
	switch {
	case c.errors:
		testset = ids.ErrTestset
	case c.mistake == mistakeEvaluatorID:
		evaluator = crossUnknownID
	case c.mistake == mistakeInputs:
		testset = ids.MismatchTestset
		if ids.InputVariant != "" {
			variant = ids.InputVariant
		}
	}
	// Counted on every case, so that the count is seen to grow when runs
	// are created: a listing that missed them would prove nothing.
	before := crossEvaluations(t, ids)
	args := []string{"--host", ids.Host, "--generation", "auto", "eval", "run", "--app", ids.App, "--testset", testset,
		"--variant", variant, "--variant", variant, "--evaluator", evaluator,
		"--interval", "100ms", "--timeout", "3m",
		"--junit", filepath.Join(dir, "report.xml"), "--markdown", filepath.Join(dir, "report.md"),
		"--csv", filepath.Join(dir, "report.csv"), "--json", filepath.Join(dir, "report.jsonl")}
	if ids.KeyFile != "" {
		args = append([]string{"--api-key-file", ids.KeyFile}, args...)
	}
	for _, g := range c.gates {
		args = append(args, "--gate", g)
	}
	code, out, errOut := runCommand(t, args...)
	t.Logf("%s on %s: exit %d\n%s%s", c.name, ids.Generation, code, out, errOut)
	after := crossEvaluations(t, ids)
	t.Logf("%s on %s: %d evaluations on the server before, %d after", c.name, ids.Generation, before, after)
	if c.wantExit == exitUsage || c.wantExit == exitEvalFailed {
		assert.Equal(t, before, after, "case %s on %s: the server's evaluations before and after (a mistake must end the job before any create)", c.name, ids.Generation)
	} else {
		assert.Equal(t, before+2, after, "case %s on %s: the server's evaluations before and after (one per variant)", c.name, ids.Generation)
	}
	// The variant's name, whatever the app is called: "capitals.default"
	// on 2024, "capitals.<12 hex>" on 2026.
	name := ""
	if m := crossSummary.FindStringSubmatch(out); m != nil {
		name = m[1]
	}
	named := func(text string) string {
		if name == "" {
			return text
		}
		return strings.ReplaceAll(text, name, "capitals.<variant>")
	}
	d := crossDigest{Case: c.name, Exit: code, Stdout: crossLines(named(out))}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, "the %s report of case %s", name, c.name)
		return named(string(b))
	}
	d.JUnit = crossJUnit(read("report.xml"))
	d.Markdown = crossLines(read("report.md"))
	d.CSV = crossCSV(t, read("report.csv"))
	d.JSON = crossJSON(t, read("report.jsonl"))
	return d
}

var (
	crossUUID    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	crossVariant = regexp.MustCompile(`capitals\.[A-Za-z0-9_-]+`)
	crossNumber  = regexp.MustCompile(`\d+(\.\d+)?(e-?\d+)?`)
	crossPairing = regexp.MustCompile(`paired by their [a-z ]+?,`)
	crossSpaces  = regexp.MustCompile(`  +`)
	crossSummary = regexp.MustCompile(`(?m)^(\S+) \(evaluation `)
	// The generations word an unknown evaluator id each in its own terms.
	crossUnknownEvaluator = regexp.MustCompile(`evaluator <id> is (not an evaluator config of app <id>|neither an evaluator nor an evaluator revision)`)
)

// crossNormal normalises a line of output: what differs between two
// servers seeded alike whatever the generation (ids, variant names, the
// time things took) and what the generations' own stand-in apps make
// differ (latency; the 2026 stand-in reports no cost, so lines about cost
// are dropped: ok is false). Rows pair by test case on 2026, by inputs and
// expected answers on 2024: the wording of that is not compared either.
func crossNormal(line string) (string, bool) {
	lower := strings.ToLower(line)
	if strings.Contains(lower, "cost") {
		return "", false
	}
	line = crossUUID.ReplaceAllString(line, "<id>")
	line = crossUnknownEvaluator.ReplaceAllString(line, "evaluator <id> is unknown")
	line = crossVariant.ReplaceAllString(line, "capitals.<variant>")
	line = crossPairing.ReplaceAllString(line, "paired by <rule>,")
	if strings.Contains(lower, "latency") || strings.Contains(lower, "time=") {
		line = crossNumber.ReplaceAllString(line, "<n>")
	}
	// Tables align their columns to the widest cell, a latency's too.
	return crossSpaces.ReplaceAllString(strings.TrimRight(line, " "), "  "), true
}

func crossLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if l, ok := crossNormal(line); ok {
			out = append(out, l)
		}
	}
	return out
}

// crossJUnit keeps the structure of the JUnit report: every line but the
// rows' values in system-out (cost and latency among them), normalised.
func crossJUnit(doc string) []string {
	var out []string
	inOut := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.Contains(line, "<system-out>"):
			inOut = !strings.Contains(line, "</system-out>")
			out = append(out, "<system-out/>")
			continue
		case inOut:
			inOut = !strings.Contains(line, "</system-out>")
			continue
		}
		if l, ok := crossNormal(line); ok {
			out = append(out, l)
		}
	}
	return out
}

// crossCSV keeps the CSV's header and each record, its cost and latency
// blanked and, on a row whose app call failed, the app error, the
// expected answer and the evaluators' values reduced to that: the
// stand-in apps word their failures differently, and a 2024 server writes
// no expected answer on such a row, where a 2026 row has its test case's.
func crossCSV(t *testing.T, doc string) []string {
	records, err := csv.NewReader(strings.NewReader(doc)).ReadAll()
	require.NoError(t, err)
	if len(records) == 0 {
		return nil
	}
	header := records[0]
	appError, evaluators := slices.Index(header, "app_error"), slices.Index(header, "latency")+1
	var out []string
	for i, rec := range records {
		fields := slices.Clone(rec)
		failed := i > 0 && appError >= 0 && appError < len(fields) && fields[appError] != ""
		for j, name := range header {
			if i == 0 || j >= len(fields) {
				continue
			}
			switch {
			case name == "cost" || name == "latency":
				fields[j] = ""
			case failed && (name == "app_error" || name == "expected" || evaluators > 0 && j >= evaluators):
				// The stand-ins word their failures differently, and a
				// 2024 server writes no expected answer on a failed row.
				fields[j] = "<app error>"
			}
		}
		l, _ := crossNormal(strings.Join(fields, "|"))
		out = append(out, l)
	}
	return out
}

// crossJSON keeps each JSON line's members but the cost, the latency as
// present or null, and on a row whose app call failed what crossCSV
// reduces.
func crossJSON(t *testing.T, doc string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(doc), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		delete(m, "cost")
		if m["latency"] != nil {
			m["latency"] = "<latency>"
		}
		if m["app_error"] != nil {
			m["app_error"], m["expected"] = "<app error>", "<app error>"
			results, _ := m["results"].([]any)
			for _, r := range results {
				if r, ok := r.(map[string]any); ok {
					r["error"] = "<app error>"
				}
			}
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		l := crossUUID.ReplaceAllString(string(b), "<id>")
		out = append(out, crossVariant.ReplaceAllString(l, "capitals.<variant>"))
	}
	return out
}

// TestEvalRunAlikeOnBothGenerations runs the cases against agentatest's
// 2024 and 2026 generations seeded alike, the command detecting which it
// talks to, and requires the same digests and the expected exit codes.
func TestEvalRunAlikeOnBothGenerations(t *testing.T) {
	srv24 := agentatest.NewServer()
	t.Cleanup(srv24.Close)
	srv26 := fake2026(t)
	keyFile := fake2026KeyFile(t)
	ids24, ids26 := seedCross2024(srv24), seedCross2026(srv26)
	ids26.KeyFile = keyFile
	ids26.InputVariant = crossInputVariant(t, ids26)
	for _, c := range crossCases {
		t.Run(c.name, func(t *testing.T) {
			d24, d26 := runCross(t, ids24, c), runCross(t, ids26, c)
			assert.Equal(t, c.wantExit, d24.Exit, "exit code on the 2024 fake")
			assert.Equal(t, d24, d26, "the 2024 fake's digest (expected) and the 2026 fake's (actual)")
		})
	}
}

// TestEvalRunOnServer runs the cases against the real server its
// environment names, as .ci/run does for the mid-2024 server and
// .ci/realserver2026.sh for the 2026 one, checks their exit codes, writes
// the digests to AGENTA_CROSSGEN_OUT and, given the digests of the other
// generation in AGENTA_CROSSGEN_AGAINST, requires the same. It skips
// without AGENTA_CROSSGEN_HOST. The other variables: _KEY_FILE (optional),
// _APP, _VARIANT, _TESTSET, _ERR_TESTSET, _EVALUATOR (an exact match named
// "Exact match"), _MISMATCH_TESTSET (rows with "nation" for "country").
// With a key file the server is taken for a 2026 one, and the variant is
// forked to declare its input (crossInputVariant).
func TestEvalRunOnServer(t *testing.T) {
	env := func(name string) string { return os.Getenv("AGENTA_CROSSGEN_" + name) }
	if env("HOST") == "" {
		t.Skip("set AGENTA_CROSSGEN_HOST and the ids (see the doc comment) to run the cases against a real server")
	}
	ids := crossIDs{Host: env("HOST"), KeyFile: env("KEY_FILE"), Generation: env("HOST"), App: env("APP"), Variant: env("VARIANT"),
		Testset: env("TESTSET"), ErrTestset: env("ERR_TESTSET"), Evaluator: env("EVALUATOR"), MismatchTestset: env("MISMATCH_TESTSET")}
	require.NotEmpty(t, ids.MismatchTestset, "AGENTA_CROSSGEN_MISMATCH_TESTSET: a test set whose rows have no \"country\"")
	if ids.KeyFile != "" {
		ids.InputVariant = crossInputVariant(t, ids)
	}
	var digests []crossDigest
	for _, c := range crossCases {
		d := runCross(t, ids, c)
		assert.Equal(t, c.wantExit, d.Exit, "exit code of case %s", c.name)
		digests = append(digests, d)
	}
	if out := env("OUT"); out != "" {
		b, err := json.MarshalIndent(digests, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(out, b, 0o644))
	}
	if against := env("AGAINST"); against != "" {
		b, err := os.ReadFile(against)
		require.NoError(t, err, "the other generation's digests")
		var want []crossDigest
		require.NoError(t, json.Unmarshal(b, &want))
		assert.Equal(t, want, digests, fmt.Sprintf("the digests of %s (expected) and of this server (actual)", against))
	}
}

// setup2026 adds to a script's environment the 2026 fakes of the scripts
// on the 2026 generation: W26_HOST, whose worker is down, and T26_HOST,
// whose tracing pipeline is down, each with the 2026 demo (SeedDemo2026):
// W26_APP / T26_APP, *_VARIANT, *_TESTSET and *_EXACT (its evaluator
// "Exact capital"). Every 2026 route wants a key: any will do.
func setup2026(env *testscript.Env) error {
	for _, fake := range []struct {
		prefix string
		down   func(*agentatest.Server)
	}{{"W26", (*agentatest.Server).StopWorker}, {"T26", (*agentatest.Server).StopTracing}} {
		srv := agentatest.NewServer(agentatest.WithGeneration(agentatest.Generation2026))
		env.Defer(srv.Close)
		demo := agentatest.SeedDemo2026(srv)
		fake.down(srv)
		for _, kv := range [][2]string{{"HOST", srv.URL()}, {"APP", demo.ApplicationID}, {"VARIANT", demo.VariantID},
			{"TESTSET", demo.TestsetID}, {"EXACT", demo.EvaluatorID}} {
			env.Setenv(fake.prefix+"_"+kv[0], kv[1])
		}
	}
	return nil
}

// TestCIRecipeOn2026Fake runs the README's CI recipe unchanged against a
// fake of the 2026 generation: the step of release-gate.yml, as
// ci_recipe.txtar holds it, under AGENTA_API_GENERATION=2026, which makes
// agenta fake serve today's API. Its 5 rows are too few for the release
// gate, which says so.
func TestCIRecipeOn2026Fake(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the recipe is a bash script")
	}
	archive, err := txtar.ParseFile(filepath.Join("testdata", "script", "ci_recipe.txtar"))
	require.NoError(t, err)
	var workflow []byte
	for _, f := range archive.Files {
		if f.Name == "release-gate.yml" {
			workflow = f.Data
		}
	}
	require.NotEmpty(t, workflow, "ci_recipe.txtar holds release-gate.yml")
	script := `# The CI recipe against a 2026 fake (see crossgen_test.go).
[!exec:bash] skip 'the recipe is a bash script'
env AGENTA_API_GENERATION=2026
workflowstep release-gate.yml 'Release gate' gate.sh
# The 2026 demo has 5 rows on which the candidate and production agree:
# too few to show "at most 5 points worse", so the release gate fails as
# inconclusive (exit 1), as on the real servers, and the others hold.
! exec bash --noprofile --norc -eo pipefail gate.sh
stdout '^capitals\.candidate-\d+ against capitals\.[0-9a-f]{12}: 5 rows paired by their test case, 0 unpaired$'
stdout '^app_errors <= baseline +0 +pass$'
stdout '^low\(Exact match\) >= 0.6 +0\.6489 +pass'
stdout '^diff_low\(Exact match\) >= -0.05 +-0\.3511 +FAIL: inconclusive'
stdout '^latency.p95 <= 3 allowing 2 failed rows +0.\d+ +pass'
stderr '^agenta: 1 of 4 gates failed: diff_low\(Exact match\) >= -0.05 failed: inconclusive: the bound is -0\.3511; about \d+ paired cases would be needed'
grep '<testsuite name="gates" tests="4" failures="1"' report.xml
stderr '^agenta fake stop: stopped process \d+$'
processgone @stderr
-- release-gate.yml --
` + string(workflow)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ci_recipe_2026.txtar"), []byte(script), 0o644))
	testscript.Run(t, testscript.Params{Dir: dir, RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"workflowstep": cmdWorkflowStep, "processgone": cmdProcessGone,
		}})
}
