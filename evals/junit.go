package evals

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// The JUnit XML shapes, in the subset CI systems (Jenkins, GitLab, GitHub
// Actions reporters, Azure) agree on.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr,omitempty"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr,omitempty"`
		Failure   *junitFailure `xml:"failure,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes the report as JUnit XML, which CI systems show as test
// results: a test suite per variant with one test case per scenario (its
// time is the app's latency), failed when an evaluator's result is false or
// an error, with a message naming the evaluators and the expected answer;
// and a suite "gates" with one test case per gate of the last Check.
func (r *Report) WriteJUnit(w io.Writer) error {
	cat := r.catalog()
	doc := junitSuites{Name: "agenta evaluation"}
	for _, run := range r.runs() {
		suite := junitSuite{Name: run.name}
		total := 0.0
		for i, s := range run.Scenarios {
			c := junitCase{
				Name:      bound(fmt.Sprintf("row %d: %s", i+1, oneLine(s.InputsText())), 200),
				Classname: bound(run.name, 120),
				SystemOut: bound(s.OutputText(), 4000),
			}
			if l, ok := s.Latency(); ok && l >= 0 {
				c.Time = strconv.FormatFloat(l, 'f', 3, 64)
				total += l
			}
			c.Failure = scenarioFailure(s, cat)
			if c.Failure != nil {
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, c)
		}
		if total > 0 {
			suite.Time = strconv.FormatFloat(total, 'f', 3, 64)
		}
		suite.Tests = len(suite.Cases)
		doc.Suites = append(doc.Suites, suite)
	}
	if len(r.Gates) > 0 {
		suite := junitSuite{Name: "gates"}
		for _, g := range r.Gates {
			c := junitCase{Name: bound(g.Gate.String(), 200), Classname: "gates"}
			if !g.Passed {
				c.Failure = &junitFailure{Message: bound(g.String(), 1000), Type: "gate"}
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, c)
		}
		suite.Tests = len(suite.Cases)
		doc.Suites = append(doc.Suites, suite)
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// scenarioFailure returns the failure of a row, or nil when every bool
// result is true and no result is an error. The message names each failing
// evaluator and the expected answer it compared with.
func scenarioFailure(s models.EvaluationScenario, cat catalog) *junitFailure {
	var messages, details []string
	kind := "false"
	if msg, failed := s.AppError(); failed {
		kind = "error"
		messages = append(messages, fmt.Sprintf("app error: %s, expected %q", bound(oneLine(msg), 200), bound(s.ExpectedAnswer(), 200)))
	}
	for _, res := range s.Results {
		failed := res.Result.Failed()
		if b, ok := res.Result.Bool(); !failed && (!ok || b) {
			continue
		}
		if failed && s.Failed() {
			continue // a copy of the app's error, already said
		}
		expected := s.ExpectedAnswer()
		if e, ok := cat.find(res.EvaluatorConfig); ok {
			if v, ok := s.ExpectedAnswerFor(e.CorrectAnswerKey); ok {
				expected = v
			}
		}
		what := "false"
		if failed {
			what, kind = bound(oneLine(resultText(res.Result)), 200), "error"
		}
		messages = append(messages, fmt.Sprintf("%s: %s, expected %q", cat.label(res.EvaluatorConfig), what, bound(expected, 200)))
	}
	if len(messages) == 0 {
		return nil
	}
	details = append(details, "inputs: "+bound(s.InputsText(), 2000))
	details = append(details, "expected: "+bound(s.ExpectedAnswer(), 2000))
	details = append(details, "output: "+bound(s.OutputText(), 4000))
	for _, res := range s.Results {
		details = append(details, fmt.Sprintf("%s: %s", cat.label(res.EvaluatorConfig), bound(resultText(res.Result), 500)))
	}
	return &junitFailure{
		Message: bound(strings.Join(messages, "; "), 1000),
		Type:    kind,
		Text:    strings.Join(details, "\n"),
	}
}
