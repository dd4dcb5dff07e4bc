package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newCmdEval(f *Factory) *cobra.Command {
	return newGroup("eval <command>", "Run an evaluation and gate a release on it", NewCmdEvalRun(f, nil))
}

// EvalRunOptions are the inputs of agenta eval run.
type EvalRunOptions struct {
	IO           *IOStreams
	Factory      *Factory
	AppID        string
	TestsetID    string
	VariantIDs   []string // the first is the baseline, the last is gated
	EvaluatorIDs []string
	Gates        []evals.Gate
	// LowerIsBetter names the evaluators (by name or id) whose values
	// improve downwards, such as a custom score of errors: worse(...),
	// regression_p(...) and the tables count with it. An edit distance
	// without a threshold is lower-is-better already.
	LowerIsBetter []string
	// Reports are the report files asked for, by the name of their
	// format (evals.ReportFormats: "junit", "csv", "json", "markdown");
	// an empty or missing path means none.
	Reports           map[string]string
	Interval, Timeout time.Duration
	// BatchSize and BatchDelay are the pacing asked of the service: rows
	// a batch, and the pause between batches (see pacing.go).
	BatchSize  int
	BatchDelay time.Duration
	// Repeats runs each test case this many times (--repeats; 1 runs it
	// once): a 2026 server's repeats, K evaluations of each variant on a
	// mid-2024 one.
	Repeats int
	// Confidence is the level of the confidence bounds the gates read
	// (--confidence), above 0.5 and below 1.
	Confidence float64
	// ProviderKeys holds the LLM provider keys named by --lm-provider-key,
	// read from the environment: the AI critique evaluator needs one.
	ProviderKeys models.ProviderKeys

	gates        []string
	providerKeys []string
	// flags are the command's flags, to tell a flag left out from one
	// given an empty value.
	flags *pflag.FlagSet
}

// NewCmdEvalRun returns agenta eval run.
func NewCmdEvalRun(f *Factory, runF func(*EvalRunOptions) error) *cobra.Command {
	opts := &EvalRunOptions{IO: f.IO, Factory: f, Reports: map[string]string{}}
	cmd := &cobra.Command{
		Use:   "run --app ID --testset ID --variant ID [--variant ID]... --evaluator ID [--evaluator ID]... [--gate 'NAME OP NUMBER']...",
		Short: "Run an evaluation, print its summary, check gates and write reports",
		Long: `Run an evaluation of one or more variants on a test set, wait for it, and
print a summary table per variant to stdout: each evaluator by name, with its
mean (a pass rate over every row for pass/fail evaluators), 95% confidence
interval, and the rows with a value, an error or no result. With two or more
variants, the first is the baseline, and each other is compared with it row
by row, rows paired by their inputs and expected answers (by their test
case on a 2026 server, where each variant is a run): the difference of
the means, the rows where the variant did better and worse, the rows without
a value on each side, and a two-sided p-value (exact McNemar for pass/fail,
Wilcoxon signed-rank for scores). Progress goes to stderr.

An LLM app answers differently from call to call: --repeats K runs each
test case K times, the app called once per repeat, so that the noise shows.
A 2026 server runs the repeats itself (each variant's run has K rows per
test case); a mid-2024 server has none, so K evaluations of each variant
are created, each sent once, and read as one run of K repeats. The summary
says "5 rows × 3 repeats". --confidence sets the level of the gates'
confidence bounds (0.95 by default).

Every variant's run is waited on, together, until --timeout: server
trouble (5xx, 429, a restart, an answer cut short) is ridden out with a
line on stderr per failed read. Each run that finished is read at once as
a stream, summarised and kept in a temporary file as its rows arrive, in
memory that does not grow with the run; the comparisons and the reports
read the rows back from there. A
variant that failed (its evaluation, its wait or its read) is shown in
its place with the cause, the others are summarised, and the failure
fails every gate and sets the exit code.

Gates (--gate, repeatable) apply to the last variant:
  NAME OP NUMBER           the mean of evaluator NAME (its name or id);
                           OP is >=, >, <= or <, spaces optional;
                           NUMBER may end in % where the measure is a
                           rate ('Exact match>=90%'): a pass rate, a
                           score on [0, 1], a p-value; not a count of
                           rows or edits, a cost or a latency
  worse(NAME) OP N         rows where it did worse than the baseline
  regression_p(NAME) OP P  one-sided p-value of a regression against the
                           baseline, in the evaluator's worse direction
  diff_low(NAME) OP D      the lower confidence bound of the paired
                           difference from the baseline, by test case, in
                           the evaluator's better direction: the release
                           gate is 'diff_low(NAME) >= -0.05' (at most 5
                           points worse); too few cases fail it as
                           inconclusive, saying how many it would take
  low(NAME), high(NAME)    the lower (upper) confidence bound of the mean
                           over test cases, for a threshold on a noisy app
  pass_all(NAME)           the share of test cases all of whose repeats pass
  flaky(NAME)              test cases whose repeats disagree (listed in
                           the reports)
  errors(NAME) OP N        rows where NAME errored or has no result
  cost.mean, cost.p95, cost.max, cost.total, latency.mean, latency.p50,
  latency.p95, latency.max, app_errors OP NUMBER
  app_errors <= baseline   no more failed app calls than the baseline
                           ('baseline + 2' allows two more)
Which way is worse comes from the evaluator: lower for an edit distance
without a threshold, higher for the others; --lower-is-better NAME says
that a score (of a webhook or custom code) improves downwards.
A row without a value (its app call failed, its result errored or is
missing, it has no partner in the baseline) counts against the candidate:
a fail in a pass rate, a worse row in a comparison, and a gate on a mean
of numbers, cost or latency fails while a row lacks its value. A gate
ending in 'allowing N failed rows' measures the other rows while at most N
lack a value. An empty run fails every gate. A gate naming an evaluator,
measure or operator that does not exist is a usage error (exit 2), found
before anything is created: eval run first reads the ids, the test set's
columns against the app's inputs (a missing one exits 3, as the service's
failed run would) and the evaluators' names.

An AI critique evaluator needs an LLM provider key: --lm-provider-key NAME
sends the key held in the environment variable NAME (such as OPENAI_API_KEY);
the key itself is never a flag value.

Reports (--junit, --csv, --json, --markdown) cover the baseline and the last
variant, or the one variant. Their paths are checked before any evaluation
is created (an existing directory that can be written, not a directory, one
file each, not empty); - is standard output, for one report, and the tables
then go to stderr. They are written whatever the outcome, each on its own,
to a temporary file renamed into place: a gate that failed, an evaluation
that failed, a service error or an interruption shows in them with its
reason, and a report that cannot be written is removed, not left stale.
The rows are kept in memory up to 1 MiB per variant, beyond that in $TMPDIR, in a file
removed as soon as it is created. In JUnit, the
gates are the test cases that can fail (and a failed run, as one failing
case with its cause); each scenario is a passed case with its values in
system-out, so the report is green exactly when every gate holds. The CSV has one record per scenario per
variant: a variant column, the row, one input.NAME column per input, the
expected answer, output, app error, cost, latency, and one column per
evaluator. The JSON report is JSON Lines, one object per scenario.

` + exitCodesHelp,
		Example: `  agenta eval run --app "$AGENTA_APP_ID" --testset "$AGENTA_TESTSET_ID" \
    --variant "$AGENTA_VARIANT_IDS" --evaluator "$AGENTA_EVALUATOR_IDS" --gate 'Exact match >= 0.6'
  agenta eval run --app "$AGENTA_APP_ID" --testset "$AGENTA_TESTSET_ID" \
    --variant "$PRODUCTION_VARIANT" --variant "$CANDIDATE_VARIANT" \
    --evaluator "$EXACT_MATCH" --gate 'Exact match >= 0.8' \
    --gate 'regression_p(Exact match) >= 0.05' --junit report.xml`,
		// The arguments are checked in RunE, so that the reports asked
		// for say what was wrong with them too.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			run := &evalRun{opts: opts}
			err := exactArgs()(cmd, args)
			if err == nil {
				err = opts.check()
			}
			// The report paths are checked before any evaluation is
			// created; those that can be written get the reports of a
			// usage error too.
			var reportErr error
			run.targets, reportErr = opts.checkReports()
			if err == nil {
				err = reportErr
			}
			if err != nil {
				if runF != nil {
					return err
				}
				// A report left from an earlier run would read as this
				// run's: write the usage error into it instead.
				return run.finish(err)
			}
			if runF != nil {
				return runF(opts)
			}
			// A shell that a CI service signalled alone leaves the run
			// behind: it ends as if interrupted.
			ctx, stop := untilParentEnds(cmd.Context())
			defer stop()
			err = runWithClient(ctx, f, func(client *agenta.Client) error { return run.run(ctx, client) })
			if cause := context.Cause(ctx); errors.Is(cause, errParentEnded) {
				fmt.Fprintf(opts.IO.ErrOut, "agenta: %v: stopping as if interrupted\n", cause)
			}
			return run.finish(err)
		},
	}
	// It checks its flags' values itself, so that a report asked for says
	// what was wrong with them.
	cmd.Annotations = map[string]string{checksOwnFlags: "yes"}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		err = flagError(c, err)
		if runF != nil {
			return err
		}
		// The flags could not be parsed, and those after the mistake were
		// not read: read the report paths from the command line alone, so
		// that no report from an earlier run is left to read as this one's.
		paths, ok := reportPaths(f.args)
		if !ok {
			return err
		}
		run := &evalRun{opts: opts}
		for _, name := range reportFlags() {
			opts.Reports[name] = paths.first(name)
		}
		run.targets, _ = opts.checkReports()
		err = run.finish(err)
		// A flag given twice: the reports of the other paths would be an
		// earlier run's.
		for _, name := range reportFlags() {
			for _, path := range paths[name][min(1, len(paths[name])):] {
				removeStale(path)
			}
		}
		return err
	})
	fl := cmd.Flags()
	opts.flags = fl
	fl.StringVar(&opts.AppID, "app", "", "the app's id (required)")
	fl.StringVar(&opts.TestsetID, "testset", "", "the test set's id (required)")
	// Comma-separated lists are accepted too, as agenta fake prints them;
	// unlike a string slice's, an empty id is kept, to be refused.
	fl.Var(idList{&opts.VariantIDs}, "variant", "a variant's id (repeatable or comma-separated; the first is the baseline, the last is gated)")
	fl.Var(idList{&opts.EvaluatorIDs}, "evaluator", "an evaluator config's id (repeatable or comma-separated)")
	fl.StringArrayVar(&opts.gates, "gate", nil, "a gate on the last variant, such as 'Exact match >= 0.9' (repeatable)")
	fl.StringArrayVar(&opts.LowerIsBetter, "lower-is-better", nil, "an evaluator (name or id) whose values improve downwards, such as a custom score of mistakes (repeatable)")
	fl.StringArrayVar(&opts.providerKeys, "lm-provider-key", nil, "send the LLM provider key in this environment variable, such as OPENAI_API_KEY (repeatable; the value is never a flag)")
	for _, format := range evals.ReportFormats() {
		fl.Var(&reportPath{paths: opts.Reports, name: format.Name}, format.Name, format.Usage)
	}
	defaults := models.DefaultRateLimit()
	fl.IntVar(&opts.BatchSize, "batch-size", defaults.BatchSize, "rows the service runs at a time (its web UI's pacing by default)")
	fl.DurationVar(&opts.BatchDelay, "batch-delay", time.Duration(defaults.DelayBetweenBatches)*time.Second, "pause between batches, in whole seconds (mid-2024 servers; 2026 ones have none)")
	fl.IntVar(&opts.Repeats, "repeats", 1, "run each test case this many times, to see an LLM app's noise (a mid-2024 server makes that many evaluations of each variant)")
	fl.Float64Var(&opts.Confidence, "confidence", defaultConfidence, "the level of the gates' confidence bounds, above 0.5 and below 1")
	addWaitFlags(cmd, &opts.Interval, &opts.Timeout)
	return cmd
}

// defaultConfidence is the level of the gates' confidence bounds when
// --confidence is left out.
const defaultConfidence = 0.95

// check refuses missing or malformed flags, and parses the gates. Spaces
// around an id are dropped: "--variant 'a, b'" names two variants.
func (o *EvalRunOptions) check() error {
	// A flag given an empty value counts as given: its check below says so.
	given := func(name string) bool { return o.flags != nil && o.flags.Changed(name) }
	o.AppID, o.TestsetID = strings.TrimSpace(o.AppID), strings.TrimSpace(o.TestsetID)
	for _, ids := range [][]string{o.VariantIDs, o.EvaluatorIDs} {
		for i := range ids {
			ids[i] = strings.TrimSpace(ids[i])
		}
	}
	for i := range o.LowerIsBetter {
		o.LowerIsBetter[i] = strings.TrimSpace(o.LowerIsBetter[i])
	}
	// Every bad or missing flag in one message, so that a script whose
	// earlier steps all failed is fixed in one round, not one a flag.
	// Checked here so that the message names the flag, not the SDK's field.
	var problems []error
	for _, ids := range []struct {
		flag string
		ids  []string
		list bool
	}{{"--app", []string{o.AppID}, false}, {"--testset", []string{o.TestsetID}, false}, {"--variant", o.VariantIDs, true}, {"--evaluator", o.EvaluatorIDs, true}} {
		if !given(strings.TrimPrefix(ids.flag, "--")) && (ids.list && len(ids.ids) == 0 || !ids.list && ids.ids[0] == "") {
			continue // missing: named below
		}
		for _, id := range ids.ids {
			if err := checkID(ids.flag, id, ids.list); err != nil {
				problems = append(problems, err)
				break
			}
		}
	}
	if o.flags != nil {
		problems = append(problems, emptyFlagValues(o.flags, "app", "testset", "variant", "evaluator"))
	}
	problems = append(problems, missingFlags(
		required{"--app", o.AppID != "" || given("app")},
		required{"--testset", o.TestsetID != "" || given("testset")},
		required{"--variant", len(o.VariantIDs) > 0 || given("variant")},
		required{"--evaluator", len(o.EvaluatorIDs) > 0 || given("evaluator")},
	))
	if err := joinUsageErrors(problems...); err != nil {
		return err
	}
	o.Gates = o.Gates[:0]
	for _, spec := range o.gates {
		gate, err := evals.ParseGate(spec)
		if err != nil {
			return usageErrorf("--gate: %w", err)
		}
		// Refused now rather than failed after a whole run.
		if comparesWithBaseline(gate) && len(o.VariantIDs) < 2 {
			return usageErrorf("--gate %q compares with a baseline: give two --variant, the baseline first", text.Clip(spec, 100))
		}
		o.Gates = append(o.Gates, gate)
	}
	keys, err := providerKeysFromEnv(o.providerKeys, o.Factory.getenv)
	if err != nil {
		return err
	}
	o.ProviderKeys = keys
	if err := o.checkPacing(); err != nil {
		return err
	}
	if err := o.checkRepeats(); err != nil {
		return err
	}
	return checkWaitFlags(o.Interval, o.Timeout)
}

// envName is what an environment variable's name looks like; a provider
// key does not (sk-..., lowercase letters, dashes).
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// comparesWithBaseline reports whether a gate measures the last variant
// against the first, and so needs two variants.
func comparesWithBaseline(g evals.Gate) bool {
	return g.Measure == evals.MeasureWorseRows || g.Measure == evals.MeasureRegressionP || g.RelativeToBaseline
}

// providerKeysFromEnv reads the LLM provider keys named by
// --lm-provider-key from the environment. A name must be one the service
// knows, and set; the values never appear in a message.
func providerKeysFromEnv(names []string, getenv func(string) string) (models.ProviderKeys, error) {
	if len(names) == 0 {
		return models.ProviderKeys{}, nil
	}
	known := providerKeyNames
	keys := map[string]string{}
	for _, name := range names {
		if !envName.MatchString(name) {
			// Likely the key itself, given by mistake: never repeat it.
			return models.ProviderKeys{}, usageErrorf("--lm-provider-key: want the name of an environment variable, one of %s", strings.Join(known, ", "))
		}
		if !slices.Contains(known, name) {
			return models.ProviderKeys{}, usageErrorf("--lm-provider-key %q: want one of %s", name, strings.Join(known, ", "))
		}
		value := strings.TrimSpace(getenv(name))
		if value == "" {
			return models.ProviderKeys{}, usageErrorf("--lm-provider-key %s: the environment variable %s is not set", name, name)
		}
		keys[name] = value
	}
	return models.NewProviderKeys(keys), nil
}

// printSummary writes a variant's summary table.
func printSummary(w io.Writer, report *evals.Report, baseline bool) error {
	run, summary := report.Candidate, report.CandidateSummary
	role := ""
	if baseline {
		role = ", baseline"
	}
	duplicates := ""
	if summary.Duplicates > 0 {
		// Counted once; the gates say why they fail.
		duplicates = fmt.Sprintf(", %d more repeating a scenario id (left out)", summary.Duplicates)
	}
	evaluations, rows := "evaluation "+cell(run.Evaluation.ID), strconv.Itoa(summary.Rows)+" rows"
	if len(run.RepeatEvaluations) > 0 {
		ids := []string{cell(run.Evaluation.ID)}
		for _, ev := range run.RepeatEvaluations {
			ids = append(ids, cell(ev.ID))
		}
		evaluations = "evaluations " + strings.Join(ids, ", ")
	}
	if k := run.Repeats; k > 1 {
		rows = fmt.Sprintf("%s (%d repeats)", rows, k)
		if summary.Rows%k == 0 {
			rows = fmt.Sprintf("%s × %d repeats", plural(summary.Rows/k, "row"), k)
		}
	}
	fmt.Fprintf(w, "%s (%s%s): %s%s, %d app errors, status %s\n",
		cell(run.Variant()), evaluations, role, rows, duplicates, summary.AppErrors, cell(string(run.Evaluation.Status.EvaluationStatus())))
	t := newTable(w)
	t.row("  EVALUATOR", "MEAN", "95% CI", "VALUES", "ERRORS", "MISSING")
	for _, id := range summary.EvaluatorIDs {
		m := summary.Evaluators[id]
		low, high := report.SummaryInterval(id)
		t.row("  "+evaluatorLabel(report, id), meanText(m.Mean, m.Bool), intervalText(low, high, m.Bool),
			strconv.Itoa(m.Count), strconv.Itoa(m.Errors), strconv.Itoa(m.Missing))
	}
	if summary.Cost.Count > 0 {
		t.row("  cost per row", number(summary.Cost.Mean), "", strconv.Itoa(summary.Cost.Count), "")
	}
	if summary.Latency.Count > 0 {
		t.row("  latency p50 / p95 (s)", number(summary.Latency.P50)+" / "+number(summary.Latency.P95), "", strconv.Itoa(summary.Latency.Count), "")
	}
	if err := t.flush(); err != nil {
		return err
	}
	if cases, repeats := report.SummaryCases(); repeats > 1 {
		// Repeats of a case are not independent rows: the interval is over cases.
		fmt.Fprintf(w, "  95%% CI over %s, each the mean of its %d repeats%s\n", plural(cases, "test case"), repeats, fewerCases(report, summary.EvaluatorIDs, cases))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// fewerCases names the evaluators whose interval is over fewer of the
// cases, those with a value on every repeat, and how many: " (score: over
// the 7 with a value on every repeat)", or "" when every interval is over
// all of them (or has none: its cell says n/a).
func fewerCases(report *evals.Report, ids []string, cases int) string {
	var parts []string
	for _, id := range ids {
		if n := report.SummaryIntervalCases(id); n > 0 && n < cases {
			parts = append(parts, fmt.Sprintf("%s: over the %d %s", cell(evaluatorLabel(report, id)), n, intervalCasesWord(report.CandidateSummary.Evaluators[id].Bool)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// intervalCasesWord says which cases an interval with repeats is over: a
// pass rate's, those with a result; a score's, those with a value on
// every repeat (see evals.Report.SummaryIntervalCases).
func intervalCasesWord(passFail bool) string {
	if passFail {
		return "with a result"
	}
	return "with a value on every repeat"
}

// summaryCases returns what variant i's test cases add up to, for the
// interval of its summary with repeats: its own when judged alone, the
// baseline's side of a comparison for the baseline, nil for a candidate
// (its comparison holds them) or without repeats.
func (r *evalRun) summaryCases(i int) *evals.CaseSummary {
	if r.opts.Repeats <= 1 {
		return nil
	}
	if v := r.runs[i]; v.cases != nil {
		cases := v.cases.Cases()
		return &cases
	}
	if i == 0 {
		for _, v := range r.runs[1:] {
			if v.comparison != nil {
				return &v.comparison.BaselineCases
			}
		}
	}
	return nil
}

// printComparison writes how a variant differs from the baseline.
func printComparison(w io.Writer, report *evals.Report) error {
	c := report.Comparison
	unpaired := strconv.Itoa(c.Unpaired)
	if c.Unpaired > 0 {
		unpaired = fmt.Sprintf("%d (%d of the baseline, %d of the candidate)", c.Unpaired, c.UnpairedBaseline, c.UnpairedCandidate)
	}
	// With repeats, a pair is a test case: its value is the mean of its repeats.
	paired := strconv.Itoa(c.Paired) + " rows"
	if c.Repeats > 1 {
		paired = fmt.Sprintf("%d test cases × %d repeats", c.Paired, c.Repeats)
	}
	fmt.Fprintf(w, "%s against %s: %s paired by %s, %s unpaired\n",
		cell(report.Candidate.Variant()), cell(report.Baseline.Variant()), paired, c.Pairing(), unpaired)
	t := newTable(w)
	t.row("  EVALUATOR", "BASELINE", "CANDIDATE", "DIFF", "BETTER", "WORSE", "SAME", "NO VALUE", "P")
	for _, id := range c.EvaluatorIDs {
		d := c.Evaluators[id]
		dir := evaluatorDirection(report, id)
		rate := d.Candidate.Bool || d.Baseline.Bool
		t.row("  "+evaluatorLabel(report, id), meanText(d.Baseline.Mean, rate), meanText(d.Candidate.Mean, rate),
			diffText(d.Diff, rate), strconv.Itoa(d.Better(dir)), strconv.Itoa(d.Worse(dir)), strconv.Itoa(d.Tied+d.BothLack),
			strconv.Itoa(d.Baseline.WithoutValue())+" / "+strconv.Itoa(d.Candidate.WithoutValue()), number(d.PValueFor(dir)))
	}
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// evaluatorDirection says which way an evaluator improves.
func evaluatorDirection(report *evals.Report, id string) evals.Direction {
	for _, e := range report.Evaluators {
		if e.ID == id {
			return e.Direction
		}
	}
	return evals.HigherIsBetter
}

// printGates writes each gate's outcome.
func printGates(w io.Writer, results []evals.GateResult) error {
	if len(results) == 0 {
		return nil
	}
	t := newTable(w)
	t.row("GATE", "MEASURED", "RESULT")
	for _, r := range results {
		verdict := "pass"
		if !r.Passed {
			verdict = "FAIL"
			if r.Reason != "" {
				verdict += ": " + r.Reason
			}
		}
		if r.Detail != "" {
			verdict += " (" + r.Detail + ")"
		}
		measured := "n/a"
		if !math.IsNaN(r.Measured) {
			measured = number(r.Measured)
		}
		t.row(r.Gate.String(), measured, verdict)
	}
	return t.flush()
}

// evaluatorLabel names an evaluator in a table, saying when lower values
// are better.
func evaluatorLabel(report *evals.Report, id string) string {
	for _, e := range report.Evaluators {
		if e.ID == id {
			name := e.Name
			if name == "" {
				name = id
			}
			if e.Direction == evals.LowerIsBetter {
				name += " (lower is better)"
			}
			return name
		}
	}
	return id
}

// meanText shows a mean: a pass rate as a percentage, a score as a number.
func meanText(v float64, rate bool) string { return rateText(v, rate, "%") }

func intervalText(low, high float64, rate bool) string {
	if math.IsNaN(low) || math.IsNaN(high) {
		return "n/a"
	}
	return meanText(low, rate) + " – " + meanText(high, rate)
}

// diffText shows a difference of means: of pass rates in points.
func diffText(d float64, rate bool) string { return rateText(d, rate, " pts") }

// rateText shows v, "n/a" for NaN: a rate times 100 with unit, a
// score as a number.
func rateText(v float64, rate bool, unit string) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case rate:
		return strconv.FormatFloat(100*v, 'f', 1, 64) + unit
	}
	return number(v)
}

// writeFile writes a file through write, atomically: into a temporary
// file beside it, renamed over it once complete, so that a reader never
// sees a report half-written, and a failure leaves no report at all rather
// than one from an earlier run.
func writeFile(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		// The directory is missing or not writable: say so of the file
		// asked for, not of a temporary name.
		_ = os.Remove(path)
		return &os.PathError{Op: "create", Path: path, Err: errors.Unwrap(err)}
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			_ = os.Remove(path) // never leave an earlier run's report
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
