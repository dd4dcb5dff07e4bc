package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
)

// guardedWriter is where eval run prints its tables: the first write that
// fails (a reader that went away, as head does; a full disk) stops the
// printing, never the run, whose reports and verdict still follow. The
// failure is kept for the end: a closed pipe is the reader's choice and
// is not reported; any other failure is a local error.
type guardedWriter struct {
	w   io.Writer
	err error
}

func (g *guardedWriter) Write(p []byte) (int, error) {
	if g.err == nil {
		if _, err := g.w.Write(p); err != nil {
			g.err = err
		}
	}
	return len(p), nil
}

// flush writes out what the writer below holds back (the scrubbing of
// standard output holds the end of what it was given), even after a
// failure, so that nothing is left to fail later.
func (g *guardedWriter) flush() {
	if f, ok := g.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil && g.err == nil {
			g.err = err
		}
	}
}

// problem returns the failure to report, naming what was written to:
// nil when there was none, or when the reader closed the pipe.
func (g *guardedWriter) problem(what string) error {
	if g.err == nil || errors.Is(g.err, syscall.EPIPE) {
		return nil
	}
	return localError(fmt.Errorf("cannot write %s: %w", what, errorReason(g.err)))
}

// lockedWriter serialises the writes of the goroutines that share it,
// such as the progress displays of variants waited on together.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
