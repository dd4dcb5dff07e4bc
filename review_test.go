package agenta

// An adversarial review after issues 8 and 12: answers and transports the
// hostile suite did not try. Each test failed before its fix.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A run whose status echoes the key, in any encoding, and that never ends:
// the *WaitError names the status, scrubbed.
func TestReviewWaitErrorScrubsStatus(t *testing.T) {
	for _, echo := range []string{hostileKey, hostileEscapeAll(hostileKey)} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"status":{"type":"status","value":"RUNNING `+echo+`","error":null}}`)
		}))
		c := hostileClient(t, s.URL+"/api")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := c.WaitEvaluation(ctx, "e-1", &WaitOptions{Interval: 20 * time.Millisecond})
		cancel()
		s.Close()
		var waitErr *WaitError
		if !errors.As(err, &waitErr) {
			t.Fatalf("got %v, want a *WaitError", err)
		}
		if strings.Contains(string(waitErr.Status), hostileKey) {
			t.Errorf("WaitError.Status holds the API key: %q", waitErr.Status)
		}
		hostileCheckError(t, err)
	}
}
