package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta/agentatest"
)

// agenta fake keeps the fake's limits in front of its proxy: headers over
// their size get 431, a body over its size 413, both at once.
func TestFakeIsBounded(t *testing.T) {
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := testFactory()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveFake(ctx, &FakeOptions{IO: f.IO, Factory: f, Addr: addr}) }()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("agenta fake does not listen")
		}
	}
	base := "http://" + addr + "/api"

	req, _ := http.NewRequest(http.MethodGet, base+"/variants/x", nil)
	req.Header.Set("X-Huge", strings.Repeat("h", agentatest.DefaultLimits().HeaderBytes+8<<10)) // net/http allows 4 KiB over
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("huge headers: %v, %v; want 431", resp, err)
	} else {
		resp.Body.Close()
	}

	big := bytes.Repeat([]byte(" "), agentatest.MaxBodyBytes+1)
	resp, err := http.Post(base+"/evaluations", "application/json", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "over 16777216 bytes") {
		t.Errorf("a body over the limit: %d %s; want 413 saying the limit", resp.StatusCode, body)
	}
}
