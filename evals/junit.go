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
// results. The test cases that can fail are the gates of the last Check
// (a suite "gates") and, when the runs could not be judged (see
// Report.Failure), a suite "evaluation" with one failing case that gives
// the reason: the report is green exactly when every gate holds. Each
// variant's suite has one passed test case per scenario (its time is the
// app's latency), its inputs, expected answer, output, app error and each
// evaluator's result in system-out: a row that an evaluator judged false
// is data for the gates, not a failure of the report.
func (r *Report) WriteJUnit(w io.Writer) error {
	cat := r.catalog()
	doc := junitSuites{Name: "agenta evaluation"}
	if failure := r.failure(); failure != nil {
		doc.Suites = append(doc.Suites, junitSuite{Name: "evaluation", Tests: 1, Failures: 1, Cases: []junitCase{{
			Name:      bound("evaluation of "+r.Candidate.Variant(), 200),
			Classname: "evaluation",
			Failure:   &junitFailure{Message: bound(oneLine(failure.Error()), 1000), Type: "evaluation", Text: bound(failure.Error(), 4000)},
		}}})
	}
	for _, run := range r.runs() {
		suite := junitSuite{Name: run.name}
		total := 0.0
		for i, s := range run.Scenarios {
			c := junitCase{
				Name:      bound(fmt.Sprintf("row %d: %s", i+1, oneLine(s.InputsText())), 200),
				Classname: bound(run.name, 120),
				SystemOut: scenarioText(s, cat),
			}
			if l, ok := s.Latency(); ok && l >= 0 {
				c.Time = strconv.FormatFloat(l, 'f', 3, 64)
				total += l
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
			c := junitCase{Name: bound(g.Gate.String(), 200), Classname: "gates", SystemOut: bound(g.String(), 2000)}
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

// scenarioText is a row's system-out: its inputs, expected answer, output
// or app error, and each evaluator's result by name, with the expected
// answer it compared with.
func scenarioText(s models.EvaluationScenario, cat catalog) string {
	lines := []string{
		"inputs: " + bound(s.InputsText(), 2000),
		"expected: " + bound(s.ExpectedAnswer(), 2000),
	}
	if msg, failed := s.AppError(); failed {
		lines = append(lines, "app error: "+bound(msg, 1000))
	} else {
		lines = append(lines, "output: "+bound(s.OutputText(), 4000))
	}
	for _, res := range s.Results {
		line := fmt.Sprintf("%s: %s", cat.label(res.EvaluatorConfig), bound(resultText(res.Result), 500))
		if e, ok := cat.find(res.EvaluatorConfig); ok && e.CorrectAnswerKey != "" && e.CorrectAnswerKey != models.DefaultCorrectAnswerKey {
			if v, ok := s.ExpectedAnswerFor(e.CorrectAnswerKey); ok {
				line += fmt.Sprintf(" (expected %q)", bound(v, 200))
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
