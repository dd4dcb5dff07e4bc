package evals

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

func TestReportOfARunWithItself(t *testing.T) {
	baseline, _ := capitalsRuns()
	r := NewReport(baseline, baseline)
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| Exact match | 50.0% (21.5% – 78.5%) | 50.0% (21.5% – 78.5%) | +0.0 pts | 0 / 0 / 8 | 0 / 0 | 1 |") {
		t.Errorf("a run compared with itself should show no change and p = 1:\n%s", buf.String())
	}
	if runs := r.runs(); runs[0].name != "capitals.default (baseline)" || runs[1].name != "capitals.default (candidate)" {
		t.Errorf("runs of the same variant are named %q and %q, want them told apart", runs[0].name, runs[1].name)
	}
}

func TestSetDirection(t *testing.T) {
	baseline, candidate := capitalsRuns()
	r := NewReport(baseline, candidate)
	if err := r.Check(MaxWorseRows("Edit distance", 0)); err == nil {
		t.Fatal("edit distance, lower is better: Australia got worse, but the gate passed")
	}
	if err := r.SetDirection("Edit distance", HigherIsBetter); err != nil {
		t.Fatal(err)
	}
	// Read as higher-is-better, three rows got worse, and Nigeria, which
	// has no value on the candidate's side.
	if err := r.Check(MaxWorseRows("Edit distance", 2)); err == nil || !strings.Contains(err.Error(), "measured 4") {
		t.Errorf("after SetDirection the gate gave %v, want 4 worse rows", err)
	}
	if err := r.SetDirection("nope", LowerIsBetter); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("SetDirection of an unknown evaluator = %v, want an error naming it", err)
	}
}

// A run still going has not written all its rows: judging the rows read
// so far (a Go caller who reads the scenarios without waiting) passed the
// two right rows of twenty as a pass rate of 1.
func TestRunStillGoingIsNotJudged(t *testing.T) {
	_, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario { return rightRow(i) })
	candidate.Scenarios = candidate.Scenarios[:2]
	for _, status := range []string{models.EvaluationInitialized, models.EvaluationStarted} {
		candidate.Evaluation.Status = models.Result{Type: models.ResultTypeStatus, Value: []byte(`"` + status + `"`)}
		r := NewReport(Run{}, candidate)
		err := r.Check(MinMean("Exact match", 0.9))
		if !errors.Is(err, ErrGateFailed) || !strings.Contains(r.Gates[0].Reason, "still "+status) {
			t.Errorf("a run %s: Check = %v, want the gate failed because the run is still going", status, err)
		}
	}
}
