package agenta

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// trailingAnswers are complete JSON answers, by the kind of value they are.
var trailingAnswers = map[string]string{
	"list":   `[{"id":"s-1","evaluation_id":"e-1","inputs":[],"outputs":[],"results":[]}]`,
	"single": `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default","base_id":"b-1","revision":1}`,
}

// Data after a complete JSON answer is an error in every decoder, the
// streaming one and the fallback ones included: the status, where the
// data starts, and an excerpt of it, scrubbed.
func TestTrailingDataIsAnError(t *testing.T) {
	ops := []hostileOp{hostileGetVariant, hostileAddVariant, hostileCreateEvaluation, hostileFetchScenarios,
		hostileListHuman, hostileStream, {"FetchEvaluationStatus", "single", func(ctx context.Context, c *Client) error {
			_, err := c.FetchEvaluationStatus(ctx, "e-1")
			return err
		}}}
	answers := func(op hostileOp) []string {
		switch op.name {
		case "FetchEvaluationStatus":
			return []string{`{"status":{"type":"status","value":"EVALUATION_STARTED"}}`}
		case "CreateEvaluation", "ListHumanEvaluations":
			// Also an element the fast path leaves to encoding/json, and
			// null: the fallback decoders check the end too.
			return []string{`[{"id":"e-1"}]`, `[{"id":"e-1","extra":{"deep":[1,2,{"x":null}]}}]`, `null`}
		case "FetchEvaluationScenarios", "StreamEvaluationScenarios":
			// A case-variant key takes the element to encoding/json.
			return []string{trailingAnswers["list"], `[{"ID":"s-1","inputs":[{"name":"n","type":"t","value":"\ud83d\ude00"}]}]`, `null`}
		}
		return []string{trailingAnswers["single"]}
	}
	tails := []string{"[]", "<html><body>Bad Gateway</body></html>", `{"detail":"x"}`, " \n\tx", "null", "[" + hostileKey + "]"}
	current := new(atomic.Pointer[trailingCase])
	c := hostileClient(t, trailingServer(t, current), WithMaxRetries(0))
	for _, op := range ops {
		for _, answer := range answers(op) {
			for _, tail := range tails {
				for _, split := range []bool{false, true} {
					body := answer + tail
					answer := answer
					current.Store(&trailingCase{answer, tail, split})
					err := op.run(context.Background(), c)
					name := op.name + " " + strings.TrimSpace(body)
					if !errors.Is(err, ErrTrailingData) {
						t.Errorf("%s (split %v): err = %v, want ErrTrailingData", name, split, err)
						continue
					}
					var de *DecodeError
					if !errors.As(err, &de) {
						t.Fatalf("%s: %T, want a *DecodeError", name, err)
					}
					at := int64(len(answer) + len(tail) - len(strings.TrimLeft(tail, " \n\t")))
					if de.StatusCode != 200 || de.Offset != at {
						t.Errorf("%s: status %d at byte %d, want 200 at byte %d", name, de.StatusCode, de.Offset, at)
					}
					if want := strings.TrimLeft(tail, " \n\t"); !strings.HasPrefix(want, "["+hostileKey) && string(de.Body) != want {
						t.Errorf("%s: Body %q, want the trailing data %q", name, de.Body, want)
					}
					hostileCheckError(t, err)
					for e := error(de); e != nil; e = errors.Unwrap(e) {
						if strings.Contains(e.Error(), hostileKey) || strings.Contains(string(de.Body), hostileKey) {
							t.Errorf("%s: the excerpt holds the key: %q", name, e.Error())
						}
					}
					if !strings.Contains(err.Error(), "byte") || len(err.Error()) > 400 {
						t.Errorf("%s: %q, want the position and a short excerpt", name, err)
					}
				}
			}
		}
	}
}

// Whitespace after the answer is no data: the call succeeds, and the
// stream yields every element and no error.
func TestTrailingWhitespaceIsFine(t *testing.T) {
	current := new(atomic.Pointer[trailingCase])
	c := hostileClient(t, trailingServer(t, current))
	for _, split := range []bool{false, true} {
		current.Store(&trailingCase{trailingAnswers["list"], " \r\n\t \n", split})
		scenarios, err := c.FetchEvaluationScenarios(context.Background(), "e-1")
		if err != nil || len(scenarios) != 1 {
			t.Errorf("FetchEvaluationScenarios: %d scenarios, %v; want 1 and no error", len(scenarios), err)
		}
		n := 0
		for _, err := range c.StreamEvaluationScenarios(context.Background(), "e-1") {
			if err != nil {
				t.Errorf("stream: %v", err)
			}
			n++
		}
		if n != 1 {
			t.Errorf("stream yielded %d values, want 1", n)
		}
	}
}

// A stream yields the elements before the trailing data, then the error:
// the caller may have used them, and learns the answer was not clean.
func TestTrailingDataEndsTheStream(t *testing.T) {
	current := new(atomic.Pointer[trailingCase])
	current.Store(&trailingCase{`[{"id":"s-1"},{"id":"s-2"}]`, `[]`, true})
	c := hostileClient(t, trailingServer(t, current))
	var ids []string
	var last error
	for s, err := range c.StreamEvaluationScenarios(context.Background(), "e-1") {
		if err != nil {
			last = err
			continue
		}
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "s-1,s-2" || !errors.Is(last, ErrTrailingData) {
		t.Errorf("got %v then %v, want s-1, s-2, then ErrTrailingData", ids, last)
	}
	scenarios, err := c.FetchEvaluationScenarios(context.Background(), "e-1")
	if scenarios != nil || !errors.Is(err, ErrTrailingData) {
		t.Errorf("Fetch: %v, %v; want no list and ErrTrailingData", scenarios, err)
	}
}

// trailingCase is what trailingServer answers: a JSON answer, then tail,
// in one write, or in two with a flush between them (split).
type trailingCase struct {
	answer, tail string
	split        bool
}

// trailingServer answers every request 200 with the current case.
func trailingServer(t *testing.T, current *atomic.Pointer[trailingCase]) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		tc := current.Load()
		w.Header().Set("Content-Type", "application/json")
		if !tc.split {
			io.WriteString(w, tc.answer+tc.tail)
			return
		}
		io.WriteString(w, tc.answer)
		w.(http.Flusher).Flush()
		io.WriteString(w, tc.tail)
	}))
	t.Cleanup(s.Close)
	return s.URL + "/api"
}
