package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
