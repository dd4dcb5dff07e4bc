package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/agenta-go/agenta/agentatest"
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

It prints the settings the other commands read, as export lines on stdout:
AGENTA_HOST (ending in /api), AGENTA_APP_ID, AGENTA_TESTSET_ID,
AGENTA_VARIANT_IDS (comma-separated, the variant in production first) and
AGENTA_EVALUATOR_IDS (comma-separated). Then it serves until SIGINT or
SIGTERM, and exits 0.

With --api-key-file, the fake requires that key, and answers 401 without it.`,
		Example: `  eval "$(agenta fake --addr 127.0.0.1:8080 &)"
  agenta variant get "${AGENTA_VARIANT_IDS%%,*}"`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Pace < 0 {
				return usageErrorf("--pace %s: want a positive duration, or 0 for the fake's default", opts.Pace)
			}
			if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
				return usageErrorf("--addr %q: want HOST:PORT, such as 127.0.0.1:8080", clipText(opts.Addr, 100))
			}
			if runF != nil {
				return runF(opts)
			}
			return serveFake(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "listen on this HOST:PORT (port 0 picks a free port)")
	cmd.Flags().DurationVar(&opts.Pace, "pace", 0, "the fake worker's pace per evaluation and per step, a row's call or a scenario's write (0: the fake's default)")
	return cmd
}

// serveFake serves the fake until ctx ends. agentatest listens on a random
// port of 127.0.0.1; a reverse proxy on --addr puts it where the user asked.
func serveFake(ctx context.Context, opts *FakeOptions) error {
	var serverOpts []agentatest.Option
	if opts.Pace > 0 {
		serverOpts = append(serverOpts, agentatest.WithEvaluationPace(opts.Pace))
	}
	if opts.Factory.APIKeyFile != "" {
		key, err := opts.Factory.keyFromFile()
		if err != nil {
			return err
		}
		serverOpts = append(serverOpts, agentatest.WithAPIKey(key))
	}
	listener, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return localError(fmt.Errorf("fake: cannot listen on %s: %w", opts.Addr, errorReason(err)))
	}
	srv := agentatest.NewServer(serverOpts...)
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)

	inner, err := url.Parse(srv.URL())
	if err != nil {
		return localError(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = inner.Scheme, inner.Host
		},
	}
	httpServer := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(listener) }()

	host := "http://" + listener.Addr().String() + "/api"
	writeExports(opts.IO.Out, [][2]string{
		{"AGENTA_HOST", host},
		{"AGENTA_APP_ID", demo.AppID},
		{"AGENTA_TESTSET_ID", demo.TestsetID},
		{"AGENTA_VARIANT_IDS", strings.Join(demo.VariantIDs(), ",")},
		{"AGENTA_EVALUATOR_IDS", strings.Join(demo.EvaluatorConfigIDs(), ",")},
	})
	// Close stdout once the settings are out, so that a shell's
	// eval "$(agenta fake &)" reads them and goes on while the fake serves.
	if err := opts.IO.CloseOut(); err != nil {
		return localError(fmt.Errorf("fake: %w", err))
	}
	fmt.Fprintf(opts.IO.ErrOut, "agenta fake: serving the demo app %q on %s; stop with Ctrl-C\n", "capitals", host)

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
