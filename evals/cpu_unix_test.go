//go:build unix

package evals

import "syscall"

// processCPU returns the CPU time, user and system, that this process has
// used, in nanoseconds. The benchmarks report it per op as cpu-ns/op, which
// other processes on a busy machine disturb far less than wall time.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
