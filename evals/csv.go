package evals

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"

	"github.com/agenta-go/agenta/internal/text"
)

// WriteCSV writes one line per scenario, in long form: the variant first,
// so that two runs share one header and a spreadsheet or data frame can
// filter or pivot on it (baseline rows first, then candidate rows). The
// columns are: variant, row (its position in the run, from 1), one column
// "input.NAME" per input, expected (the expected answer), output, app_error,
// cost, latency, then one column per evaluator, by name, holding true,
// false, the number, the text, or "error: message". A missing value is an
// empty cell. When the runs have repeats, a last column "flaky" names the
// evaluators on which the row's test case is flaky in its run (its
// repeats disagree), joined by "; ".
func (r *Report) WriteCSV(w io.Writer) error {
	cat := r.catalog()
	runs := r.runs()
	var inputs []string
	haveInput := map[string]bool{}
	for _, run := range runs {
		for s, err := range run.distinct() {
			if err != nil {
				return err
			}
			for _, in := range s.Inputs {
				if !haveInput[in.Name] {
					haveInput[in.Name] = true
					inputs = append(inputs, in.Name)
				}
			}
		}
	}
	header := []string{"variant", "row"}
	for _, name := range inputs {
		header = append(header, "input."+name)
	}
	header = append(header, "expected", "output", "app_error", "cost", "latency")
	for _, e := range cat.list {
		header = append(header, cat.label(e.ID))
	}
	flaky := r.flakyRowsOf(runs, cat)
	if flaky != nil {
		header = append(header, "flaky")
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(inert(header)); err != nil {
		return err
	}
	record := make([]string, len(header))
	for n, run := range runs {
		i := 0
		for s, err := range run.distinct() {
			if err != nil {
				return err
			}
			record = record[:0]
			record = append(record, run.name, strconv.Itoa(i+1))
			for _, name := range inputs {
				v, _ := s.Input(name)
				record = append(record, v)
			}
			appError, _ := appError(s)
			record = append(record, s.ExpectedAnswer(), s.OutputText(), appError)
			record = append(record, optional(s.Cost()), optional(s.Latency()))
			for _, e := range cat.list {
				cell := ""
				if res, ok := s.Result(e.ID); ok {
					cell = resultText(res)
				}
				record = append(record, cell)
			}
			if flaky != nil {
				record = append(record, flakyCell(flaky[n].of(s)))
			}
			if err := cw.Write(inert(record)); err != nil {
				return err
			}
			i++
		}
	}
	cw.Flush()
	return cw.Error()
}

// inert makes each cell of record safe for a spreadsheet and a terminal
// (text.CSVCell): a formula neutralised, controls escaped.
func inert(record []string) []string {
	for i, v := range record {
		record[i] = text.CSVCell(v)
	}
	return record
}

func optional(x float64, ok bool) string {
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return pythonRepr(x) // as the service wrote it
}
