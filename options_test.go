package agenta

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// WithResponseLimits sets each limit; the error names the one exceeded.
func TestHostileResponseLimitsOption(t *testing.T) {
	variant := `{"app_id":"a-1","variant_id":"v-1","variant_name":"` + strings.Repeat("v", 3000) + `"}`
	row := `{"id":"h-1","app_id":"` + strings.Repeat("a", 3000) + `"}`
	rows := "[" + strings.Repeat(row+",", 9) + row + "]"
	scenario := `{"id":"s-1","evaluation_id":"` + strings.Repeat("e", 3000) + `"}`
	scenarios := "[" + strings.Repeat(scenario+",", 9) + scenario + "]"
	cases := []struct {
		name   string
		limits ResponseLimits
		op     hostileOp
		body   string
		field  string // "" for success
	}{
		{"single under", ResponseLimits{Single: 4000}, hostileGetVariant, variant, ""},
		{"single over", ResponseLimits{Single: 2000}, hostileGetVariant, variant, "Single"},
		{"list under", ResponseLimits{List: 40000, Element: 4000}, hostileListHuman, rows, ""},
		{"list over", ResponseLimits{List: 20000, Element: 4000}, hostileListHuman, rows, "List"},
		{"list element over", ResponseLimits{Element: 2000}, hostileListHuman, rows, "Element"},
		{"scenario list over", ResponseLimits{List: 20000, Element: 4000}, hostileFetchScenarios, scenarios, "List"},
		{"scenario element over", ResponseLimits{Element: 2000}, hostileFetchScenarios, scenarios, "Element"},
		{"stream has no whole limit", ResponseLimits{List: 1000, Element: 4000}, hostileStream, scenarios, ""},
		{"stream element over", ResponseLimits{Element: 2000}, hostileStream, scenarios, "Element"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, hostileServe(t, 200, nil, tc.body), WithResponseLimits(tc.limits))
			err := tc.op.run(context.Background(), c)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("%s: %v, want success under the limits %+v", tc.op.name, err, tc.limits)
				}
				return
			}
			var limit *LimitError
			if !errors.As(err, &limit) || !errors.Is(err, ErrAnswerTooLarge) {
				t.Fatalf("%s: got %v, want a *LimitError matching ErrAnswerTooLarge", tc.op.name, err)
			}
			if limit.Field != tc.field {
				t.Errorf("the limit exceeded is %q, want %q", limit.Field, tc.field)
			}
			var decodeErr *DecodeError
			if !errors.As(err, &decodeErr) || decodeErr.StatusCode != 200 {
				t.Errorf("got %T, want it inside a *DecodeError with status 200", err)
			}
			if !strings.Contains(err.Error(), "ResponseLimits{"+tc.field) {
				t.Errorf("the message should say how to raise ResponseLimits.%s, got %q", tc.field, err)
			}
		})
	}
	if _, err := NewClient("http://127.0.0.1:1/api", WithResponseLimits(ResponseLimits{Element: -1})); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a negative limit: got %v, want ErrInvalidArgument", err)
	}
}

// A careless user turns a limit off with math.MaxInt64: every answer still
// decodes, and no limit overflows into refusing everything.
func TestHugeResponseLimits(t *testing.T) {
	variant := `{"app_id":"a-1","variant_id":"v-1","variant_name":"bot.default"}`
	rows := `[{"id":"h-1","app_id":"a-1"},{"id":"h-2","app_id":"a-1"}]`
	scenarios := `[{"id":"s-1","evaluation_id":"e-1"},{"id":"s-2","evaluation_id":"e-1"}]`
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/evaluation_scenarios"):
			io.WriteString(w, scenarios)
		case strings.HasSuffix(r.URL.Path, "/human-evaluations"):
			io.WriteString(w, rows)
		default:
			io.WriteString(w, variant)
		}
	}))
	t.Cleanup(s.Close)
	for _, limits := range []ResponseLimits{
		{Single: math.MaxInt64},
		{List: math.MaxInt64},
		{Element: math.MaxInt64},
		{Single: math.MaxInt64, List: math.MaxInt64, Element: math.MaxInt64},
		{List: math.MaxInt64 - 1, Element: math.MaxInt64 - 1},
	} {
		c := hostileClient(t, s.URL+"/api", WithResponseLimits(limits))
		for _, op := range []hostileOp{hostileGetVariant, hostileListHuman, hostileFetchScenarios, hostileStream} {
			if err := op.run(context.Background(), c); err != nil {
				t.Errorf("%+v, %s: %v, want the answer", limits, op.name, err)
			}
		}
	}
}
