// Package gate is the release gate as a go test: gate_test.go evaluates a
// candidate variant against the one in production and fails the test, the
// way deepeval's assert_test fails pytest, when a gate fails. Copy it into
// your own module and point it at your variants.
package gate
