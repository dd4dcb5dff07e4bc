package main

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
)

// TestClassifyArgumentError: an argument the SDK refuses is named as on
// the wire, not by its Go path.
func TestClassifyArgumentError(t *testing.T) {
	err := classify(&agenta.ArgumentError{Name: "NewEvaluation.VariantIDs[1]", Field: "variant_ids[1]", Reason: "is required"}, "h")
	if got := errorLine(err); got != "agenta: invalid variant_ids[1]: is required" || exitCode(err) != exitUsage {
		t.Errorf("argument error: %q, exit %d; want %q, exit %d", got, exitCode(err), "agenta: invalid variant_ids[1]: is required", exitUsage)
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

// TestErrorLine checks that an error prints as one bounded line.
func TestErrorLine(t *testing.T) {
	long := strings.Repeat("é", 2000)
	line := errorLine(errors.New("first\n  second\r\n\tthird " + long))
	if strings.ContainsAny(line, "\n\r\t") {
		t.Errorf("error line holds a control character: %q", line[:60])
	}
	if !strings.HasPrefix(line, "agenta: first; second; third ") {
		t.Errorf("error line starts %q, want %q", line[:40], "agenta: first; second; third ")
	}
	// A terminal escape, a line separator or a bidirectional override
	// from a server message never reaches the terminal: it shows escaped.
	for hostile, shown := range map[string]string{"\x1b[2J": `\x1b[2J`, "\a": `\x07`, "\u2028": `\u2028`, "\u2029": `\u2029`,
		"\u202e": `\u202e`, "\u2066": `\u2066`, "\u0085": `\u0085`, "\u009b": `\u009b`} {
		line, c := errorLine(errors.New("a"+hostile+"b")), cell("a"+hostile+"b")
		if strings.Contains(line, hostile) || strings.Contains(c, hostile) {
			t.Errorf("error line %q or cell %q holds %q", line, c, hostile)
		}
		if !strings.Contains(line, "a"+shown+"b") || c != "a"+shown+"b" {
			t.Errorf("error line %q or cell %q, want %q shown as %s", line, c, hostile, shown)
		}
	}
	if n := utf8.RuneCountInString(line); n > maxErrorLine+len("agenta: ") {
		t.Errorf("error line is %d runes, want at most about %d", n, maxErrorLine)
	}
}
