package agentatest

import "testing"

// The service's duration statistics carry the spreads relative to the
// median (pscs) only where they mean something: not when the median is
// under 1% of a tail, as when one call was slow to start (compute_pscs in
// the v0.113 tracing utils.py).
func TestNumericStats26Pscs(t *testing.T) {
	has := func(o object) bool {
		for _, f := range o {
			if f.key == "pscs" {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		name string
		xs   []float64
		want bool
	}{
		{"even durations", []float64{0.3, 0.3, 0.3, 0.3, 0.3}, true},
		{"spread within 100x", []float64{1, 2, 3, 4, 50}, true},
		{"one cold start", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1000000}, false},
		{"sign change", []float64{-5, 1, 2, 3, 5}, false},
	} {
		if got := has(numericStats26(c.xs)); got != c.want {
			t.Errorf("%s: pscs present %v, want %v", c.name, got, c.want)
		}
	}
}
