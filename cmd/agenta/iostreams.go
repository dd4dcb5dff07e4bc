package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams is where a command reads and writes, and whether each end is a
// terminal: one value, so that every command decides the same way between a
// live progress line and plain lines, and tests can swap the streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY, errTTY bool
}

// systemStreams returns the process's standard streams, asking the
// operating system whether each is a terminal.
func systemStreams() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		outTTY: term.IsTerminal(int(os.Stdout.Fd())),
		errTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// IsStdoutTTY reports whether standard output is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether standard error is a terminal, where progress
// is one line redrawn in place.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// CloseOut closes standard output when it can be closed, for a command
// that has said all it will say there but goes on running.
func (s *IOStreams) CloseOut() error {
	if c, ok := s.Out.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
