package evals

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
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
// the reason: the report is green exactly when every gate holds. With
// repeats, a suite "flaky cases" lists each evaluator's flaky cases in a
// passed test case (see Report.Flaky). Each
// variant's suite has one passed test case per scenario (its time is the
// app's latency), its inputs, expected answer, output, app error and each
// evaluator's result in system-out: a row that an evaluator judged false
// is data for the gates, not a failure of the report. The rows are
// written one at a time, so that memory stays flat however many there
// are: a first pass over them counts them for the suites' attributes.
func (r *Report) WriteJUnit(w io.Writer) error {
	cat := r.catalog()
	runs := r.runs()
	doc := junitSuites{Name: "agenta evaluation"}
	var head []junitSuite // the suites before the runs'
	if failure := r.failure(); failure != nil {
		head = append(head, junitSuite{Name: "evaluation", Tests: 1, Failures: 1, Cases: []junitCase{{
			Name:      bound("evaluation of "+r.Candidate.Variant(), 200),
			Classname: "evaluation",
			Failure:   &junitFailure{Message: bound(oneLine(failure.Error()), 1000), Type: "evaluation", Text: bound(failure.Error(), 4000)},
		}}})
	}
	// The runs' suites, without their cases: counted here, written below.
	suites := make([]junitSuite, len(runs))
	for i, run := range runs {
		suites[i].Name = run.name
		total := 0.0
		for s, err := range run.distinct() {
			if err != nil {
				return err
			}
			suites[i].Tests++
			if l, ok := s.Latency(); ok && l >= 0 {
				total += l
			}
		}
		if total > 0 {
			suites[i].Time = strconv.FormatFloat(total, 'f', 3, 64)
		}
	}
	var tail []junitSuite
	if flaky := r.Flaky(); len(flaky) > 0 {
		// Data for the reader, as the rows are: a flaky case fails no
		// test unless a gate says so.
		suite := junitSuite{Name: "flaky cases"}
		for _, f := range flaky {
			suite.Cases = append(suite.Cases, junitCase{Name: bound("flaky: "+f.Name, 200), Classname: "flaky", SystemOut: bound(f.String(), 4000)})
		}
		suite.Tests = len(suite.Cases)
		tail = append(tail, suite)
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
		tail = append(tail, suite)
	}
	for _, s := range slices.Concat(head, suites, tail) {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
	}

	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	root := xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "name"}, Value: doc.Name},
		{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(doc.Tests)},
		{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(doc.Failures)},
		{Name: xml.Name{Local: "errors"}, Value: strconv.Itoa(doc.Errors)},
	}}
	suiteElement := xml.StartElement{Name: xml.Name{Local: "testsuite"}}
	caseElement := xml.StartElement{Name: xml.Name{Local: "testcase"}}
	if err := enc.EncodeToken(root); err != nil {
		return err
	}
	for _, s := range head {
		if err := enc.EncodeElement(s, suiteElement); err != nil {
			return err
		}
	}
	for i, run := range runs {
		suite := suites[i]
		start := suiteElement
		start.Attr = []xml.Attr{
			{Name: xml.Name{Local: "name"}, Value: suite.Name},
			{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(suite.Tests)},
			{Name: xml.Name{Local: "failures"}, Value: "0"},
			{Name: xml.Name{Local: "errors"}, Value: "0"},
			{Name: xml.Name{Local: "skipped"}, Value: "0"},
		}
		if suite.Time != "" {
			start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: "time"}, Value: suite.Time})
		}
		if err := enc.EncodeToken(start); err != nil {
			return err
		}
		row := 0
		for s, err := range run.distinct() {
			if err != nil {
				return err
			}
			if row++; row > suite.Tests {
				return fmt.Errorf("evals: the rows of %s changed between two passes: more than %d", bound(run.name, 120), suite.Tests)
			}
			c := junitCase{
				Name:      bound(fmt.Sprintf("row %d: %s", row, oneLine(s.InputsText())), 200),
				Classname: bound(run.name, 120),
				SystemOut: scenarioText(s, cat),
			}
			if l, ok := s.Latency(); ok && l >= 0 {
				c.Time = strconv.FormatFloat(l, 'f', 3, 64)
			}
			if err := enc.EncodeElement(c, caseElement); err != nil {
				return err
			}
		}
		if row != suite.Tests {
			return fmt.Errorf("evals: the rows of %s changed between two passes: %d, then %d", bound(run.name, 120), suite.Tests, row)
		}
		if err := enc.EncodeToken(start.End()); err != nil {
			return err
		}
	}
	for _, s := range tail {
		if err := enc.EncodeElement(s, suiteElement); err != nil {
			return err
		}
	}
	if err := enc.EncodeToken(root.End()); err != nil {
		return err
	}
	if err := enc.Flush(); err != nil {
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
	if msg, failed := appError(s); failed {
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
