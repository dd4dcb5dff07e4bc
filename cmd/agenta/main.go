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
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], systemStreams())
	stop()
	os.Exit(code)
}
