package agentatest

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sync"
)

// NoisyApplication wraps an Application into one that answers as an LLM
// app does from call to call: each call of a test case is right (app's
// answer) with probability right(inputs), and otherwise wrong (wrong's
// answer). It is for testing repeats, flaky cases and verdicts under noise.
//
// It is seeded, so a test reproduces: a case's n-th call (counted per
// inputs and parameters) is right or wrong as seed, the case and n decide,
// whatever the order in which the Server's workers call it. Concurrent
// calls of one case may take their turns in either order, which leaves the
// case's set of outcomes the same. A nil right is always right; a nil wrong
// answers "I don't know". It is safe for concurrent use.
func NoisyApplication(app Application, seed uint64, right func(inputs map[string]string) float64, wrong Application) Application {
	if wrong == nil {
		wrong = func(map[string]any, map[string]string) (string, error) { return "I don't know", nil }
	}
	var (
		mu    sync.Mutex
		calls = map[uint64]uint64{}
	)
	return func(parameters map[string]any, inputs map[string]string) (string, error) {
		p := 1.0
		if right != nil {
			p = right(inputs)
		}
		c := caseKey(seed, parameters, inputs)
		mu.Lock()
		n := calls[c]
		calls[c] = n + 1
		mu.Unlock()
		if uniform(c, n) < p {
			return app(parameters, inputs)
		}
		return wrong(parameters, inputs)
	}
}

// RightWith is a NoisyApplication's right: every case right with
// probability p.
func RightWith(p float64) func(map[string]string) float64 {
	return func(map[string]string) float64 { return p }
}

// caseKey hashes the seed, the parameters (as the Server passes them: JSON
// values) and the inputs, in key order.
func caseKey(seed uint64, parameters map[string]any, inputs map[string]string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	for _, k := range slices.Sorted(maps.Keys(parameters)) {
		h.Write([]byte(k + "\x00"))
		writeValue(h, parameters[k])
	}
	h.Write([]byte{0xff})
	for _, k := range slices.Sorted(maps.Keys(inputs)) {
		h.Write([]byte(k + "\x00" + inputs[k] + "\x00"))
	}
	return h.Sum64()
}

// writeValue writes a JSON value to h, maps in key order.
func writeValue(h interface{ Write([]byte) (int, error) }, v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			h.Write([]byte(k + "\x00"))
			writeValue(h, v[k])
		}
	case []any:
		for _, e := range v {
			writeValue(h, e)
		}
	default:
		h.Write(fmt.Appendf(nil, "%T:%v\x00", v, v))
	}
}

// uniform is a number in [0, 1) that the case c and its n-th call decide
// (SplitMix64 of the two).
func uniform(c, n uint64) float64 {
	z := c + (n+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}
