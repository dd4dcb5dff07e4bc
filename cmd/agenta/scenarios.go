package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
	"github.com/spf13/cobra"
)

// The --format values of agenta scenarios.
const (
	formatJSONL = "jsonl"
	formatCSV   = "csv"
	formatJSON  = "json"
	formatTable = "table"
)

// ScenariosOptions are the inputs of agenta scenarios.
type ScenariosOptions struct {
	IO           *IOStreams
	Factory      *Factory
	EvaluationID string
	Format       string
	// Timeout bounds the whole stream, retries included.
	Timeout time.Duration
}

// NewCmdScenarios returns agenta scenarios, which streams an evaluation's
// scenarios to stdout.
func NewCmdScenarios(f *Factory, runF func(*ScenariosOptions) error) *cobra.Command {
	opts := &ScenariosOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "scenarios EVALUATION_ID [--format jsonl|csv|json|table]",
		Short: "Stream an evaluation's scenarios (test-set rows) to stdout",
		Long: `Stream an evaluation's scenarios, one per test-set row, to stdout as they
are read, so that memory stays flat however many rows there are.

Formats:
  jsonl  one scenario per line, as the service sends it (the default)
  json   one JSON array of the same objects
  csv    a header (row, input.NAME for each input, expected, output,
         app_error, cost, latency, then one column per evaluator, by name),
         then one record per scenario; a result is true, false, a number,
         a text or "error: message"
  table  the same columns, aligned for a terminal, cells cut at 80 characters`,
		Example: `  agenta scenarios "$EVALUATION_ID" --format csv > scenarios.csv
  agenta scenarios "$EVALUATION_ID" | jq -r '.outputs[0].result.value'`,
		Args: exactArgs("EVALUATION_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.EvaluationID = args[0]
			if err := checkChoice("format", opts.Format, formatJSONL, formatCSV, formatJSON, formatTable); err != nil {
				return err
			}
			if err := checkTimeout(opts.Timeout); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), opts.Timeout)
			defer cancel()
			return runWithClient(ctx, f, func(client *agenta.Client) error {
				return streamScenarios(ctx, client, opts)
			})
		},
	}
	cmd.Flags().StringVarP(&opts.Format, "format", "f", formatJSONL, "output format: jsonl, csv, json or table")
	// Longer than the other reads': a large evaluation takes a while to stream.
	addTimeoutFlag(cmd, &opts.Timeout, 10*time.Minute)
	return cmd
}

// scenarioWriter writes scenarios one at a time in one format.
type scenarioWriter interface {
	write(s *models.EvaluationScenario) error
	end() error
}

// streamScenarios writes every scenario of an evaluation as it is read.
func streamScenarios(ctx context.Context, client *agenta.Client, opts *ScenariosOptions) error {
	out := bufio.NewWriterSize(opts.IO.Out, 64<<10)
	var w scenarioWriter
	switch opts.Format {
	case formatJSONL:
		w = &jsonScenarios{w: out}
	case formatJSON:
		w = &jsonScenarios{w: out, array: true}
	case formatCSV, formatTable:
		// The evaluator names are in the evaluation's aggregated results.
		ev, err := client.FetchEvaluation(ctx, opts.EvaluationID)
		if err != nil {
			return err
		}
		cw := &columnScenarios{evaluators: evals.EvaluatorsOf(*ev)}
		if opts.Format == formatCSV {
			cw.csv = csv.NewWriter(out)
		} else {
			cw.table = newTable(out)
		}
		w = cw
	}
	written := 0
	for s, err := range client.StreamEvaluationScenarios(ctx, opts.EvaluationID) {
		if err != nil {
			out.Flush()
			if written == 0 {
				return err
			}
			// Say how far the stream got: what was printed is not all.
			return inContext(classify(err, opts.Factory.serverHost()),
				fmt.Sprintf("scenarios of evaluation %s: %d written, then", cell(opts.EvaluationID), written))
		}
		if err := w.write(&s); err != nil {
			return localError(err)
		}
		written++
	}
	if err := w.end(); err != nil {
		return localError(err)
	}
	return localError(out.Flush())
}

// jsonScenarios writes JSON Lines, or one JSON array.
type jsonScenarios struct {
	w     *bufio.Writer
	array bool
	n     int
}

func (j *jsonScenarios) write(s *models.EvaluationScenario) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if j.array {
		sep := ",\n"
		if j.n == 0 {
			sep = "[\n"
		}
		j.w.WriteString(sep)
	}
	j.n++
	j.w.Write(text.JSON(data)) // the exact text, inert on a terminal
	if !j.array {
		return j.w.WriteByte('\n')
	}
	return nil
}

func (j *jsonScenarios) end() error {
	if !j.array {
		return nil
	}
	if j.n == 0 {
		_, err := j.w.WriteString("[]\n")
		return err
	}
	_, err := j.w.WriteString("\n]\n")
	return err
}

// columnScenarios writes CSV or a table. The input columns come from the
// first scenario: every row of a test set has the same inputs. The
// evaluator columns are those of the evaluation, in its order, then any a
// scenario names that the evaluation did not.
type columnScenarios struct {
	csv   *csv.Writer
	table *table

	evaluators []evals.Evaluator
	inputs     []string
	n          int
	record     []string
}

func (c *columnScenarios) write(s *models.EvaluationScenario) error {
	if c.n == 0 {
		if err := c.header(s); err != nil {
			return err
		}
	}
	c.n++
	appError, _ := s.AppError()
	record := append(c.record[:0], strconv.Itoa(c.n))
	for _, name := range c.inputs {
		v, _ := s.Input(name)
		record = append(record, v)
	}
	record = append(record, s.ExpectedAnswer(), s.OutputText(), appError,
		optionalCell(s.Cost()), optionalCell(s.Latency()))
	for _, e := range c.evaluators {
		value := ""
		if r, ok := s.Result(e.ID); ok {
			value = resultCell(r)
			if c.csv != nil {
				value = exactCell(r)
			}
		}
		record = append(record, value)
	}
	c.record = record
	return c.emit(record)
}

func (c *columnScenarios) header(first *models.EvaluationScenario) error {
	header := []string{"row"}
	for _, in := range first.Inputs {
		c.inputs = append(c.inputs, in.Name)
		header = append(header, "input."+in.Name)
	}
	header = append(header, "expected", "output", "app_error", "cost", "latency")
	known := map[string]bool{}
	for _, e := range c.evaluators {
		known[e.ID] = true
	}
	for _, r := range first.Results {
		if !known[r.EvaluatorConfig] {
			known[r.EvaluatorConfig] = true
			c.evaluators = append(c.evaluators, evals.Evaluator{ID: r.EvaluatorConfig})
		}
	}
	for _, e := range c.evaluators {
		name := e.Name
		if name == "" {
			name = e.ID
		}
		header = append(header, name)
	}
	return c.emit(header)
}

func (c *columnScenarios) emit(record []string) error {
	if c.csv != nil {
		// Server text must not drive a spreadsheet or a terminal.
		for i, v := range record {
			record[i] = text.CSVCell(v)
		}
		return c.csv.Write(record)
	}
	c.table.row(record...)
	// Flush every 100 rows, so that a long stream does not pile up in the
	// table's buffer: columns are aligned within each block. The header
	// (n is 0) goes out with the first block, aligned with its rows.
	if c.n > 0 && c.n%100 == 0 {
		return c.table.flush()
	}
	return nil
}

func (c *columnScenarios) end() error {
	if c.csv != nil {
		c.csv.Flush()
		return c.csv.Error()
	}
	return c.table.flush()
}

// optionalCell formats a value that may be missing as a CSV cell: empty
// when missing.
func optionalCell(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
