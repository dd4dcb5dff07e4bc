package agentatest_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta/agentatest"
)

// within fails the test when f has not returned after a deadline far
// beyond its normal time: it detects a freeze, not a slow machine.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still blocked after 30 s; expected it to return at once", what)
	}
}

// TestStalledReaderFreezesNothing: a client asks for a large answer and
// never reads it. Other clients, seeding and Close go on regardless.
func TestStalledReaderFreezesNothing(t *testing.T) {
	srv := agentatest.NewServer()
	d := agentatest.SeedDemo(srv)
	// A variant whose answer (8 MiB) is larger than the server's socket
	// buffer (at most 4 MiB on Linux) and the client's, kept small.
	big := srv.AddVariant(agentatest.Variant{BaseID: d.BaseID, ConfigName: "big",
		Parameters: map[string]any{"blob": strings.Repeat("x", 8<<20)}})

	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(srv.URL(), "/api"), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
	_, err = fmt.Fprintf(conn, "GET /api/variants/%s HTTP/1.1\r\nHost: fake\r\n\r\n", big)
	require.NoError(t, err)
	// Read the status line only, so the handler is surely writing.
	status, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, status, "200")

	c := newClient(t, srv)
	within(t, "another client's read", func() {
		v, err := c.GetVariant(context.Background(), d.VariantID)
		assert.NoError(t, err)
		assert.Equal(t, "capitals.default", v.VariantName)
	})
	within(t, "seeding", func() { srv.AddApp(agentatest.App{Name: "more"}) })
	within(t, "Close", srv.Close)
}

// TestBodyOverTheLimitIs413: a body over MaxBodyBytes is refused as a
// whole, never cut short and read as if it were complete.
func TestBodyOverTheLimitIs413(t *testing.T) {
	srv := agentatest.NewTestServer(t)
	d := agentatest.SeedDemo(srv)
	padding := strings.Repeat(" ", agentatest.MaxBodyBytes)
	body := fmt.Sprintf(`{"base_id":%q,"new_variant_name":"n","new_config_name":"huge","parameters":{}}%s`, d.BaseID, padding)
	r := post(t, srv.URL()+"/variants/from-base", "application/json", body)
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status, "%.200s", r.body)
	assert.Contains(t, detail(t, r), "over 16777216 bytes")
	reqs := srv.RequestsFor(agentatest.OpAddVariantFromBase)
	require.Len(t, reqs, 1)
	assert.Equal(t, http.StatusRequestEntityTooLarge, reqs[0].Status)

	// Exactly at the limit the body is read and the request served (by a
	// route that ignores it, to keep the test quick).
	req, err := http.NewRequest(http.MethodGet, srv.URL()+"/variants/"+d.VariantID, strings.NewReader(padding))
	require.NoError(t, err)
	r = do(t, http.DefaultClient, req)
	assert.Equal(t, http.StatusOK, r.status, "%.200s", r.body)
	assert.Len(t, srv.RequestsFor(agentatest.OpGetVariant)[0].Body, agentatest.MaxBodyBytes)
}

// TestNoGoroutineLeftAfterClose: background runs, stalled requests and
// connections all end with Close.
func TestNoGoroutineLeftAfterClose(t *testing.T) {
	before := runtime.NumGoroutine()
	srv := agentatest.NewServer()
	d := agentatest.SeedDemo(srv)
	c := newClient(t, srv)
	_, err := c.CreateEvaluation(context.Background(), newEvaluation(d, d.VariantIDs()...))
	require.NoError(t, err)
	srv.InjectFault(agentatest.OpGetVariant, 1, agentatest.Fault{Stall: agentatest.StallForever})
	go func() { _, _ = c.GetVariant(context.Background(), d.VariantID) }()
	for len(srv.RequestsFor(agentatest.OpGetVariant)) == 0 {
		runtime.Gosched()
	}
	within(t, "Close", srv.Close)
	// Goroutines end soon after Close; the client's idle connections too.
	var after int
	for range 200 {
		c.CloseIdleConnections()
		if after = runtime.NumGoroutine(); after <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("%d goroutines before the server, %d after Close; want no more than before:\n%s",
		before, after, buf[:runtime.Stack(buf, true)])
}
