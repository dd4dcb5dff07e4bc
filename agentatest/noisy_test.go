package agentatest_test

import (
	"math"
	"sync"
	"testing"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func echo(_ map[string]any, inputs map[string]string) (string, error) { return inputs["q"], nil }

// outcomes calls app n times for the case q and returns which calls were right.
func outcomes(app agentatest.Application, q string, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		got, _ := app(map[string]any{"temperature": 0.7}, map[string]string{"q": q})
		out[i] = got == q
	}
	return out
}

// Each call is right with probability p: over 20,000 calls the share of
// right ones is within 5 standard errors of p.
func TestNoisyApplicationRate(t *testing.T) {
	for _, p := range []float64{0, 0.05, 0.3, 0.9, 1} {
		app := agentatest.NoisyApplication(echo, 7, agentatest.RightWith(p), nil)
		right := 0
		for _, ok := range outcomes(app, "France", 20000) {
			if ok {
				right++
			}
		}
		share := float64(right) / 20000
		se := math.Sqrt(p*(1-p)/20000) + 1e-9
		assert.InDelta(t, p, share, 5*se, "p=%v", p)
	}
}

// The same seed gives each case the same calls, whatever the order in
// which cases are called; another seed, or another case, others.
func TestNoisyApplicationSeeded(t *testing.T) {
	right := agentatest.RightWith(0.5)
	a := outcomes(agentatest.NoisyApplication(echo, 1, right, nil), "France", 64)

	b := agentatest.NoisyApplication(echo, 1, right, nil)
	var wg sync.WaitGroup
	for range 8 { // other cases called concurrently in between
		wg.Add(1)
		go func() { defer wg.Done(); outcomes(b, "Japan", 50) }()
	}
	assert.Equal(t, a, outcomes(b, "France", 64))
	wg.Wait()

	assert.NotEqual(t, a, outcomes(agentatest.NoisyApplication(echo, 2, right, nil), "France", 64))
	assert.NotEqual(t, a, outcomes(agentatest.NoisyApplication(echo, 1, right, nil), "Spain", 64))
}

// A case's own probability, and a wrong answer of the test's choosing.
func TestNoisyApplicationPerCase(t *testing.T) {
	perCase := func(inputs map[string]string) float64 {
		if inputs["q"] == "hard" {
			return 0
		}
		return 1
	}
	wrong := func(map[string]any, map[string]string) (string, error) { return "", assert.AnError }
	app := agentatest.NoisyApplication(echo, 3, perCase, wrong)
	for range 10 {
		got, err := app(nil, map[string]string{"q": "easy"})
		require.NoError(t, err)
		assert.Equal(t, "easy", got)
		_, err = app(nil, map[string]string{"q": "hard"})
		assert.ErrorIs(t, err, assert.AnError)
	}
	got, _ := agentatest.NoisyApplication(echo, 3, agentatest.RightWith(0), nil)(nil, map[string]string{"q": "x"})
	assert.Equal(t, "I don't know", got)
}
