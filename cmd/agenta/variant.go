package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
	"github.com/spf13/cobra"
)

func newCmdVariant(f *Factory) *cobra.Command {
	return newGroup("variant <command>", "Read and fork application variants",
		NewCmdVariantGet(f, nil),
		NewCmdVariantEnv(f, nil),
		NewCmdVariantFork(f, nil),
	)
}

// VariantGetOptions are the inputs of agenta variant get.
type VariantGetOptions struct {
	IO        *IOStreams
	Factory   *Factory
	VariantID string
	Output    string
	Timeout   time.Duration
}

// NewCmdVariantGet returns agenta variant get. runF, when not nil, runs
// instead of the command's work, for tests of the parsed options.
func NewCmdVariantGet(f *Factory, runF func(*VariantGetOptions) error) *cobra.Command {
	opts := &VariantGetOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:     "get VARIANT_ID",
		Short:   "Show a variant: its names, base, revision and parameters",
		Example: `  agenta variant get 0190b5a2-7c1e-7b52-a0a7-3c3f2b1d9e01 --output json`,
		Args:    exactArgs("VARIANT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.VariantID = args[0]
			return dispatch(cmd, f, opts, opts.Output, opts.Timeout, runF, func(ctx context.Context, client *agenta.Client) error {
				v, err := client.GetVariant(ctx, opts.VariantID)
				if err != nil {
					return err
				}
				return printVariant(opts.IO.Out, opts.Output, v)
			})
		},
	}
	addOutputFlagWithID(cmd, &opts.Output)
	addTimeoutFlag(cmd, &opts.Timeout, defaultReadTimeout)
	return cmd
}

// VariantEnvOptions are the inputs of agenta variant env.
type VariantEnvOptions struct {
	IO          *IOStreams
	Factory     *Factory
	AppID       string
	Environment string
	Output      string
	Timeout     time.Duration
}

// NewCmdVariantEnv returns agenta variant env, the variant deployed to an
// environment.
func NewCmdVariantEnv(f *Factory, runF func(*VariantEnvOptions) error) *cobra.Command {
	opts := &VariantEnvOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "env ENVIRONMENT --app APP_ID",
		Short: "Show the variant of an app deployed to an environment",
		Long: `Show the variant of an app deployed to an environment: development, staging
or production.

Servers of mid-2024 answer this operation 500 whatever the arguments,
because of a bug in the service (the error then says so): there, pass the
variant's id instead, to 'agenta variant get' or to 'agenta eval run
--variant'. Later servers answer it as documented.`,
		Example: `  agenta variant env production --app "$AGENTA_APP_ID"`,
		Args:    exactArgs("ENVIRONMENT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Environment = args[0]
			if opts.AppID == "" {
				return usageErrorf("--app is required")
			}
			return dispatch(cmd, f, opts, opts.Output, opts.Timeout, runF, func(ctx context.Context, client *agenta.Client) error {
				v, err := client.GetVariantByEnvironment(ctx, opts.AppID, opts.Environment)
				if err != nil {
					return err
				}
				return printVariant(opts.IO.Out, opts.Output, v)
			})
		},
	}
	cmd.Flags().StringVar(&opts.AppID, "app", "", "the app's id (required)")
	addOutputFlagWithID(cmd, &opts.Output)
	addTimeoutFlag(cmd, &opts.Timeout, defaultReadTimeout)
	return cmd
}

// VariantForkOptions are the inputs of agenta variant fork.
type VariantForkOptions struct {
	IO          *IOStreams
	Factory     *Factory
	BaseID      string
	ConfigName  string
	VariantName string
	// From is a variant whose parameters the fork starts from.
	From string
	// Set holds the parameters given with --set, already parsed.
	Set     map[string]any
	Output  string
	Timeout time.Duration

	set []string
}

// NewCmdVariantFork returns agenta variant fork, which adds a variant to a
// base with new parameters.
func NewCmdVariantFork(f *Factory, runF func(*VariantForkOptions) error) *cobra.Command {
	opts := &VariantForkOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "fork BASE_ID --name CONFIG_NAME [--from VARIANT_ID] [--set KEY=VALUE]...",
		Short: "Add a variant to a base with new parameters",
		Long: `Add a variant to a base with new parameters. The service names it
BASE_NAME.CONFIG_NAME, at revision 1.

The parameters start empty, or as those of the variant named by --from, and
each --set KEY=VALUE sets one: VALUE is read as JSON when it is valid JSON
(0.2, true, ["a"], {"k": 1}, "quoted") and as a string otherwise.`,
		Example: `  agenta variant fork "$BASE_ID" --name precise --from "$VARIANT_ID" --set temperature=0
  agenta variant fork "$BASE_ID" --name short --set 'prompt_system=Answer in one word.'
  candidate=$(agenta variant fork "$AGENTA_BASE_ID" --name "ci-$RUN" --from "$AGENTA_PRODUCTION_VARIANT_ID" -o id)`,
		Args: exactArgs("BASE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.BaseID = args[0]
			if opts.ConfigName == "" {
				return usageErrorf("--name is required")
			}
			if opts.VariantName == "" {
				opts.VariantName = opts.ConfigName
			}
			set, err := parseSettings(opts.set)
			if err != nil {
				return err
			}
			opts.Set = set
			return dispatch(cmd, f, opts, opts.Output, opts.Timeout, runF, func(ctx context.Context, client *agenta.Client) error {
				return forkVariant(ctx, client, opts)
			})
		},
	}
	cmd.Flags().StringVar(&opts.ConfigName, "name", "", "the new configuration's name (required)")
	cmd.Flags().StringVar(&opts.VariantName, "variant-name", "", "the new_variant_name the service requires but does not use (default: --name)")
	cmd.Flags().StringVar(&opts.From, "from", "", "start from this variant's parameters")
	cmd.Flags().StringArrayVar(&opts.set, "set", nil, "set a parameter, KEY=VALUE (repeatable)")
	addOutputFlagWithID(cmd, &opts.Output)
	addTimeoutFlag(cmd, &opts.Timeout, defaultReadTimeout)
	return cmd
}

// forkVariant adds the variant, with the parameters of --from and --set.
func forkVariant(ctx context.Context, client *agenta.Client, opts *VariantForkOptions) error {
	parameters := map[string]any{}
	if opts.From != "" {
		from, err := client.GetVariant(ctx, opts.From)
		if err != nil {
			return err
		}
		maps.Copy(parameters, from.Parameters)
	}
	maps.Copy(parameters, opts.Set)
	v, err := client.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: opts.BaseID, NewVariantName: opts.VariantName, NewConfigName: opts.ConfigName, Parameters: parameters,
	})
	if err != nil {
		return err
	}
	return printVariant(opts.IO.Out, opts.Output, v)
}

// parseSettings reads --set KEY=VALUE pairs: VALUE as JSON when it parses,
// else as a string. Numbers stay as written (json.Number): a float64 would
// change an integer past 2^53, such as a seed.
func parseSettings(pairs []string) (map[string]any, error) {
	out := map[string]any{}
	for _, pair := range pairs {
		key, value, ok := strings.Cut(pair, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, usageErrorf("--set %q: want KEY=VALUE, such as temperature=0.2", text.Clip(pair, 100))
		}
		v, err := decodeSetting(value)
		if err != nil {
			v = value
		}
		out[key] = v
	}
	return out, nil
}

// decodeSetting decodes one JSON value, numbers as json.Number; anything
// after it is an error, as with json.Unmarshal.
func decodeSetting(value string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// printVariant writes a variant as a table of fields, as JSON, or its id.
func printVariant(w io.Writer, output string, v *models.AppVariantResponse) error {
	if v.URI != "" {
		// The app's URL may carry its credentials (a 2026 revision's
		// data.url, user:password@ or ?token=): shown without them.
		shown := *v
		shown.URI = text.URL(v.URI)
		v = &shown
	}
	switch output {
	case outputJSON:
		return writeJSON(w, v)
	case outputID:
		_, err := fmt.Fprintln(w, cell(v.VariantID))
		return err
	}
	t := newTable(w)
	t.row("variant", v.VariantName)
	t.row("id", v.VariantID)
	t.row("app", v.AppName+" ("+v.AppID+")")
	t.row("base", v.BaseName+" ("+v.BaseID+")")
	t.row("config", v.ConfigName)
	t.row("revision", strconv.Itoa(v.Revision))
	if v.PreviousVariantName != "" {
		t.row("previous variant", v.PreviousVariantName)
	}
	t.row("uri", orDash(v.URI))
	for _, key := range slices.Sorted(maps.Keys(v.Parameters)) {
		t.row("parameters."+key, jsonText(v.Parameters[key]))
	}
	return t.flush()
}
