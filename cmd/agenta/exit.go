package main

import (
	"context"
	"errors"

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

// exitCode is the command's one exit-code switch: every error a command
// can end with gets its code here, and nowhere else. The command's own
// errors say what they are by their type (usageError, localFailure,
// childExit); an error from the SDK or evals, once classify has described
// it (sdkError), by the SDK's types and sentinels. An error of no kind
// known here is cobra's, from parsing the command line: a usage error.
// The cases are in order: the first that matches wins. A failing --gate,
// for one, is parsed in eval.go (check), judged in evalrun.go (judge, by
// evals' Report.Check), described in errors.go (classify), and gets its 1
// here, from the *evals.GateError itself.
func exitCode(err error) int {
	var (
		child   *childExit
		usage   *usageError
		local   *localFailure
		sdk     *sdkError
		gateErr *evals.GateError
		argErr  *agenta.ArgumentError
		pre     *agenta.PreflightError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &child):
		return child.code
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &local):
		return exitLocal
	case !errors.As(err, &sdk):
		return exitUsage // cobra's, from parsing flags or arguments
	case errors.As(err, &pre) && pre.Report != nil && pre.Report.Has(models.PreflightNotFound):
		return exitUsage // a wrong id, found before anything was created
	case errors.As(err, &pre):
		// A test set without a column the app or an evaluator reads: the
		// mid-2024 service's run fails on it (EVALUATION_FAILED), and the
		// preflight makes every server's end the same, before any spend.
		return exitEvalFailed
	case errors.As(err, &gateErr), errors.Is(err, evals.ErrGateFailed):
		return exitGateFailed
	case errors.Is(err, agenta.ErrEvaluationFailed):
		return exitEvalFailed
	case errors.As(err, &argErr), errors.Is(err, agenta.ErrInvalidArgument):
		return exitUsage
	case errors.Is(err, context.Canceled) && !errors.Is(err, agenta.ErrAttemptTimeout) && !errors.Is(err, agenta.ErrAnswerCut):
		// The user's interrupt (SIGINT, SIGTERM). The SDK's own limits
		// cancel an attempt too: those are the service's failures.
		return exitInterrupted
	}
	// The server answered an error, or could not be reached in time.
	return exitService
}
