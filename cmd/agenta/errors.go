package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/internal/text"
)

// printErrorLines prints errors on w as run prints the one a command
// returns: one line each, scrubbed of the secrets.
func printErrorLines(w io.Writer, secrets []string, errs ...error) {
	known := text.NewSecrets(secrets...)
	for _, err := range errs {
		fmt.Fprintln(w, errorLine(errors.New(known.Text(err.Error(), -1))))
	}
}

// maxErrorLine bounds the error line printed on stderr: server messages can
// be long, and one line must stay readable.
const maxErrorLine = 1000

// The command's errors say two things, apart: what kind of failure they
// are (kindError, which sets the exit code: exit.go) and what a person
// reads (wordedError, when the error's own text is not enough).

// kindError is an error with its kind, given where it was made.
type kindError struct {
	kind kind
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }

// withKind gives err its kind; nil stays nil.
func withKind(err error, k kind) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: k, err: err}
}

// wordedError is an error with the message a person reads instead of its
// own: more said before it, or the SDK's error described for the command.
type wordedError struct {
	text string
	err  error
}

func (e *wordedError) Error() string { return e.text }
func (e *wordedError) Unwrap() error { return e.err }

// usageErrorf returns a usage error (exit 2) with a message: a mistake in
// how the command was run, which the message names.
func usageErrorf(format string, args ...any) error {
	return withKind(fmt.Errorf(format, args...), kindUsage)
}

// localError wraps a failure on this machine, not the server's, such as a
// file that cannot be written or a port the fake cannot listen on (exit 5).
func localError(err error) error {
	return withKind(err, kindLocal)
}

// childExit is the end of a command run as a child (agenta fake
// --background): its exit code, the kind of the command's error, and
// err its message.
func childExit(code int, err error) error {
	return withKind(err, kindOfExitCode(code))
}

// inContext puts context before a classified error's message, keeping
// what it wraps, and so its kind.
func inContext(err error, context string) error {
	if err == nil {
		return nil
	}
	return &wordedError{text: "agenta: " + context + ": " + sdkText(err), err: err}
}

// classify is the boundary where an error from the SDK or evals enters the
// command: it gets its kind (sdkKind) and the message a person reads
// (describe). An error that already has a kind (one the command built, or
// one already classified) is returned as it is. host is the server's host,
// named when it cannot be reached.
func classify(err error, host string) error {
	var kinded *kindError
	if err == nil || errors.As(err, &kinded) {
		return err
	}
	k := sdkKind(err)
	return withKind(describe(err, k, host), k)
}

// describe words an error of the SDK or evals of kind k for a person,
// keeping it wrapped.
func describe(err error, k kind, host string) error {
	var (
		gateErr *evals.GateError
		argErr  *agenta.ArgumentError
	)
	switch {
	case errors.As(err, &gateErr):
		return &wordedError{text: gateFailure(gateErr), err: err}
	case errors.As(err, &argErr) && argErr.Field != "":
		// The name on the wire, not the SDK's Go name (NewEvaluation.VariantIDs[1]).
		return &wordedError{text: fmt.Sprintf("invalid %s: %s", argErr.Field, argErr.Reason), err: err}
	case k == kindInterrupted:
		return &wordedError{text: "interrupted", err: err}
	case k == kindService:
		return &wordedError{text: describeServiceError(err, host).Error(), err: err}
	}
	return err
}

// describeServiceError rewrites the errors whose own text is not enough
// for a person: a refused connection names the host and what to check,
// a refused key says where the key comes from, an answer that is not the
// expected JSON says so without Go type names. An answer that broke off
// while being read (a timeout, a cut connection, a size limit) is a
// DecodeError too, but not one of bad JSON, so the syntax and type errors
// are what tell the two apart.
func describeServiceError(err error, host string) error {
	var (
		apiErr    *agenta.APIError
		decodeErr *agenta.DecodeError
		dnsErr    *net.DNSError
		netErr    net.Error
		opErr     *net.OpError
		waitErr   *agenta.WaitError
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &apiErr) && (errors.Is(err, agenta.ErrUnauthorized) || errors.Is(err, agenta.ErrForbidden)):
		return fmt.Errorf("%w (the key comes from AGENTA_API_KEY or --api-key-file)", err)
	case errors.As(err, &apiErr):
		return err
	case errors.As(err, &waitErr):
		return fmt.Errorf("%w; raise --timeout to wait longer", err)
	case errors.Is(err, agenta.ErrIdleTimeout):
		// The answer had begun, then stopped: not "no answer", and not
		// --timeout, which bounds the whole command.
		where := ""
		if errors.As(err, &decodeErr) {
			where = decodeErr.Method + " " + decodeErr.Path + ": "
		}
		return fmt.Errorf("agenta: %sthe answer from %s stalled: nothing arrived for %s, the longest silence the command waits out; the server or the network is stuck", where, host, idleTimeout)
	case errors.Is(err, agenta.ErrAnswerCut):
		return fmt.Errorf("agenta: the connection to %s broke in the middle of the answer: %s", host, sdkText(err))
	case errors.Is(err, context.DeadlineExceeded) && errors.As(err, &decodeErr):
		// The command's --timeout ended the call while the answer arrived.
		return fmt.Errorf("agenta: --timeout passed while the answer from %s was still arriving: %s", host, sdkText(err))
	case errors.Is(err, context.DeadlineExceeded):
		// The command's --timeout ended the call.
		return fmt.Errorf("agenta: no answer from %s within --timeout: %s", host, sdkText(err))
	case errors.Is(err, agenta.ErrAttemptTimeout), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("agenta: no answer from %s in time: %s", host, sdkText(err))
	case errors.As(err, &decodeErr) && (errors.As(err, &syntaxErr) || errors.As(err, &typeErr)):
		return fmt.Errorf("agenta: %s %s: the %d answer is not the JSON expected (at byte %d); is %s an Agenta server?",
			decodeErr.Method, decodeErr.Path, decodeErr.StatusCode, decodeErr.Offset, host)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("agenta: cannot connect to %s: connection refused; is the server running and AGENTA_HOST (or --host) right?", host)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("agenta: cannot find host %s: %s; check AGENTA_HOST (or --host)", host, dnsErr.Err)
	case errors.As(err, &opErr):
		return fmt.Errorf("agenta: cannot reach %s: %s", host, sdkText(err))
	}
	return err
}

// sdkText is an error's text without the "agenta: " the SDK starts it
// with, for a message that already starts so.
func sdkText(err error) string {
	return strings.TrimPrefix(err.Error(), "agenta: ")
}

// errorLine renders an error as the one line printed on stderr: its lines
// joined with "; ", the control characters and bidirectional overrides
// left escaped visibly (a terminal escape starts with one, an override
// makes a line read other than it is), and the line cut to maxErrorLine
// runes.
func errorLine(err error) string {
	var lines []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	msg := text.Line(strings.Join(lines, "; "), maxErrorLine)
	if !strings.HasPrefix(msg, "agenta: ") {
		msg = "agenta: " + msg
	}
	return msg
}
