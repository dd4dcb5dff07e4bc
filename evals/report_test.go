package evals

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// The shapes the tests read JUnit XML into, written apart from the
// writer's own.
type parsedJUnit struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func checkedReport(t *testing.T) *Report {
	t.Helper()
	baseline, candidate := capitalsRuns()
	r := NewReport(baseline, candidate)
	_ = r.Check(MinMean("Exact match", 0.8), MaxAppErrors(0))
	return r
}

func TestWriteJUnit(t *testing.T) {
	r := checkedReport(t)
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc parsedJUnit
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit XML does not parse: %v\n%s", err, buf.String())
	}
	if len(doc.Suites) != 3 || doc.Suites[0].Name != "capitals.default" || doc.Suites[1].Name != "capitals.precise" || doc.Suites[2].Name != "gates" {
		t.Fatalf("suites = %+v, want capitals.default, capitals.precise and gates", doc.Suites)
	}
	// Baseline: Brazil, Canada, Nigeria, Switzerland wrong. Candidate:
	// Australia wrong and Nigeria failed. Gates: app errors failed.
	wantFailures := []int{4, 2, 1}
	for i, s := range doc.Suites {
		if s.Failures != wantFailures[i] || s.Tests != len(s.Cases) {
			t.Errorf("suite %s: %d failures in %d tests (%d cases), want %d failures", s.Name, s.Failures, s.Tests, len(s.Cases), wantFailures[i])
		}
	}
	if doc.Tests != 8+8+2 || doc.Failures != 7 {
		t.Errorf("testsuites counts %d tests, %d failures; want 18 and 7", doc.Tests, doc.Failures)
	}
	messages := map[string]string{}
	for _, c := range doc.Suites[1].Cases {
		if c.Failure != nil {
			messages[c.Name] = c.Failure.Type + ": " + c.Failure.Message
		}
		if c.Classname != "capitals.precise" {
			t.Errorf("case %q has classname %q, want the variant", c.Name, c.Classname)
		}
	}
	// The candidate's rows are reversed: Australia is its 5th.
	if got := messages["row 5: country=Australia"]; got != `false: Exact match: false, expected "Canberra"` {
		t.Errorf("Australia's failure = %q, want the evaluator and the expected answer named", got)
	}
	if got := messages["row 3: country=Nigeria"]; got != `error: app error: rate limited, expected ""` {
		t.Errorf("Nigeria's failure = %q, want the app error", got)
	}
	if c := doc.Suites[0].Cases[0]; c.Time != "0.500" || c.Failure != nil {
		t.Errorf("France's case = %+v, want time 0.500 (its latency) and no failure", c)
	}
	if g := doc.Suites[2].Cases[1]; g.Name != "app_errors <= 0" || g.Failure == nil || !strings.Contains(g.Failure.Message, "measured 1, limit <= 0") {
		t.Errorf("the app errors gate = %+v, want a failure with the measured value and the limit", g)
	}
	validateJUnit(t, buf.Bytes())
}

// TestWriteJUnitHostileText feeds text XML cannot hold as is.
func TestWriteJUnitHostileText(t *testing.T) {
	hostile := "a\x01b ]]> <tag attr=\"x\"> & \xff\xfe \U0001F600 \ufffe"
	row := answered(hostile, hostile, hostile, 0, 1, boolResult("ev", false))
	r := NewReport(Run{}, Run{Scenarios: []models.EvaluationScenario{row}})
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc parsedJUnit
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("hostile text broke the XML: %v\n%s", err, buf.String())
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Name != "candidate" || doc.Suites[0].Cases[0].Failure == nil {
		t.Fatalf("suites = %+v, want one failing case in suite candidate", doc.Suites)
	}
	validateJUnit(t, buf.Bytes())
}

// validateJUnit checks the document against testdata/junit.xsd, and against
// the schema $JUNIT_XSD names if set, with xmllint (Debian's
// libxml2-utils), in a subtest "schema" that skips, saying so, when
// xmllint is absent (and fails under CI=true, where it must be there).
func validateJUnit(t *testing.T, doc []byte) {
	t.Helper()
	t.Run("schema", func(t *testing.T) {
		xmllint, err := exec.LookPath("xmllint")
		if err != nil {
			// Under CI, .ci/run installs xmllint, so its absence is a
			// broken setup, not a reason to skip.
			if os.Getenv("CI") == "true" {
				t.Fatal("xmllint not found under CI=true: .ci/run installs libxml2-utils")
			}
			t.Skip("xmllint not found (apt-get install libxml2-utils): JUnit schema validation skipped")
		}
		file := filepath.Join(t.TempDir(), "junit.xml")
		if err := os.WriteFile(file, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		schemas := []string{filepath.Join("testdata", "junit.xsd")}
		if extra := os.Getenv("JUNIT_XSD"); extra != "" {
			schemas = append(schemas, extra)
		}
		for _, schema := range schemas {
			out, err := exec.Command(xmllint, "--noout", "--schema", schema, file).CombinedOutput()
			if err != nil {
				t.Errorf("xmllint --schema %s: %v\n%s", schema, err, out)
			}
		}
	})
}

func TestWriteCSV(t *testing.T) {
	r := checkedReport(t)
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v", err)
	}
	wantHeader := []string{"variant", "row", "input.country", "expected", "output", "app_error", "cost", "latency", "Edit distance", "Exact match"}
	if strings.Join(records[0], ",") != strings.Join(wantHeader, ",") {
		t.Fatalf("header = %q, want %q", records[0], wantHeader)
	}
	if len(records) != 1+16 {
		t.Fatalf("%d lines, want a header and 16 rows", len(records))
	}
	byKey := map[string][]string{}
	for _, rec := range records[1:] {
		byKey[rec[0]+"/"+rec[2]] = rec
	}
	if got := byKey["capitals.precise/Australia"]; strings.Join(got[3:], "|") != "Canberra|Sydney||0.0008|0.7|7|false" {
		t.Errorf("the candidate's Australia line = %q", got)
	}
	if got := byKey["capitals.precise/Nigeria"]; strings.Join(got[3:], "|") != "||rate limited|||error: rate limited|error: rate limited" {
		t.Errorf("the candidate's Nigeria line = %q", got)
	}
	if got := byKey["capitals.default/Brazil"]; got[4] != "São Paulo" || got[9] != "false" {
		t.Errorf("the baseline's Brazil line = %q", got)
	}
}

func TestWriteJSONLines(t *testing.T) {
	r := checkedReport(t)
	var buf bytes.Buffer
	if err := r.WriteJSONLines(&buf); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		n++
		var line struct {
			Variant  string            `json:"variant"`
			Row      int               `json:"row"`
			Inputs   map[string]string `json:"inputs"`
			Expected string            `json:"expected"`
			Output   string            `json:"output"`
			AppError *string           `json:"app_error"`
			Cost     *float64          `json:"cost"`
			Results  []struct {
				Evaluator       string          `json:"evaluator"`
				EvaluatorConfig string          `json:"evaluator_config"`
				Type            string          `json:"type"`
				Value           json.RawMessage `json:"value"`
				Error           *string         `json:"error"`
			} `json:"results"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", n, err, sc.Text())
		}
		if line.Variant == "capitals.precise" && line.Inputs["country"] == "Nigeria" {
			if line.AppError == nil || *line.AppError != "rate limited" || line.Cost != nil || line.Results[0].Error == nil || string(line.Results[0].Value) != "null" {
				t.Errorf("Nigeria's line = %s, want the app error, a null cost and error results", sc.Text())
			}
		}
		if line.Variant == "capitals.default" && line.Inputs["country"] == "France" {
			if line.Row != 1 || line.Output != "Paris" || line.Expected != "Paris" || line.Results[0].Evaluator != "Exact match" || string(line.Results[0].Value) != "true" {
				t.Errorf("France's line = %s", sc.Text())
			}
		}
	}
	if n != 16 {
		t.Errorf("%d lines, want 16", n)
	}
}

func TestWriteMarkdown(t *testing.T) {
	r := checkedReport(t)
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"### `capitals.precise` against `capitals.default`",
		"| Evaluator | capitals.default | capitals.precise | Change | Better / worse / same | p |",
		"| Exact match | 50.0% (21.5% – 78.5%) | 85.7% (48.7% – 97.4%) | +35.7 pts | 3 / 1 / 3 | 0.625 |",
		"| Edit distance (lower is better) |",
		"8 rows paired by their inputs, 0 unpaired.",
		"| App errors | 0 | 1 |",
		"| `Exact match >= 0.8` | 0.8571 | ✅ pass |",
		"| `app_errors <= 0` | 1 | ❌ fail |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(md, bad) {
			t.Errorf("the Markdown shows %s:\n%s", bad, md)
		}
	}
}

func TestWriteMarkdownSingleRunAndNoValues(t *testing.T) {
	rows := []models.EvaluationScenario{
		answered("France", "Paris", "Paris", 0, 1, textResult("critique", "fine"), numberResult("score", 1)),
		failedRow("Japan", "timeout", "critique", "score"),
	}
	ev := models.Evaluation{ID: "e1", VariantNames: []string{"a|b"}}
	r := NewReport(Run{}, Run{Evaluation: ev, Scenarios: rows})
	_ = r.Check(MinMean("critique", 0.5), MaxMeanCost(0.1))
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"### Evaluation of `a\\|b`",
		"| critique | n/a | n/a | 0 | 1 |",
		"| score | 1 | n/a | 1 | 1 |",
		"❌ fail: no bool or number values (1 errors, 1 other)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "NaN") || strings.Contains(md, "Inf") {
		t.Errorf("the Markdown shows NaN or Inf:\n%s", md)
	}
}

func TestReportOfARunWithItself(t *testing.T) {
	baseline, _ := capitalsRuns()
	r := NewReport(baseline, baseline)
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| Exact match | 50.0% (21.5% – 78.5%) | 50.0% (21.5% – 78.5%) | +0.0 pts | 0 / 0 / 8 | 1 |") {
		t.Errorf("a run compared with itself should show no change and p = 1:\n%s", buf.String())
	}
	if runs := r.runs(); runs[0].name != "capitals.default (baseline)" || runs[1].name != "capitals.default (candidate)" {
		t.Errorf("runs of the same variant are named %q and %q, want them told apart", runs[0].name, runs[1].name)
	}
}

func TestSetDirection(t *testing.T) {
	baseline, candidate := capitalsRuns()
	r := NewReport(baseline, candidate)
	if err := r.Check(MaxWorseRows("Edit distance", 0)); err == nil {
		t.Fatal("edit distance, lower is better: Australia got worse, but the gate passed")
	}
	if err := r.SetDirection("Edit distance", HigherIsBetter); err != nil {
		t.Fatal(err)
	}
	// Read as higher-is-better, three rows got worse.
	if err := r.Check(MaxWorseRows("Edit distance", 2)); err == nil || !strings.Contains(err.Error(), "measured 3") {
		t.Errorf("after SetDirection the gate gave %v, want 3 worse rows", err)
	}
	if err := r.SetDirection("nope", LowerIsBetter); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("SetDirection of an unknown evaluator = %v, want an error naming it", err)
	}
}

func TestDirectionOf(t *testing.T) {
	tests := []struct {
		key      string
		settings map[string]any
		want     Direction
	}{
		{"auto_levenshtein_distance", nil, LowerIsBetter},
		{"auto_levenshtein_distance", map[string]any{"threshold": 3.0}, HigherIsBetter},
		// As the SDK decodes settings: numbers exact, as json.Number.
		{"auto_levenshtein_distance", map[string]any{"threshold": json.Number("3")}, HigherIsBetter},
		{"auto_levenshtein_distance", map[string]any{"threshold": "3"}, LowerIsBetter},
		{"auto_exact_match", nil, HigherIsBetter},
		{"auto_similarity_match", map[string]any{"similarity_threshold": 0.5}, HigherIsBetter},
		{"auto_webhook_test", nil, HigherIsBetter},
	}
	for _, tt := range tests {
		if got := DirectionOf(tt.key, tt.settings); got != tt.want {
			t.Errorf("DirectionOf(%q, %v) = %v, want %v", tt.key, tt.settings, got, tt.want)
		}
	}
}
