//go:build race

package evals

// raceEnabled reports a -race build, where the heavy streaming test runs
// on fewer rows.
const raceEnabled = true
