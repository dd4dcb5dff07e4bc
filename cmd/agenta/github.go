package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/internal/text"
)

// Under GitHub Actions (GITHUB_ACTIONS=true) eval run speaks the runner's
// own language as well: the Markdown report goes to the job's summary
// ($GITHUB_STEP_SUMMARY), each failed gate is an ::error annotation and
// each doubtful finding (flaky cases, rows left unpaired, a listing that
// repeats a test case) a ::warning, so that a pull request shows why its check failed
// without opening the log.

// maxAnnotation bounds an annotation's message: GitHub shows a few lines.
const maxAnnotation = 600

// githubActions writes the summary and the annotations of report when the
// command runs under GitHub Actions; a summary that cannot be written is
// a problem returned, never a verdict.
func (r *evalRun) githubActions(report *evals.Report, secrets []string) error {
	f := r.opts.Factory
	if f.getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	secret := text.NewSecrets(secrets...)
	annotate := func(level, title, message string) {
		fmt.Fprintf(r.opts.IO.ErrOut, "::%s title=%s::%s\n", level, workflowProperty(title),
			workflowData(text.Line(secret.Text(message, maxAnnotation), maxAnnotation)))
	}
	for _, g := range report.Gates {
		if g.Passed {
			continue
		}
		annotate("error", "Gate failed: "+g.Gate.String(), g.String())
	}
	for _, w := range doubts(report) {
		annotate("warning", "Evaluation", w)
	}
	path := f.getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	// The summary is the runner's file, appended to by every step.
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return localError(fmt.Errorf("cannot write the job summary ($GITHUB_STEP_SUMMARY): %w", errorReason(err)))
	}
	err = scrubbedWrite(file, secrets, escaped(text.NewDocumentWriter, func(w io.Writer) error {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		return report.WriteMarkdown(w)
	}))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return localError(fmt.Errorf("cannot write the job summary ($GITHUB_STEP_SUMMARY): %w", errorReason(err)))
	}
	return nil
}

// doubts are the findings that do not fail a gate by themselves but make
// a verdict weaker: flaky cases (one warning per evaluator), rows without
// a partner, listings that repeat a case.
func doubts(report *evals.Report) []string {
	var out []string
	for _, f := range report.Flaky() {
		out = append(out, f.String())
	}
	c := report.Comparison
	if c == nil {
		return out
	}
	if c.UnpairedBaseline > 0 {
		out = append(out, fmt.Sprintf("%d row(s) of the baseline have no candidate row: they count as worse", c.UnpairedBaseline))
	}
	if c.UnpairedCandidate > 0 {
		out = append(out, fmt.Sprintf("%d row(s) of the candidate have no baseline row: they count on neither side", c.UnpairedCandidate))
	}
	if c.CandidateRepeats > 0 {
		out = append(out, fmt.Sprintf("the candidate run lists test case %q more than once (%d repeated rows)", c.CandidateRepeatedCase, c.CandidateRepeats))
	}
	if c.BaselineRepeats > 0 {
		out = append(out, fmt.Sprintf("the baseline run lists test case %q more than once (%d repeated rows)", c.BaselineRepeatedCase, c.BaselineRepeats))
	}
	return out
}

// workflowData escapes an annotation's message as the runner reads it:
// %, CR and LF, which would end the command or start another.
func workflowData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// workflowProperty escapes a property's value (title=…): also ":" and
// ",", which end it; control characters are escaped first.
func workflowProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(text.Line(s, 200))
}
