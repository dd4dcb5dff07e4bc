package agenta_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"sync"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
)

// attemptLog is an http.RoundTripper that records each attempt's method and
// path before passing it on, as a tracing transport (for example
// OpenTelemetry's otelhttp.NewTransport) would start a span. It records no
// header: the Authorization header passes through here.
type attemptLog struct {
	next     http.RoundTripper
	mu       sync.Mutex
	attempts []string
}

func (l *attemptLog) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.attempts = append(l.attempts, req.Method+" "+req.URL.Path)
	l.mu.Unlock()
	return l.next.RoundTrip(req)
}

// WithHTTPClient sends every attempt through the transport given, which is
// how tracing, metrics or a proxy are added without this module depending on
// them. Here the server answers the first attempt 503, so the call is
// retried and the transport sees two attempts.
func ExampleWithHTTPClient() {
	srv := agentatest.NewServer() // a fake of the service; use your server's URL instead
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	srv.InjectFault(agentatest.OpGetVariant, 1, agentatest.Fault{Status: http.StatusServiceUnavailable})

	transport := &attemptLog{next: http.DefaultTransport}
	client, err := agenta.NewClient(srv.URL(),
		agenta.WithHTTPClient(&http.Client{Transport: transport}))
	if err != nil {
		log.Fatal(err)
	}
	variant, err := client.GetVariant(context.Background(), demo.VariantID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(variant.VariantName)
	for _, attempt := range transport.attempts {
		fmt.Println(attempt)
	}
	// Output:
	// capitals.default
	// GET /api/variants/0190547f-5e5f-7de0-8000-000000000c01
	// GET /api/variants/0190547f-5e5f-7de0-8000-000000000c01
}
