// Command agenta runs and reads evaluations of the Agenta evaluation and
// variant service from a shell or a CI job, and serves the SDK's fake
// service (agentatest) for trying it out.
//
// Install it from a clone of the repository with
//
//	go install ./cmd/agenta
//
// (from the module's first release, go install
// github.com/agenta-go/agenta/cmd/agenta@latest will do) and run
// "agenta --help". Exit codes: 0 every gate holds, 1 a gate failed,
// 2 a usage error, 3 an evaluation failed, 4 a service or network error,
// 5 a local error (such as a report file that cannot be written).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// interruptGrace is how long the command may take to stop what it does
// (stop runs, write the reports) once interrupted, before it exits anyway.
const interruptGrace = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go afterInterrupt(ctx, stop, interruptGrace, func() {
		fmt.Fprintf(os.Stderr, "agenta: still running %s after the interrupt: exiting\n", interruptGrace)
		os.Exit(exitInterrupted)
	})
	code := run(ctx, os.Args[1:], systemStreams())
	stop()
	os.Exit(code)
}

// afterInterrupt waits for the first SIGINT or SIGTERM (ctx's end), then
// gives the signals back to their default, so that a second one ends the
// command at once, and calls exit if the command is still running grace
// later: nothing it waits on (a report's write, a server) keeps it alive.
func afterInterrupt(ctx context.Context, stop context.CancelFunc, grace time.Duration, exit func()) {
	<-ctx.Done()
	stop()
	time.Sleep(grace)
	exit()
}
