package main

import (
	"io"
	"os"
	"strconv"
	"strings"
)

// IOStreams is where a command reads and writes, and whether each end is a
// terminal: one value, so that every command decides the same way between a
// live progress line and plain lines, and tests can swap the streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY, errTTY bool
	// errWidth is the terminal's width in columns; 0 means 80.
	errWidth int
}

// systemStreams returns the process's standard streams, asking the
// operating system whether each is a terminal.
func systemStreams() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		outTTY: isTerminal(os.Stdout),
		errTTY: isTerminal(os.Stderr),
		// The shell's COLUMNS when it exports it; asking the terminal
		// would need a dependency or code per system.
		errWidth: columns(os.Getenv("COLUMNS")),
	}
}

// columns reads a terminal width; 0 (80) when it is not a sensible one.
func columns(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 20 || n > 1000 {
		return 0
	}
	return n
}

// errorWidth is the width of the terminal on standard error, in columns.
func (s *IOStreams) errorWidth() int {
	if s.errWidth == 0 {
		return 80
	}
	return s.errWidth
}

// isTerminal reports whether f is a character device other than the null
// device: a terminal, for what the command does with the answer (a live
// progress line, a table). It needs no dependency, unlike x/term, whose
// current versions would raise the whole module's go line to 1.26; the
// rare other character device (a serial line) only gets a table.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
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
