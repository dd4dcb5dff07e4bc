package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/models"
	"github.com/spf13/cobra"
)

// TestWorst: of several outcomes, the exit code is the first in
// exitOrder, the earliest error with it is the one returned, and the
// others keep their order, without repeats.
func TestWorst(t *testing.T) {
	sdk := func(text string, err error) error { return withKind(&wordedError{text: text, err: err}, sdkKind(err)) }
	gate, local, failed, service, usage, interrupted := sdk("gate", evals.ErrGateFailed), localError(errors.New("local")),
		sdk("failed", agenta.ErrEvaluationFailed), sdk("service", errors.New("500")), usageErrorf("usage"), sdk("interrupted", context.Canceled)
	tests := []struct {
		errs   []error
		first  string
		others string
	}{
		{nil, "<nil>", "[]"},
		{[]error{nil, nil}, "<nil>", "[]"},
		{[]error{local, gate}, "gate", "[local]"},
		{[]error{gate, local}, "gate", "[local]"},
		{[]error{local, nil}, "local", "[]"},
		{[]error{service, failed, gate}, "failed", "[service gate]"},
		{[]error{failed, usage}, "usage", "[failed]"},
		{[]error{usage, interrupted, service}, "interrupted", "[usage service]"},
		{[]error{service, sdk("service 2", errors.New("502")), service}, "service", "[service 2]"},
	}
	for _, tt := range tests {
		others, first := worst(tt.errs...)
		if fmt.Sprint(first) != tt.first || fmt.Sprint(others) != tt.others {
			t.Errorf("worst(%v) = %v, %v; want %s, %s", tt.errs, others, first, tt.others, tt.first)
		}
	}
}

// TestExitCode is the table of exit codes: every kind of error a command
// can end with, built as the command meets it (an error from the SDK or
// evals goes through classify, as runWithClient and eval run do), and the
// code exitCode gives it. The codes are those of --help and docs/the-command.md.
func TestExitCode(t *testing.T) {
	api := func(status int, message string) error {
		return &agenta.APIError{StatusCode: status, Method: "GET", Path: "/api/evaluations/e1", Message: message}
	}
	sdk := func(err error) error { return classify(err, "127.0.0.1:1") }
	waitErr := func(err error) error {
		return &agenta.WaitError{EvaluationID: "e1", Status: "EVALUATION_STARTED", Err: err}
	}
	failed := &agenta.EvaluationFailedError{EvaluationID: "e1", Status: models.EvaluationFailed, Message: "Evaluation Failed"}
	gateFailed := &evals.GateError{Failed: []evals.GateResult{{Gate: evals.MinMean("Exact match", 0.9)}}, Total: 1}
	_, parseErr := evals.ParseGate("Exact match >>= 0.9")
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"no error", nil, exitOK},

		// 2: the command was run wrong.
		{"usage error", usageErrorf("--app is required"), exitUsage},
		{"cobra's own parse error", errors.New(`accepts 1 arg(s), received 2`), exitUsage},
		{"flag error", flagError(&cobra.Command{Use: "x"}, errors.New("invalid argument")), exitUsage},
		{"--gate that does not parse", usageErrorf("--gate: %w", parseErr), exitUsage},
		{"invalid gate, as eval run reports it", judged(t, "No such evaluator >= 0.5", `--gate "No such evaluator >= 0.5"`), exitUsage},
		{"argument the SDK refuses, with its field", sdk(&agenta.ArgumentError{Name: "NewEvaluation.AppID", Field: "app_id", Reason: "is required"}), exitUsage},
		{"argument the SDK refuses", sdk(&agenta.ArgumentError{Name: "WithTimeout", Reason: "want a positive duration"}), exitUsage},
		{"ErrInvalidArgument", sdk(fmt.Errorf("x: %w", agenta.ErrInvalidArgument)), exitUsage},

		// 1: a gate failed.
		{"gate failed", sdk(gateFailed), exitGateFailed},
		{"gate failed, as eval run reports it", judged(t, "exact >= 0.5", "1 of 1 gates failed: "), exitGateFailed},
		{"ErrGateFailed", sdk(fmt.Errorf("judging: %w", evals.ErrGateFailed)), exitGateFailed},

		// 3: the evaluation failed.
		{"evaluation failed", sdk(fmt.Errorf("waiting: %w", failed)), exitEvalFailed},
		{"aggregation failed", sdk(&agenta.EvaluationFailedError{EvaluationID: "e1", Status: models.EvaluationAggregationFailed}), exitEvalFailed},

		// 4: the service answered an error, or no answer came in time.
		{"400", sdk(api(400, "bad request")), exitService},
		{"401", sdk(api(401, "Unauthorized")), exitService},
		{"403", sdk(api(403, "Forbidden")), exitService},
		{"404 not found", sdk(api(404, "Evaluation not found")), exitService},
		{"404 route not found", sdk(api(404, "Not Found")), exitService},
		{"not found", sdk(&agenta.NotFoundError{}), exitService},
		{"422", sdk(&agenta.ValidationError{APIError: api(422, "field required").(*agenta.APIError)}), exitService},
		{"429", sdk(api(429, "Too Many Requests")), exitService},
		{"500", sdk(api(500, "Internal Server Error")), exitService},
		{"502", sdk(api(502, "Bad Gateway")), exitService},
		{"not created", sdk(&agenta.NotCreatedError{}), exitService},
		{"no worker", sdk(&agenta.NoWorkerError{}), exitService},
		{"answer over its limit", sdk(&agenta.DecodeError{StatusCode: 200, Method: "GET", Path: "/x", Err: &agenta.LimitError{Field: "List", Limit: 1 << 20}}), exitService},
		{"answer not JSON", sdk(&agenta.DecodeError{StatusCode: 200, Method: "GET", Path: "/x", Err: &json.SyntaxError{Offset: 1}}), exitService},
		{"trailing data", sdk(fmt.Errorf("x: %w", agenta.ErrTrailingData)), exitService},
		{"answer cut short", sdk(fmt.Errorf("%w: %w", agenta.ErrAnswerCut, context.Canceled)), exitService},
		{"answer stalled", sdk(fmt.Errorf("%w: %w", agenta.ErrIdleTimeout, context.Canceled)), exitService},
		{"attempt timeout", sdk(fmt.Errorf("%w: %w", agenta.ErrAttemptTimeout, context.Canceled)), exitService},
		{"--timeout", sdk(context.DeadlineExceeded), exitService},
		{"--timeout during a wait", sdk(waitErr(context.DeadlineExceeded)), exitService},
		{"connection refused", sdk(refused), exitService},
		{"unknown host", sdk(&net.DNSError{Err: "no such host", Name: "nowhere.invalid"}), exitService},
		{"an error of the SDK's of no other kind", sdk(errors.New("agenta: something else")), exitService},

		// 5: a local failure.
		{"report not written", reportError(reportTarget{flag: "--junit", path: "r.xml"}, &os.PathError{Op: "open", Path: "r.xml", Err: syscall.ENOSPC}), exitLocal},
		{"standard output not written", (&guardedWriter{err: syscall.ENOSPC}).problem("the summary to standard output"), exitLocal},
		{"standard output closed by its reader (| head)", (&guardedWriter{err: syscall.EPIPE}).problem("the summary to standard output"), exitOK},
		{"local failure while interrupted", localError(fmt.Errorf("fake: %w", context.Canceled)), exitLocal},

		// 130: interrupted.
		{"interrupted", sdk(context.Canceled), exitInterrupted},
		{"interrupted during a wait", sdk(waitErr(context.Canceled)), exitInterrupted},

		// The background fake's own exit code is the command's.
		{"background fake's exit", childExit(exitUsage, errors.New("--addr: bad")), exitUsage},
		{"background fake killed by a signal", childExit(-1, errors.New("killed")), exitLocal},

		// An error with context keeps its kind.
		{"service error in context", inContext(sdk(api(500, "x")), "reading its scenarios, 3 read, then"), exitService},
		{"interrupt in context", inContext(sdk(context.Canceled), "reading its scenarios, 3 read, then"), exitInterrupted},
	}
	for _, tt := range tests {
		if tt.name == "cobra's own parse error" {
			// Never classified: it comes from cobra, not a call.
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("%s: exit code %d, want %d", tt.name, got, tt.want)
			}
			continue
		}
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("%s: exit code %d, want %d (error %v)", tt.name, got, tt.want, tt.err)
		}
		// classify leaves an error the command already built as it is.
		if tt.err != nil && exitCode(classify(tt.err, "h")) != tt.want {
			t.Errorf("%s: classified again, exit code %d, want %d", tt.name, exitCode(classify(tt.err, "h")), tt.want)
		}
	}

	// A partial failure: of several outcomes, the exit code is the first
	// in exitOrder (130, 2, 3, 4, 1, 5).
	partial := []struct {
		name string
		errs []error
		want int
	}{
		{"one variant failed, another timed out", []error{sdk(waitErr(context.DeadlineExceeded)), sdk(failed)}, exitEvalFailed},
		{"a gate failed, and a report was not written", []error{sdk(gateFailed), localError(errors.New("disk full"))}, exitGateFailed},
		{"a variant could not be read, and a gate failed", []error{sdk(gateFailed), sdk(api(500, "x"))}, exitService},
		{"interrupted after a usage error", []error{usageErrorf("bad"), sdk(context.Canceled)}, exitInterrupted},
	}
	for _, tt := range partial {
		if _, first := worst(tt.errs...); exitCode(first) != tt.want {
			t.Errorf("%s: exit code %d, want %d", tt.name, exitCode(first), tt.want)
		}
	}
}

// judged is what eval run's judge returns, through classify as
// runWithClient passes it on, for one gate on a run whose evaluator
// "exact" gave 0 on its one row; its message must contain want.
func judged(t *testing.T, spec, want string) error {
	t.Helper()
	gate, err := evals.ParseGate(spec)
	if err != nil {
		t.Fatal(err)
	}
	v := &variantRun{label: "evaluation e1 (v1)", run: evals.Run{Evaluation: models.Evaluation{ID: "e1"}}}
	v.acc.Add(models.EvaluationScenario{ID: "s1", EvaluationID: "e1",
		Outputs: []models.Output{{Result: models.Result{Type: "text", Value: []byte(`"Paris"`)}}},
		Results: []models.ScenarioResult{
			{EvaluatorConfig: "exact", Result: models.Result{Type: "number", Value: []byte("0")}}}})
	v.summary = v.acc.Summary()
	r := &evalRun{opts: &EvalRunOptions{Gates: []evals.Gate{gate}}, out: &guardedWriter{w: io.Discard}, runs: []*variantRun{v}}
	err = classify(r.judge(), "h")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("judge: %v; want an error saying %s", err, want)
	}
	return err
}
