package evals

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

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
	// Rows are data, never failures: only the gates can fail. Both gates
	// fail here (6/8 < 0.8, and Nigeria's app error).
	wantFailures := []int{0, 0, 2}
	for i, s := range doc.Suites {
		if s.Failures != wantFailures[i] || s.Tests != len(s.Cases) {
			t.Errorf("suite %s: %d failures in %d tests (%d cases), want %d failures", s.Name, s.Failures, s.Tests, len(s.Cases), wantFailures[i])
		}
	}
	if doc.Tests != 8+8+2 || doc.Failures != 2 {
		t.Errorf("testsuites counts %d tests, %d failures; want 18 and 2", doc.Tests, doc.Failures)
	}
	out := map[string]string{}
	for _, c := range doc.Suites[1].Cases {
		if c.Failure != nil {
			t.Errorf("row %q is a failure: %+v", c.Name, c.Failure)
		}
		out[c.Name] = c.SystemOut
		if c.Classname != "capitals.precise" {
			t.Errorf("case %q has classname %q, want the variant", c.Name, c.Classname)
		}
	}
	// The candidate's rows are reversed: Australia is its 5th.
	if got := out["row 5: country=Australia"]; !strings.Contains(got, "Exact match: false") || !strings.Contains(got, "expected: Canberra") || !strings.Contains(got, "output: Sydney") {
		t.Errorf("Australia's system-out = %q, want the evaluator's false, the expected answer and the output", got)
	}
	if got := out["row 3: country=Nigeria"]; !strings.Contains(got, "app error: rate limited") {
		t.Errorf("Nigeria's system-out = %q, want the app error", got)
	}
	if c := doc.Suites[0].Cases[0]; c.Time != "0.500" || c.Failure != nil {
		t.Errorf("France's case = %+v, want time 0.500 (its latency) and no failure", c)
	}
	if g := doc.Suites[2].Cases[1]; g.Name != "app_errors <= 0" || g.Failure == nil || !strings.Contains(g.Failure.Message, "measured 1, limit <= 0") {
		t.Errorf("the app errors gate = %+v, want a failure with the measured value and the limit", g)
	}
	validateJUnit(t, buf.Bytes())

	// Every gate holding: green, whatever the rows.
	if err := r.Check(MinMean("Exact match", 0.5), MaxAppErrors(1)); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	doc = parsedJUnit{}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil || doc.Failures != 0 || doc.Tests != 18 {
		t.Errorf("with every gate holding, the JUnit report has %d failures in %d tests (%v), want 0 in 18:\n%s", doc.Failures, doc.Tests, err, buf.String())
	}
}

// TestWriteJUnitFailedEvaluation: an evaluation that ended
// EVALUATION_FAILED is one failing test case with its cause, and every
// gate fails with it.
func TestWriteJUnitFailedEvaluation(t *testing.T) {
	trace := "Traceback (most recent call last):\n  File \"/app/agenta_backend/tasks/evaluations.py\", line 158, in evaluate\n    inputs = [\n  File \"/app/agenta_backend/tasks/evaluations.py\", line 162, in <listcomp>\n    value=data_point[\nKeyError: 'country'\n"
	ev := evaluationOf("eval-failed", "capitals.default", exactMatch)
	ev.Status = models.Result{Type: "status", Value: json.RawMessage(`"EVALUATION_FAILED"`), Error: &models.Error{Message: "Evaluation Failed", Stacktrace: trace}}
	r := NewReport(Run{}, Run{Evaluation: ev})
	err := r.Check(MinMean("Exact match", 0.5), MaxAppErrors(0))
	var ge *GateError
	if !errors.As(err, &ge) || len(ge.Failed) != 2 || !strings.Contains(ge.Failed[1].Reason, "KeyError: 'country'") {
		t.Fatalf("Check on a failed evaluation = %v, want both gates failed with the cause", err)
	}
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc parsedJUnit
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) < 1 || doc.Suites[0].Name != "evaluation" || doc.Suites[0].Cases[0].Failure == nil {
		t.Fatalf("suites = %+v, want a failing suite \"evaluation\" first", doc.Suites)
	}
	msg := doc.Suites[0].Cases[0].Failure.Message
	for _, want := range []string{"eval-failed", "EVALUATION_FAILED", "Evaluation Failed", "KeyError: 'country'", "the test set has no column 'country', which the app takes as input"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure message %q lacks %q", msg, want)
		}
	}
	if doc.Failures != 3 {
		t.Errorf("%d failures, want 3: the evaluation and both gates", doc.Failures)
	}
	validateJUnit(t, buf.Bytes())
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "KeyError: 'country'") {
		t.Errorf("the Markdown of a failed evaluation lacks the cause (%v):\n%s", err, md.String())
	}

	// Report.Failure, as the command sets it for a service error.
	r = NewReport(Run{}, Run{})
	r.Failure = errors.New("agenta: POST /api/evaluations: 404 Not Found: App not found")
	_ = r.Check(MaxAppErrors(0))
	buf.Reset()
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "App not found") || !strings.Contains(buf.String(), `failures="2"`) {
		t.Errorf("a report of a service error = %s, want the error as a failing case and the gate failed", buf.String())
	}
}

// TestWriteJUnitHostileText feeds text XML cannot hold as is.
func TestWriteJUnitHostileText(t *testing.T) {
	hostile := "a\x01b ]]> <tag attr=\"x\"> & \xff\xfe \U0001F600 \ufffe"
	row := answered(hostile, hostile, hostile, 0, 1, boolResult("ev", false))
	r := NewReport(Run{}, Run{Scenarios: []models.EvaluationScenario{row}})
	_ = r.Check(Gate{Evaluator: hostile, Op: AtLeast, Limit: 1})
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc parsedJUnit
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("hostile text broke the XML: %v\n%s", err, buf.String())
	}
	if len(doc.Suites) != 2 || doc.Suites[0].Name != "candidate" || doc.Suites[1].Cases[0].Failure == nil || !strings.Contains(doc.Suites[0].Cases[0].SystemOut, "tag attr") {
		t.Fatalf("suites = %+v, want the row in suite candidate and a failing gate", doc.Suites)
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
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}
