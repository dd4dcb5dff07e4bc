package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/internal/text"
	"github.com/spf13/cobra"
)

// run executes the command line args and returns the exit code. Errors are
// printed here, once, as one line on stderr.
func run(ctx context.Context, args []string, streams *IOStreams) int {
	f := newFactory(streams)
	f.args = args
	// Standard output and error are scrubbed of the keys the command
	// knows, whatever a command prints there (server data can echo a key).
	out := newScrubWriter(streams.Out, f.secrets)
	scrubbed := *streams
	scrubbed.Out = out
	scrubbed.ErrOut = &messageWriter{w: streams.ErrOut, known: f.secrets}
	f.IO = &scrubbed
	root := NewCmdRoot(f)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(out)
	root.SetErr(scrubbed.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	if ferr := out.Flush(); ferr != nil && err == nil {
		err = localError(ferr)
		cmd = nil
	}
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	// The SDK scrubs the keys it sent from its errors; the other provider
	// keys, and a key in a message the command built, are scrubbed here.
	line := errorLine(errors.New(text.NewSecrets(f.secrets()...).Text(err.Error(), -1)))
	if kindOf(err) == kindUsage && cmd != nil {
		line += fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
	}
	fmt.Fprintln(streams.ErrOut, line)
	return code
}

// NewCmdRoot returns the agenta command with every subcommand.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "agenta <command>",
		Short: "Run and read evaluations of the Agenta service from a shell or a CI job",
		Long: `agenta runs evaluations of the Agenta evaluation and variant service and
gates a release on them, reads variants, evaluations, scenarios, spans and
human evaluations, and serves a fake service for trying it all out.

Configuration:
  AGENTA_HOST     the server's URL, with or without /api
                  (such as https://cloud.agenta.ai); --host overrides it
  AGENTA_API_KEY  the API key, optional; --api-key-file FILE reads it from
                  a file instead. The key is never a flag value, which ps
                  and shell history would show.
  AGENTA_API_GENERATION
                  2024, 2026 or auto: the API the server speaks, detected
                  when unset; --generation overrides it. The same commands
                  work on both: on a 2026 server (Agenta v0.96 and later)
                  each variant of an evaluation becomes a run of its own.

` + exitCodesHelp,
		Example: `  fake_env=$(agenta fake --background) && eval "$fake_env"   # a local fake, its ids in the environment
  agenta eval run --app "$AGENTA_APP_ID" --testset "$AGENTA_TESTSET_ID" \
    --variant "$AGENTA_PRODUCTION_VARIANT_ID" --evaluator "${AGENTA_EVALUATOR_IDS%%,*}" \
    --gate 'Exact match >= 0.6' --junit report.xml
  agenta fake stop`,
		Version:       agenta.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          groupArgs,
		RunE:          groupRun,
	}
	root.PersistentFlags().StringVar(&f.Host, "host", "", "the server's URL, with or without /api (default $AGENTA_HOST)")
	root.PersistentFlags().StringVar(&f.APIKeyFile, "api-key-file", "", "read the API key from this file (default $AGENTA_API_KEY)")
	root.PersistentFlags().StringVar(&f.Generation, "generation", "", "the API the server speaks: 2024, 2026 or auto, to detect it (default $AGENTA_API_GENERATION, else auto)")
	// Hidden: for tests of a 2026 server without a worker.
	root.PersistentFlags().DurationVar(&f.NoWorkerAfter, "no-worker-after", 0, "on a 2026 server, how long a run may stay without a scenario before the wait says no worker takes the queue (default 2m)")
	_ = root.PersistentFlags().MarkHidden("no-worker-after")
	// Hidden: for tests of stalls and slow answers that must not take a
	// minute each.
	root.PersistentFlags().DurationVar(&f.AttemptTimeout, "attempt-timeout", 0, "each attempt's limit on the wait for an answer's headers and on each silence of its body (default 1m)")
	_ = root.PersistentFlags().MarkHidden("attempt-timeout")
	root.SetFlagErrorFunc(flagError)
	// A flag given an empty value is refused before any command runs.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Annotations[checksOwnFlags] != "" {
			return nil
		}
		return emptyFlagValues(cmd.Flags())
	}
	root.AddCommand(
		NewCmdFake(f, nil),
		newCmdEval(f),
		newCmdEvaluation(f),
		NewCmdScenarios(f, nil),
		newCmdVariant(f),
		newCmdSpan(f),
		newCmdHumanEvaluation(f),
	)
	addHelpAndCompletion(root)
	return root
}

// addHelpAndCompletion adds help and the completion command cobra
// generates, now rather than at Execute, and gives each an example, as
// every other command has. cobra's own help answers a command that does
// not exist with the root's help and exit 0; this one with a usage error.
func addHelpAndCompletion(root *cobra.Command) {
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				var suggestions []string
				if target != nil && len(rest) > 0 {
					for _, name := range closestCommands(target, rest[0]) {
						if target.HasParent() {
							name = commandName(target) + " " + name
						}
						suggestions = append(suggestions, name)
					}
				}
				return usageErrorf("no command %q%s", text.Clip(strings.Join(args, " "), 100), didYouMean(suggestions))
			}
			return target.Help()
		},
	})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	shells := map[string]string{
		"bash":       `  source <(agenta completion bash)`,
		"zsh":        `  agenta completion zsh > "${fpath[1]}/_agenta"`,
		"fish":       `  agenta completion fish > ~/.config/fish/completions/agenta.fish`,
		"powershell": `  agenta completion powershell | Out-String | Invoke-Expression`,
	}
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "help":
			cmd.Example = `  agenta help eval run`
		case "completion":
			var all []string
			for _, shell := range cmd.Commands() {
				shell.Example = shells[shell.Name()]
				all = append(all, shell.Example)
			}
			cmd.Example = strings.Join(all, "\n")
		}
	}
}

// groupArgs refuses an unknown subcommand of a command that only groups
// others, as a usage error.
func groupArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(cmd, args[0])
	}
	return nil
}

// groupRun refuses a grouping command run without a subcommand.
func groupRun(cmd *cobra.Command, _ []string) error {
	if !cmd.HasParent() {
		return usageErrorf("no command given")
	}
	return usageErrorf("%s needs a command", commandName(cmd))
}

// commandName is a command's path without the root's name, which the
// "agenta: " that starts every error line already says.
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// newGroup returns a command that groups subcommands; its help shows their
// examples.
func newGroup(use, short string, subcommands ...*cobra.Command) *cobra.Command {
	var examples []string
	for _, sub := range subcommands {
		if sub.Example != "" {
			examples = append(examples, sub.Example)
		}
	}
	cmd := &cobra.Command{Use: use, Short: short, Example: strings.Join(examples, "\n"), Args: groupArgs, RunE: groupRun}
	cmd.AddCommand(subcommands...)
	return cmd
}

// exactArgs is cobra.ExactArgs with a usage error that names the
// arguments expected.
func exactArgs(names ...string) cobra.PositionalArgs {
	want := "no arguments"
	switch len(names) {
	case 0:
	case 1:
		want = "one argument, " + names[0]
	default:
		want = fmt.Sprintf("%d arguments, %s", len(names), strings.Join(names, " "))
	}
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > len(names) && cmd.HasAvailableSubCommands() {
			return unknownCommand(cmd, args[len(names)])
		}
		if len(args) != len(names) {
			return usageErrorf("%s takes %s, and got %d", commandName(cmd), want, len(args))
		}
		for i, arg := range args {
			if err := checkText(commandName(cmd), names[i], arg); err != nil {
				return err
			}
			// An id never holds spaces at its ends; a script that quoted
			// a variable with a trailing one would get a 500 for it. cobra
			// hands RunE the slice it checked here.
			args[i] = strings.TrimSpace(arg)
		}
		return nil
	}
}

// checkID refuses an empty id, or one with a control character, given to
// flag; list says the flag takes several, one of which is meant.
func checkID(flag, id string, list bool) error {
	which := "the id"
	if list {
		which = "an id"
	}
	return checkText(flag, which, id)
}

// checkText refuses a value that is empty or holds a control character,
// as a usage error naming where it was given and what it is.
func checkText(where, what, value string) error {
	switch {
	case strings.TrimSpace(value) == "":
		return usageErrorf("%s: %s is empty", where, what)
	case strings.IndexFunc(value, unicode.IsControl) >= 0:
		return usageErrorf("%s: %s contains a control character", where, what)
	}
	return nil
}

// runWithClient runs a command's work with a client for the configured
// server, and gives what it returns an exit code.
func runWithClient(ctx context.Context, f *Factory, work func(*agenta.Client) error) error {
	client, err := f.Client()
	if err != nil {
		return err
	}
	err = work(client)
	// A server without the 2024 routes may speak the 2026 API: the client,
	// once it knows, maps the 2024 operations onto it. A client that did
	// not know sent 2024 requests, which such a server has no route for:
	// the work failed at its first request, created nothing, and is done
	// again, whole. A client told its generation sent what it meant to,
	// perhaps a create before the route it lacked: doing the work again
	// would send that create twice. A mid-2024 server never gets this
	// extra read, but on a route it lacks.
	if errors.Is(err, agenta.ErrRouteNotFound) && !f.generationTold() {
		if g, gerr := client.Generation(ctx); gerr == nil && g == agenta.Generation2026 {
			err = work(client)
		}
	}
	return classify(err, f.serverHost())
}

// dispatch finishes a reading command: it checks --output and --timeout,
// then hands the parsed options to runF when a test gave one, or else does
// the work within the timeout.
func dispatch[O any](cmd *cobra.Command, f *Factory, opts O, output string, timeout time.Duration, runF func(O) error, work func(context.Context, *agenta.Client) error) error {
	if err := checkOutput(cmd, output); err != nil {
		return err
	}
	if err := checkTimeout(timeout); err != nil {
		return err
	}
	if runF != nil {
		return runF(opts)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	return runWithClient(ctx, f, func(client *agenta.Client) error { return work(ctx, client) })
}

// defaultReadTimeout bounds a reading command, retries included: a server
// that accepts the connection and never answers would otherwise hold a CI
// job for the SDK's four attempts of 60 s each.
const defaultReadTimeout = 2 * time.Minute

// addTimeoutFlag adds --timeout to a command that calls the server.
func addTimeoutFlag(cmd *cobra.Command, timeout *time.Duration, value time.Duration) {
	cmd.Flags().DurationVar(timeout, "timeout", value, "give up after this long, retries included (exit 4)")
}

// checkTimeout refuses a --timeout that is not positive.
func checkTimeout(timeout time.Duration) error {
	if timeout <= 0 {
		return usageErrorf("--timeout %s: want a positive duration, such as 2m", timeout)
	}
	return nil
}
