package main

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
	"github.com/spf13/cobra"
)

func newCmdEvaluation(f *Factory) *cobra.Command {
	return newGroup("evaluation <command>", "Read an evaluation, its status, or wait for it to end",
		NewCmdEvaluationGet(f, nil),
		NewCmdEvaluationStatus(f, nil),
		NewCmdEvaluationWait(f, nil),
	)
}

// EvaluationOptions are the inputs of agenta evaluation get, status and
// wait.
type EvaluationOptions struct {
	IO           *IOStreams
	Factory      *Factory
	EvaluationID string
	Output       string
	// Timeout bounds the command, retries included (for wait, how long to
	// wait in all); Interval is wait's pause between status reads.
	Interval, Timeout time.Duration
}

// NewCmdEvaluationGet returns agenta evaluation get.
func NewCmdEvaluationGet(f *Factory, runF func(*EvaluationOptions) error) *cobra.Command {
	opts := &EvaluationOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:     "get EVALUATION_ID",
		Short:   "Show an evaluation: its status, aggregated results, cost and latency",
		Example: `  agenta evaluation get "$EVALUATION_ID" --output json`,
		Args:    exactArgs("EVALUATION_ID"),
		RunE: evaluationRunE(opts, runF, func(ctx context.Context, client *agenta.Client) error {
			ev, err := client.FetchEvaluation(ctx, opts.EvaluationID)
			if err != nil {
				return err
			}
			return printEvaluation(opts.IO.Out, opts.Output, ev)
		}),
	}
	addOutputFlag(cmd, &opts.Output)
	addTimeoutFlag(cmd, &opts.Timeout, defaultReadTimeout)
	return cmd
}

// NewCmdEvaluationStatus returns agenta evaluation status.
func NewCmdEvaluationStatus(f *Factory, runF func(*EvaluationOptions) error) *cobra.Command {
	opts := &EvaluationOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "status EVALUATION_ID",
		Short: "Show an evaluation's status, such as EVALUATION_STARTED",
		Long: `Show an evaluation's status: EVALUATION_INITIALIZED and EVALUATION_STARTED
while it runs, then EVALUATION_FINISHED, EVALUATION_FINISHED_WITH_ERRORS,
EVALUATION_FAILED or EVALUATION_AGGREGATION_FAILED. It exits 0 whatever the
status; use 'agenta evaluation wait' to wait for the end.`,
		Example: `  agenta evaluation status "$EVALUATION_ID"`,
		Args:    exactArgs("EVALUATION_ID"),
		RunE: evaluationRunE(opts, runF, func(ctx context.Context, client *agenta.Client) error {
			status, err := client.FetchEvaluationStatus(ctx, opts.EvaluationID)
			if err != nil {
				return err
			}
			if opts.Output == outputJSON {
				return writeJSON(opts.IO.Out, status)
			}
			t := newTable(opts.IO.Out)
			t.row("status", string(status.EvaluationStatus()))
			if status.Error != nil {
				t.row("error", status.Error.Message)
			}
			return t.flush()
		}),
	}
	addOutputFlag(cmd, &opts.Output)
	addTimeoutFlag(cmd, &opts.Timeout, defaultReadTimeout)
	return cmd
}

// NewCmdEvaluationWait returns agenta evaluation wait.
func NewCmdEvaluationWait(f *Factory, runF func(*EvaluationOptions) error) *cobra.Command {
	opts := &EvaluationOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "wait EVALUATION_ID",
		Short: "Wait until an evaluation ends, then show it",
		Long: `Wait until an evaluation ends, showing its status on stderr as it changes,
then show it as 'agenta evaluation get' does. It exits 3 when the evaluation
failed and 4 when --timeout passes first.`,
		Example: `  agenta evaluation wait "$EVALUATION_ID" --timeout 10m`,
		Args:    exactArgs("EVALUATION_ID"),
		RunE: evaluationRunE(opts, runF, func(ctx context.Context, client *agenta.Client) error {
			ev, err := waitEvaluation(ctx, opts.IO, client, opts.EvaluationID, "evaluation "+opts.EvaluationID, opts.Interval)
			if ev != nil {
				if perr := printEvaluation(opts.IO.Out, opts.Output, ev); perr != nil && err == nil {
					err = localError(perr)
				}
			}
			return err
		}),
	}
	addOutputFlag(cmd, &opts.Output)
	addWaitFlags(cmd, &opts.Interval, &opts.Timeout)
	return cmd
}

// addWaitFlags adds --interval and --timeout to a command that waits for
// evaluations.
func addWaitFlags(cmd *cobra.Command, interval, timeout *time.Duration) {
	cmd.Flags().DurationVar(interval, "interval", agenta.DefaultWaitInterval, "pause between status reads (at least 100ms)")
	cmd.Flags().DurationVar(timeout, "timeout", 30*time.Minute, "give up after this long (exit 4)")
}

// minInterval is the shortest --interval: each status read is a request
// to the server, and a nanosecond made thousands a second.
const minInterval = 100 * time.Millisecond

// checkWaitFlags refuses an interval under minInterval and a timeout that
// is not positive.
func checkWaitFlags(interval, timeout time.Duration) error {
	if interval < minInterval {
		return usageErrorf("--interval %s: want %s or more, such as 2s (each status read is a request to the server)", interval, minInterval)
	}
	return checkTimeout(timeout)
}

// evaluationRunE checks the options of the evaluation commands, then runs
// work with a client.
func evaluationRunE(opts *EvaluationOptions, runF func(*EvaluationOptions) error, work func(context.Context, *agenta.Client) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		opts.EvaluationID = args[0]
		if cmd.Flags().Lookup("interval") != nil {
			if err := checkWaitFlags(opts.Interval, opts.Timeout); err != nil {
				return err
			}
		}
		return dispatch(cmd, opts.Factory, opts, opts.Output, opts.Timeout, runF, work)
	}
}

// waitEvaluation waits for an evaluation, until ctx ends, with a progress
// display labelled label: a line per status change, and one per failed
// read that the wait rides out.
func waitEvaluation(ctx context.Context, streams *IOStreams, client *agenta.Client, id, label string, interval time.Duration) (*models.Evaluation, error) {
	p := startProgress(streams, label)
	ev, err := client.WaitEvaluation(ctx, id, &agenta.WaitOptions{Interval: interval, OnStatus: p.OnStatus, OnRetry: p.OnRetry, NoWorkerAfter: noWorkerAfter})
	p.Stop()
	return ev, err
}

// printEvaluation writes an evaluation as a table or as JSON.
func printEvaluation(w io.Writer, output string, ev *models.Evaluation) error {
	if output == outputJSON {
		return writeJSON(w, ev)
	}
	t := newTable(w)
	t.row("evaluation", ev.ID)
	t.row("status", string(ev.Status.EvaluationStatus()))
	if ev.Status.Error != nil {
		t.row("error", ev.Status.Error.Message)
	}
	t.row("app", ev.AppID)
	for i, id := range ev.VariantIDs {
		name := ""
		if i < len(ev.VariantNames) {
			name = ev.VariantNames[i] + " "
		}
		t.row("variant", name+"("+id+")")
	}
	t.row("test set", orDash(ev.TestsetName)+" ("+ev.TestsetID+")")
	t.row("created", ev.CreatedAt.Time.UTC().Format(time.RFC3339))
	t.row("updated", ev.UpdatedAt.Time.UTC().Format(time.RFC3339))
	for _, pair := range []struct {
		name string
		r    *models.Result
	}{{"average cost", ev.AverageCost}, {"total cost", ev.TotalCost}, {"average latency (s)", ev.AverageLatency}} {
		if pair.r != nil {
			t.row(pair.name, resultCell(*pair.r))
		}
	}
	names := map[string]string{}
	for _, e := range evals.EvaluatorsOf(*ev) {
		names[e.ID] = e.Name
	}
	for _, agg := range ev.AggregatedResults {
		name := names[agg.EvaluatorConfig.ID]
		if name == "" {
			name = agg.EvaluatorConfig.ID
		}
		t.row("result: "+name, resultCell(agg.Result))
	}
	return t.flush()
}

// exactCell renders a Result for a CSV cell: as resultCell, but a number
// as the server wrote it, every digit kept.
func exactCell(r models.Result) string {
	if _, ok := r.Float64(); ok && !r.Failed() {
		return string(bytes.TrimSpace(r.Value))
	}
	return resultCell(r)
}

// resultCell renders a Result for a table: the value, a number with four
// significant digits, or "error: message".
func resultCell(r models.Result) string {
	if r.Failed() {
		if r.Error != nil {
			return "error: " + r.Error.Message
		}
		return "error"
	}
	if v, ok := r.Float64(); ok {
		return number(v)
	}
	if b, ok := r.Bool(); ok {
		if b {
			return "true"
		}
		return "false"
	}
	if s, ok := r.Text(); ok {
		return s
	}
	if !r.HasValue() {
		return ""
	}
	return string(r.Value)
}
