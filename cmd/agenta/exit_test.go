package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/evals"
)

// TestWorst: of several outcomes, the exit code is the first in
// exitOrder, the earliest error with it is the one returned, and the
// others keep their order, without repeats.
func TestWorst(t *testing.T) {
	sdk := func(text string, err error) error { return &sdkError{text: text, err: err} }
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

// TestClassifyBrokenAnswers: an answer that stalls or is cut short is a
// service error (exit 4) that says so, not "no answer", "cannot reach"
// or an interruption; --timeout passing while an answer arrives says that.
// The errors are the SDK's own, from agentatest's faults.
func TestClassifyBrokenAnswers(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL(), agenta.WithTimeout(time.Second), agenta.WithIdleTimeout(200*time.Millisecond),
		agenta.WithRetryWait(time.Millisecond, 2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL())
	host := u.Host
	read := func(ctx context.Context, f agentatest.Fault) error {
		srv.ClearFaults()
		srv.InjectFault(agentatest.OpGetVariant, agentatest.Always, f)
		_, err := client.GetVariant(ctx, demo.VariantID)
		return err
	}
	defer func(d time.Duration) { idleTimeout = d }(idleTimeout)
	idleTimeout = 200 * time.Millisecond

	stalled := classify(read(context.Background(), agentatest.Fault{StallAfter: 20}), host)
	if want := "the answer from " + host + " stalled: nothing arrived for 200ms"; exitCode(stalled) != exitService || !strings.Contains(stalled.Error(), want) {
		t.Errorf("a stalled answer: exit %d, %q; want exit 4 saying %q", exitCode(stalled), stalled, want)
	}
	cut := classify(read(context.Background(), agentatest.Fault{CutAfter: 20}), host)
	if want := "the connection to " + host + " broke in the middle of the answer"; exitCode(cut) != exitService || !strings.Contains(cut.Error(), want) {
		t.Errorf("a cut answer: exit %d, %q; want exit 4 saying %q", exitCode(cut), cut, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	late := classify(read(ctx, agentatest.Fault{Trickle: 100 * time.Millisecond, TrickleBytes: 10}), host)
	if want := "--timeout passed while the answer from " + host + " was still arriving"; exitCode(late) != exitService || !strings.Contains(late.Error(), want) {
		t.Errorf("--timeout during an answer: exit %d, %q; want exit 4 saying %q", exitCode(late), late, want)
	}
	for _, err := range []error{stalled, cut, late} {
		if s := err.Error(); strings.Contains(s, "no answer") || strings.Contains(s, "cannot reach") || strings.Contains(s, "interrupted") {
			t.Errorf("%q blames what did not happen", s)
		}
	}
}
