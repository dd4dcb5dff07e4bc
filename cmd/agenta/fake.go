package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/internal/text"
	"github.com/spf13/cobra"
)

// FakeOptions are the inputs of agenta fake.
type FakeOptions struct {
	IO      *IOStreams
	Factory *Factory
	// Addr is where to listen, HOST:PORT; port 0 picks a free one.
	Addr string
	// Pace is the fake worker's pace; 0 keeps the fake's default.
	Pace time.Duration
	// Background starts the fake as a process of its own and returns once
	// it answers, its settings printed.
	Background bool

	// child says this process is the one --background started: it serves
	// and writes its settings, or why it could not start, on stdout only.
	child bool
	// exportKey says the fake made up its API key, to export it.
	exportKey bool
}

// shutdownGrace bounds how long agenta fake waits for requests in flight
// after a signal, so that it exits within a second.
const shutdownGrace = 500 * time.Millisecond

// NewCmdFake returns agenta fake, which serves agentatest with its demo data.
func NewCmdFake(f *Factory, runF func(*FakeOptions) error) *cobra.Command {
	opts := &FakeOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "fake [--addr HOST:PORT] [--pace DURATION]",
		Short: "Serve a fake Agenta service with demo data",
		Long: `Serve the SDK's fake service (agentatest) with its demo data: the app
"capitals", two variants, a test set of eight countries and three evaluator
configs. Evaluations really run, in the background, at the fake's default
pace; --pace sets the time the worker takes to pick up an evaluation and to
make each step: a row's app call, then, after every call, a scenario's
write.

Once it answers, it prints the settings the other commands read, as export
lines on stdout: AGENTA_HOST (ending in /api), AGENTA_APP_ID,
AGENTA_TESTSET_ID, AGENTA_VARIANT_IDS (comma-separated, the variant in
production first), AGENTA_EVALUATOR_IDS (comma-separated), AGENTA_BASE_ID
(the production variant's base, to fork from),
AGENTA_PRODUCTION_VARIANT_ID and AGENTA_FAKE_PID (the fake's process).
Then it serves until SIGINT or SIGTERM, and exits 0.

With --background, it starts the fake as a process of its own, on a free
port unless --addr says otherwise, prints the settings once the fake
answers, and returns: 'agenta fake stop' (or kill "$AGENTA_FAKE_PID") ends
it. In a script under set -euo pipefail:

  fake_env=$(agenta fake --background)  # the job fails if the fake cannot start
  eval "$fake_env"
  trap 'agenta fake stop' EXIT          # on every exit, a failure half-way included

With --api-key-file, the fake requires that key, and answers 401 without it.

With --generation 2026 (or AGENTA_API_GENERATION=2026), it serves today's
API, as Agenta v0.113 does, with the real test kit's demo data: the app
"capitals" (the stand-in app), a test set of five countries, and the
evaluators "Exact match", "Edit distance" and "Terse answer", named as on
the 2024 fake. It exports the same variables, each id meaning what its name
says on the 2024 API (AGENTA_BASE_ID is the application, which forks
from its default variant, the one in production), and AGENTA_API_KEY too:
every 2026 route wants a key. The commands detect the generation, so a
script runs unchanged on either. --generation both serves both APIs,
the 2024 demo beside the 2026 one: it exports the 2026 ids, with
AGENTA_API_GENERATION=2026; a command given --generation 2024 reads the
2024 demo, whose ids are the 2024 fake's.`,
		Example: `  fake_env=$(agenta fake --background) && eval "$fake_env"
  agenta variant get "$AGENTA_PRODUCTION_VARIANT_ID"
  agenta fake stop`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Pace < 0 {
				return usageErrorf("--pace %s: want a positive duration, or 0 for the fake's default", opts.Pace)
			}
			if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
				return usageErrorf("--addr %q: want HOST:PORT, such as 127.0.0.1:8080", text.Clip(opts.Addr, 100))
			}
			if opts.Background && !cmd.Flags().Changed("addr") {
				// A script reads the address from the exports: a free port
				// never collides with another job's fake.
				opts.Addr = "127.0.0.1:0"
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.Background {
				return startBackgroundFake(cmd.Context(), opts)
			}
			return serveFake(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "listen on this HOST:PORT (port 0 picks a free port, the default with --background)")
	cmd.Flags().DurationVar(&opts.Pace, "pace", 0, "the fake worker's pace per evaluation and per step, a row's call or a scenario's write (0: the fake's default)")
	cmd.Flags().BoolVar(&opts.Background, "background", false, "start the fake in a process of its own, print its settings once it answers, and return")
	cmd.Flags().BoolVar(&opts.child, backgroundChildFlag, false, "")
	_ = cmd.Flags().MarkHidden(backgroundChildFlag)
	cmd.AddCommand(NewCmdFakeStop(opts.Factory, nil))
	return cmd
}

// serveFake serves the fake until ctx ends. agentatest listens on a random
// port of 127.0.0.1; a reverse proxy on --addr puts it where the user asked.
// The process --background started says why it could not start on stdout,
// which its parent reads, as well as on stderr.
// fakeWriteTimeout bounds how long agenta fake's own server writes one
// answer, from its first byte: the fake's own write timeout
// (agentatest.WithWriteTimeout's default), so that a client that stops
// reading cannot hold the proxy's connection for ever. (The time a body
// takes to arrive is the fake's ReadTimeout's.) Tests shorten it.
var fakeWriteTimeout = time.Minute

// timedAnswer gives an answer fakeWriteTimeout to be written, from its
// first byte.
type timedAnswer struct {
	http.ResponseWriter
	started bool
}

func (a *timedAnswer) start() {
	if !a.started {
		a.started = true
		_ = http.NewResponseController(a.ResponseWriter).SetWriteDeadline(time.Now().Add(fakeWriteTimeout))
	}
}

func (a *timedAnswer) WriteHeader(code int) { a.start(); a.ResponseWriter.WriteHeader(code) }

func (a *timedAnswer) Write(p []byte) (int, error) { a.start(); return a.ResponseWriter.Write(p) }

// Unwrap lets the proxy flush through it.
func (a *timedAnswer) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// timed serves h with each answer's write deadline (see timedAnswer),
// cleared once it is written, for the next request on the connection.
func timed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer http.NewResponseController(w).SetWriteDeadline(time.Time{})
		h.ServeHTTP(&timedAnswer{ResponseWriter: w}, r)
	})
}

func serveFake(ctx context.Context, opts *FakeOptions) error {
	err := serve(ctx, opts)
	if err != nil && opts.child {
		fmt.Fprintln(opts.IO.Out, errorLine(err))
	}
	return err
}

func serve(ctx context.Context, opts *FakeOptions) error {
	var serverOpts []agentatest.Option
	if opts.Pace > 0 {
		serverOpts = append(serverOpts, agentatest.WithEvaluationPace(opts.Pace))
	}
	var key string
	if opts.Factory.APIKeyFile != "" {
		var err error
		if key, err = opts.Factory.keyFromFile(); err != nil {
			return err
		}
		serverOpts = append(serverOpts, agentatest.WithAPIKey(key))
	}
	generation, err := opts.generation()
	if err != nil {
		return err
	}
	if generation != agentatest.Generation2024 {
		serverOpts = append(serverOpts, agentatest.WithGeneration(generation))
		if key == "" {
			// Every 2026 route wants a key, as a real server's do.
			key = "fake-" + rand.Text()
			serverOpts = append(serverOpts, agentatest.WithAPIKey(key))
			opts.exportKey = true
		}
	}
	listener, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return localError(fmt.Errorf("fake: cannot listen on %s: %w", opts.Addr, errorReason(err)))
	}
	srv := agentatest.NewServer(serverOpts...)
	defer srv.Close()
	// agenta fake stop stops only a process that marked itself so.
	unmark, err := markFake()
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "agenta fake: cannot write its marker in %s (agenta fake stop will refuse it): %v\n", text.Clip(markerDir(), 200), errorReason(err))
	}
	defer unmark()
	exports := seedFake(srv, generation)

	inner, err := url.Parse(srv.URL())
	if err != nil {
		return localError(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = inner.Scheme, inner.Host
		},
	}
	// The fake's limits hold behind the proxy too: slow headers, idle
	// connections and a reader that stops are cut here, a slow or large
	// body by the fake itself, which answers 408 or 413 through the proxy.
	limits := srv.Limits()
	httpServer := &http.Server{Handler: timed(proxy), ReadHeaderTimeout: limits.ReadHeaderTimeout,
		IdleTimeout: limits.IdleTimeout, MaxHeaderBytes: limits.HeaderBytes}
	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(listener) }()

	host := "http://" + listener.Addr().String() + "/api"
	// The settings go out once the fake answers through --addr, as a
	// command that reads them will call it.
	if err := checkAnswers(ctx, host, key, exports.production, generation != agentatest.Generation2024); err != nil {
		httpServer.Close()
		return localError(fmt.Errorf("fake: no answer on %s: %w", host, err))
	}
	pairs := [][2]string{{"AGENTA_HOST", host}}
	if opts.exportKey {
		pairs = append(pairs, [2]string{"AGENTA_API_KEY", key})
	}
	if generation == agentatest.GenerationBoth {
		// Its 2024 routes answer too: its clients are told which to use.
		pairs = append(pairs, [2]string{"AGENTA_API_GENERATION", "2026"})
	}
	pairs = append(pairs,
		[2]string{"AGENTA_APP_ID", exports.app},
		[2]string{"AGENTA_TESTSET_ID", exports.testset},
		[2]string{"AGENTA_VARIANT_IDS", strings.Join(exports.variants, ",")},
		[2]string{"AGENTA_EVALUATOR_IDS", strings.Join(exports.evaluators, ",")},
		[2]string{"AGENTA_BASE_ID", exports.base},
		[2]string{"AGENTA_PRODUCTION_VARIANT_ID", exports.production},
		[2]string{"AGENTA_FAKE_PID", strconv.Itoa(os.Getpid())},
	)
	writeExports(opts.IO.Out, pairs)
	// Close stdout once the settings are out, so that a shell's
	// eval "$(agenta fake &)", or the process that --background ran, reads
	// them and goes on while the fake serves.
	if err := opts.IO.CloseOut(); err != nil {
		return localError(fmt.Errorf("fake: %w", err))
	}
	if !opts.child {
		fmt.Fprintf(opts.IO.ErrOut, "agenta fake: serving the demo app %q on %s%s; stop with Ctrl-C or 'agenta fake stop'\n", "capitals", host, exports.api)
	}

	select {
	case err := <-served:
		return localError(fmt.Errorf("fake: %w", err))
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := httpServer.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return localError(fmt.Errorf("fake: %w", err))
	}
	httpServer.Close()
	return nil
}

// fakeExports are the ids agenta fake prints, whichever API it serves.
type fakeExports struct {
	app, testset, base, production string
	variants, evaluators           []string
	api                            string // " (the 2026 API)", for the banner
}

// seedFake loads the demo data of the API served. The 2026 demo is the
// real test kit's (SeedDemo2026), with the 2024 demo's evaluators by name
// beside its own, so that a script gating on "Exact match" runs unchanged
// on either: each id exported means on the 2026 API what its name says on
// the 2024 one (an application is its own base, the variant in production
// is the application's default variant).
func seedFake(srv *agentatest.Server, generation agentatest.Generation) fakeExports {
	if generation == agentatest.Generation2024 {
		demo := agentatest.SeedDemo(srv)
		return fakeExports{app: demo.AppID, testset: demo.TestsetID, base: demo.BaseID, production: demo.VariantID,
			variants: demo.VariantIDs(), evaluators: demo.EvaluatorConfigIDs()}
	}
	if generation == agentatest.GenerationBoth {
		agentatest.SeedDemo(srv) // for clients told to speak 2024
	}
	demo := agentatest.SeedDemo2026(srv)
	srv.Deploy2026(demo.RevisionID, "production")
	answer := map[string]any{"correct_answer_key": "correct_answer"}
	exports := fakeExports{app: demo.ApplicationID, testset: demo.TestsetID, base: demo.ApplicationID,
		production: demo.VariantID, variants: []string{demo.VariantID}, api: " (the 2026 API)"}
	for _, e := range []agentatest.Evaluator2026{
		{Slug: "exact-match", Name: "Exact match", URI: "agenta:builtin:auto_exact_match:v0", Parameters: answer},
		{Slug: "edit-distance", Name: "Edit distance", URI: "agenta:builtin:auto_levenshtein_distance:v0", Parameters: answer},
		{Slug: "terse-answer", Name: "Terse answer", URI: "agenta:builtin:auto_regex_test:v0",
			Parameters: map[string]any{"regex_pattern": `^[^.!?]+$`, "regex_should_match": true}},
	} {
		exports.evaluators = append(exports.evaluators, srv.AddEvaluator2026(e).EvaluatorID)
	}
	if generation == agentatest.GenerationBoth {
		exports.api = " (both APIs; the ids exported are the 2026 ones)"
	}
	return exports
}

// generation is the API the fake serves: --generation, else
// AGENTA_API_GENERATION, else 2024; auto is 2024 too.
func (o *FakeOptions) generation() (agentatest.Generation, error) {
	value, from := o.Factory.Generation, "--generation"
	if value == "" {
		value, from = strings.TrimSpace(o.Factory.getenv("AGENTA_API_GENERATION")), "AGENTA_API_GENERATION"
	}
	switch value {
	case "", "auto", "2024":
		return agentatest.Generation2024, nil
	case "2026":
		return agentatest.Generation2026, nil
	case "both":
		return agentatest.GenerationBoth, nil
	}
	return 0, usageErrorf("%s %q: the fake serves 2024, 2026 or both", from, text.Clip(value, 100))
}

// checkAnswers asks the fake at host for a variant, through the same
// address and key a command will use, within a few seconds.
func checkAnswers(ctx context.Context, host, key, variantID string, gen2026 bool) error {
	opts := []agenta.Option{agenta.WithRetryWait(20*time.Millisecond, 200*time.Millisecond)}
	if key != "" {
		opts = append(opts, agenta.WithAPIKey(key))
	}
	if gen2026 {
		opts = append(opts, agenta.WithGeneration(agenta.Generation2026))
	}
	client, err := agenta.NewClient(host, opts...)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = client.GetVariant(ctx, variantID)
	return err
}

// writeExports writes NAME=VALUE pairs as shell export lines, quoting a
// value that holds anything but safe characters.
func writeExports(w io.Writer, pairs [][2]string) {
	for _, p := range pairs {
		fmt.Fprintf(w, "export %s=%s\n", p[0], shellQuote(p[1]))
	}
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/@%+=", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
