package agenta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	body422 = `{"detail":[` +
		`{"loc":["query","app_id"],"msg":"field required","type":"value_error.missing"},` +
		`{"loc":["body","variant_ids",0],"msg":"str type expected","type":"type_error.str","input":42,"url":"https://errors.pydantic.dev/2/v/string_type"}]}`
	body400 = `{"detail":"Missing LM provider Key"}`
	body500 = `{"detail":"App Variant not found"}`
)

// Every operation turns 400, 422 and 500 into typed errors that keep the
// status, method, path, message and body, and none of them is retried.
func TestOperationErrorAnswers(t *testing.T) {
	for _, op := range operations() {
		for _, tc := range []struct {
			status   int
			body     string
			sentinel error
			message  string
		}{
			{400, body400, ErrBadRequest, "Missing LM provider Key"},
			{422, body422, ErrValidation, "query.app_id: field required; body.variant_ids.0: str type expected"},
			{500, body500, ErrServer, "App Variant not found"},
		} {
			t.Run(fmt.Sprintf("%s/%d", op.name, tc.status), func(t *testing.T) {
				c := gockClient(t)
				expect(op.method, op.path, op.query).replyJSON(tc.status, tc.body)

				err := op.call(context.Background(), c)

				apiErr := requireAPIError(t, err, tc.status, op.method, op.path)
				assert.Equal(t, tc.message, apiErr.Message, "message")
				assert.Equal(t, tc.body, string(apiErr.Body), "body")
				assert.True(t, errors.Is(err, tc.sentinel), "expected errors.Is(err, %v) for %d, got false: %v", tc.sentinel, tc.status, err)
				for _, other := range []error{ErrBadRequest, ErrValidation, ErrServer, ErrNotFound, ErrInvalidArgument} {
					if other == ErrNotFound && tc.status == 500 && op.name == "GetVariantByEnvironment" {
						// The service's not-found answer there (TestNotFoundAs500).
						assert.True(t, errors.Is(err, other), "expected errors.Is(err, ErrNotFound) for %q", tc.message)
						continue
					}
					if other != tc.sentinel {
						assert.False(t, errors.Is(err, other), "expected errors.Is(err, %v) false for %d", other, tc.status)
					}
				}
				assert.Contains(t, err.Error(), fmt.Sprint(tc.status), "the error string must keep the status")
				assert.Contains(t, err.Error(), op.path, "the error string must keep the path")
				assertNoSecret(t, "error string", err.Error())

				var verr *ValidationError
				if tc.status == 422 {
					require.True(t, errors.As(err, &verr), "expected a *ValidationError for 422, got %T", err)
					assert.Equal(t, 422, verr.StatusCode)
					require.Len(t, verr.Details, 2)
					assert.Equal(t, []any{"query", "app_id"}, verr.Details[0].Loc)
					assert.Equal(t, []any{"body", "variant_ids", 0}, verr.Details[1].Loc, "integer loc items must decode as int")
					assert.IsType(t, 0, verr.Details[1].Loc[2])
					assert.Equal(t, "field required", verr.Details[0].Msg)
					assert.Equal(t, "value_error.missing", verr.Details[0].Type)
					assert.JSONEq(t, `42`, string(verr.Details[1].Input))
					assert.Contains(t, verr.Error(), "query.app_id: field required")
				} else {
					assert.False(t, errors.As(err, &verr), "expected no *ValidationError for %d", tc.status)
				}
				assertAllSent(t) // exactly one attempt: a retry would be unmatched
			})
		}
	}
}

func TestSentinelsMatchStatus(t *testing.T) {
	t.Parallel()
	sentinels := []error{ErrBadRequest, ErrUnauthorized, ErrForbidden, ErrNotFound, ErrValidation, ErrRateLimited, ErrServer}
	for _, tc := range []struct {
		status int
		want   error // nil: no sentinel
	}{
		{400, ErrBadRequest}, {401, ErrUnauthorized}, {403, ErrForbidden}, {404, ErrNotFound},
		{422, ErrValidation}, {429, ErrRateLimited}, {500, ErrServer}, {502, ErrServer},
		{503, ErrServer}, {504, ErrServer}, {599, ErrServer}, {409, nil}, {418, nil}, {302, nil},
	} {
		err := newAPIError(tc.status, "GET", "/api/x", nil)
		for _, s := range sentinels {
			assert.Equal(t, s == tc.want, errors.Is(err, s), "errors.Is(%d, %v)", tc.status, s)
		}
		assert.False(t, errors.Is(err, ErrInvalidArgument), "a server answer is never ErrInvalidArgument")
		var apiErr *APIError
		require.True(t, errors.As(err, &apiErr), "status %d: expected *APIError, got %T", tc.status, err)
		assert.Equal(t, tc.status, apiErr.StatusCode)
		// Wrapped by the caller, the sentinel still matches.
		wrapped := fmt.Errorf("loading: %w", err)
		if tc.want != nil {
			assert.True(t, errors.Is(wrapped, tc.want), "wrapped %d must match %v", tc.status, tc.want)
		}
	}
}

func TestAPIErrorMessage(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("upstream failure ", 200)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"detail string", `{"detail":"App not found"}`, "App not found"},
		{"detail padded", `  {"detail":"  App not found \n"}  `, "App not found"},
		{"message field", `{"message":"rate limited"}`, "rate limited"},
		{"error field", `{"error":"boom"}`, "boom"},
		{"detail object", `{"detail":{"code":7}}`, `{"code":7}`},
		{"plain text", "upstream connect error\n", "upstream connect error"},
		{"html title", "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>", "502 Bad Gateway"},
		{"html without title", "<html><body><h1>Service Unavailable</h1><p>try later</p></body></html>", "Service Unavailable try later"},
		{"empty", "", ""},
		{"not json but braces", "{oops", "{oops"},
		{"invalid utf8", "bad \xff byte", "bad \uFFFD byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newAPIError(502, "GET", "/api/x", []byte(tc.body))
			var apiErr *APIError
			require.True(t, errors.As(err, &apiErr))
			assert.Equal(t, tc.want, apiErr.Message)
			assert.Equal(t, tc.body, string(apiErr.Body), "the body is kept as sent")
		})
	}
	t.Run("long text is cut short", func(t *testing.T) {
		err := newAPIError(500, "GET", "/api/x", []byte(long))
		var apiErr *APIError
		require.True(t, errors.As(err, &apiErr))
		assert.LessOrEqual(t, utf8.RuneCountInString(apiErr.Message), maxMessage+1, "message length")
		assert.True(t, strings.HasPrefix(apiErr.Message, "upstream failure upstream"), "message %q", apiErr.Message)
		assert.True(t, strings.HasSuffix(apiErr.Message, "…"), "a cut message is marked: %q", apiErr.Message)
		assert.Len(t, apiErr.Body, len(long), "the body is not cut by the message limit")
	})
}

func TestValidationErrorString(t *testing.T) {
	t.Parallel()
	err := newAPIError(422, "GET", "/api/apps/get_variant_by_env",
		[]byte(`{"detail":[{"loc":["query","app_id"],"msg":"field required","type":"value_error.missing"}]}`))
	var verr *ValidationError
	require.True(t, errors.As(err, &verr))
	assert.Equal(t, "agenta: GET /api/apps/get_variant_by_env: 422 Unprocessable Entity: query.app_id: field required", verr.Error())
	assert.Equal(t, "query.app_id", verr.Details[0].Field())
	assert.Equal(t, "query.app_id: field required", verr.Details[0].String())

	// A 422 that is not FastAPI's shape is still a *ValidationError.
	err = newAPIError(422, "POST", "/api/evaluations", []byte(`{"detail":"bad shape"}`))
	require.True(t, errors.As(err, &verr))
	assert.Empty(t, verr.Details)
	assert.Equal(t, "bad shape", verr.Message)
	assert.True(t, errors.Is(err, ErrValidation))

	// A zero ValidationError does not panic.
	var zero ValidationError
	assert.Equal(t, "agenta: validation failed", zero.Error())
	assert.True(t, errors.Is(&zero, ErrValidation))
	assert.Nil(t, zero.Unwrap())
}

func TestValidationDetailLoc(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		json string
		want []any
		ok   bool
	}{
		{`{"loc":["body","variant_ids",0],"msg":"m","type":"t"}`, []any{"body", "variant_ids", 0}, true},
		{`{"loc":["body","rate_limit","batch_size"],"msg":"m","type":"t"}`, []any{"body", "rate_limit", "batch_size"}, true},
		{`{"loc":[12, "x"],"msg":"m","type":"t"}`, []any{12, "x"}, true},
		{`{"loc":[],"msg":"m","type":"t"}`, []any{}, true},
		{`{"loc":null,"msg":"m","type":"t"}`, nil, true},
		// Items no server sends are kept as their JSON text rather than
		// losing every detail.
		{`{"loc":[1.5],"msg":"m","type":"t"}`, []any{"1.5"}, true},
		{`{"loc":[true, 99999999999999999999],"msg":"m","type":"t"}`, []any{"true", "99999999999999999999"}, true},
		{`{"loc":"body","msg":"m","type":"t"}`, nil, false},
	} {
		var d ValidationDetail
		err := json.Unmarshal([]byte(tc.json), &d)
		if !tc.ok {
			assert.Error(t, err, "expected %s to be refused", tc.json)
			continue
		}
		require.NoError(t, err, tc.json)
		assert.Equal(t, tc.want, d.Loc, tc.json)
		assert.Equal(t, "m", d.Msg)
	}
	// An odd loc item keeps the details, and the message says which field.
	err := newAPIError(422, "GET", "/api/x", []byte(`{"detail":[{"loc":["body",1.5],"msg":"m","type":"t"}]}`))
	var verr *ValidationError
	require.True(t, errors.As(err, &verr))
	require.Len(t, verr.Details, 1)
	assert.Equal(t, "body.1.5: m", verr.Message)
	// A detail list the SDK cannot parse still yields a readable message.
	err = newAPIError(422, "GET", "/api/x", []byte(`{"detail":[{"loc":"body","msg":"m","type":"t"}]}`))
	var apiErr *APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Contains(t, apiErr.Message, `"msg":"m"`)
}

// The body is kept up to 1 MiB, never more.
func TestErrorBodyLimit(t *testing.T) {
	c := gockClient(t)
	big := strings.Repeat("x", maxErrorBody+4096)
	expect("GET", "/api/variants/v", "").Reply(http.StatusInternalServerError).BodyString(big)

	_, err := c.GetVariant(context.Background(), "v")

	apiErr := requireAPIError(t, err, 500, "GET", "/api/variants/v")
	assert.Len(t, apiErr.Body, maxErrorBody, "body kept")
	assert.LessOrEqual(t, utf8.RuneCountInString(apiErr.Message), maxMessage+1, "message length")
	assertAllSent(t)
}

// A server that echoes the request's credentials does not leak them through
// the error.
func TestErrorBodyScrubsEchoedSecrets(t *testing.T) {
	c := gockClient(t)
	echo := `{"detail":[{"loc":["body","lm_providers_keys","OPENAI_API_KEY"],"msg":"bad key","type":"value_error",` +
		`"input":{"OPENAI_API_KEY":"` + testProviderKey + `"}}],"auth":"` + testKey + `"}`
	expect("POST", "/api/evaluations", "").replyJSON(422, echo)

	_, err := c.CreateEvaluation(context.Background(), validNewEvaluation())

	var verr *ValidationError
	require.True(t, errors.As(err, &verr), "expected *ValidationError, got %T", err)
	assertNoSecret(t, "error string", err.Error())
	assertNoSecret(t, "error body", string(verr.Body))
	assertNoSecret(t, "validation input", string(verr.Details[0].Input))
	assertNoSecret(t, "%+v of the error", fmt.Sprintf("%+v", err))
	assert.Contains(t, string(verr.Body), "[REDACTED]")
	assertAllSent(t)
}

// Credentials passed as headers (a session cookie, an X-Api-Key, a bearer
// token) are scrubbed from echoed error bodies too.
func TestErrorBodyScrubsHeaderCredentials(t *testing.T) {
	for _, tc := range []struct {
		name, header, value, secret string
	}{
		{"cookie", "Cookie", "sAccessToken=COOKIE-SECRET-1", "COOKIE-SECRET-1"},
		{"x-api-key", "X-Api-Key", "XKEY-SECRET-2", "XKEY-SECRET-2"},
		{"bearer", "Authorization", "Bearer JWT-SECRET-3", "JWT-SECRET-3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t, WithHeader(tc.header, tc.value))
			if tc.header == "Authorization" {
				c = gockClient(t, WithAPIKey(tc.value))
			}
			expect("GET", "/api/variants/v", "").replyJSON(401, `{"detail":"bad credentials: `+tc.secret+`"}`)

			_, err := c.GetVariant(context.Background(), "v")

			apiErr := requireAPIError(t, err, 401, "GET", "/api/variants/v")
			assert.True(t, errors.Is(err, ErrUnauthorized))
			assert.NotContains(t, err.Error(), tc.secret)
			assert.NotContains(t, string(apiErr.Body), tc.secret)
			assert.Equal(t, "bad credentials: [REDACTED]", apiErr.Message)
			assertAllSent(t)
		})
	}
}

func TestCredentialParts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value      string
		want, skip []string
	}{
		{"k.secret", []string{"k.secret"}, nil},
		{"Bearer eyJhbGciOi.payload.sig", []string{"Bearer eyJhbGciOi.payload.sig", "eyJhbGciOi.payload.sig"}, []string{"Bearer"}},
		{`theme=dark; sAccessToken="tok-1234567890"; sFrontToken=ft-abcdefgh==`,
			[]string{"tok-1234567890", "ft-abcdefgh=="}, []string{"dark", "theme"}},
	} {
		got := credentialParts(tc.value, true)
		assert.Contains(t, got, tc.value, "the whole value is a secret")
		for _, w := range tc.want {
			assert.Contains(t, got, w, "%q: expected %q among %q", tc.value, w, got)
		}
		for _, s := range tc.skip {
			assert.NotContains(t, got, s, "%q: short parts are not scrubbed everywhere", tc.value)
		}
	}
}

func TestArgumentError(t *testing.T) {
	t.Parallel()
	err := invalidField("NewEvaluation.AppID", "app_id", "is required")
	assert.Equal(t, "agenta: invalid argument NewEvaluation.AppID (app_id): is required", err.Error())
	assert.True(t, errors.Is(err, ErrInvalidArgument))
	assert.True(t, errors.Is(fmt.Errorf("wrapped: %w", err), ErrInvalidArgument))
	var argErr *ArgumentError
	require.True(t, errors.As(err, &argErr))
	assert.Equal(t, "NewEvaluation.AppID", argErr.Name)
	assert.Equal(t, "app_id", argErr.Field)
	assert.False(t, errors.Is(err, ErrBadRequest))

	same := invalidField("environment", "environment", "is blank")
	assert.Equal(t, "agenta: invalid argument environment: is blank", same.Error())
}

// Runes whose lower case has another byte length must not throw the title
// search off: that sliced the page out of range, or garbled the message.
func TestPlainTextTitleWithUnicodeCase(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{strings.Repeat("Ⱥ", 100), strings.Repeat("\u212a", 100)} {
		body := prefix + "<TITLE>502 Bad Gateway</title><body>nginx</body>"
		assert.NotPanics(t, func() {
			assert.Equal(t, "502 Bad Gateway", plainText([]byte(body)))
		})
		err := newAPIError(502, "GET", "/api/x", []byte(body))
		assert.Contains(t, err.Error(), ": 502 Bad Gateway")
	}
}

// An empty detail string is no message, not two quote characters.
func TestEmptyDetailMessage(t *testing.T) {
	t.Parallel()
	err := newAPIError(500, "GET", "/api/x", []byte(`{"detail":""}`))
	var apiErr *APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, `{"detail":""}`, apiErr.Message, "falls back to the body text")
	assert.NotEqual(t, `""`, apiErr.Message)
}

// The server's message reads as a person would say it: detail.message of
// newer servers, no status said twice, and the body kept as sent.
func TestReadableMessages(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		body        string
		wantMessage string
		wantError   string
	}{
		{"detail.message of newer servers", 401, `{"detail":{"message":"Unauthorized"}}`,
			"Unauthorized", "agenta: GET /api/x: 401 Unauthorized"},
		{"detail.message with other fields", 403, `{"detail":{"message":"No access to this workspace","code":"x"}}`,
			"No access to this workspace", "agenta: GET /api/x: 403 Forbidden: No access to this workspace"},
		{"status prefix dropped", 404, `{"detail":"404: App not found"}`,
			"App not found", "agenta: GET /api/x: 404 Not Found: App not found"},
		{"status prefix without a space", 404, `{"detail":"404:Evaluation with id X not found"}`,
			"Evaluation with id X not found", "agenta: GET /api/x: 404 Not Found: Evaluation with id X not found"},
		{"another status's prefix kept", 500, `{"detail":"404: App not found"}`,
			"404: App not found", "agenta: GET /api/x: 500 Internal Server Error: 404: App not found"},
		{"a number that is not a prefix kept", 400, `{"detail":"4000 rows is too many"}`,
			"4000 rows is too many", "agenta: GET /api/x: 400 Bad Request: 4000 rows is too many"},
		{"prefix alone kept", 404, `{"detail":"404:"}`,
			"404:", "agenta: GET /api/x: 404 Not Found: 404:"},
		{"default 500 page said once", 500, `Internal Server Error`,
			"Internal Server Error", "agenta: GET /api/x: 500 Internal Server Error"},
		{"default 500 detail said once", 500, `{"detail":"Internal Server Error"}`,
			"Internal Server Error", "agenta: GET /api/x: 500 Internal Server Error"},
		{"default 502 page said once", 502, "<html><head><title>502 Bad Gateway</title></head></html>",
			"502 Bad Gateway", "agenta: GET /api/x: 502 Bad Gateway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newAPIError(tc.status, "GET", "/api/x", []byte(tc.body))
			var apiErr *APIError
			require.True(t, errors.As(err, &apiErr), "expected *APIError, got %T", err)
			assert.Equal(t, tc.wantMessage, apiErr.Message, "Message")
			assert.Equal(t, tc.wantError, err.Error(), "Error()")
			assert.Equal(t, tc.body, string(apiErr.Body), "Body is kept raw")
		})
	}
	t.Run("a long detail.message is cut", func(t *testing.T) {
		long := strings.Repeat("x", 5000)
		err := newAPIError(401, "GET", "/api/x", []byte(`{"detail":{"message":"`+long+`"}}`))
		var apiErr *APIError
		require.True(t, errors.As(err, &apiErr))
		assert.LessOrEqual(t, utf8.RuneCountInString(apiErr.Message), maxMessage+1, "message length")
		assert.True(t, strings.HasSuffix(apiErr.Message, "…"), "a cut message is marked: %q", apiErr.Message)
	})
}

// Each of the service's not-found-as-500 texts matches ErrNotFound on its
// own operation, and only there; ErrServer matches everywhere.
func TestNotFoundAs500(t *testing.T) {
	for _, op := range operations() {
		for _, answer := range notFoundAnswers {
			for _, prefix := range []string{"", "500: "} {
				t.Run(op.name+"/"+prefix+answer.message, func(t *testing.T) {
					c := gockClient(t)
					body, _ := json.Marshal(map[string]string{"detail": prefix + answer.message})
					expect(op.method, op.path, op.query).replyJSON(500, string(body))

					err := op.call(context.Background(), c)

					apiErr := requireAPIError(t, err, 500, op.method, op.path)
					assert.Equal(t, op.name, apiErr.Operation, "Operation")
					assert.Equal(t, answer.message, apiErr.Message, "Message")
					assert.True(t, errors.Is(err, ErrServer), "expected ErrServer to match a 500, got false: %v", err)
					own := answer.operation == op.name
					assert.Equal(t, own, errors.Is(err, ErrNotFound),
						"errors.Is(err, ErrNotFound) for %q on %s: want %v", answer.message, op.name, own)
					if own {
						assert.Contains(t, err.Error(), answer.missing+" does not exist", "the error says what is missing")
					}
					assertAllSent(t) // a 500 is never retried
				})
			}
		}
	}
}

// Operation and Message decide, so that an APIError a caller builds in a
// fake behaves as the SDK's own.
func TestNotFoundAs500Fields(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *APIError
		want bool
	}{
		{"the SDK's answer", &APIError{StatusCode: 500, Operation: "GetVariant", Message: "'NoneType' object has no attribute 'base_id'"}, true},
		{"another operation", &APIError{StatusCode: 500, Operation: "GetSpan", Message: "'NoneType' object has no attribute 'base_id'"}, false},
		{"no operation", &APIError{StatusCode: 500, Message: "App Variant not found"}, false},
		{"another status", &APIError{StatusCode: 502, Operation: "GetVariantByEnvironment", Message: "App Variant not found"}, false},
		{"another text", &APIError{StatusCode: 500, Operation: "AddVariantFromBase", Message: "App variant with the same name already exists"}, false},
		{"a plain 404", &APIError{StatusCode: 404}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, errors.Is(tc.err, ErrNotFound), "errors.Is(%+v, ErrNotFound)", *tc.err)
		})
	}
}

// docs/errors.md lists the table, with each operation.
func TestNotFoundTableDocumented(t *testing.T) {
	page, err := os.ReadFile("docs/errors.md")
	require.NoError(t, err)
	for _, a := range notFoundAnswers {
		row := "| `" + a.operation + "` | `" + a.message + "` |"
		assert.True(t, strings.Contains(string(page), row), "docs/errors.md lacks the row %q", row)
	}
}

// A body JSON cannot carry is refused before sending, with the Go path of the
// part at fault and no "json:" prefixes.
func TestUnencodableBodyNamesTheField(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for _, tc := range []struct {
		name       string
		parameters map[string]any
		want       string
	}{
		{"NaN", map[string]any{"model": "gpt-4o", "temperature": math.NaN()},
			`agenta: invalid argument AddVariantFromBase.Parameters["temperature"]: NaN cannot be sent as JSON`},
		{"+Inf deep in a list", map[string]any{"inputs": []any{map[string]any{"name": "country", "weight": math.Inf(1)}}},
			`agenta: invalid argument AddVariantFromBase.Parameters["inputs"][0]["weight"]: +Inf cannot be sent as JSON`},
		{"-Inf float32", map[string]any{"top_p": float32(math.Inf(-1))},
			`agenta: invalid argument AddVariantFromBase.Parameters["top_p"]: -Inf cannot be sent as JSON`},
		{"a pointer to NaN", map[string]any{"t": ptr(math.NaN())},
			`agenta: invalid argument AddVariantFromBase.Parameters["t"]: NaN cannot be sent as JSON`},
		{"a channel", map[string]any{"stream": make(chan int)},
			`agenta: invalid argument AddVariantFromBase.Parameters["stream"]: a chan cannot be sent as JSON`},
		{"a function", map[string]any{"hook": func() {}},
			`agenta: invalid argument AddVariantFromBase.Parameters["hook"]: a func cannot be sent as JSON`},
		{"a complex number", map[string]any{"z": complex(1, 2)},
			`agenta: invalid argument AddVariantFromBase.Parameters["z"]: a complex128 cannot be sent as JSON`},
		{"a cycle", map[string]any{"loop": cyclic},
			`agenta: invalid argument AddVariantFromBase.Parameters["loop"]["self"]: a value that contains itself cannot be sent as JSON`},
		{"a failing MarshalJSON", map[string]any{"custom": failingMarshaler{}},
			`agenta: invalid argument AddVariantFromBase.Parameters["custom"]: its value (no encoding for this) cannot be sent as JSON`},
		{"the first in key order", map[string]any{"b": math.NaN(), "a": math.Inf(1)},
			`agenta: invalid argument AddVariantFromBase.Parameters["a"]: +Inf cannot be sent as JSON`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t)
			v := validAddVariant()
			v.Parameters = tc.parameters

			_, err := c.AddVariantFromBase(context.Background(), v)

			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrInvalidArgument), "expected ErrInvalidArgument, got %v", err)
			assert.Equal(t, tc.want, err.Error())
			assert.NotContains(t, err.Error(), "json:", "encoding/json's prefixes")
			assertNothingUnmatched(t) // nothing was sent
		})
	}
}

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("no encoding for this") }

// The walk names fields as Go code writes them: through pointers,
// structs, promoted fields and arrays, skipping what JSON skips.
func TestUnencodableErrorPaths(t *testing.T) {
	type inner struct{ Scores [2]float64 }
	type Embedded struct{ Weight float64 }
	type body struct {
		Embedded
		Name    string
		Ignored float64 `json:"-"`
		hidden  float64
		Inner   *inner
		Keys    models.ProviderKeys
	}
	for _, tc := range []struct {
		name string
		body any
		want string
	}{
		{"array in a pointer", &body{Inner: &inner{Scores: [2]float64{1, math.NaN()}}},
			"agenta: invalid argument body.Inner.Scores[1]: NaN cannot be sent as JSON"},
		{"promoted field", body{Embedded: Embedded{Weight: math.Inf(1)}},
			"agenta: invalid argument body.Weight: +Inf cannot be sent as JSON"},
		{"ignored and unexported fields are not blamed", body{Ignored: math.NaN(), hidden: math.NaN(), Inner: &inner{Scores: [2]float64{math.Inf(-1)}}},
			"agenta: invalid argument body.Inner.Scores[0]: -Inf cannot be sent as JSON"},
		{"an int map key", map[int]float64{7: math.NaN()},
			"agenta: invalid argument body[7]: NaN cannot be sent as JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := unencodableError(tc.body, errors.New("json: unsupported value: NaN"))
			assert.Equal(t, tc.want, err.Error())
		})
	}
	t.Run("nothing found falls back to encoding/json's reason", func(t *testing.T) {
		err := unencodableError(struct{ A int }{1}, errors.New("json: error calling MarshalJSON for type x: json: boom"))
		assert.Equal(t, "agenta: invalid argument body: cannot be sent as JSON: error calling MarshalJSON for type x: boom", err.Error())
	})
}

func ptr[T any](v T) *T { return &v }

// On random nested parameters holding at most one value JSON cannot carry,
// the walk blames exactly that value, by its full path, whenever
// json.Marshal fails, and never blames anything when it succeeds.
func TestUnencodableWalkFindsTheOneBadValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	bads := []struct {
		value  any
		reason string
	}{{math.NaN(), "NaN"}, {math.Inf(1), "+Inf"}, {float32(math.Inf(-1)), "-Inf"}, {make(chan int), "a chan"}}
	found := 0
	for i := range 500 {
		var wantPath, wantReason string
		var build func(path string, depth int) any
		build = func(path string, depth int) any {
			switch n := rng.IntN(10); {
			case depth < 4 && n < 3:
				m := map[string]any{}
				for k := range rng.IntN(4) {
					key := fmt.Sprintf("k%d", k)
					m[key] = build(path+fmt.Sprintf("[%q]", key), depth+1)
				}
				return m
			case depth < 4 && n < 5:
				var list []any
				for k := range rng.IntN(4) {
					list = append(list, build(fmt.Sprintf("%s[%d]", path, k), depth+1))
				}
				return list
			case n == 5 && wantPath == "" && rng.IntN(2) == 0:
				b := bads[rng.IntN(len(bads))]
				wantPath, wantReason = path, b.reason
				return b.value
			case n == 6:
				return nil
			case n == 7:
				return rng.Float64()
			default:
				return fmt.Sprintf("s%d", rng.IntN(100))
			}
		}
		params := map[string]any{"root": build(`AddVariantFromBase.Parameters["root"]`, 0)}
		v := validAddVariant()
		v.Parameters = params
		_, marshalErr := json.Marshal(v)
		if (marshalErr != nil) != (wantPath != "") {
			t.Fatalf("case %d: json.Marshal error %v, but a bad value at %q", i, marshalErr, wantPath)
		}
		if marshalErr == nil {
			continue
		}
		found++
		err := unencodableError(v, marshalErr)
		want := "agenta: invalid argument " + wantPath + ": " + wantReason + " cannot be sent as JSON"
		if err.Error() != want {
			t.Fatalf("case %d: got %q, want %q", i, err, want)
		}
	}
	if found < 50 {
		t.Fatalf("only %d of 500 cases held a bad value; the generator needs more", found)
	}
}

// Item 5: every string built from server data is bounded and scrubbed
// after decoding; Body is scrubbed before it is cut.
func TestHostileErrorStrings(t *testing.T) {

	mib := strings.Repeat("x", 1<<20)
	cases := []struct {
		name   string
		op     hostileOp
		status int
		header http.Header
		body   string
	}{
		{"JSON string for a list (encoding/json path)", hostileListHuman, 200, nil,
			`"` + mib + hostileKey + mib + `"`},
		{"JSON string for a list (scenario path)", hostileFetchScenarios, 200, nil,
			`"` + mib + hostileKey + mib + `"`},
		{"JSON string for a stream", hostileStream, 200, nil, `"` + hostileKey + `"`},
		{"key in created_at", hostileListHuman, 200, nil,
			`[{"id":"h-1","created_at":"` + hostileKey + `"}]`},
		{"key in a long created_at", hostileListHuman, 200, nil,
			`[{"id":"h-1","created_at":"2024-06-26T12:22:31` + hostileKey + strings.Repeat("9", 5000) + `"}]`},
		{"key in created_at, escaped", hostileListHuman, 200, nil,
			`[{"id":"h-1","created_at":"` + hostileEscapeAll(hostileKey) + `"}]`},
		{"422 msg with the key escaped", hostileAddVariant, 422, nil,
			`{"detail":[{"loc":["body","parameters"],"msg":"bad key ` + hostileEscapeAll(hostileKey) + `","type":"value_error"}]}`},
		{"404 detail with the key escaped", hostileGetVariant, 404, nil,
			`{"detail":"no variant for ` + hostileEscapeAll(hostileKey) + `"}`},
		{"bad Location header", hostileGetVariant, 302,
			http.Header{"Location": {"http://[::1%" + hostileKey + "/"}}, ""},
		{"long bad Location header", hostileGetVariant, 302,
			http.Header{"Location": {"http://[::1%" + strings.Repeat("y", 60<<10) + hostileKey}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logged bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logged, nil))
			c := hostileClient(t, hostileServe(t, tc.status, tc.header, tc.body),
				WithMaxRetries(0), WithLogger(logger))
			err := tc.op.run(context.Background(), c)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tc.op.name)
			}
			hostileCheckError(t, err)
			if strings.Contains(logged.String(), hostileKey) {
				t.Errorf("the log holds the API key: %.300q…", logged.String())
			}
			if n := logged.Len(); n > 2*hostileMaxError {
				t.Errorf("the log is %d bytes for one failed call, want at most %d", n, 2*hostileMaxError)
			}
			var apiErr *APIError
			if errors.As(err, &apiErr) && bytes.Contains(apiErr.Body, []byte(hostileKey)) {
				t.Errorf("APIError.Body holds the API key")
			}
		})
	}
}

// Item 5: the 1 MiB cut of an error body never leaves a part of a key.
func TestHostileErrorBodyCut(t *testing.T) {

	for _, kept := range []int{1, 8, 14, len(hostileKey) - 1} {
		t.Run(strconv.Itoa(kept), func(t *testing.T) {
			body := strings.Repeat("x", maxErrorBody-kept) + hostileKey + strings.Repeat("z", 100)
			c := hostileClient(t, hostileServe(t, 400, http.Header{"Content-Type": {"text/plain"}}, body), WithMaxRetries(0))
			err := hostileGetVariant.run(context.Background(), c)
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("got %v, want an *APIError", err)
			}
			if len(apiErr.Body) > maxErrorBody {
				t.Errorf("Body is %d bytes, want at most %d", len(apiErr.Body), maxErrorBody)
			}
			tail := apiErr.Body[max(0, len(apiErr.Body)-len(hostileKey)):]
			for n := 4; n < len(hostileKey); n++ {
				if bytes.HasSuffix(tail, []byte(hostileKey[:n])) {
					t.Errorf("Body ends with the first %d bytes of the key: %q", n, tail)
					break
				}
			}
			hostileCheckError(t, err)
		})
	}
}

// Item 10: the sentinels tell "no answer came", "the attempt's timeout
// expired" and "the caller's context ended" apart, the message says which
// limit expired, and the cause stays wrapped.
func TestHostileFailureSentinels(t *testing.T) {

	stall, _ := hostileTCP(t, func(net.Conn, *http.Request) {}) // reads the request, never answers
	drop, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) { conn.Close() })
	partial, _ := hostileTCP(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"app_id\":")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/api"
	ln.Close()

	const attempt = 200 * time.Millisecond
	cases := []struct {
		name     string
		base     string
		opts     []Option
		ctxWait  time.Duration
		want     error
		notWant  []error
		mentions string
	}{
		{"attempt timeout, no retries", stall, []Option{WithTimeout(attempt), WithMaxRetries(0)}, time.Minute,
			ErrAttemptTimeout, []error{ErrNoResponse}, "WithTimeout"},
		{"attempt timeout, retries", stall, []Option{WithTimeout(attempt), WithMaxRetries(2)}, time.Minute,
			ErrAttemptTimeout, []error{ErrNoResponse}, "WithTimeout"},
		{"attempt timeout reading the body", partial, []Option{WithTimeout(attempt), WithMaxRetries(0)}, time.Minute,
			ErrAttemptTimeout, []error{ErrNoResponse}, "WithTimeout"},
		{"caller's context", stall, []Option{WithTimeout(0)}, attempt,
			context.DeadlineExceeded, []error{ErrAttemptTimeout, ErrNoResponse}, "context"},
		{"caller's context reading the body", partial, []Option{WithTimeout(0)}, attempt,
			context.DeadlineExceeded, []error{ErrAttemptTimeout, ErrNoResponse}, "context"},
		{"dropped connection", drop, []Option{WithTimeout(5 * time.Second)}, time.Minute,
			ErrNoResponse, []error{ErrAttemptTimeout, context.DeadlineExceeded}, ""},
		{"connection refused", refused, []Option{WithTimeout(5 * time.Second)}, time.Minute,
			ErrNoResponse, []error{ErrAttemptTimeout, context.DeadlineExceeded}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, tc.base, tc.opts...)
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctxWait)
			defer cancel()
			err := hostileGetVariant.run(ctx, c)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want an error matching %v", err, tc.want)
			}
			for _, other := range tc.notWant {
				if errors.Is(err, other) {
					t.Errorf("%v also matches %v; the sentinels must tell them apart", err, other)
				}
			}
			if tc.mentions != "" && !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("the message should say which limit expired (%q), got %q", tc.mentions, err)
			}
			var netErr net.Error
			if !errors.As(err, &netErr) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
				!errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%v: the cause (a net.Error, EOF or a deadline) is not wrapped", err)
			}
			hostileCheckError(t, err)
		})
	}
}

// FastAPI's route-level 404 matches ErrRouteNotFound and ErrNotFound on every
// operation, and its error says what to check.
func TestRouteNotFound(t *testing.T) {
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			c := gockClient(t)
			expect(op.method, op.path, op.query).replyJSON(404, `{"detail":"Not Found"}`)

			err := op.call(context.Background(), c)

			apiErr := requireAPIError(t, err, 404, op.method, op.path)
			assert.True(t, errors.Is(err, ErrRouteNotFound), "expected ErrRouteNotFound, got false: %v", err)
			assert.True(t, errors.Is(err, ErrNotFound), "expected ErrNotFound, got false: %v", err)
			assert.Equal(t, "Not Found", apiErr.Message, "Message keeps the server's text")
			want := "404 Not Found: the server has no route for this path; check that the base URL ends in the service's prefix, usually /api, and that the server's version has " + op.name
			assert.Contains(t, err.Error(), want)
			assertAllSent(t)
		})
	}
}

// Only FastAPI's exact route answer is a missing route; a 404 about a
// missing object is not.
func TestRouteNotFoundIsExact(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"FastAPI's answer", 404, `{"detail":"Not Found"}`, true},
		{"with whitespace", 404, " {\"detail\" : \"Not Found\"}\n", true},
		{"a missing object", 404, `{"detail":"404: App not found"}`, false},
		{"a missing variant", 404, `{"detail":"Variant with ID 'x' not found"}`, false},
		{"another field too", 404, `{"detail":"Not Found","hint":"x"}`, false},
		{"other case", 404, `{"detail":"not found"}`, false},
		{"plain text", 404, `Not Found`, false},
		{"empty", 404, ``, false},
		{"another status", 410, `{"detail":"Not Found"}`, false},
		{"a 500", 500, `{"detail":"Not Found"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newAPIError(tc.status, "GET", "/api/x", []byte(tc.body))
			assert.Equal(t, tc.want, errors.Is(err, ErrRouteNotFound), "errors.Is(%d %s, ErrRouteNotFound)", tc.status, tc.body)
			assert.Equal(t, tc.want, strings.Contains(err.Error(), "usually /api"), "the hint in %q", err)
			if tc.status == 404 {
				assert.True(t, errors.Is(err, ErrNotFound), "every 404 matches ErrNotFound")
			}
		})
	}
	assert.True(t, errors.Is(ErrRouteNotFound, ErrNotFound), "ErrRouteNotFound is a case of ErrNotFound")
	assert.False(t, errors.Is(ErrNotFound, ErrRouteNotFound), "ErrNotFound is not a case of ErrRouteNotFound")
}

// The reproduction: a base URL without /api against a server whose
// API lives under /api.
func TestBaseURLWithoutPrefixIsRouteNotFound(t *testing.T) {
	srv := agentatest.NewServer()
	t.Cleanup(srv.Close)
	root, ok := strings.CutSuffix(srv.URL(), "/api")
	require.True(t, ok, "the fake's URL %q should end in /api", srv.URL())
	c := newTestClient(t, root)

	_, err := c.GetVariant(context.Background(), "0190b5a2-7c1e-7d3a-9f00-4b1d2c3e4f50")

	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrRouteNotFound), "expected ErrRouteNotFound, got %v", err)
	assert.Contains(t, err.Error(), "usually /api")
}

// Each id is escaped as exactly one path segment, so no id reaches another
// endpoint.
func TestIDsAreEscapedAsOneSegment(t *testing.T) {
	for _, tc := range []struct{ id, segment string }{
		{"plain-id_1", "plain-id_1"},
		{"a/b", "a%2Fb"},
		{"../../admin", "..%2F..%2Fadmin"},
		{"a?b=c", "a%3Fb=c"},
		{"a#frag", "a%23frag"},
		{"100%", "100%25"},
		{"%2F", "%252F"},
		{"a b", "a%20b"},
		{"a..b", "a..b"},
		{"...", "..."},
		{"a;b", "a%3Bb"},
		{"a+b", "a+b"},
		{"über", "%C3%BCber"},
		{"/", "%2F"},
		{"\\..\\x", "%5C..%5Cx"},
	} {
		for _, op := range idOperations {
			t.Run(op.name+"/"+tc.id, func(t *testing.T) {
				c := gockClient(t, WithMaxRetries(0))
				path := op.prefix + tc.segment + op.suffix
				expect("GET", path, "").replyJSON(200, okBody(op.name))

				require.NoError(t, op.call(c, tc.id), "expected a request to %s", path)
				assertAllSent(t)
				assert.NotContains(t, tc.segment, "/", "one segment")
				got, err := url.PathUnescape(tc.segment)
				require.NoError(t, err)
				assert.Equal(t, tc.id, got, "the segment decodes back to the id")
			})
		}
	}
}

// Empty or meaningless ids are refused before anything is sent.
func TestMeaninglessIDsAreRefused(t *testing.T) {
	bad := []string{"", " ", "\t\n", ".", "..", "a\nb", "a\rb", "a\x00b", "a\x7fb"}
	type refusal struct {
		name, arg string
		inPath    bool
		call      func(c *Client, v string) error
	}
	var cases []refusal
	for _, op := range idOperations {
		cases = append(cases, refusal{op.name, map[string]string{
			"FetchEvaluationScenarios": "evaluationID", "GetVariant": "variantID", "GetSpan": "spanID",
			"FetchEvaluation": "evaluationID", "FetchEvaluationStatus": "evaluationID",
		}[op.name], true, op.call})
	}
	cases = append(cases,
		refusal{"GetVariantByEnvironment(app)", "appID", false, func(c *Client, v string) error {
			_, err := c.GetVariantByEnvironment(context.Background(), v, "production")
			return err
		}},
		refusal{"GetVariantByEnvironment(env)", "environment", false, func(c *Client, v string) error {
			_, err := c.GetVariantByEnvironment(context.Background(), "app-1", v)
			return err
		}},
		refusal{"WaitEvaluation", "evaluationID", true, func(c *Client, v string) error {
			_, err := c.WaitEvaluation(context.Background(), v, nil)
			return err
		}},
		refusal{"ListHumanEvaluations", "appID", false, func(c *Client, v string) error {
			_, err := c.ListHumanEvaluations(context.Background(), v)
			return err
		}},
	)
	for _, tc := range cases {
		for _, v := range bad {
			if (v == "." || v == "..") && !tc.inPath {
				continue // dot ids matter only in paths; query values are escaped
			}
			t.Run(fmt.Sprintf("%s/%q", tc.name, v), func(t *testing.T) {
				c := gockClient(t)

				err := tc.call(c, v)

				requireArgumentError(t, err, tc.arg)
				assertNothingUnmatched(t)
			})
		}
	}
}

// A body JSON cannot carry is refused before sending, naming the request.
func TestUnencodableBodyIsInvalidArgument(t *testing.T) {
	c := gockClient(t)
	v := validAddVariant()
	v.Parameters = map[string]any{"temperature": math.NaN()}

	_, err := c.AddVariantFromBase(context.Background(), v)

	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrInvalidArgument), "got %v", err)
	assert.Contains(t, err.Error(), "AddVariantFromBase")
	assertNothingUnmatched(t)
}
