package main

import (
	"context"
	"testing"
	"time"
)

// Issue 28: once interrupted, a second signal is the system's again, and a
// command that cannot end is ended after the grace: the signals were
// swallowed, and a blocked report kept the command alive for ever.
func TestAfterInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	exited := make(chan time.Time, 1)
	go afterInterrupt(ctx, func() { close(stopped) }, 50*time.Millisecond, func() { exited <- time.Now() })

	select {
	case <-stopped:
		t.Fatal("the signals were given back before any interrupt")
	case <-exited:
		t.Fatal("exited before any interrupt")
	case <-time.After(100 * time.Millisecond):
	}
	interrupted := time.Now()
	cancel()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the signals were not given back after the interrupt")
	}
	select {
	case at := <-exited:
		if at.Sub(interrupted) < 50*time.Millisecond {
			t.Errorf("exited %s after the interrupt, before the grace", at.Sub(interrupted))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running long after the grace")
	}
}
