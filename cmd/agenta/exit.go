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

// The exit codes, documented in the root command's help and the README.
const (
	exitOK          = 0   // done; every gate holds
	exitGateFailed  = 1   // a gate failed
	exitUsage       = 2   // a usage error: bad flag, argument or configuration
	exitEvalFailed  = 3   // an evaluation ended EVALUATION_FAILED (or AGGREGATION_FAILED)
	exitService     = 4   // the service answered an error, or could not be reached
	exitLocal       = 5   // a local error, such as a report file that cannot be written
	exitInterrupted = 130 // SIGINT or SIGTERM ended the command
)

// exitCodesHelp is the table of exit codes shown in --help.
const exitCodesHelp = `Exit codes:
  0    done; every gate holds
  1    a gate failed (agenta eval run --gate)
  2    usage error: a bad flag, argument or setting (the message says which)
  3    an evaluation failed (EVALUATION_FAILED or EVALUATION_AGGREGATION_FAILED)
  4    service or network error: the server answered an error, refused the
       key, or could not be reached in time
  5    local error, such as a report file that cannot be written
  130  interrupted by SIGINT or SIGTERM
When several apply (one variant failed, another timed out; a gate failed
and a report could not be written), stderr has a line for each, and the
exit code is the first of them in this order: 130, 2, 3, 4, 1, 5.`

// exitOrder ranks the exit codes for a command that ends with several
// outcomes: the first that applies is the exit code. An interruption
// comes first (the rest is unfinished), then a usage error (the command
// was wrong), then a failed evaluation (a verdict on the variant, which a
// rerun will not change), then a service error (no verdict: a rerun may
// give one), then a failed gate, and a local error last, so that a report
// that could not be written never hides the verdict.
var exitOrder = []int{exitInterrupted, exitUsage, exitEvalFailed, exitService, exitGateFailed, exitLocal}

// worst returns the errors but one, in order, and that one: the error
// whose exit code comes first in exitOrder (the earliest of those with
// that code). nils are dropped, and so are repeats of one line.
func worst(errs ...error) (others []error, first error) {
	var kept []error
	seen := map[string]bool{}
	for _, err := range errs {
		if err == nil || seen[err.Error()] {
			continue
		}
		seen[err.Error()] = true
		kept = append(kept, err)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	rank := func(err error) int {
		for i, code := range exitOrder {
			if exitCode(err) == code {
				return i
			}
		}
		return len(exitOrder)
	}
	at := 0
	for i, err := range kept {
		if rank(err) < rank(kept[at]) {
			at = i
		}
	}
	return append(kept[:at:at], kept[at+1:]...), kept[at]
}

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

// exitError is an error that knows the exit code it ends the command with.
// Every error a command returns is one; an error cobra returns while
// parsing flags or arguments is not, which is how run tells usage errors
// apart without reading their text.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf returns a usage error (exit 2) with a message.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// localError wraps a local failure, such as a file that cannot be written
// (exit 5).
func localError(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitLocal, err: err}
}

// classify gives an error from the SDK, evals or the command its exit code.
// host is the server's host, named when it cannot be reached.
func classify(err error, host string) error {
	var (
		exit    *exitError
		gateErr *evals.GateError
		argErr  *agenta.ArgumentError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		return err
	case errors.As(err, &gateErr):
		return &exitError{code: exitGateFailed, err: gateFailure(gateErr)}
	case errors.Is(err, evals.ErrGateFailed):
		return &exitError{code: exitGateFailed, err: err}
	case errors.Is(err, agenta.ErrEvaluationFailed):
		return &exitError{code: exitEvalFailed, err: err}
	case errors.As(err, &argErr) && argErr.Field != "":
		// The name on the wire, not the SDK's Go name (NewEvaluation.VariantIDs[1]).
		return &exitError{code: exitUsage, err: fmt.Errorf("invalid %s: %s", argErr.Field, argErr.Reason)}
	case errors.Is(err, agenta.ErrInvalidArgument):
		return &exitError{code: exitUsage, err: err}
	case errors.Is(err, context.Canceled) && !errors.Is(err, agenta.ErrAttemptTimeout) && !errors.Is(err, agenta.ErrAnswerCut):
		// The SDK's own limits cancel an attempt too: those are not the
		// user's interrupt.
		return &exitError{code: exitInterrupted, err: errors.New("interrupted")}
	}
	return &exitError{code: exitService, err: describeServiceError(err, host)}
}

// gateFailure says which gates failed, on one line.
func gateFailure(e *evals.GateError) error {
	parts := make([]string, len(e.Failed))
	for i, r := range e.Failed {
		parts[i] = r.String()
	}
	return fmt.Errorf("%d of %d gates failed: %s", len(e.Failed), e.Total, strings.Join(parts, "; "))
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

// exitCode returns the exit code of an error that went through classify.
func exitCode(err error) int {
	var exit *exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	if err != nil {
		return exitUsage
	}
	return exitOK
}
