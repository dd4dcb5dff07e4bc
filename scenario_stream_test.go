package agenta

// Differential tests of the fast path for scenario lists
// (scenario_stream.go, internal/scenariojson): every answer must give the
// same values and the same errors, offsets included, as encoding/json alone.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/require"
)

// chunkedTransport answers every request with one body, delivered in reads
// of at most chunk bytes, so that elements straddle the fast path's reads.
type chunkedTransport struct {
	status int
	body   []byte
	chunk  int
	fail   error // if set, the read error at the end of body instead of io.EOF
}

func (t chunkedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: t.status,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(&chunkReader{data: t.body, chunk: t.chunk, fail: t.fail}),
		Request:    r,
	}, nil
}

type chunkReader struct {
	data  []byte
	chunk int
	fail  error
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		if c.fail != nil {
			return 0, c.fail
		}
		return 0, io.EOF
	}
	n := min(len(p), c.chunk, len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// streamOutcome is everything a caller can see of one streamed answer.
type streamOutcome struct {
	Rows []models.EvaluationScenario
	Err  string
	// Details of the error, when it is a *DecodeError.
	Decode     *DecodeError
	Inner      string // the type of the decoding error
	SyntaxOff  int64
	TypeErr    *json.UnmarshalTypeError
	Unexpected bool // errors.Is io.ErrUnexpectedEOF
	Reset      bool // errors.Is errConnReset
	Pairs      int  // pairs yielded, the error included
}

func streamOnce(t testing.TB, body []byte, chunk int, slow bool) streamOutcome {
	return streamOnceFailing(t, body, chunk, slow, nil)
}

func streamOnceFailing(t testing.TB, body []byte, chunk int, slow bool, fail error) streamOutcome {
	t.Helper()
	decode := scenarioList // the fast path, as the operations use it
	if slow {
		decode = decoderList[models.EvaluationScenario] // encoding/json alone
	}
	c := newTestClient(t, "http://agenta.test/api", WithMaxRetries(0),
		WithHTTPClient(&http.Client{Transport: chunkedTransport{status: 200, body: body, chunk: chunk, fail: fail}}))
	var out streamOutcome
	r, err := scenariosRequest("StreamEvaluationScenarios", "ev-1")
	require.NoError(t, err)
	for s, err := range streamList(context.Background(), c, r, decode) {
		out.Pairs++
		if err == nil {
			out.Rows = append(out.Rows, s)
			continue
		}
		out.Err = err.Error()
		var de *DecodeError
		if errors.As(err, &de) {
			copied := *de
			copied.Err = nil
			out.Decode = &copied
			out.Inner = fmt.Sprintf("%T", de.Err)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			out.SyntaxOff = se.Offset
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			out.TypeErr = te
		}
		out.Unexpected = errors.Is(err, io.ErrUnexpectedEOF)
		out.Reset = errors.Is(err, errConnReset)
	}
	return out
}

// errConnReset stands for a connection that breaks mid-answer.
var errConnReset = errors.New("connection reset by peer")

// checkSameAsEncodingJSON streams body with the fast path and without it,
// in reads of several sizes, and fails on any difference.
func checkSameAsEncodingJSON(t testing.TB, body []byte, chunks ...int) {
	t.Helper()
	want := streamOnce(t, body, 1<<20, true)
	for _, chunk := range chunks {
		got := streamOnce(t, body, chunk, false)
		if reflect.DeepEqual(got, want) {
			continue
		}
		require.EqualValues(t, len(want.Rows), len(got.Rows), "body %.200q in reads of %d: fast path gave %d rows, encoding/json %d", body, chunk, len(got.Rows), len(want.Rows))
		for i := range got.Rows {
			require.False(t, !reflect.DeepEqual(got.Rows[i], want.Rows[i]), "body %.200q in reads of %d: row %d\nfast %#v\njson %#v", body, chunk, i, got.Rows[i], want.Rows[i])
		}
		t.Fatalf("body %.200q in reads of %d: errors differ\nfast %+v %+v\njson %+v %+v", body, chunk, got, got.Decode, want, want.Decode)
	}
}

// streamSeeds are answers in the shapes the contract describes, and broken
// ones: every element seed of internal/scenariojson, and arrays around them.
func streamSeeds() []string {
	rows := []string{
		string(newScenarioSource(1).appendRow(nil)),
		string(newScenarioSource(2).appendRow(nil)),
		`{"id":"s1","evaluation_id":"e1","inputs":[{"name":"country","type":"text","value":"France"}],"outputs":[{"result":{"type":"text","value":"Paris","error":null},"cost":null,"latency":1.2}],"evaluation":null,"correct_answer":"Paris","is_pinned":false,"note":null,"results":[{"evaluator_config":"c1","result":{"type":"error","value":null,"error":{"message":"boom","stacktrace":"tb"}}}]}`,
		`{"evaluation_id":"e","correct_answers":[{"key":"correct_answer","value":"x"}],"inputs":[],"outputs":[],"results":[]}`,
		`{"ID":"case variant"}`,
		`{"note":"\ud800 lone surrogate"}`,
		`{"inputs":[{"name":1}]}`,
		`{"outputs":[{"cost":1e400}]}`,
		`{}`,
		`null`,
		`7`,
		`"text"`,
		`[]`,
		`{"id":"a",}`,
	}
	seeds := []string{
		`[]`, ` [ ] `, `null`, ` null `, `{"detail":"not a list"}`, `"text"`, `42`, ``, ` `, `[`, `]`, `[,]`,
		"\n[\n" + rows[0] + "\n]\n", "[" + rows[0] + "," + rows[1] + "]",
		"[" + rows[0] + " , " + rows[2] + "\t,\r\n" + rows[3] + "]",
		"[" + rows[0] + "," + rows[1] + "] trailing garbage",
		"[" + rows[0] + rows[1] + "]", // missing comma
		// A missing comma after the second element: the decoder's grammar
		// error, whose offset is its input offset, not its scanner's count
		// (found by FuzzScenarioStream when that distinction was broken).
		`[{},{}0`, `[ {} , {}  {}]`,
		"[" + rows[0] + ",]", // trailing comma
		"[" + rows[0] + ",," + rows[1] + "]",
		"[" + rows[0] + "}",
		"[" + rows[0] + "," + rows[1][:len(rows[1])/2],    // cut short
		"[" + rows[0] + "," + rows[1][:len(rows[1])-1],    // cut before the last brace
		"[" + rows[0] + "," + rows[1] + "," + rows[0][:1], // cut after an opening brace
		"[" + rows[0] + ",{\"id\":\"x\" \"y\":1}]",
		"[" + rows[0] + `,{"id":"bad \x escape"}]`,
		"[" + rows[0] + ",{\"id\":\"control \x01\"}]",
	}
	for _, r := range rows {
		seeds = append(seeds, "["+r+"]", "["+rows[0]+","+r+","+rows[1]+"]", "[ "+r+" , "+r+" ]")
	}
	return seeds
}

func TestScenarioStreamSameAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, seed := range streamSeeds() {
		checkSameAsEncodingJSON(t, []byte(seed), 1, 3, 7, 64, 4096)
	}
	checkSameAsEncodingJSON(t, scenariosBody(1000), 1000, 4093, 1<<20)
}

func FuzzScenarioStream(f *testing.F) {
	for _, seed := range streamSeeds() {
		f.Add([]byte(seed), uint16(7))
	}
	f.Fuzz(func(t *testing.T, body []byte, chunk uint16) {
		checkSameAsEncodingJSON(t, body, int(chunk%512)+1)
	})
}

// TestScenarioStreamReadErrors breaks the connection at many points of an
// answer: the rows before the break and the error must be the same with and
// without the fast path.
func TestScenarioStreamReadErrors(t *testing.T) {
	t.Parallel()
	body := scenariosBody(100)
	for cut := 0; cut <= len(body); cut += 997 {
		for _, chunk := range []int{61, 4096} {
			want := streamOnceFailing(t, body[:cut], 1<<20, true, errConnReset)
			got := streamOnceFailing(t, body[:cut], chunk, false, errConnReset)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("break after %d bytes, reads of %d: fast path %d rows, %q; encoding/json %d rows, %q",
					cut, chunk, len(got.Rows), got.Err, len(want.Rows), want.Err)
			}
			require.False(t, cut < len(body) && !got.Reset, "break after %d bytes: error %q does not wrap the read error", cut, got.Err)
		}
	}
}

// TestScenarioStreamKeepsErrorsOfLongAnswers breaks an element deep in a
// long answer, where the fast path has read and dropped many buffers, and
// checks the offsets of the error against encoding/json's.
func TestScenarioStreamKeepsErrorsOfLongAnswers(t *testing.T) {
	t.Parallel()
	body := scenariosBody(1000)
	for _, cut := range []string{`"inputs":[`, `"value":`, `"results":[{`} {
		i := len(body) * 3 / 4
		i += strings.Index(string(body[i:]), cut) + len(cut)
		broken := append(append([]byte(nil), body[:i]...), []byte(`}x`+string(body[i:]))...)
		checkSameAsEncodingJSON(t, broken, 997, 1<<16)
	}
	wrongType := strings.Replace(string(body), `"is_pinned":false`, `"is_pinned":"no"`, 1)
	checkSameAsEncodingJSON(t, []byte(wrongType), 4096)
}
