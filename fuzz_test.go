package agenta

// Fuzz targets for the request engine's readers: the error-body decoder and
// the decoding of 2xx answers as the operations stream them. Seeds: f.Add
// below and testdata/fuzz/. Run one with
//
//	go test . -run '^$' -fuzz '^FuzzErrorBody$' -fuzztime 30s

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/require"
)

// FuzzErrorBody feeds any status and body to the decoder of non-2xx answers.
// It must not panic; it must always give an *APIError (a *ValidationError
// exactly for 422) that keeps the status and the whole body, matches the
// right sentinels, has a short valid-UTF-8 message, and whose validation
// details survive a JSON round trip.
func FuzzErrorBody(f *testing.F) {
	f.Add(422, []byte(`{"detail":[{"loc":["body","variant_ids",0],"msg":"field required","type":"value_error.missing"}]}`))
	f.Add(422, []byte(`{"detail":[{"type":"missing","loc":["query","app_id"],"msg":"Field required","input":null,"url":"https://errors.pydantic.dev/2.5/v/missing"}]}`))
	f.Add(400, []byte(`{"detail":"Missing LM provider Key"}`))
	f.Add(500, []byte(`{"detail":"App Variant not found"}`))
	f.Add(502, []byte("<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"))
	f.Add(503, []byte("upstream connect error or disconnect/reset before headers"))
	f.Add(404, []byte(``))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		status = 400 + int(uint(status)%200) // 400..599: every non-2xx the SDK turns into an error
		err := newAPIError(status, http.MethodPost, "/api/evaluations", body)

		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr, "newAPIError(%d, %q) = %T, want an *APIError", status, body, err)
		require.False(t, apiErr.StatusCode != status || !bytes.Equal(apiErr.Body, body), "APIError kept status %d and body %q; want %d and %q", apiErr.StatusCode, apiErr.Body, status, body)
		var verr *ValidationError
		require.False(t, errors.As(err, &verr) != (status == 422), "status %d: *ValidationError = %v, want it exactly for 422", status, errors.As(err, &verr))
		for sentinel, match := range map[error]bool{
			ErrBadRequest:      status == 400,
			ErrUnauthorized:    status == 401,
			ErrForbidden:       status == 403,
			ErrNotFound:        status == 404,
			ErrValidation:      status == 422,
			ErrRateLimited:     status == 429,
			ErrServer:          status >= 500,
			ErrInvalidArgument: false,
		} {
			require.False(t, errors.Is(err, sentinel) != match, "status %d: errors.Is(err, %v) = %v", status, sentinel, !match)
		}

		limit := maxMessage
		if status == 422 {
			limit = 4 * maxMessage
		}
		if n := utf8.RuneCountInString(apiErr.Message); n > limit+1 {
			t.Fatalf("message of %d runes, want at most %d and a cut mark: %q", n, limit, apiErr.Message)
		}
		require.False(t, !utf8.ValidString(apiErr.Message), "message is not valid UTF-8: %q", apiErr.Message)
		msg := err.Error()
		require.False(t, !strings.Contains(msg, strconv.Itoa(status)) || !strings.Contains(msg, "/api/evaluations"), "Error() = %q lacks the status or the path", msg)

		// A {"detail": "..."} body gives its text as the message.
		var doc struct{ Detail json.RawMessage }
		if json.Unmarshal(bytes.TrimSpace(body), &doc) == nil && len(doc.Detail) > 0 && doc.Detail[0] == '"' {
			var s string
			if json.Unmarshal(doc.Detail, &s) == nil && strings.TrimSpace(s) != "" {
				if want := text.Clip(strings.TrimSpace(s), maxMessage); apiErr.Message != want {
					t.Fatalf("detail %q gave message %q, want %q", s, apiErr.Message, want)
				}
			}
		}

		if verr == nil || len(verr.Details) == 0 {
			return
		}
		for _, d := range verr.Details {
			for _, item := range d.Loc {
				switch item.(type) {
				case string, int:
				default:
					t.Fatalf("loc item %#v is %T, want string or int", item, item)
				}
			}
			require.False(t, !strings.Contains(apiErr.Message, d.Msg) && utf8.RuneCountInString(apiErr.Message) < limit, "message %q does not mention %q", apiErr.Message, d.Msg)
		}
		out, mErr := json.Marshal(verr.Details)
		require.NoError(t, mErr, "details do not marshal")
		var back []ValidationDetail
		if uErr := json.Unmarshal(out, &back); uErr != nil {
			t.Fatalf("re-marshalled details %s do not decode: %v", out, uErr)
		}
		require.EqualValues(t, len(verr.Details), len(back), "details round trip: %d, want %d", len(back), len(verr.Details))
		for i := range back {
			a, b := verr.Details[i], back[i]
			if !reflect.DeepEqual(a.Loc, b.Loc) || a.Msg != b.Msg || a.Type != b.Type ||
				!fuzzSameRaw(a.Input, b.Input) {
				t.Fatalf("detail %d changed in a round trip: %#v became %#v", i, a, b)
			}
		}
	})
}

// fuzzSameRaw compares two JSON texts as values.
func fuzzSameRaw(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&va) != nil || db.Decode(&vb) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}

// fuzzBodyTransport answers every request with 200 and a fixed body, in memory.
type fuzzBodyTransport struct{ body []byte }

func (b *fuzzBodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(bytes.NewReader(b.body)),
		Request: req, ContentLength: int64(len(b.body)),
	}, nil
}

var fuzzAnswerMu sync.Mutex // the transport's body is per call; calls run one at a time

// FuzzAnswerDecode feeds any 200 body to each operation through the real
// engine (retries, streaming list decoder and all). It must not panic; it
// must give either the value that encoding/json decodes from the same body,
// or a *DecodeError, and it must succeed whenever encoding/json does.
func FuzzAnswerDecode(f *testing.F) {
	f.Add(uint8(0), []byte(`[{"evaluation_id":"e","inputs":[],"outputs":[],"results":[]}]`))
	f.Add(uint8(1), []byte(`[{"id":"e","status":{"type":"status","value":"EVALUATION_STARTED"},"created_at":"2024-06-26T12:22:31.775000+00:00"}]`))
	f.Add(uint8(2), []byte(`{"app_id":"a","revision":1,"parameters":null}`))
	f.Add(uint8(3), []byte(`{"variant_id":"v"} `))
	f.Add(uint8(4), []byte(`{"app_id":"a"}`))
	f.Add(uint8(5), []byte(`{"id":"s","created_at":"2024-06-26T12:22:31.775000","children":null}`))
	f.Add(uint8(6), []byte(`null`))
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		fuzzAnswerMu.Lock()
		defer fuzzAnswerMu.Unlock()
		c := newTestClient(t, "http://fuzz.invalid/api", WithAPIKey("k"), WithMaxRetries(0),
			WithHTTPClient(&http.Client{Transport: &fuzzBodyTransport{body: body}}))
		ctx := context.Background()
		switch op % 7 {
		case 0:
			got, err := c.FetchEvaluationScenarios(ctx, "e-1")
			fuzzCheckList(t, body, got, err)
		case 1:
			got, err := c.CreateEvaluation(ctx, models.NewEvaluation{AppID: "a", VariantIDs: []string{"v"},
				EvaluatorConfigIDs: []string{"c"}, TestsetID: "t", RateLimit: models.DefaultRateLimit()})
			fuzzCheckList(t, body, got, err)
		case 2:
			got, err := c.GetVariant(ctx, "v-1")
			fuzzCheckOne(t, body, got, err)
		case 3:
			got, err := c.GetVariantByEnvironment(ctx, "a-1", "production")
			fuzzCheckOne(t, body, got, err)
		case 4:
			got, err := c.AddVariantFromBase(ctx, models.AddVariantFromBase{BaseID: "b", NewVariantName: "n", NewConfigName: "c"})
			fuzzCheckOne(t, body, got, err)
		case 5:
			got, err := c.GetSpan(ctx, "s-1", nil)
			fuzzCheckOne(t, body, got, err)
		case 6:
			got, err := c.ListHumanEvaluations(ctx, "a-1")
			fuzzCheckList(t, body, got, err)
		}
	})
}

// fuzzDecodeWhole is the reference decoder: encoding/json's Decoder, which
// the SDK must agree with, and nothing but whitespace after the value, as
// json.Unmarshal requires.
func fuzzDecodeWhole(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) > 0 {
		return errors.New("data after the value")
	}
	return nil
}

// fuzzCheckDecodeError fails unless err is a *DecodeError for a 200 answer.
func fuzzCheckDecodeError(t *testing.T, body []byte, err error) {
	t.Helper()
	var derr *DecodeError
	require.ErrorAs(t, err, &derr, "body %q: got %v (%T), want a *DecodeError", body, err, err)
	require.False(t, derr.StatusCode != http.StatusOK || derr.Offset < 0 || derr.Offset > int64(len(body)), "body %q: DecodeError status %d offset %d", body, derr.StatusCode, derr.Offset)
}

func fuzzCheckList[T any](t *testing.T, body []byte, got []T, err error) {
	t.Helper()
	var ref []T
	refErr := fuzzDecodeWhole(body, &ref)
	if err != nil {
		fuzzCheckDecodeError(t, body, err)
		require.False(t, refErr == nil, "body %q: the SDK refused it (%v), encoding/json decodes it as %#v", body, err, ref)
		return
	}
	require.NoError(t, refErr, "body %q: the SDK decoded %#v, encoding/json refuses it", body, got)
	require.False(t, got == nil, "body %q: a list operation returned a nil slice without error", body)
	if len(got) == 0 && len(ref) == 0 {
		return
	}
	require.False(t, !reflect.DeepEqual(got, ref), "body %q: the SDK decoded %#v, encoding/json %#v", body, got, ref)
}

func fuzzCheckOne[T any](t *testing.T, body []byte, got *T, err error) {
	t.Helper()
	var ref *T
	refErr := fuzzDecodeWhole(body, &ref)
	if err != nil {
		fuzzCheckDecodeError(t, body, err)
		require.False(t, refErr == nil && ref != nil, "body %q: the SDK refused it (%v), encoding/json decodes it as %#v", body, err, ref)
		return
	}
	require.False(t, refErr != nil || ref == nil, "body %q: the SDK decoded %#v, encoding/json gives %v, %v", body, got, ref, refErr)
	require.False(t, !reflect.DeepEqual(*got, *ref), "body %q: the SDK decoded %#v, encoding/json %#v", body, *got, *ref)
}

// fuzzClient returns a client whose every call is answered 200 with body.
func fuzzClient(t *testing.T, body []byte) *Client {
	t.Helper()
	return newTestClient(t, "http://fuzz.invalid/api", WithMaxRetries(0),
		WithHTTPClient(&http.Client{Transport: &fuzzBodyTransport{body: body}}))
}

// FuzzFetchEvaluationAnswer feeds any 200 body to FetchEvaluation. It must
// give what encoding/json decodes from the body, or a *DecodeError.
func FuzzFetchEvaluationAnswer(f *testing.F) {
	f.Add([]byte(evaluationBody(models.EvaluationFinished)))
	f.Add([]byte(evaluationBody(models.EvaluationFailed)))
	// An older server: ObjectIds, naive timestamps, no costs.
	f.Add([]byte(`{"id":"6677e9a1f0c2d4b6a8e0c1f3","app_id":"6672a5d2e7b8c0f9a1b2c3d4","user_id":"u","user_username":"ana",` +
		`"variant_ids":["6672a5d2e7b8c0f9a1b2c3d5"],"variant_names":["app.default"],"variant_revision_ids":[],"revisions":["1"],` +
		`"testset_id":"t","testset_name":"faq","status":{"type":"status","value":"EVALUATION_STARTED","error":null},` +
		`"aggregated_results":[],"created_at":"2024-06-26T12:22:31.775000","updated_at":"2024-06-26T12:22:31.775000"}`))
	// Aggregates the service cannot compute are error Results.
	f.Add([]byte(`{"id":"e","status":{"type":"status","value":"EVALUATION_FINISHED_WITH_ERRORS","error":null},"aggregated_results":[` +
		`{"evaluator_config":{"id":"c"},"result":{"type":"error","value":null,"error":{"message":"unsupported operand type(s) for +: 'int' and 'NoneType'","stacktrace":"T"}}}],` +
		`"average_cost":{"type":"error","value":null,"error":{"message":"No valid values found for cost aggregation.","stacktrace":""}},` +
		`"total_cost":null,"average_latency":{"type":"latency","value":1.5,"error":null}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"detail":"404: Evaluation with id x not found"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzAnswerMu.Lock()
		defer fuzzAnswerMu.Unlock()
		got, err := fuzzClient(t, body).FetchEvaluation(context.Background(), "e-1")
		fuzzCheckOne(t, body, got, err)
	})
}

// FuzzFetchEvaluationStatusAnswer feeds any 200 body to FetchEvaluationStatus.
// It must give the Result in "status" (a bare string as a status Result), or
// a *DecodeError; and it must succeed whenever "status" is an object that
// decodes as a Result, or a string.
func FuzzFetchEvaluationStatusAnswer(f *testing.F) {
	for _, s := range []string{models.EvaluationInitialized, models.EvaluationStarted, models.EvaluationFinished,
		models.EvaluationFinishedWithErrors, models.EvaluationFailed, models.EvaluationAggregationFailed} {
		f.Add([]byte(statusBody(s)))
	}
	f.Add([]byte(`{"status":"EVALUATION_STARTED"}`))
	f.Add([]byte(`{"status":{"type":"status","value":"EVALUATION_QUEUED","error":null,"new":1}}`))
	f.Add([]byte(`{"status":null}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","x-stoplight":{}}`)) // prism -d
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzAnswerMu.Lock()
		defer fuzzAnswerMu.Unlock()
		got, err := fuzzClient(t, body).FetchEvaluationStatus(context.Background(), "e-1")

		var ref struct {
			Status json.RawMessage `json:"status"`
		}
		var want *models.Result
		var doc *json.RawMessage
		if fuzzDecodeWhole(body, &doc) == nil && doc != nil && json.Unmarshal(*doc, &ref) == nil {
			switch s := ref.Status; {
			case len(s) > 0 && s[0] == '"':
				want = &models.Result{Type: models.ResultTypeStatus, Value: s}
			case len(s) > 0 && s[0] == '{':
				var r models.Result
				if json.Unmarshal(s, &r) == nil {
					want = &r
				}
			}
		}
		if err != nil {
			fuzzCheckDecodeError(t, body, err)
			if want != nil {
				t.Fatalf("body %q: the SDK refused it (%v), but it holds the status %#v", body, err, *want)
			}
			return
		}
		if want == nil {
			t.Fatalf("body %q: the SDK decoded %#v from an answer without a status", body, *got)
		}
		if got.Type != want.Type || !fuzzSameRaw(got.Value, want.Value) || !reflect.DeepEqual(got.Error, want.Error) {
			t.Fatalf("body %q: the SDK decoded %#v, want %#v", body, *got, *want)
		}
	})
}
