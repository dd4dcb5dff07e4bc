package evals

import (
	"errors"
	"fmt"
	"iter"

	"github.com/agenta-go/agenta/models"
)

// Run is one variant's evaluation together with its scenarios.
type Run struct {
	// Evaluation names the variant and, in its aggregated results, the
	// evaluator configs; it may be zero.
	Evaluation models.Evaluation
	Scenarios  []models.EvaluationScenario
	// Rows, when set, gives the run's scenarios instead of Scenarios, for
	// a run too large for memory: each call starts a new pass over them,
	// such as a read of the file they were kept in while they streamed.
	// The writers make one or two passes (WriteCSV and WriteJUnit count
	// first) and end with the first error a pass yields; NewReport
	// summarises and compares from it in flat memory.
	Rows func() iter.Seq2[models.EvaluationScenario, error]
	// Repeats is how many times each test case was run (the request's
	// Repeats): 0 or 1 means once. With more, a test case has that many
	// rows: on a 2026 server, one per repeat of its run (the same
	// TestcaseID); on a mid-2024 one, one per evaluation of the variant.
	// NewReport then compares and bounds by test case (see
	// Comparer.Repeats), taking the larger of the two runs'. A case with
	// fewer rows than its own run's Repeats is a listing cut short, and
	// the gates fail (CaseSummary.Short).
	Repeats int
	// RepeatEvaluations are, on a server without repeats of its own
	// (mid-2024), the evaluations of the repeats after the first, whose
	// scenarios Scenarios (or Rows) holds after the first's; Evaluation is
	// the first repeat's. A 2026 server runs the repeats in one run, and
	// leaves it empty.
	RepeatEvaluations []models.Evaluation
}

// scenarios returns a pass over the run's scenarios: Rows when set, else
// Scenarios.
func (r Run) scenarios() iter.Seq2[models.EvaluationScenario, error] {
	if r.Rows != nil {
		return r.Rows()
	}
	return func(yield func(models.EvaluationScenario, error) bool) {
		for _, s := range r.Scenarios {
			if !yield(s, nil) {
				return
			}
		}
	}
}

// distinct returns a pass over the run's scenarios, each scenario id
// once, as a Summary counts them: the writers list the rows counted.
func (r Run) distinct() iter.Seq2[models.EvaluationScenario, error] {
	return func(yield func(models.EvaluationScenario, error) bool) {
		var ids scenarioIDs
		for s, err := range r.scenarios() {
			if err == nil && !ids.first(s.ID) {
				continue
			}
			if !yield(s, err) {
				return
			}
		}
	}
}

// Variant returns the name of the run's variant: its variant name, else its
// variant id, else its evaluation id, else "".
func (r Run) Variant() string {
	ev := r.Evaluation
	for _, names := range [][]string{ev.VariantNames, ev.VariantIDs} {
		if len(names) > 0 && names[0] != "" {
			return bound(names[0], 120)
		}
	}
	return bound(ev.ID, 120)
}

func (r Run) empty() bool {
	return r.Evaluation.ID == "" && len(r.Scenarios) == 0 && r.Rows == nil
}

// Report gathers what a release decision needs: the candidate's summary,
// its comparison with the baseline, and the outcome of the gates, with the
// evaluator names to show. It writes itself as Markdown, JUnit XML, CSV and
// JSON Lines.
//
// NewReport fills it from two runs in memory. For runs too large for
// memory, fill CandidateSummary (and BaselineSummary and Comparison) from
// an Accumulator and a Comparer while the scenarios stream, and give the
// writers the rows through Run.Rows (read back from where they were kept)
// or not at all: with neither Rows nor Scenarios, every writer writes
// what it has.
type Report struct {
	// Evaluators names the evaluator configs and says which way each
	// improves. Evaluators seen in results but missing here show by id,
	// with higher being better.
	Evaluators []Evaluator

	Baseline, Candidate               Run
	BaselineSummary, CandidateSummary Summary
	// Comparison compares the candidate with the baseline; it is nil when
	// there is no baseline.
	Comparison *Comparison

	// CandidateCases is what the candidate's test cases add up to, for
	// the bound measures (low, high, pass_all, flaky) when there is no
	// Comparison (which holds its own); NewReport fills it. Without
	// either, a check reads each row of CandidateSummary as a case.
	CandidateCases *CaseSummary
	// Confidence is the level of every bound (low, high, diff_low) whose
	// Gate.Confidence is 0, in (0.5, 1); 0 means DefaultConfidence, 0.95.
	Confidence float64

	// Gates holds the outcome of the last Check.
	Gates []GateResult

	// Failure, when set, is why the runs could not be judged: an
	// evaluation that ended EVALUATION_FAILED, an error of the service, a
	// wait that timed out. Check then fails every gate with it, and the
	// writers show it: a failing test case in JUnit, a line in Markdown.
	// A run whose Evaluation has a failed status is such a failure even
	// when Failure is nil; its reason is the service's message and the
	// cause, the last line of its stack trace. So is a run whose
	// Evaluation is still initialized or started: its rows are not all
	// written yet.
	Failure error
}

// NewReport summarises the candidate run and compares it with the baseline
// run; pass a zero Run as baseline to report on the candidate alone. The
// evaluator names and directions come from both runs' evaluations (see
// EvaluatorsOf); add or change them in Report.Evaluators or with
// SetDirection before checking gates. A run given by Run.Rows is read
// as a stream (see Accumulator and CompareStream); an error reading it
// becomes the report's Failure.
func NewReport(baseline, candidate Run) *Report {
	r := &Report{
		Evaluators: EvaluatorsOf(candidate.Evaluation, baseline.Evaluation),
		Baseline:   baseline,
		Candidate:  candidate,
	}
	var errs []error
	c := Comparer{Repeats: max(baseline.Repeats, candidate.Repeats), alone: baseline.empty(),
		sideRepeats: [2]int{max(baseline.Repeats, 1), max(candidate.Repeats, 1)}}
	summarize := func(run Run, alone bool) Summary {
		if run.Rows == nil {
			if alone {
				for i := range run.Scenarios {
					c.AddCandidate(run.Scenarios[i])
				}
			}
			return Summarize(run.Scenarios)
		}
		rows := run.scenarios()
		if alone {
			// The candidate's cases, gathered in the same pass.
			rows = func(yield func(models.EvaluationScenario, error) bool) {
				for s, err := range run.scenarios() {
					if err == nil {
						c.AddCandidate(s)
					}
					if !yield(s, err) {
						return
					}
				}
			}
		}
		s, err := SummarizeStream(rows)
		if err != nil {
			errs = append(errs, fmt.Errorf("evals: reading the scenarios of %s: %w", run.Variant(), err))
		}
		return s
	}
	r.CandidateSummary = summarize(candidate, c.alone)
	if c.alone {
		cases := c.Comparison().CandidateCases
		r.CandidateCases = &cases
	} else {
		r.BaselineSummary = summarize(baseline, false)
		var cmp Comparison
		if baseline.Rows == nil && candidate.Rows == nil {
			cmp = compareInto(&c, baseline.Scenarios, candidate.Scenarios)
		} else {
			cmp, _ = compareStreamInto(&c, baseline.scenarios(), candidate.scenarios()) // its errors are those above
		}
		r.Comparison = &cmp
	}
	if len(errs) > 0 {
		r.Failure = errors.Join(errs...)
	}
	return r
}

// SetDirection sets which way an evaluator, given by name or id, improves.
func (r *Report) SetDirection(evaluator string, d Direction) error {
	e, ok := r.catalog().find(evaluator)
	if !ok {
		return fmt.Errorf("evals: SetDirection: no evaluator named %q (known: %s)", bound(evaluator, 80), bound(r.catalog().names(), 400))
	}
	for i := range r.Evaluators {
		if r.Evaluators[i].ID == e.ID {
			r.Evaluators[i].Direction = d
			return nil
		}
	}
	e.Direction = d
	r.Evaluators = append(r.Evaluators, e)
	return nil
}

// Check measures the gates on the report, records the outcome in
// r.Gates for the writers, and returns a *GateError matching ErrGateFailed
// when any gate failed (see the package function Check).
func (r *Report) Check(gates ...Gate) error {
	results, err := checkGates(r.CandidateSummary, r.Comparison, r.catalog(), gates, r.failure(),
		checkOptions{cases: r.CandidateCases, confidence: r.Confidence})
	r.Gates = results
	return err
}

// failure returns Report.Failure, or else the failure of a run whose
// evaluation ended EVALUATION_FAILED or EVALUATION_AGGREGATION_FAILED, or
// is still initialized or started: its rows are not all written.
func (r *Report) failure() error {
	if r.Failure != nil {
		return r.Failure
	}
	for _, run := range []Run{r.Baseline, r.Candidate} {
		status := run.Evaluation.Status.EvaluationStatus()
		if status.Running() {
			return fmt.Errorf("evaluation %s (%s) is still %s: its rows are not all written; wait for it to end (WaitEvaluation) before judging it",
				bound(run.Evaluation.ID, 80), run.Variant(), status)
		}
		if !status.Failed() {
			continue
		}
		text := fmt.Sprintf("evaluation %s (%s) ended %s", bound(run.Evaluation.ID, 80), run.Variant(), bound(string(status), 80))
		if e := run.Evaluation.Status.Error; e != nil {
			if e.Message != "" {
				text += ": " + bound(oneLine(e.Message), 200)
			}
			if cause := e.Cause(); cause != "" {
				text += ": " + cause
			}
			if hint := e.Hint(); hint != "" {
				text += " (" + bound(hint, 300) + ")"
			}
		}
		return errors.New(text)
	}
	return nil
}

// catalog resolves the report's evaluators, those only seen in results
// included.
func (r *Report) catalog() catalog {
	seen := [][]string{r.CandidateSummary.EvaluatorIDs, r.BaselineSummary.EvaluatorIDs}
	if r.Comparison != nil {
		seen = append(seen, r.Comparison.EvaluatorIDs)
	}
	return newCatalog(r.Evaluators, seen...)
}

// runs returns the runs to write, baseline first, with a name for each
// that tells them apart.
func (r *Report) runs() []namedRun {
	var out []namedRun
	if !r.Baseline.empty() || r.Comparison != nil {
		out = append(out, namedRun{r.Baseline, r.Baseline.Variant(), &r.BaselineSummary})
	}
	out = append(out, namedRun{r.Candidate, r.Candidate.Variant(), &r.CandidateSummary})
	if len(out) == 2 {
		switch {
		case out[0].name == out[1].name && out[0].name != "":
			out[0].name += " (baseline)"
			out[1].name += " (candidate)"
		case out[0].name == out[1].name:
			out[0].name, out[1].name = "baseline", "candidate"
		}
	} else if out[0].name == "" {
		out[0].name = "candidate"
	}
	return out
}

type namedRun struct {
	Run
	name    string
	summary *Summary
}

// resultText renders one evaluator result for a cell: the value as text,
// or "error: message".
func resultText(r models.Result) string {
	if r.Failed() {
		msg := ""
		if r.Error != nil {
			msg = r.Error.Message
		}
		return "error: " + msg
	}
	return r.String()
}

// Flaky lists the candidate's flaky cases, by evaluator in the order they
// were first seen: the cases whose repeats disagree on a pass/fail
// evaluator, at most MaxFlakyListed each (FlakyList.Total counts them
// all). It is empty without repeats.
func (r *Report) Flaky() []FlakyList {
	switch {
	case r.Comparison != nil:
		return r.Comparison.CandidateCases.flaky(r.Comparison.EvaluatorIDs, r.catalog())
	case r.CandidateCases != nil:
		return r.CandidateCases.flaky(r.CandidateSummary.EvaluatorIDs, r.catalog())
	}
	return nil
}
