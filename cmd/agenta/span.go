package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/models"
	"github.com/spf13/cobra"
)

func newCmdSpan(f *Factory) *cobra.Command {
	return newGroup("span <command>", "Read a span of a trace", NewCmdSpanGet(f, nil))
}

// SpanGetOptions are the inputs of agenta span get.
type SpanGetOptions struct {
	IO      *IOStreams
	Factory *Factory
	SpanID  string
	Output  string
	Timeout time.Duration
}

// NewCmdSpanGet returns agenta span get, which shows a span and its
// descendants as a tree.
func NewCmdSpanGet(f *Factory, runF func(*SpanGetOptions) error) *cobra.Command {
	opts := &SpanGetOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "get SPAN_ID",
		Short: "Show a span and its descendants as a tree",
		Long: `Show a span and its descendants as a tree: each span's kind, name, status,
latency and cost. The operation exists on the cloud service; self-hosted
servers of mid-2024 answer it 404.`,
		Example: `  agenta span get "$SPAN_ID"
  agenta span get "$SPAN_ID" --output json | jq '.children[].name'`,
		Args: exactArgs("SPAN_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SpanID = args[0]
			return dispatch(cmd, f, opts, opts.Output, opts.Timeout, runF, func(ctx context.Context, client *agenta.Client) error {
				span, err := client.GetSpan(ctx, opts.SpanID, &agenta.GetSpanOptions{})
				if err != nil {
					return err
				}
				if opts.Output == outputJSON {
					return writeJSON(opts.IO.Out, span)
				}
				return printSpanTree(opts.IO.Out, span)
			})
		},
	}
	addOutputFlag(cmd, &opts.Output)
	addTimeoutFlag(cmd, &opts.Timeout, defaultReadTimeout)
	return cmd
}

// printSpanTree writes one line per span, indented under its parent.
func printSpanTree(w io.Writer, root *models.Span) error {
	t := newTable(w)
	t.row("SPAN", "KIND", "STATUS", "LATENCY (s)", "COST", "ID")
	root.Walk(func(s *models.Span, depth int) bool {
		prefix := ""
		if depth > 0 {
			prefix = strings.Repeat("  ", depth-1) + "└─ "
		}
		t.row(prefix+cell(s.Name), string(s.SpanKind), string(s.Status),
			optionalNumber(s.Latency()), optionalNumber(s.Cost()), s.ID)
		return true
	})
	if err := t.flush(); err != nil {
		return err
	}
	if root.TraceID != "" {
		_, err := fmt.Fprintf(w, "trace %s\n", cell(root.TraceID))
		return err
	}
	return nil
}
