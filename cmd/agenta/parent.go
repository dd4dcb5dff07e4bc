package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// A CI service that cancels a job may signal only the shell of its step.
// The shell runs its EXIT trap (which may stop the fake the command talks
// to) and ends; the command it was running gets no signal, and would wait
// on its server until --timeout with no one left to read its verdict. It
// can still see its parent go: the system gives it another (init, or a
// subreaper), so its parent process id changes.

// startParent is the process that started the command, read as it starts.
var startParent = os.Getppid()

// parentPoll is how often the command looks for its parent.
const parentPoll = 250 * time.Millisecond

// errParentEnded is the cause of a context that untilParentEnds cancelled.
var errParentEnded = errors.New("the process that started this command has ended")

// untilParentEnds returns ctx, cancelled with the cause errParentEnded once
// the process that started the command has ended, as an interrupt would
// cancel it: eval run then writes its reports and exits 130. A command
// started under nohup (SIGHUP ignored) is meant to outlive its shell, and
// so is one that leads a process group of its own: put there by setsid
// (such as "setsid agenta eval run ... &" in a script that then ends) or
// as a job of an interactive shell, which hangs its jobs up itself when it
// must. One without a parent to watch (started by init, or on a system
// where a parent's end leaves the id as it was, such as Windows) has none
// to lose. For those, ctx is only made cancellable.
func untilParentEnds(ctx context.Context) (context.Context, context.CancelFunc) {
	if startParent <= 1 || signal.Ignored(syscall.SIGHUP) || leadsGroup() {
		return context.WithCancel(ctx)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		ticker := time.NewTicker(parentPoll)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				if os.Getppid() != startParent {
					cancel(fmt.Errorf("%w (process %d)", errParentEnded, startParent))
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}
