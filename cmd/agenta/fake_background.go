package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agenta-go/agenta/internal/text"
	"github.com/spf13/cobra"
)

// backgroundChildFlag marks the process that agenta fake --background
// starts; it is hidden from --help.
const backgroundChildFlag = "background-child"

// backgroundStartTimeout bounds how long agenta fake --background waits
// for the fake to answer.
const backgroundStartTimeout = 30 * time.Second

// stopTimeout bounds how long agenta fake stop waits for the fake to end
// after SIGTERM; the fake itself ends within a second.
const stopTimeout = 10 * time.Second

// startBackgroundFake runs this program again as a fake in a process of its
// own, detached from the terminal, relays the settings it prints once it
// answers, and returns. When the fake cannot start, its reason and exit
// code are the command's.
func startBackgroundFake(ctx context.Context, opts *FakeOptions) error {
	exe, err := os.Executable()
	if err != nil {
		return localError(fmt.Errorf("fake: cannot find this program to run it in the background: %w", err))
	}
	args := []string{"fake", "--addr", opts.Addr, "--" + backgroundChildFlag}
	if opts.Pace > 0 {
		args = append(args, "--pace", opts.Pace.String())
	}
	if g := opts.Factory.Generation; g != "" {
		args = append(args, "--generation", g)
	}
	if file := opts.Factory.APIKeyFile; file != "" {
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
		args = append(args, "--api-key-file", file)
	}
	child := exec.Command(exe, args...)
	child.Args[0] = os.Args[0] // the name the program was run as
	// stdin and stderr are the null device: the fake outlives this command
	// and must hold none of its streams. It writes its settings, or why it
	// could not start, on stdout, a pipe that it closes when it has.
	out, err := child.StdoutPipe()
	if err != nil {
		return localError(fmt.Errorf("fake: %w", err))
	}
	detach(child)
	if err := child.Start(); err != nil {
		return localError(fmt.Errorf("fake: cannot start it in the background: %w", err))
	}
	lines, readErr := readLines(ctx, out, backgroundStartTimeout)
	var exports, reasons []string
	for _, line := range lines {
		if strings.HasPrefix(line, "export ") {
			exports = append(exports, line)
		} else if strings.TrimSpace(line) != "" {
			reasons = append(reasons, line)
		}
	}
	if readErr == nil && len(reasons) == 0 && len(exports) > 0 {
		// It serves on: not waited for, it is the init process's to reap.
		_ = child.Process.Release()
		for _, line := range exports {
			fmt.Fprintln(opts.IO.Out, line)
		}
		fmt.Fprintf(opts.IO.ErrOut, "agenta fake: serving the demo app %q on %s in the background, process %s; stop it with 'agenta fake stop'\n",
			"capitals", exportedValue(exports, "AGENTA_HOST"), exportedValue(exports, "AGENTA_FAKE_PID"))
		return nil
	}
	if readErr != nil {
		// It did not say it answers in time (or ctx ended): leave nothing behind.
		_ = child.Process.Kill()
	}
	waitErr := child.Wait()
	reason := strings.TrimPrefix(strings.Join(reasons, "; "), "agenta: ")
	var exitErr *exec.ExitError
	switch {
	case readErr != nil:
		return localError(fmt.Errorf("fake: %w", readErr))
	case errors.As(waitErr, &exitErr) && reason != "":
		return childExit(exitErr.ExitCode(), errors.New(reason))
	case reason != "":
		return localError(errors.New(reason))
	}
	return localError(fmt.Errorf("fake: the background fake ended before it answered (%v)", waitErr))
}

// readLines reads r to its end, or until timeout or ctx ends, and returns
// its lines.
func readLines(ctx context.Context, r io.ReadCloser, timeout time.Duration) ([]string, error) {
	type result struct {
		lines []string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		var lines []string
		scanner := bufio.NewScanner(r)
		for scanner.Scan() {
			lines = append(lines, scanner.Text())
		}
		done <- result{lines, scanner.Err()}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		return res.lines, res.err
	case <-timer.C:
		r.Close()
		return nil, fmt.Errorf("the background fake did not answer within %s", timeout)
	case <-ctx.Done():
		r.Close()
		return nil, ctx.Err()
	}
}

// exportedValue returns the value of NAME in export lines, as written.
func exportedValue(exports []string, name string) string {
	for _, line := range exports {
		if value, ok := strings.CutPrefix(line, "export "+name+"="); ok {
			return value
		}
	}
	return "?"
}

// FakeStopOptions are the inputs of agenta fake stop.
type FakeStopOptions struct {
	IO      *IOStreams
	Factory *Factory
	// PID is the fake's process, from the argument or AGENTA_FAKE_PID.
	PID int
}

// NewCmdFakeStop returns agenta fake stop, which ends a fake that agenta
// fake started, by its process id.
func NewCmdFakeStop(f *Factory, runF func(*FakeStopOptions) error) *cobra.Command {
	opts := &FakeStopOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "stop [PID]",
		Short: "Stop a fake started with 'agenta fake --background'",
		Long: `Stop the fake that 'agenta fake' started: the process PID, by default the
one in AGENTA_FAKE_PID, which 'agenta fake --background' exports. It sends
SIGTERM, waits until the fake has ended, and exits 0; also when the fake has
ended already, so that a script's trap may run it on every exit. It refuses
a process that is not an agenta fake: a fake marks itself with a file of its
own, holding its process id and start time, in $TMPDIR/agenta-fake-UID.`,
		Example: `  trap 'agenta fake stop' EXIT`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			given, from := f.getenv("AGENTA_FAKE_PID"), "AGENTA_FAKE_PID"
			if len(args) == 1 {
				given, from = args[0], "PID"
			}
			if strings.TrimSpace(given) == "" {
				return usageErrorf("no fake to stop: give its PID, or set AGENTA_FAKE_PID, which 'agenta fake --background' exports")
			}
			pid, err := strconv.Atoi(strings.TrimSpace(given))
			if err != nil || pid <= 1 {
				return usageErrorf("%s %q is not the process id of a fake", from, text.Clip(given, 50))
			}
			opts.PID = pid
			if runF != nil {
				return runF(opts)
			}
			return stopFake(cmd.Context(), opts)
		},
	}
	return cmd
}

// stopFake ends the fake opts.PID and waits until it has ended.
func stopFake(ctx context.Context, opts *FakeStopOptions) error {
	state, err := inspectProcess(opts.PID)
	switch {
	case err != nil:
		return localError(fmt.Errorf("fake stop: process %d: %w", opts.PID, err))
	case state == processGone:
		fmt.Fprintf(opts.IO.ErrOut, "agenta fake stop: process %d has ended already\n", opts.PID)
		return nil
	case state == processOther:
		return usageErrorf("fake stop: process %d is not an agenta fake; not stopping it (is AGENTA_FAKE_PID stale?)", opts.PID)
	}
	if err := terminate(opts.PID); err != nil {
		return localError(fmt.Errorf("fake stop: process %d: %w", opts.PID, err))
	}
	deadline := time.Now().Add(stopTimeout)
	for {
		if state, err := inspectProcess(opts.PID); err == nil && state == processGone {
			fmt.Fprintf(opts.IO.ErrOut, "agenta fake stop: stopped process %d\n", opts.PID)
			return nil
		}
		if time.Now().After(deadline) {
			_ = kill(opts.PID)
			return localError(fmt.Errorf("fake stop: process %d did not end within %s of SIGTERM; killed it", opts.PID, stopTimeout))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The states of a process that agenta fake stop tells apart.
type processState int

const (
	processGone  processState = iota // no such process, or a zombie
	processFake                      // an agenta fake, or one the system cannot say
	processOther                     // another program
)
