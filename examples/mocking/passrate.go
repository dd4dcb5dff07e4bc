// Package mocking is a small piece of "your own code" that uses the SDK,
// with the two ways to test it in mocking_test.go: against the agentatest
// fake, and with gock intercepting the SDK's HTTP client. Copy whichever
// suits you.
package mocking

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenta-go/agenta"
)

// ErrNoScenarios is returned by PassRate for an evaluation without scenarios
// yet.
var ErrNoScenarios = errors.New("the evaluation has no scenarios yet")

// PassRate returns the share of an evaluation's scenarios that a boolean
// evaluator, such as exact match, passed. A scenario the evaluator failed on
// counts as not passed.
func PassRate(ctx context.Context, client *agenta.Client, evaluationID, evaluatorConfigID string) (float64, error) {
	scenarios, err := client.FetchEvaluationScenarios(ctx, evaluationID)
	if err != nil {
		return 0, fmt.Errorf("pass rate of %s: %w", evaluationID, err)
	}
	if len(scenarios) == 0 {
		return 0, ErrNoScenarios
	}
	passed := 0
	for _, sc := range scenarios {
		for _, r := range sc.Results {
			if r.EvaluatorConfig != evaluatorConfigID || r.Result.Failed() {
				continue
			}
			if ok, isBool := r.Result.Bool(); isBool && ok {
				passed++
			}
		}
	}
	return float64(passed) / float64(len(scenarios)), nil
}
