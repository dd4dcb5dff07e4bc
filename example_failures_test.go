package agenta_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/models"
)

// classify is a complete classification switch over the SDK's errors, most
// specific first: ErrRouteNotFound before ErrNotFound, *ValidationError
// before *APIError, ErrIdleTimeout before ErrAttemptTimeout, and the
// sentinels of failures (ErrAnswerTooLarge, ErrIdleTimeout,
// ErrAttemptTimeout, ErrAnswerCut, ErrNoResponse) before *DecodeError, which
// carries a failure that happened while reading an answer. The timeouts
// come before the caller's context: their cause may be a deadline too.
func classify(err error) string {
	var validation *agenta.ValidationError
	var apiErr *agenta.APIError
	var decodeErr *agenta.DecodeError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, agenta.ErrInvalidArgument):
		return "refused before sending" // fix the call
	case errors.As(err, &validation):
		return "validation" // validation.Details says which field
	case errors.Is(err, agenta.ErrRouteNotFound):
		return "no such route" // check the base URL (…/api) and the server's version
	case errors.Is(err, agenta.ErrNotFound):
		return "not found"
	case errors.Is(err, agenta.ErrUnauthorized), errors.Is(err, agenta.ErrForbidden):
		return "credentials"
	case errors.Is(err, agenta.ErrRateLimited):
		return "rate limited" // still 429 after every retry
	case errors.Is(err, agenta.ErrServer):
		return "server error"
	case errors.As(err, &apiErr):
		return fmt.Sprintf("other answer %d", apiErr.StatusCode) // such as a redirect not followed
	case errors.Is(err, agenta.ErrAnswerTooLarge):
		return "answer too large" // raise the limit with WithResponseLimits
	case errors.Is(err, agenta.ErrIdleTimeout):
		return "answer stalled" // raise WithIdleTimeout, or retry later
	case errors.Is(err, agenta.ErrAttemptTimeout):
		return "attempt timed out" // raise WithTimeout, or retry later
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "caller's context ended"
	case errors.Is(err, agenta.ErrAnswerCut):
		return "answer cut short" // the connection broke mid-answer: retry
	case errors.Is(err, agenta.ErrNoResponse):
		return "no answer" // the network or the server is down
	case errors.As(err, &decodeErr):
		return "not the expected JSON" // decodeErr.Body holds what came
	default:
		return "other failure"
	}
}

// Every branch of the classification switch, each with a server that
// answers the way that branch describes, and the real error string.
func Example_classifyFailures() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch path.Base(r.URL.Path) {
		case "ok":
			io.WriteString(w, `{"variant_id":"ok","variant_name":"capitals.default"}`)
		case "validation":
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"detail":[{"loc":["path","variant_id"],"msg":"value is not a valid uuid","type":"type_error.uuid"}]}`)
		case "route":
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"detail":"Not Found"}`)
		case "missing":
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"detail":"Variant not found"}`)
		case "unauthorized":
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"detail":{"message":"Unauthorized"}}`)
		case "busy":
			w.WriteHeader(http.StatusTooManyRequests)
		case "broken":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"detail":"badly formed hexadecimal UUID string"}`)
		case "from-base":
			w.Header().Set("Location", "/api/variants/from-base")
			w.WriteHeader(http.StatusTemporaryRedirect)
		case "huge":
			io.WriteString(w, `{"variant_id":"huge","variant_name":"`+string(make([]byte, 4096))+`"}`)
		case "html":
			io.WriteString(w, `<html><title>Maintenance</title></html>`)
		case "slow":
			<-r.Context().Done() // never answers
		case "dropped":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "cut", "stalled":
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, `{"variant_id":"cut","variant_name":`)
			w.(http.Flusher).Flush()
			if path.Base(r.URL.Path) == "cut" {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
			<-r.Context().Done() // the rest never comes
		}
	}))
	defer srv.Close()

	client, err := agenta.NewClient(srv.URL+"/api", agenta.WithMaxRetries(0),
		agenta.WithTimeout(100*time.Millisecond),
		agenta.WithResponseLimits(agenta.ResponseLimits{Single: 1024}))
	if err != nil {
		fmt.Println(err)
		return
	}
	show := func(err error) {
		fmt.Printf("%s\n    %v\n", classify(err), err)
	}
	for _, id := range []string{"ok", "", "validation", "route", "missing", "unauthorized", "busy",
		"broken", "huge", "html", "slow", "stalled", "dropped", "cut"} {
		_, err := client.GetVariant(context.Background(), id)
		show(err)
	}
	_, err = client.AddVariantFromBase(context.Background(), models.AddVariantFromBase{
		BaseID: "b-1", NewVariantName: "precise", NewConfigName: "precise",
	})
	show(err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	patient, _ := agenta.NewClient(srv.URL+"/api", agenta.WithTimeout(0))
	_, err = patient.GetVariant(ctx, "slow")
	show(err)
	// Output:
	// ok
	//     <nil>
	// refused before sending
	//     agenta: invalid argument variantID (variant_id): is required
	// validation
	//     agenta: GET /api/variants/validation: 422 Unprocessable Entity: path.variant_id: value is not a valid uuid
	// no such route
	//     agenta: GET /api/variants/route: 404 Not Found: the server has no route for this path; check that the base URL ends in the service's prefix, usually /api, and that the server's version has GetVariant
	// not found
	//     agenta: GET /api/variants/missing: 404 Not Found: Variant not found
	// credentials
	//     agenta: GET /api/variants/unauthorized: 401 Unauthorized
	// rate limited
	//     agenta: GET /api/variants/busy: 429 Too Many Requests
	// server error
	//     agenta: GET /api/variants/broken: 500 Internal Server Error: badly formed hexadecimal UUID string
	// answer too large
	//     agenta: GET /api/variants/huge: read 200 answer: the answer exceeds the limit of 1024 bytes on an answer of one object; raise it with WithResponseLimits(agenta.ResponseLimits{Single: …})
	// not the expected JSON
	//     agenta: GET /api/variants/html: decode 200 answer at byte 0: invalid character '<' looking for beginning of value
	// attempt timed out
	//     agenta: GET /api/variants/slow: the per-attempt timeout (WithTimeout, 100ms) expired before the answer's headers arrived
	// answer stalled
	//     agenta: GET /api/variants/stalled: read 200 answer: the answer stalled after 35 bytes: nothing arrived for 100ms (the idle timeout: WithIdleTimeout, by default WithTimeout)
	// no answer
	//     agenta: GET /api/variants/dropped: no answer from the server: EOF
	// answer cut short
	//     agenta: GET /api/variants/cut: read 200 answer: the answer was cut short after 35 bytes: unexpected EOF
	// other answer 307
	//     agenta: POST /api/variants/from-base: 307 Temporary Redirect: redirect to /api/variants/from-base not followed (a create follows at most one 307 or 308, to the same origin)
	// caller's context ended
	//     agenta: GET /api/variants/slow: the caller's context ended: context deadline exceeded
}
