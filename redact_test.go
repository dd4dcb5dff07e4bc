package agenta

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	c := newTestClient(t, echoingService(t), WithAPIKey(leakAPIKey), WithLogger(logger), WithMaxRetries(0))
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
	c := newTestClient(t, "http://127.0.0.1:1/api", WithAPIKey(leakAPIKey))
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

// Item 5: an evaluation's failure message is server data too: WaitEvaluation
// scrubs it, whether the key comes raw or escaped.
func TestHostileEvaluationFailureScrubbed(t *testing.T) {
	for _, echo := range []string{hostileKey, hostileEscapeAll(hostileKey)} {
		failed := `{"type":"status","value":"EVALUATION_FAILED","error":{"message":"provider refused key ` + echo + `"}}`
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/status") {
				io.WriteString(w, `{"status":`+failed+`}`)
				return
			}
			io.WriteString(w, `{"id":"e-1","app_id":"a-1","status":`+failed+`}`)
		}))
		c := hostileClient(t, s.URL+"/api")
		_, err := c.WaitEvaluation(context.Background(), "e-1", nil)
		s.Close()
		var failure *EvaluationFailedError
		if !errors.As(err, &failure) {
			t.Fatalf("got %v, want an *EvaluationFailedError", err)
		}
		if strings.Contains(failure.Message, hostileKey) {
			t.Errorf("Message holds the API key: %q", failure.Message)
		}
		hostileCheckError(t, err)
	}
}

// A message the SDK cuts before it can scrub it (a detail, a 422 msg, a
// timestamp, a status) never keeps the first characters of a key that
// the cut split: the key is echoed with one character \u-escaped, so the
// scrub of the raw body misses it, and lands on the cut.
func TestCutNeverSplitsAKey(t *testing.T) {
	mixed := `\u00` + strconv.FormatInt(int64(hostileKey[0]), 16) + hostileKey[1:]
	prefix := hostileKey[:8]
	cases := []struct {
		name   string
		op     hostileOp
		status int
		body   string
	}{
		{"404 detail", hostileGetVariant, 404,
			`{"detail":"` + strings.Repeat("x", maxMessage-10) + mixed + `"}`},
		{"500 message", hostileGetVariant, 500,
			`{"message":"` + strings.Repeat("x", maxMessage-10) + mixed + `"}`},
		{"422 msg", hostileAddVariant, 422,
			`{"detail":[{"loc":["body","parameters"],"msg":"` + strings.Repeat("x", 4*maxMessage-30) + mixed + `","type":"value_error"}]}`},
		{"created_at", hostileListHuman, 200,
			`[{"id":"h-1","created_at":"2024-06-26T12:22:31` + strings.Repeat("9", 30) + mixed + `"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, hostileServe(t, tc.status, nil, tc.body), WithMaxRetries(0))
			err := tc.op.run(context.Background(), c)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tc.op.name)
			}
			if strings.Contains(err.Error(), prefix) {
				t.Errorf("err.Error() holds the key's first 8 characters %q: %q", prefix, err.Error())
			}
			var apiErr *APIError
			if errors.As(err, &apiErr) && strings.Contains(apiErr.Message, prefix) {
				t.Errorf("APIError.Message holds the key's first 8 characters: %q", apiErr.Message)
			}
		})
	}
}

// reviewChain returns err and every error it wraps.
func reviewChain(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, reviewChain(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, reviewChain(e)...)
		}
	}
	return out
}

// No error in the chain a call returns holds the key: a caller that logs
// errors.Unwrap(err), or an *models.TimestampError found with errors.As,
// sees only scrubbed text, as err.Error() does.
func TestErrorChainHoldsNoKey(t *testing.T) {
	cases := []struct {
		name string
		op   hostileOp
		body string
	}{
		{"key in created_at", hostileListHuman, `[{"id":"h-1","created_at":"` + hostileKey + `"}]`},
		{"key in created_at, escaped", hostileListHuman, `[{"id":"h-1","created_at":"` + hostileEscapeAll(hostileKey) + `"}]`},
		{"key in a status array", hostileOp{"FetchEvaluationStatus", "single", func(ctx context.Context, c *Client) error {
			_, err := c.FetchEvaluationStatus(ctx, "e-1")
			return err
		}}, `{"status":["` + hostileKey + `"]}`},
		{"bad Location header", hostileGetVariant, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := hostileServe(t, 200, nil, tc.body)
			if tc.body == "" {
				base = hostileServe(t, 302, http.Header{"Location": {"http://[::1%" + hostileKey + "/"}}, "")
			}
			c := hostileClient(t, base, WithMaxRetries(0))
			err := tc.op.run(context.Background(), c)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tc.op.name)
			}
			for _, e := range reviewChain(err) {
				if strings.Contains(e.Error(), hostileKey) {
					t.Errorf("%T in the chain holds the key: %.300q", e, e.Error())
				}
			}
		})
	}
}

// Every field of a 422's details is scrubbed and bounded, Type included:
// printing verr.Details with %#v shows no key.
func TestValidationDetailsScrubbed(t *testing.T) {
	body := `{"detail":[{"loc":["body","` + hostileKey + `"],"msg":"m ` + hostileKey + `","type":"` +
		hostileEscapeAll(hostileKey) + strings.Repeat("t", 1<<16) + `","input":"` + hostileKey + `"}]}`
	c := hostileClient(t, hostileServe(t, 422, nil, body), WithMaxRetries(0))
	err := hostileAddVariant.run(context.Background(), c)
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Details) != 1 {
		t.Fatalf("got %v, want a *ValidationError with one detail", err)
	}
	if printed := fmt.Sprintf("%#v", verr.Details); strings.Contains(printed, hostileKey) || len(printed) > hostileMaxError {
		t.Errorf("the details, printed, hold the key or are %d bytes (want at most %d): %.300q", len(printed), hostileMaxError, printed)
	}
}

// Text full of "…" (which marks where a cut may have split a secret) costs
// the scrub time in proportion to the part of it kept, not to what the
// server sent: a created_at and a Location of many "…".
func TestScrubWorkBounded(t *testing.T) {
	dots := strings.Repeat("…", 300_000) // 900 KB
	cases := []struct {
		name   string
		op     hostileOp
		status int
		header http.Header
		body   string
	}{
		{"created_at", hostileListHuman, 200, nil, `[{"id":"h-1","created_at":"` + dots + `"}]`},
		{"bad Location", hostileGetVariant, 302, http.Header{"Location": {"http://[::1%" + dots}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, hostileServe(t, tc.status, tc.header, tc.body), WithMaxRetries(0))
			took, err := hostileElapsed(context.Background(), c, tc.op)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tc.op.name)
			}
			if took > 10*time.Second {
				t.Errorf("%s returned after %s, want well within 10s", tc.op.name, took)
			}
			hostileCheckError(t, err)
		})
	}
}

// fuzzKey is the API key of FuzzHostileErrorPath. Its '+', '/' and '='
// make each encoding of it differ from the others.
const fuzzKey = "fz+Key/with=Specials.0123456789abcdef"

// fuzzEncodings are the ways a server may echo the key: raw, as JSON with
// some or all characters \u-escaped, percent-encoded, base64 and hex.
var fuzzEncodings = []func(string) string{
	func(s string) string { return s },
	hostileEscapeAll,
	func(s string) string { // every other character \u-escaped
		var b strings.Builder
		for i, r := range s {
			if i%2 == 0 {
				b.WriteString(hostileEscapeAll(string(r)))
			} else {
				b.WriteRune(r)
			}
		}
		return b.String()
	},
	url.QueryEscape,
	func(s string) string { // every byte percent-encoded
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{s[i]})))
		}
		return b.String()
	},
	func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
	func(s string) string { return hex.EncodeToString([]byte(s)) },
}

// fuzzAnswer is a fixed answer to every request.
type fuzzAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a *fuzzAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: a.status, Status: strconv.Itoa(a.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: a.header.Clone(), Body: io.NopCloser(bytes.NewReader(a.body)),
		ContentLength: int64(len(a.body)), Request: req,
	}, nil
}

// fuzzLeak returns the name of the form in which msg holds the key, or "".
// It looks for every encoding of fuzzEncodings, and for the raw key once
// \u escapes and percent escapes in msg are decoded.
func fuzzLeak(msg string) string {
	for i, enc := range fuzzEncodings {
		if strings.Contains(msg, enc(fuzzKey)) {
			return "encoding " + strconv.Itoa(i)
		}
	}
	if strings.Contains(unescapeUnicode(msg), fuzzKey) {
		return "\\u escapes"
	}
	if unescaped, err := url.PathUnescape(msg); err == nil && strings.Contains(unescaped, fuzzKey) {
		return "percent escapes"
	}
	return ""
}

// unescapeUnicode decodes each \uXXXX in s.
func unescapeUnicode(s string) string {
	return unicodeEscape.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.ParseUint(m[2:], 16, 32)
		return string(rune(n))
	})
}

var unicodeEscape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}`)

// FuzzHostileErrorPath sends the SDK's operations a random status, headers
// and body, with the API key echoed in a random encoding at a random place
// (the body or the Location header). Whatever comes back, err.Error() is
// bounded and never holds the key in any of those encodings, and no
// operation panics.
func FuzzHostileErrorPath(f *testing.F) {
	f.Add(uint16(404), "", []byte(`{"detail":"no variant "}`), uint8(0), uint16(21), uint8(0))
	f.Add(uint16(422), "", []byte(`{"detail":[{"loc":["body"],"msg":"bad ","type":"x"}]}`), uint8(1), uint16(44), uint8(1))
	f.Add(uint16(200), "", []byte(`[{"id":"h-1","created_at":""}]`), uint8(2), uint16(27), uint8(2))
	f.Add(uint16(200), "", []byte(`""`), uint8(1), uint16(1), uint8(2))
	f.Add(uint16(302), "Location: http://[::1%", []byte(``), uint8(3), uint16(0), uint8(0x80))
	f.Add(uint16(307), "Location: /api/x?k=", []byte(``), uint8(4), uint16(0), uint8(0x81))
	f.Add(uint16(500), "Content-Type: text/html", []byte(`<html><title>oops </title></html>`), uint8(5), uint16(19), uint8(0))
	f.Add(uint16(401), "", []byte(`{"detail":{"message":""}}`), uint8(6), uint16(22), uint8(0))
	f.Add(uint16(200), "", []byte(`[{"id":"s-1","evaluation_id":""}]`), uint8(7), uint16(30), uint8(3))
	f.Add(uint16(101), "Upgrade: x", []byte(`x`), uint8(0), uint16(0), uint8(0))

	f.Fuzz(func(t *testing.T, status uint16, headers string, body []byte, encoding uint8, at uint16, how uint8) {
		echo := fuzzEncodings[int(encoding)%len(fuzzEncodings)](fuzzKey)
		header := http.Header{}
		for _, line := range strings.Split(headers, "\n") {
			name, value, ok := strings.Cut(line, ":")
			if ok && validHeaderName(strings.TrimSpace(name)) {
				header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
			}
		}
		if how&0x80 != 0 {
			header.Set("Location", header.Get("Location")+echo)
		} else {
			i := int(at) % (len(body) + 1)
			body = append(append(append([]byte{}, body[:i]...), echo...), body[i:]...)
		}
		code := int(status) % 600
		if code < 100 {
			code += 100
		}
		answer := &fuzzAnswer{status: code, header: header, body: body}
		c := newTestClient(t, "http://127.0.0.1:1/api", WithAPIKey(fuzzKey), WithMaxRetries(0),
			WithTimeout(2*time.Second), WithHTTPClient(&http.Client{Transport: answer}))
		ops := []hostileOp{hostileGetVariant, hostileAddVariant, hostileListHuman, hostileStream}
		op := ops[int(how&0x7f)%len(ops)]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := op.run(ctx, c)
		if err == nil {
			return
		}
		msg := err.Error()
		if len(msg) > hostileMaxError {
			t.Errorf("%s: err.Error() is %d bytes, want at most %d: %.200q…", op.name, len(msg), hostileMaxError, msg)
		}
		if !utf8.ValidString(msg) {
			t.Errorf("%s: err.Error() is not valid UTF-8: %.200q", op.name, msg)
		}
		if form := fuzzLeak(msg); form != "" {
			t.Errorf("%s: err.Error() holds the key (%s): %q", op.name, form, msg)
		}
	})
}

// After the engine's plumbing change (answerError reads the call's
// request; the secret set is two *text.Secrets), no form of the key or
// of a header's value shows in any text of the error a non-2xx answer
// becomes: err.Error(), %+v, every error of the chain, the APIError's
// Message and Body, for a read and for a create (whose redirect note
// differs), with the credential echoed in the Location, in the body, in
// a 422's details, encoded, and cut at the body's bound.
func TestAnswerErrorsHoldNoSecret(t *testing.T) {
	const header = "xHeAdErSeCrEt-0123456789"
	forms := func(s string) []string {
		return []string{s, url.QueryEscape(s), url.PathEscape(s), strings.ToUpper(s), base64.StdEncoding.EncodeToString([]byte(s))}
	}
	cut := strings.Repeat("a", maxErrorBody-len(hostileKey)/2)
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		body   string
	}{
		{"redirect with the key in the user and query", 302, http.Header{"Location": {"http://u:" + hostileKey + "@127.0.0.1:9/x?k=" + url.QueryEscape(hostileKey) + "&h=" + header}}, `{"detail":"moved"}`},
		{"307 with the key percent-encoded in the path", 307, http.Header{"Location": {"/api/" + url.PathEscape(hostileKey) + "/" + header}}, ""},
		{"401 echoing the Authorization header", 401, nil, `{"detail":"bad key: ApiKey ` + hostileKey + ` and X-Custom: ` + header + `"}`},
		{"422 echoing the key in loc, msg and input", 422, nil, `{"detail":[{"loc":["header","` + hostileKey + `"],"msg":"bad ` + header + `","type":"t","input":"` + hostileKey + `"}]}`},
		{"500 with the key JSON-escaped", 500, nil, `{"detail":"` + strings.ReplaceAll(hostileKey, ".", `\u002e`) + `"}`},
		{"500 with the key cut by the body's bound", 500, nil, cut + hostileKey + "tail"},
	} {
		for _, op := range []hostileOp{hostileGetVariant, hostileAddVariant} {
			t.Run(tc.name+"/"+op.name, func(t *testing.T) {
				base := hostileServe(t, tc.status, tc.header, tc.body)
				c := hostileClient(t, base, WithHeader("X-Custom", header), WithMaxRetries(0))
				err := op.run(context.Background(), c)
				if err == nil {
					t.Fatal("no error")
				}
				texts := []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
				for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
					texts = append(texts, e.Error())
				}
				var apiErr *APIError
				if errors.As(err, &apiErr) {
					texts = append(texts, apiErr.Message, string(apiErr.Body))
				}
				var verr *ValidationError
				if errors.As(err, &verr) {
					for _, d := range verr.Details {
						texts = append(texts, d.String(), string(d.Input))
					}
				}
				for _, text := range texts {
					for _, secret := range append(forms(hostileKey), append(forms(header), hostileKey[:len(hostileKey)/2], hostileKey[len(hostileKey)/2:])...) {
						if strings.Contains(text, secret) {
							t.Errorf("%.200q… holds %q", text, secret)
						}
					}
				}
			})
		}
	}
}
