package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agenta-go/agenta/models"
)

// TestProgress checks both displays: plain lines when stderr is not a
// terminal, a line redrawn in place when it is.
func TestProgress(t *testing.T) {
	status := func(s models.EvaluationStatus) models.Result {
		return models.Result{Type: "status", Value: []byte(`"` + string(s) + `"`)}
	}
	for _, tty := range []bool{false, true} {
		errOut := &bytes.Buffer{}
		p := startProgress(&IOStreams{ErrOut: errOut, errTTY: tty}, "evaluation e1")
		p.OnStatus(status(models.EvaluationStarted))
		p.OnStatus(status(models.EvaluationFinished))
		p.Stop()
		got := errOut.String()
		for _, want := range []string{"evaluation e1: EVALUATION_STARTED", "evaluation e1: EVALUATION_FINISHED"} {
			if !strings.Contains(got, want) {
				t.Errorf("tty=%v: progress %q lacks %q", tty, got, want)
			}
		}
		if redraws := strings.Contains(got, "\r\x1b[K"); redraws != tty {
			t.Errorf("tty=%v: progress redraws in place: %v, want %v (%q)", tty, redraws, tty, got)
		}
		if lines := strings.Count(got, "\n"); tty && lines != 1 || !tty && lines != 2 {
			t.Errorf("tty=%v: progress wrote %d lines: %q", tty, lines, got)
		}
	}

	// On a terminal, a long label is cut so that the line never wraps: a
	// wrapped line cannot be redrawn in place.
	for _, width := range []int{0, 40, 120} {
		errOut := &bytes.Buffer{}
		streams := &IOStreams{ErrOut: errOut, errTTY: true, errWidth: width}
		p := startProgress(streams, "evaluation 0190b606-17b8-7000-8000-000000000003 (capitals.a-long-variant-name)")
		p.OnStatus(status(models.EvaluationAggregationFailed))
		p.Stop()
		for _, drawn := range strings.Split(strings.TrimSpace(errOut.String()), "\x1b[K") {
			drawn = strings.TrimSuffix(drawn, "\r")
			if n := utf8.RuneCountInString(drawn); n >= streams.errorWidth() {
				t.Errorf("width %d: live line of %d runes, want fewer than %d: %q", width, n, streams.errorWidth(), drawn)
			}
		}
		if !strings.Contains(errOut.String(), "EVALUATION_AGGREGATION_FAILED") {
			t.Errorf("width %d: the live line lost its status: %q", width, errOut.String())
		}
	}
	// The plain display repeats its line when the status stays the same
	// for long, so that a CI job that ends silent jobs keeps running.
	var errOut syncBuffer
	p := startProgressQuiet(&IOStreams{ErrOut: &errOut}, "evaluation e2", 40*time.Millisecond)
	p.OnStatus(status(models.EvaluationStarted))
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(errOut.String(), "evaluation e2: EVALUATION_STARTED after") < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	p.Stop()
	if n := strings.Count(errOut.String(), "evaluation e2: EVALUATION_STARTED after"); n < 3 {
		t.Errorf("a status unchanged for several quiet periods was written %d times, want at least 3: %q", n, errOut.String())
	}
	if got := columns("132"); got != 132 {
		t.Errorf("COLUMNS=132: width %d, want 132", got)
	}
	if got := columns("wide"); got != 0 {
		t.Errorf("COLUMNS=wide: width %d, want 0 (the default)", got)
	}
}
