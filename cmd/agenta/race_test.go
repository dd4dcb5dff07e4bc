//go:build race

package main

// raceEnabled reports whether the tests run under the race detector, which
// multiplies the memory of the binary the scripts run.
const raceEnabled = true
