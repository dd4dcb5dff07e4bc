package evals

import "io"

// ReportFormat is one of the reports a Report writes, described for a
// program that offers them all (agenta eval run builds its report flags,
// their help and their writers from ReportFormats), so that a new format
// is added in one place.
type ReportFormat struct {
	// Name is the format's short name, such as "junit": the flag that asks
	// for it, without its dashes.
	Name string
	// Usage is a line of help for that flag.
	Usage string
	// Rows says the report holds every scenario, read through Run.Rows or
	// Run.Scenarios: a program that streams the rows must keep them for
	// it. The others hold only summaries, comparisons and gates.
	Rows bool
	// Document says the report is read as a whole by people or CI (JUnit,
	// Markdown), where server text with control characters or
	// bidirectional overrides should be escaped before it is shown.
	Document bool
	// JSONLines says the report is JSON Lines, one object per scenario:
	// its strings hold the exact text, and what a terminal would act on is
	// best \u-escaped.
	JSONLines bool
	// Write writes the report of r to w.
	Write func(r *Report, w io.Writer) error
}

// ReportFormats returns the report formats a Report writes, in the order a
// program lists them: JUnit, CSV, JSON Lines and Markdown. Each call
// returns a new slice.
func ReportFormats() []ReportFormat {
	return []ReportFormat{
		{Name: "junit", Usage: "write a JUnit XML report to this file", Rows: true, Document: true, Write: (*Report).WriteJUnit},
		{Name: "csv", Usage: "write the scenarios as CSV to this file", Rows: true, Write: (*Report).WriteCSV},
		{Name: "json", Usage: "write the scenarios as JSON Lines to this file", Rows: true, JSONLines: true, Write: (*Report).WriteJSONLines},
		{Name: "markdown", Usage: "write a Markdown report to this file", Document: true, Write: (*Report).WriteMarkdown},
	}
}
