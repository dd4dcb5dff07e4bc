package main

import (
	"context"
	"strings"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/spf13/cobra"
)

func newCmdHumanEvaluation(f *Factory) *cobra.Command {
	cmd := newGroup("human-evaluation <command>", "List an app's human evaluations", NewCmdHumanEvaluationList(f, nil))
	cmd.Aliases = []string{"human-evaluations"}
	return cmd
}

// HumanEvaluationListOptions are the inputs of agenta human-evaluation list.
type HumanEvaluationListOptions struct {
	IO      *IOStreams
	Factory *Factory
	AppID   string
	Output  string
	Timeout time.Duration
}

// NewCmdHumanEvaluationList returns agenta human-evaluation list.
func NewCmdHumanEvaluationList(f *Factory, runF func(*HumanEvaluationListOptions) error) *cobra.Command {
	opts := &HumanEvaluationListOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:     "list --app APP_ID",
		Short:   "List an app's human evaluations: A/B tests and single-model tests",
		Example: `  agenta human-evaluation list --app "$AGENTA_APP_ID"`,
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.AppID == "" {
				return usageErrorf("--app is required")
			}
			return dispatch(cmd, f, opts, opts.Output, opts.Timeout, runF, func(ctx context.Context, client *agenta.Client) error {
				list, err := client.ListHumanEvaluations(ctx, opts.AppID)
				if err != nil {
					return err
				}
				if opts.Output == outputJSON {
					return writeJSON(opts.IO.Out, list)
				}
				t := newTable(opts.IO.Out)
				t.row("ID", "TYPE", "STATUS", "VARIANTS", "TEST SET", "CREATED")
				for _, h := range list {
					t.row(h.ID, h.EvaluationType, h.Status, strings.Join(h.VariantNames, ", "),
						h.TestsetName, h.CreatedAt.UTC().Format("2006-01-02 15:04"))
				}
				return t.flush()
			})
		},
	}
	cmd.Flags().StringVar(&opts.AppID, "app", "", "the app's id (required)")
	addOutputFlag(cmd, &opts.Output)
	addTimeoutFlag(cmd, &opts.Timeout, defaultReadTimeout)
	return cmd
}
