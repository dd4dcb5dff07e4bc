package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/agenta-go/agenta/internal/text"
	"github.com/spf13/cobra"
)

// The --output formats of the reading commands; the variant commands also
// print the variant's id alone, for a script.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputID    = "id"
)

// outputChoices is the annotation of an --output flag that lists its
// values, when they are not table and json.
const outputChoices = "agenta/output-choices"

// maxCell bounds a table cell: server strings can be long, and a table row
// must stay one line.
const maxCell = 80

// addOutputFlag adds --output to a reading command.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", outputTable, "output format: table or json")
}

// addOutputFlagWithID adds --output to a command that can also print the
// id of what it read or made.
func addOutputFlagWithID(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", outputTable, "output format: table, json, or id (the id alone, for a script)")
	_ = cmd.Flags().SetAnnotation("output", outputChoices, []string{outputTable, outputJSON, outputID})
}

// checkOutput refuses an --output value that cmd does not print.
func checkOutput(cmd *cobra.Command, output string) error {
	choices := []string{outputTable, outputJSON}
	if f := cmd.Flags().Lookup("output"); f != nil && len(f.Annotations[outputChoices]) > 0 {
		choices = f.Annotations[outputChoices]
	}
	return checkChoice("output", output, choices...)
}

// writeJSON writes v as indented JSON, the shape the service sends: the
// exact text, with what a terminal would act on escaped (text.JSON).
func writeJSON(w io.Writer, v any) error {
	jw := text.NewJSONWriter(w)
	enc := json.NewEncoder(jw)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return jw.Flush()
}

// table writes aligned columns. Cells are cleaned of control characters and
// bounded, so that whatever the server sends, a row stays one line.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
}

// row writes one row. Empty cells at its end are dropped, so that no
// line ends in spaces.
func (t *table) row(cells ...string) {
	for len(cells) > 0 && cells[len(cells)-1] == "" {
		cells = cells[:len(cells)-1]
	}
	for i, c := range cells {
		if i > 0 {
			io.WriteString(t.tw, "\t")
		}
		io.WriteString(t.tw, cell(c))
	}
	io.WriteString(t.tw, "\n")
}

// flush writes the table out.
func (t *table) flush() error { return t.tw.Flush() }

// cell cleans a value for a table: tabs, line breaks, terminal escapes and
// bidirectional overrides escaped visibly, and at most maxCell runes. It is
// text.Line at the table's width, not a clipper of its own.
func cell(s string) string { return text.Line(s, maxCell) }

// number formats a float for a table: up to four significant digits.
func number(v float64) string {
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// optionalNumber formats a value that may be missing.
func optionalNumber(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return number(v)
}

// orDash shows an empty value as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// jsonText renders any JSON-able value compactly for a table cell.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
