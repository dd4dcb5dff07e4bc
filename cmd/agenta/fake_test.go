package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime/pprof"
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

// A client that stops reading a large answer is cut off by the write
// timeout of agenta fake's own server, as by the fake's: it cannot hold the
// proxy's connection and goroutine for ever.
func TestFakeCutsOffAReaderThatStops(t *testing.T) {
	defer func(d time.Duration) { fakeWriteTimeout = d }(fakeWriteTimeout)
	fakeWriteTimeout = 2 * time.Second
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := testFactory()
	out := &syncBuffer{} // the fake writes its settings while the test reads them
	f.IO.Out = out
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveFake(ctx, &FakeOptions{IO: f.IO, Factory: f, Addr: addr}) }()
	t.Cleanup(func() { cancel(); <-done })
	var base string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, rest, ok := strings.Cut(out.String(), "AGENTA_BASE_ID="); ok {
			base, _, _ = strings.Cut(rest, "\n")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("agenta fake printed no settings")
		}
	}
	// A variant whose answer is larger than the sockets' buffers.
	fork := `{"base_id":"` + base + `","new_variant_name":"big","new_config_name":"big","parameters":{"pad":"` + strings.Repeat("x", 8<<20) + `"}}`
	resp, err := http.Post("http://"+addr+"/api/variants/from-base", "application/json", strings.NewReader(fork))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, rest, ok := strings.Cut(string(body), `"variant_id":"`)
	if resp.StatusCode != http.StatusOK || !ok {
		t.Fatalf("fork: %d %.200s", resp.StatusCode, body)
	}
	id, _, _ := strings.Cut(rest, `"`)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4 << 10)
	io.WriteString(c, "GET /api/variants/"+id+" HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	// The client reads nothing: the proxy's handler must end all the same.
	proxying := func() int {
		var b bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		return strings.Count(b.String(), "httputil.(*ReverseProxy).ServeHTTP")
	}
	for started := time.Now(); proxying() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Since(started) > 10*time.Second {
			t.Fatal("the proxy never handled the request")
		}
	}
	deadline := time.Now().Add(fakeWriteTimeout + 20*time.Second)
	for proxying() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := proxying(); n > 0 {
		t.Fatalf("%d proxy handlers still write to a client that stopped reading, %s after the write timeout", n, 20*time.Second)
	}
}
