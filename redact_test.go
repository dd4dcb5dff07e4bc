package agenta

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
)

// Long keys: every run of 12 of their characters is a leak.
const (
	leakAPIKey      = "ak-Vd3Rt8Ng1Bq6Zm4Lx9Cw2Hs7Jy5Pf0Ke3Ua8Oi"
	leakProviderKey = "sk-proj-Zq7Lw2Xv9Nr4Tb6Yc1Md8Kf3Hg5Jp0Sx2Qa7We4Ru9Io6Pm1"
)

// leakedWindow returns the first run of 12 characters of either key in s,
// or "".
func leakedWindow(s string) string {
	for _, key := range []string{leakAPIKey, leakProviderKey} {
		for i := 0; i+12 <= len(key); i++ {
			if strings.Contains(s, key[i:i+12]) {
				return key[i : i+12]
			}
		}
	}
	return ""
}

// echoingService answers as a service whose run failed because the
// provider refused the key it was sent, and echoes the keys everywhere it
// can: the failure message (raw, \u-escaped in part, cut), the scenarios
// (output, error, base64), and a 500.
func echoingService(t *testing.T) string {
	t.Helper()
	key := leakProviderKey
	escaped := `\u00` + fmt.Sprintf("%x", key[0]) + key[1:]
	failure := `{"message":"Incorrect API key provided: ` + key + `. You can find your API key at https://platform.openai.com/account/api-keys.","stacktrace":"Traceback: api_key=` + escaped + `"}`
	status := `{"type":"status","value":"EVALUATION_FAILED","error":` + failure + `}`
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/evaluations", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(key)) {
			t.Errorf("the create request does not carry the provider key: %s", body)
		}
		io.WriteString(w, `[{"id":"e-1","app_id":"a-1","variant_ids":["v-1"],"testset_name":"`+key+`","status":{"type":"status","value":"EVALUATION_INITIALIZED"}}]`)
	})
	mux.HandleFunc("GET /api/evaluations/e-1/status", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":`+status+`}`)
	})
	mux.HandleFunc("GET /api/evaluations/e-1", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":"e-1","status":`+status+`,"aggregated_results":[{"evaluator_config":{"id":"c-1","settings_values":{"key":"`+
			base64.StdEncoding.EncodeToString([]byte(key))+`"}},"result":{"type":"error","error":`+failure+`}}]}`)
	})
	mux.HandleFunc("GET /api/evaluations/e-1/evaluation_scenarios", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `[{"id":"s-1","inputs":[{"name":"q","type":"text","value":"`+key[:40]+`"}],"outputs":[{"result":{"type":"text","value":"echo `+key+`"}}],`+
			`"results":[{"evaluator_config":"c-1","result":{"type":"error","error":`+failure+`}}]}]`)
	})
	mux.HandleFunc("GET /api/variants/v-1", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"detail":"`+strings.Repeat("x", 190)+key+` and the API key `+leakAPIKey+`"}`)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s.URL + "/api"
}

// Every key the Client sent is its secret from then on: after
// CreateEvaluation sent a provider key, no error, log line or value the
// Client returns holds 12 characters of it (or of the API key), however
// the service echoes it, and however the value is printed: fmt, slog's
// text and JSON handlers, encoding/json.
func TestSentKeysAreSecretsOfTheClient(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := NewClient(echoingService(t), WithAPIKey(leakAPIKey), WithLogger(logger), WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var printed []any

	created, err := c.CreateEvaluation(ctx, models.NewEvaluation{AppID: "a-1", VariantIDs: []string{"v-1"}, EvaluatorConfigIDs: []string{"c-1"},
		TestsetID: "t-1", RateLimit: models.DefaultRateLimit(), LMProvidersKeys: models.NewProviderKeys(map[string]string{models.OpenAIAPIKey: leakProviderKey})})
	if err != nil {
		t.Fatal(err)
	}
	printed = append(printed, created)

	ev, err := c.WaitEvaluation(ctx, "e-1", &WaitOptions{Interval: time.Millisecond})
	var failed *EvaluationFailedError
	if !errors.As(err, &failed) || !errors.Is(err, ErrEvaluationFailed) {
		t.Fatalf("WaitEvaluation: %v, want an *EvaluationFailedError", err)
	}
	if !strings.Contains(failed.Message, "Incorrect API key provided: [REDACTED]") {
		t.Errorf("the failure's message %q lost what the service said", failed.Message)
	}
	printed = append(printed, err, failed, ev)

	scenarios, err := c.FetchEvaluationScenarios(ctx, "e-1")
	if err != nil {
		t.Fatal(err)
	}
	printed = append(printed, scenarios)
	for s, err := range c.StreamEvaluationScenarios(ctx, "e-1") {
		printed = append(printed, s, err)
	}
	status, err := c.FetchEvaluationStatus(ctx, "e-1")
	printed = append(printed, status, err)
	_, err = c.GetVariant(ctx, "v-1")
	if err == nil {
		t.Fatal("GetVariant succeeded, want the 500")
	}
	printed = append(printed, err)

	for i, v := range printed {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			if w := leakedWindow(fmt.Sprintf(verb, v)); w != "" {
				t.Errorf("value %d (%T) printed with %s holds %q: %.400s", i, v, verb, w, fmt.Sprintf(verb, v))
			}
		}
		if out, err := json.Marshal(v); err == nil {
			if w := leakedWindow(string(out)); w != "" {
				t.Errorf("value %d (%T) as JSON holds %q: %.400s", i, v, w, out)
			}
		}
		for name, h := range map[string]func(io.Writer) slog.Handler{
			"text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
			"JSON": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
		} {
			var b bytes.Buffer
			slog.New(h(&b)).Info("value", "v", v)
			if w := leakedWindow(b.String()); w != "" {
				t.Errorf("value %d (%T) in slog's %s handler holds %q", i, v, name, w)
			}
		}
		if e, ok := v.(error); ok {
			for u := e; u != nil; u = errors.Unwrap(u) {
				if w := leakedWindow(u.Error()); w != "" {
					t.Errorf("%T in the chain of %T holds %q", u, e, w)
				}
			}
		}
	}
	if w := leakedWindow(logs.String()); w != "" {
		t.Errorf("the Client's log holds %q:\n%s", w, logs.String())
	}
	if !strings.Contains(fmt.Sprint(scenarios), "[REDACTED]") {
		t.Errorf("the scenarios do not show [REDACTED] where the key was: %v", scenarios)
	}
}

// A Client keeps at most maxSentSecrets provider keys, the latest, with
// its own credentials always.
func TestSentSecretsBounded(t *testing.T) {
	c, err := NewClient("http://127.0.0.1:1/api", WithAPIKey(leakAPIKey))
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxSentSecrets + 10 {
		c.secrets.addSent(fmt.Sprintf("provider-key-%04d-0123456789", i))
	}
	values := c.secrets.load().all.Values()
	if len(values) != 1+maxSentSecrets || values[0] != leakAPIKey || !strings.Contains(values[len(values)-1], fmt.Sprintf("%04d", maxSentSecrets+9)) {
		t.Errorf("%d secrets, first %q, last %q; want the API key and the latest %d", len(values), values[0], values[len(values)-1], maxSentSecrets)
	}
	before := c.secrets.load()
	c.secrets.addSent(leakAPIKey, "")
	if c.secrets.load() != before {
		t.Error("adding a secret already held changed the set")
	}
}
