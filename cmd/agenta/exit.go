package main

import (
	"context"
	"errors"
	"slices"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
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
  130  interrupted by SIGINT or SIGTERM (eval run: or its shell ended)
When several apply (one variant failed, another timed out; a gate failed
and a report could not be written), stderr has a line for each, and the
exit code is the first of them in this order: 130, 2, 3, 4, 1, 5.`

// kind is what an error says about how the command ends, and the one fact
// its exit code is made of. An error gets its kind where it is made
// (withKind, usageErrorf, localError); one from the SDK or evals gets it
// from sdkKind, at the boundary (classify); one of no kind is cobra's, from
// parsing the command line. What the error says is its message's, apart.
type kind int

const (
	kindUsage            kind = iota + 1 // a bad flag, argument or setting, an invalid gate, a wrong id
	kindGateFailed                       // a gate failed
	kindEvaluationFailed                 // an evaluation failed, or could only fail (a test set without a column it reads)
	kindService                          // the service answered an error, or could not be reached in time
	kindLocal                            // a failure on this machine, such as a report that cannot be written
	kindInterrupted                      // SIGINT or SIGTERM, or the shell that started the command ended
)

// code is a kind's exit code: the command's one exit-code switch.
func (k kind) code() int {
	switch k {
	case kindGateFailed:
		return exitGateFailed
	case kindEvaluationFailed:
		return exitEvalFailed
	case kindService:
		return exitService
	case kindLocal:
		return exitLocal
	case kindInterrupted:
		return exitInterrupted
	}
	return exitUsage // kindUsage
}

// exitCode is the exit code of the error a command ends with, nil's 0:
// run (root.go) ends with it.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	return kindOf(err).code()
}

// kindOf is the kind an error was given, the outermost if it has several;
// an error given none is cobra's, from parsing flags or arguments: a usage
// error.
func kindOf(err error) kind {
	var kinded *kindError
	if errors.As(err, &kinded) {
		return kinded.kind
	}
	return kindUsage
}

// kindOfExitCode is the kind of a command that ended with code (the
// background fake's): the kind whose code it is, or a local failure for a
// code of none, such as a process killed by a signal.
func kindOfExitCode(code int) kind {
	for _, k := range exitOrder {
		if k.code() == code {
			return k
		}
	}
	return kindLocal
}

// sdkKind is the kind of an error from the SDK or evals, read from their
// types and sentinels: the boundary where their errors enter the command.
// The cases are in order: the first that matches wins.
func sdkKind(err error) kind {
	var (
		gateErr *evals.GateError
		argErr  *agenta.ArgumentError
		pre     *agenta.PreflightError
	)
	switch {
	case errors.As(err, &pre) && pre.Report != nil && pre.Report.Has(models.PreflightNotFound):
		return kindUsage // a wrong id, found before anything was created
	case errors.As(err, &pre):
		// A test set without a column the app or an evaluator reads: the
		// mid-2024 service's run fails on it (EVALUATION_FAILED), and the
		// preflight makes every server's end the same, before any spend.
		return kindEvaluationFailed
	case errors.As(err, &gateErr), errors.Is(err, evals.ErrGateFailed):
		return kindGateFailed
	case errors.Is(err, agenta.ErrEvaluationFailed):
		return kindEvaluationFailed
	case errors.As(err, &argErr), errors.Is(err, agenta.ErrInvalidArgument):
		return kindUsage
	case errors.Is(err, context.Canceled) && !errors.Is(err, agenta.ErrAttemptTimeout) && !errors.Is(err, agenta.ErrAnswerCut):
		// The user's interrupt (SIGINT, SIGTERM). The SDK's own limits
		// cancel an attempt too: those are the service's failures.
		return kindInterrupted
	}
	// The server answered an error, or could not be reached in time.
	return kindService
}

// exitOrder ranks the kinds for a command that ends with several
// outcomes: the first that applies sets the exit code. An interruption
// comes first (the rest is unfinished), then a usage error (the command
// was wrong), then a failed evaluation (a verdict on the variant, which a
// rerun will not change), then a service error (no verdict: a rerun may
// give one), then a failed gate, and a local error last, so that a report
// that could not be written never hides the verdict.
var exitOrder = []kind{kindInterrupted, kindUsage, kindEvaluationFailed, kindService, kindGateFailed, kindLocal}

// worst returns the errors but one, in order, and that one: the error
// whose kind comes first in exitOrder (the earliest of those of that
// kind). nils are dropped, and so are repeats of one line.
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
	rank := func(err error) int { return slices.Index(exitOrder, kindOf(err)) }
	at := 0
	for i, err := range kept {
		if rank(err) < rank(kept[at]) {
			at = i
		}
	}
	return append(kept[:at:at], kept[at+1:]...), kept[at]
}
