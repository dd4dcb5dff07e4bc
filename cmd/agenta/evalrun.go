package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
)

// evalRun is one agenta eval run: its options, the reports asked for, and
// what it learnt of each variant's run, kept until the reports are
// written, whatever the outcome.
type evalRun struct {
	opts    *EvalRunOptions
	targets []reportTarget
	// out is where the tables go: standard output, or standard error when
	// a report goes to standard output.
	out  *guardedWriter
	runs []*variantRun
	// report is what the run had built when it ended; judged says its
	// gates were checked on what the runs gave.
	report *evals.Report
	judged bool
	// problems are the failures besides the error the run returns: the
	// variants that could not be summarised, classified.
	problems []error
	// rowsErr is why the rows could not be kept for the reports that hold
	// them.
	rowsErr error
}

// variantRun is one variant's evaluation as eval run follows it.
type variantRun struct {
	label string    // "evaluation ID (variant)", for progress and messages
	run   evals.Run // the evaluation as created, then as it ended
	// err is why the run cannot be summarised: its wait or its read
	// failed, or the evaluation failed; classified.
	err        error
	rowsRead   int // scenarios read
	acc        evals.Accumulator
	summary    evals.Summary
	comparison *evals.Comparison // against the baseline, when both were read whole
	rows       *rowFile          // its scenarios, kept for the reports; nil when none needs them
	keep       bool              // whether its rows are to be kept
	// cases gathers the rows by test case when each was repeated, for the
	// bound gates of a run judged without a baseline; nil otherwise.
	cases *evals.CaseCounter
}

// run creates the evaluation, waits for every variant's run together,
// reads the scenarios of those that finished together, summarising and
// comparing them as they stream, prints the summaries and comparisons and
// checks the gates. It returns the gates' failure; each variant that could
// not be summarised is one of r.problems.
func (r *evalRun) run(ctx context.Context, client *agenta.Client) error {
	opts := r.opts
	// A reader that closes standard output (| head -1) ends the printing,
	// not the run: the default SIGPIPE would kill the command before its
	// reports and its verdict. A write to a closed pipe fails instead.
	signal.Ignore(syscall.SIGPIPE)
	tables := opts.IO.Out
	if toStdout(r.targets) {
		tables = opts.IO.ErrOut
	}
	r.out = &guardedWriter{w: tables}
	// --timeout bounds the whole run, every variant's wait and read included.
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	host := opts.Factory.serverHost()
	if opts.ProviderKeys.Len() > 0 && !opts.Factory.generationTold() {
		// A client that does not know its server's API would send the keys
		// in a 2024 request, to a 2026 server too, which takes none.
		if err := client.DetectGeneration(ctx); err != nil {
			return err
		}
	}
	req := models.NewEvaluation{
		AppID: opts.AppID, VariantIDs: opts.VariantIDs, EvaluatorConfigIDs: opts.EvaluatorIDs,
		TestsetID: opts.TestsetID, RateLimit: opts.rateLimit(), LMProvidersKeys: opts.ProviderKeys, Repeats: opts.Repeats,
	}
	if err := r.preflight(ctx, client, req); err != nil {
		return err
	}
	if err := r.follow(ctx, client, host, req); err != nil {
		return err
	}
	r.compare()
	return r.judge()
}

// preflight checks, before anything is created, what would make the
// evaluation fail or the gates meaningless: the ids (a wrong one is a
// usage error, 2), the test set's columns against the app's inputs and
// the evaluators' answers (3, as the mid-2024 service's failed run), and
// every gate against the evaluators' names (2, with "did you mean").
func (r *evalRun) preflight(ctx context.Context, client *agenta.Client, req models.NewEvaluation) error {
	report, err := client.Preflight(ctx, req.PreflightRequest())
	if err != nil {
		return err
	}
	if err := evals.ResolveGatesFor(report, req.EvaluatorConfigIDs, r.opts.Gates...); err != nil {
		return invalidGates(err)
	}
	return r.opts.pacing(r.opts.IO.ErrOut, report)
}

// follow runs the evaluation with evals.EvaluateWith, following every
// variant's run at once: each is waited on until it ends or ctx does, so
// that a variant that failed never keeps another from being waited on, and
// a timeout names each one's last status; and each run that finished is
// read as soon as it has, one at a time, so that a run still going at
// --timeout never costs the others their summary. Each variant that
// failed keeps its error (v.err); the error returned is one that leaves
// no run to summarise, such as a failed create.
func (r *evalRun) follow(ctx context.Context, client *agenta.Client, host string, req models.NewEvaluation) error {
	streams := *r.opts.IO
	streams.ErrOut = &lockedWriter{w: r.opts.IO.ErrOut}
	if len(req.VariantIDs) > 1 {
		// One live line per variant cannot share a terminal's line.
		streams.errTTY = false
	}
	svc := &evalService{client: client, streams: &streams, interval: r.opts.Interval}
	runs, err := evals.EvaluateWith(ctx, svc, req, evals.EvaluateOptions[string]{
		Concurrent: true,
		Created:    r.created,
		Wait: func(i int, ev models.Evaluation) string {
			v := r.runs[i]
			return v.evaluationLabel(v.evaluationIndex(ev.ID))
		},
		// The labels of the waits after it read the evaluation as it ended.
		Waited: func(i int, ev *models.Evaluation, _ error) {
			if v := r.runs[i]; ev != nil {
				*v.evaluation(v.evaluationIndex(ev.ID)) = *ev
			}
		},
		Scenarios: func(i int, _ models.Evaluation, scenarios iter.Seq2[models.EvaluationScenario, error]) error {
			return r.read(i, scenarios)
		},
	})
	if runs == nil {
		// Nothing was created, or its answer could not be read: the
		// client's error names those created before a failure.
		return err
	}
	for i, v := range r.runs {
		v.run = runs[i] // as it ended
	}
	if err == nil {
		return nil
	}
	// One *evals.RunError per variant that failed.
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return err
	}
	for _, err := range joined.Unwrap() {
		var failed *evals.RunError
		if !errors.As(err, &failed) {
			return err
		}
		v := r.runs[failed.Run]
		v.err = classify(failed.Err, host)
		if failed.Step == evals.StepScenarios {
			label := v.evaluationLabel(v.evaluationIndex(failed.EvaluationID))
			v.err = inContext(v.err, fmt.Sprintf("%s: reading its scenarios, %d read, then", label, v.rowsRead))
		}
	}
	return nil
}

// created is told the evaluations as created, repeat after repeat, and
// makes a variantRun of each variant's.
func (r *evalRun) created(created []models.Evaluation) {
	opts := r.opts
	n := len(opts.VariantIDs)
	repeats := len(created) / n
	// The rows are kept for the reports that hold them (the baseline's
	// and the last variant's) and for the comparisons with the baseline.
	rowReports := slices.ContainsFunc(r.targets, func(t reportTarget) bool { return t.format.Rows })
	for i := range n {
		v := &variantRun{run: evals.Run{Evaluation: created[i]}}
		if opts.Repeats > 1 {
			v.run.Repeats = opts.Repeats
		}
		for j := 1; j < repeats; j++ {
			v.run.RepeatEvaluations = append(v.run.RepeatEvaluations, created[j*n+i])
		}
		v.label = v.evaluationLabel(0)
		v.keep = n > 1 || rowReports && (i == 0 || i == n-1)
		if n == 1 && opts.Repeats > 1 {
			v.cases = evals.NewCaseCounter(opts.Repeats)
		}
		r.runs = append(r.runs, v)
	}
	// In the order they were created: repeat after repeat.
	for j := range created {
		fmt.Fprintf(opts.IO.ErrOut, "%s: created\n", r.runs[j%n].evaluationLabel(j/n))
	}
}

// read streams a finished run's scenarios into its Accumulator and, when
// kept, its rowFile: memory stays flat whatever the size of the run, and
// no limit on the size of an answer applies. EvaluateWith reads one run
// at a time. A failed read is the error returned; a row that could not be
// kept is r.rowsErr, and the run is still summarised.
func (r *evalRun) read(i int, scenarios iter.Seq2[models.EvaluationScenario, error]) error {
	v := r.runs[i]
	var keepErr error
	if v.keep {
		if v.rows, keepErr = newRowFile(); keepErr != nil {
			v.rows = nil
		}
	}
	defer func() { r.rowsErr = cmp.Or(r.rowsErr, keepErr) }()
	for scenario, err := range scenarios {
		if err != nil {
			return err
		}
		v.rowsRead++
		v.acc.Add(scenario)
		if v.cases != nil {
			v.cases.Add(scenario)
		}
		if v.rows != nil && keepErr == nil {
			keepErr = v.rows.add(&scenario)
		}
	}
	v.summary = v.acc.Summary()
	if v.rows != nil && keepErr == nil {
		keepErr = v.rows.finish()
	}
	return nil
}

// evalService is the client as evals.EvaluateWith uses it for eval run:
// its waits show their progress on stderr, labelled by the wait options.
// It is no Stopper, and has no preflight (run does its own, to print the
// pacing): eval run leaves the runs on the service as they are.
type evalService struct {
	client   *agenta.Client
	streams  *IOStreams
	interval time.Duration
}

func (s *evalService) CreateEvaluation(ctx context.Context, ev models.NewEvaluation) ([]models.Evaluation, error) {
	created, err := s.client.CreateEvaluation(ctx, ev)
	if err != nil {
		return nil, err // its message names those created before the failure
	}
	return created, nil
}

func (s *evalService) WaitEvaluation(ctx context.Context, id string, label string) (*models.Evaluation, error) {
	return waitEvaluation(ctx, s.streams, s.client, id, label, s.interval)
}

func (s *evalService) StreamEvaluationScenarios(ctx context.Context, id string) iter.Seq2[models.EvaluationScenario, error] {
	return s.client.StreamEvaluationScenarios(ctx, id)
}

// evaluationIndex returns the index of the variant's evaluation id: 0 for
// its first, j for its j-th repeat's.
func (v *variantRun) evaluationIndex(id string) int {
	for j := range v.evaluationCount() {
		if v.evaluation(j).ID == id {
			return j
		}
	}
	return 0
}

// evaluationCount is the number of the variant's evaluations: one, and
// one per repeat after the first on a mid-2024 server.
func (v *variantRun) evaluationCount() int { return 1 + len(v.run.RepeatEvaluations) }

// evaluation returns the variant's j-th evaluation: its first, then its
// repeats'.
func (v *variantRun) evaluation(j int) *models.Evaluation {
	if j == 0 {
		return &v.run.Evaluation
	}
	return &v.run.RepeatEvaluations[j-1]
}

// evaluationLabel names the variant's j-th evaluation for progress and
// messages: "evaluation ID (variant)", or "evaluation ID (repeat 2/3,
// variant)" when it has more, the repeat first since a line is cut at
// maxCell.
func (v *variantRun) evaluationLabel(j int) string {
	repeat := ""
	if n := v.evaluationCount(); n > 1 {
		repeat = fmt.Sprintf("repeat %d/%d, ", j+1, n)
	}
	return "evaluation " + cell(v.evaluation(j).ID) + " (" + repeat + cell(v.run.Variant()) + ")"
}

// compare compares each variant that was read whole with the baseline,
// reading both from the files they were kept in, a row from each in turn:
// the service lists the rows of runs of one test set in the same order,
// so a row meets its partner at once and the Comparer holds next to
// nothing.
func (r *evalRun) compare() {
	base := r.runs[0]
	if base.err != nil || base.rows == nil || r.rowsErr != nil {
		return
	}
	for _, v := range r.runs[1:] {
		if v.err != nil || v.rows == nil {
			continue
		}
		comparer := evals.Comparer{Repeats: r.opts.Repeats}
		c, err := comparer.CompareStream(base.rows.rows(), v.rows.rows())
		if err != nil {
			r.rowsErr = cmp.Or(r.rowsErr, err)
			return
		}
		v.comparison = &c
	}
}

// judge prints each variant's summary, or why it has none, and each
// comparison with the baseline, builds the report of the baseline and the
// last variant, checks the gates on it and prints them.
func (r *evalRun) judge() error {
	out, opts := r.out, r.opts
	base, gated := r.runs[0], r.runs[len(r.runs)-1]
	var failures []string
	for i, v := range r.runs {
		isBaseline := i == 0 && len(r.runs) > 1
		if v.err != nil {
			r.problems = append(r.problems, v.err)
			failures = append(failures, errorLine(v.err))
			printUnsummarised(out, v, isBaseline)
			continue
		}
		report := &evals.Report{Evaluators: reportEvaluators(base.run, v.run, opts.EvaluatorIDs), Candidate: v.run, CandidateSummary: v.summary,
			CandidateCases: r.summaryCases(i)}
		if v.comparison != nil {
			report.Baseline, report.BaselineSummary, report.Comparison = base.run, base.summary, v.comparison
		}
		_ = opts.direct(report) // an unknown name is the gated report's usage error
		_ = printSummary(out, report, isBaseline)
		if v.comparison != nil {
			_ = printComparison(out, report)
		}
	}

	report := &evals.Report{Candidate: gated.run, CandidateSummary: gated.summary, Confidence: opts.Confidence}
	if gated.cases != nil {
		cases := gated.cases.Cases()
		report.CandidateCases = &cases
	}
	if len(r.runs) > 1 {
		report.Baseline, report.BaselineSummary, report.Comparison = base.run, base.summary, gated.comparison
	} else {
		base = &variantRun{}
	}
	report.Evaluators = reportEvaluators(base.run, gated.run, opts.EvaluatorIDs)
	// The reports read the rows back from the files they were kept in.
	for _, side := range []struct {
		v   *variantRun
		run *evals.Run
	}{{base, &report.Baseline}, {gated, &report.Candidate}} {
		if side.v.rows != nil && side.v.err == nil {
			side.run.Rows = side.v.rows.rows
		}
	}
	var lost string
	if len(r.runs) > 1 && base.err == nil && gated.err == nil && gated.comparison == nil {
		// Both ran, and the rows to compare could not be kept (past
		// rowsInMemory, a missing or full $TMPDIR): the gates on the
		// comparison have no verdict, and that is not the candidate's
		// fault; the others still judge the candidate.
		err := localError(fmt.Errorf("%s could not be compared with the baseline: the rows could not be kept in a temporary file: %w", gated.label, errorReason(r.rowsErr)))
		r.problems = append(r.problems, err)
		lost = errorLine(err)
	}
	if len(failures) > 0 {
		// Every variant that could not be summarised, in the order given.
		report.Failure = errors.New(strings.Join(failures, "; "))
	}
	directErr := opts.direct(report)
	if directErr != nil && report.Failure == nil {
		// The user's mistake, which leaves no verdict: the evaluator's
		// rows would count the wrong way.
		report.Failure = errors.New(errorLine(directErr))
	}
	r.report, r.judged = report, true
	gateErr := report.Check(opts.Gates...)
	if lost != "" {
		gateErr = withoutComparison(report, lost, gateErr)
	}
	_ = printGates(out, report.Gates)
	if directErr != nil && len(failures) == 0 {
		return directErr
	}
	if errors.Is(gateErr, evals.ErrInvalidGate) {
		return invalidGates(gateErr) // the user's typo, not the candidate's fault
	}
	if len(failures) > 0 {
		// The gates failed for those reasons, which say more.
		return nil
	}
	var failed *evals.GateError
	if errors.As(gateErr, &failed) {
		return withKind(&wordedError{text: gateFailure(failed), err: gateErr}, kindGateFailed)
	}
	return gateErr
}

// withoutComparison gives the gates on a comparison that could not be made
// the reason, and keeps gateErr only when a gate that needs no comparison
// failed: a verdict on the candidate is never hidden by a local failure,
// and a local failure is never read as one.
func withoutComparison(report *evals.Report, reason string, gateErr error) error {
	judged := false
	for i, g := range report.Gates {
		if g.Gate.NeedsBaseline() {
			report.Gates[i].Passed, report.Gates[i].Measured, report.Gates[i].Reason, report.Gates[i].Detail = false, math.NaN(), reason, ""
		} else if !g.Passed {
			judged = true
		}
	}
	if judged {
		return gateErr
	}
	return nil
}

// invalidGates is the usage error of the invalid gates of err, a
// *evals.GateError, each named with its reason.
func invalidGates(err error) error {
	var ge *evals.GateError
	errors.As(err, &ge)
	var parts []string
	for _, res := range ge.Invalid() {
		parts = append(parts, fmt.Sprintf("--gate %q: %s", text.Clip(res.Gate.String(), 100), res.Reason))
	}
	return usageErrorf("%s", strings.Join(parts, "; "))
}

// gateFailure says which gates failed, on one line.
func gateFailure(e *evals.GateError) string {
	parts := make([]string, len(e.Failed))
	for i, r := range e.Failed {
		parts[i] = r.String()
	}
	return fmt.Sprintf("%d of %d gates failed: %s", len(e.Failed), e.Total, strings.Join(parts, "; "))
}

// direct applies --lower-is-better to a report's evaluators. A name that
// is no evaluator of the runs is a usage error.
func (o *EvalRunOptions) direct(report *evals.Report) error {
	var unknown []string
	for _, name := range o.LowerIsBetter {
		if err := report.SetDirection(name, evals.LowerIsBetter); err != nil {
			unknown = append(unknown, fmt.Sprintf("--lower-is-better %q: %v", text.Clip(name, 100), err))
		}
	}
	if len(unknown) > 0 {
		return usageErrorf("%s", strings.Join(unknown, "; "))
	}
	return nil
}

// printUnsummarised writes, in a variant's place among the summaries, why
// it has none.
func printUnsummarised(w io.Writer, v *variantRun, baseline bool) {
	role := ""
	if baseline {
		role = ", baseline"
	}
	fmt.Fprintf(w, "%s (evaluation %s%s): no summary: %s\n\n", cell(v.run.Variant()), cell(v.run.Evaluation.ID), role,
		strings.TrimPrefix(errorLine(v.err), "agenta: "))
}

// reportEvaluators names the evaluators of a report: those of the runs'
// evaluations, and the requested evaluator configs by id even when they
// have no value anywhere, so that a gate naming one by id fails on the
// missing values rather than as an unknown evaluator.
func reportEvaluators(baseline, candidate evals.Run, evaluatorIDs []string) []evals.Evaluator {
	out := evals.EvaluatorsOf(candidate.Evaluation, baseline.Evaluation)
	for _, id := range evaluatorIDs {
		if !slices.ContainsFunc(out, func(e evals.Evaluator) bool { return e.ID == id }) {
			out = append(out, evals.Evaluator{ID: id})
		}
	}
	return out
}

// finish writes the reports asked for whatever the outcome err of the
// command, each on its own: for a run that could not be judged (a usage
// error, a failed evaluation, a service error, an interruption), the
// reports say why and every gate fails. It prints a line for each problem
// but the one that sets the exit code (see exitOrder), which it returns
// for run to print last.
func (r *evalRun) finish(err error) error {
	defer r.close()
	opts := r.opts
	problems := slices.Clone(r.problems)
	problems = append(problems, err)
	if r.out != nil {
		r.out.flush()
		what := "the summary to standard output"
		if toStdout(r.targets) {
			what = "the summary to standard error"
		}
		problems = append(problems, r.out.problem(what))
	}
	if len(r.targets) > 0 {
		report := r.report
		if report == nil {
			report = evals.NewReport(evals.Run{}, evals.Run{})
		}
		if !r.judged {
			if err != nil {
				report.Failure = errors.New(errorLine(err))
			}
			_ = report.Check(opts.Gates...)
		}
		problems = append(problems, r.writeReports(report, opts.Factory.secrets())...)
	}
	if r.report != nil {
		problems = append(problems, r.githubActions(r.report, opts.Factory.secrets()))
	}
	others, primary := worst(problems...)
	printErrorLines(opts.IO.ErrOut, opts.Factory.secrets(), others...)
	return primary
}

// writeReports writes each report asked for, scrubbed of secrets, on its
// own: one that cannot be written is a problem returned, and the others
// are written all the same. It says on stderr which files it wrote. The
// reports are written one after the other: together they took no less
// CPU, and their garbage together raised the peak RSS by half.
func (r *evalRun) writeReports(report *evals.Report, secrets []string) []error {
	type outcome struct {
		problems []error
		wrote    bool
	}
	outcomes := make([]outcome, len(r.targets))
	for i, t := range r.targets {
		written := report
		if t.format.Rows && r.rowsErr != nil {
			// A report of rows alone (CSV, JSON) has nothing left to say;
			// a document (JUnit) still carries the verdict.
			if !t.format.Document {
				outcomes[i].problems = append(outcomes[i].problems, reportError(t, fmt.Errorf("the rows could not be kept in a temporary file: %w", errorReason(r.rowsErr))))
				if !t.stdout && !t.inPlace {
					// Never leave an earlier run's report as if it were
					// this run's.
					_ = os.Remove(t.file)
				}
				continue
			}
			// The verdict still goes to CI: the gates and the failure,
			// without the passed cases of the rows.
			without := *report
			without.Baseline.Rows, without.Candidate.Rows = nil, nil
			written = &without
			outcomes[i].problems = append(outcomes[i].problems, localError(fmt.Errorf("%s has no test case per row: they could not be kept in a temporary file: %w", t.fileDescription(), errorReason(r.rowsErr))))
		}
		write := func(w io.Writer) error { return t.format.Write(written, w) }
		if t.format.Document {
			write = escaped(text.NewDocumentWriter, write)
		}
		if t.format.JSONLines {
			write = escaped(text.NewJSONWriter, write)
		}
		scrubbed := func(w io.Writer) error { return scrubbedWrite(w, secrets, write) }
		if t.stdout {
			// Standard output is written here, alone, not beside the others.
			out := &guardedWriter{w: r.opts.IO.Out}
			if err := scrubbed(out); err != nil {
				outcomes[i].problems = append(outcomes[i].problems, reportError(t, err))
				continue
			}
			out.flush()
			outcomes[i].problems = append(outcomes[i].problems, out.problem("the "+t.flag[2:]+" report to standard output"))
			continue
		}
		if err := t.writeTo(scrubbed); err != nil {
			outcomes[i].problems = append(outcomes[i].problems, reportError(t, err))
			continue
		}
		outcomes[i].wrote = true
	}
	var problems []error
	for i, o := range outcomes {
		if o.wrote {
			fmt.Fprintf(r.opts.IO.ErrOut, "wrote %s\n", text.Escape(r.targets[i].path))
		}
		problems = append(problems, o.problems...)
	}
	return problems
}

// close removes the files the rows were kept in.
func (r *evalRun) close() {
	for _, v := range r.runs {
		if v.rows != nil {
			v.rows.close()
		}
	}
}
