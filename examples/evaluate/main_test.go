package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta/agentatest"
)

func TestEvaluateEmbedded(t *testing.T) {
	t.Setenv("AGENTA_HOST", "")
	var out, progress bytes.Buffer
	if err := evaluate(context.Background(), nil, &out, &progress); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"candidate  capitals.precise, forked with model=\"gpt-4o-mini\" temperature=0",
		"Exact match    capitals.default    62.5%",
		"capitals.precise   100.0%",
		"Australia    Sydney  Canberra  Exact match",
		"worst rows of capitals.precise:\n  none",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(progress.String(), "capitals.default 8/8, capitals.precise 8/8") {
		t.Errorf("progress does not reach 8/8: %q", progress.String())
	}
}

func TestEvaluateAgainstAHost(t *testing.T) {
	srv := agentatest.NewTestServer(t, agentatest.WithManualEvaluations())
	d := agentatest.SeedDemo(srv)
	t.Setenv("AGENTA_HOST", srv.URL())
	// This server runs nothing by itself: drive it while the example polls.
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				srv.AdvanceEvaluations(1)
				time.Sleep(time.Millisecond)
			}
		}
	}()
	var out, progress bytes.Buffer
	err := evaluate(context.Background(), []string{
		"-app", d.AppID, "-testset", d.TestsetID, "-rows", "8", "-name", "hot",
		"-evaluators", "Exact=" + d.ExactMatchID + ",Distance=" + d.EditDistanceID,
		"-set", "temperature=1.0", "-set", `prompt_system="Be chatty."`,
	}, &out, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`capitals\.hot\s+0\.0%`).MatchString(out.String()) {
		t.Errorf("a chatty variant never matches exactly:\n%s", out.String())
	}
}
