package evals

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/agenta-go/agenta/internal/text"
)

// WriteMarkdown writes the report for a pull-request comment: a table of
// the evaluators (with the baseline, the candidate, the change, the rows
// that got better, worse or stayed, and the p-value, when there is a
// baseline), the first rows the candidate did worse on (see worstRows), the
// rows, app errors, cost and latency of each run, and the gates of the
// last Check. Numbers that do not exist print as n/a.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	cat := r.catalog()
	runs := r.runs()
	cand := runs[len(runs)-1]

	if failure := r.failure(); failure != nil {
		fmt.Fprintf(bw, "**The runs could not be judged:** %s\n\n", mdText(failure.Error()))
	}
	if r.Comparison == nil {
		fmt.Fprintf(bw, "### Evaluation of %s\n\n", mdCode(cand.name))
		fmt.Fprintf(bw, "| Evaluator | Mean | 95%% CI | Values | Errors | Missing |\n|---|---:|---:|---:|---:|---:|\n")
		for _, e := range cat.list {
			m, ok := r.CandidateSummary.Evaluators[e.ID]
			if !ok {
				continue
			}
			m.Low, m.High = r.SummaryInterval(e.ID)
			fmt.Fprintf(bw, "| %s | %s | %s | %d | %d | %d |\n", mdText(evaluatorTitle(cat, e)), formatMean(m), formatInterval(m), m.Count, m.Errors, m.Missing)
		}
		fmt.Fprintf(bw, "\nA pass rate counts a row without a value (errored or missing) as a fail.\n")
		if cases, repeats := r.SummaryCases(); repeats > 1 {
			fmt.Fprintf(bw, "Each test case ran %d times: the means are over every row, the 95%% confidence intervals over the %s, each its mean over its repeats (the repeats of a case are not independent).\n",
				repeats, plural(cases, "test case"))
			for _, e := range cat.list {
				if m, ok := r.CandidateSummary.Evaluators[e.ID]; ok {
					which := "with a value on every repeat"
					if m.Bool {
						which = "with a result"
					}
					if n := r.SummaryIntervalCases(e.ID); n > 0 && n < cases {
						fmt.Fprintf(bw, "The interval of %s is over the %d of them %s.\n", mdText(evaluatorTitle(cat, e)), n, which)
					}
				}
			}
		}
	} else {
		base := runs[0]
		cmp := r.Comparison
		fmt.Fprintf(bw, "### %s against %s\n\n", mdCode(cand.name), mdCode(base.name))
		fmt.Fprintf(bw, "| Evaluator | %s | %s | Change | Better / worse / same | Without value | p |\n|---|---:|---:|---:|---:|---:|---:|\n",
			mdText(base.name), mdText(cand.name))
		for _, e := range cat.list {
			d, ok := cmp.Evaluators[e.ID]
			if !ok {
				continue
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %d / %d / %d | %d / %d | %s |\n",
				mdText(evaluatorTitle(cat, e)),
				formatMeanInterval(d.Baseline), formatMeanInterval(d.Candidate),
				formatChange(d, e.Direction, 0.05),
				d.Better(e.Direction), d.Worse(e.Direction), d.Tied+d.BothLack,
				d.Baseline.WithoutValue(), d.Candidate.WithoutValue(), formatP(d.PValueFor(e.Direction)))
		}
		unpaired := fmt.Sprint(cmp.Unpaired)
		if cmp.Unpaired > 0 {
			unpaired = fmt.Sprintf("%d (%d of the baseline, %d of the candidate)", cmp.Unpaired, cmp.UnpairedBaseline, cmp.UnpairedCandidate)
		}
		if cmp.Repeats > 1 {
			fmt.Fprintf(bw, "\nEach test case ran %d times: a row below is a test case, its value its mean over its repeats (%d and %d rows, %d and %d cases short of a repeat).\n",
				cmp.Repeats, cmp.BaselineRows, cmp.CandidateRows, cmp.BaselineCases.Short, cmp.CandidateCases.Short)
		}
		paired := "rows"
		if cmp.Repeats > 1 {
			paired = "test cases"
		}
		fmt.Fprintf(bw, "\n%d %s paired by %s, %s unpaired. Means over every row, with 95%% confidence intervals; a row without a value (errored, missing, or a baseline row the candidate lacks) counts as a fail in a pass rate and as worse in a comparison; a candidate row the baseline never ran counts on neither side. p is two-sided (exact McNemar for pass/fail, Wilcoxon signed-rank for scores).\n",
			cmp.Paired, paired, cmp.Pairing(), unpaired)
		var err error
		if cmp.Repeats > 1 {
			err = writeWorseCases(bw, cat, cmp)
		} else {
			err = writeWorstRows(bw, cat, base.Run, cand.Run)
		}
		if err != nil {
			return err
		}
	}

	if flaky := r.Flaky(); len(flaky) > 0 {
		bw.WriteString("\n**Flaky cases**, whose repeats disagree:\n\n")
		for _, f := range flaky {
			fmt.Fprintf(bw, "- %s: %s\n", mdText(f.Name), plural(f.Total, "case"))
			for _, c := range f.Cases {
				fmt.Fprintf(bw, "  - %s: %d of %d passed\n", mdCode(c.Case), c.Passed, c.Repeats)
			}
			if more := f.Total - len(f.Cases); more > 0 {
				fmt.Fprintf(bw, "  - and %d more\n", more)
			}
		}
	}

	bw.WriteString("\n| Run |")
	for _, run := range runs {
		fmt.Fprintf(bw, " %s |", mdText(run.name))
	}
	bw.WriteString("\n|---|")
	for range runs {
		bw.WriteString("---:|")
	}
	row := func(title string, cell func(Summary) string) {
		fmt.Fprintf(bw, "\n| %s |", title)
		for _, run := range runs {
			fmt.Fprintf(bw, " %s |", cell(*run.summary))
		}
	}
	row("Rows", func(s Summary) string { return fmt.Sprint(s.Rows) })
	if slices.ContainsFunc(runs, func(run namedRun) bool { return run.summary.Duplicates > 0 }) {
		row("Rows repeating a scenario id (left out)", func(s Summary) string { return fmt.Sprint(s.Duplicates) })
	}
	row("App errors", func(s Summary) string { return fmt.Sprint(s.AppErrors) })
	row("Cost per row, mean", func(s Summary) string { return formatDistribution(s.Cost, s.Cost.Mean) })
	row("Cost, total", func(s Summary) string { return formatDistribution(s.Cost, s.Cost.Sum) })
	row("Latency p50 / p95 (s)", func(s Summary) string {
		if s.Latency.Count == 0 {
			return notAvailable
		}
		return formatNumber(s.Latency.P50) + " / " + formatNumber(s.Latency.P95)
	})
	bw.WriteString("\n")

	if len(r.Gates) > 0 {
		bw.WriteString("\n| Gate | Measured | Result |\n|---|---:|---|\n")
		for _, g := range r.Gates {
			measured := notAvailable
			if !math.IsNaN(g.Measured) {
				measured = formatNumber(g.Measured)
			}
			verdict := "✅ pass"
			if !g.Passed {
				verdict = "❌ fail"
				if g.Reason != "" {
					verdict += ": " + mdText(g.Reason)
				}
			}
			if g.Detail != "" {
				verdict += " (" + mdText(g.Detail) + ")"
			}
			fmt.Fprintf(bw, "| %s | %s | %s |\n", mdCode(g.Gate.String()), measured, verdict)
		}
	}
	return bw.Flush()
}

// evaluatorTitle is an evaluator's label, with its direction when lower is
// better.
func evaluatorTitle(cat catalog, e Evaluator) string {
	if e.Direction == LowerIsBetter {
		return cat.label(e.ID) + " (lower is better)"
	}
	return cat.label(e.ID)
}

func formatMean(m Metric) string {
	if m.Bool {
		return formatPercent(m.Mean)
	}
	return formatNumber(m.Mean)
}

func formatInterval(m Metric) string {
	if math.IsNaN(m.Low) || math.IsNaN(m.High) {
		return notAvailable
	}
	if m.Bool {
		return formatPercent(m.Low) + " – " + formatPercent(m.High)
	}
	return formatNumber(m.Low) + " – " + formatNumber(m.High)
}

func formatMeanInterval(m Metric) string {
	if m.Count == 0 {
		return notAvailable
	}
	if math.IsNaN(m.Low) {
		return formatMean(m)
	}
	return formatMean(m) + " (" + formatInterval(m) + ")"
}

// formatChange renders the difference of the means with a mark when it is
// significant at alpha: ▲ for better, ▼ for worse.
func formatChange(d Delta, dir Direction, alpha float64) string {
	if math.IsNaN(d.Diff) || math.IsInf(d.Diff, 0) {
		return notAvailable
	}
	var s string
	if d.Baseline.Bool && d.Candidate.Bool {
		s = fmt.Sprintf("%+.1f pts", 100*d.Diff)
	} else {
		s = formatNumber(d.Diff)
		if d.Diff > 0 {
			s = "+" + s
		}
	}
	switch {
	case d.Regressed(dir, alpha):
		s += " ▼"
	case d.PValueFor(dir) < alpha:
		s += " ▲"
	}
	return s
}

func formatDistribution(d Distribution, x float64) string {
	if d.Count == 0 {
		return notAvailable
	}
	return formatNumber(x)
}

// mdText escapes text for a Markdown table cell: one line, bounded, with
// the characters that would end the cell or start markup escaped.
func mdText(s string) string {
	return text.Markdown(bound(oneLine(s), 200))
}

// mdCode puts text in a code span, escaping only the pipe, which would
// still end a table cell.
func mdCode(s string) string {
	s = strings.ReplaceAll(bound(oneLine(s), 200), "`", "'")
	return "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
}
