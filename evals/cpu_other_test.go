//go:build !unix

package evals

// processCPU is not measured on this platform; cpu-ns/op is then not
// reported.
func processCPU() int64 { return 0 }
