// Package evals judges evaluations: it summarises an evaluation's
// scenarios, compares a candidate variant with a baseline row by row with
// significance tests, checks release gates, and writes reports for people
// and for CI. It does no network I/O: it reads the scenarios the agenta
// client returns.
//
// # The release gate
//
// Evaluate the candidate and the variant in production on the same test
// set in one call, which creates the evaluation, waits for both runs and
// streams their scenarios, then judge:
//
//	runs, err := evals.Evaluate(ctx, client, models.NewEvaluation{
//		AppID: appID, VariantIDs: []string{productionID, candidateID},
//		EvaluatorConfigIDs: evaluatorIDs, TestsetID: testsetID,
//		RateLimit: models.DefaultRateLimit(),
//	}, nil) // or &agenta.WaitOptions{OnStatus: ...} to show progress
//	if err != nil { ... } // a *RunError names the run that failed
//	report := evals.NewReport(runs[0], runs[1])
//	err = report.Check(
//		evals.NotWorseThanBaseline("Exact match", 0.05), // diff_low(Exact match) >= -0.05
//		evals.MinLow("Exact match", 0.85),               // low(Exact match) >= 0.85
//		evals.MaxWorseRows("Edit distance", 0),
//		evals.MaxAppErrors(0),
//	)
//	report.WriteMarkdown(os.Stdout)
//	switch {
//	case errors.Is(err, evals.ErrInvalidGate):
//		exit(2, err) // a typo: the gate names nothing the runs have
//	case err != nil:
//		exit(1, err) // lists every failing gate, measured value and limit
//	}
//
// Build ctx with signal.NotifyContext, so that Ctrl-C ends the waits and
// Evaluate stops what the server can stop; docs/evals-and-statistics.md
// shows the whole program with its exit codes (1 a gate failed, 2 a gate
// is invalid, 3 the runs could not be judged, 130 interrupted).
//
// Evaluate takes any Service, a small interface that *agenta.Client
// satisfies, so this package imports no HTTP code and a test can pass a
// fake. EvaluateWith adds hooks: per-run wait options, and a consumer of
// each run's scenarios as they stream, for runs too large to hold. When a
// run fails, or ctx ends, the *RunError names the run and the runs that may
// still be running: Evaluate stops them through a Service that is also a
// Stopper, as *agenta.Client is on a 2026 server (a mid-2024 one has no
// route to stop a run).
//
// The finished Evaluation names the variant and, in its aggregated
// results, the evaluator configs, so reports and gates use evaluator names
// ("Exact match") as well as ids. The service leaves out an evaluator with
// no value on any row: such an evaluator shows by id.
//
// # Absence of evidence is never success
//
// A row has no value for an evaluator when its app call failed, when the
// evaluator's result is an error or missing, or, in a comparison, when the
// row has no partner on the other side. Such a row counts against the
// candidate everywhere, never silently dropped:
//
//   - in a Summary, Metric counts it as Errors or Missing beside the
//     values; for a pass/fail evaluator it is a fail in the pass rate and
//     its Wilson interval (Mean is over every row);
//   - a gate on the mean of a numeric evaluator, on cost or on latency
//     fails while any candidate row lacks its value, saying how many rows
//     errored or are missing;
//   - in a Comparison, a row without a value ranks below every value:
//     an errored or missing candidate row is worse than any baseline value
//     in worse(...), in McNemar's test and in Wilcoxon's (as a difference
//     of −Inf, or +Inf where lower is better), and a row without a value
//     on both sides is a tie;
//   - a baseline row that the candidate has no row for (a run cut short)
//     is a missing candidate row in every gate, not only in comparisons;
//     a candidate row the baseline never ran is no evidence either way:
//     Delta.CandidateOnly counts it, and it counts on neither side of the
//     Delta's means, its Diff, Better or the tests; a run that lists a
//     test case twice with ids of its own (on either side, until repeats
//     are asked for) fails the gates on the comparison, naming the case;
//   - a run without scenarios fails every gate that measures it, and so
//     does a comparison gate without a baseline or with an empty one, an
//     evaluator without values, and a comparison with no row valued on
//     both sides once the rows a gate allows to fail are left out.
//
// Accepting failed rows is explicit, per gate: "Exact match >= 0.9
// allowing 2 failed rows" (Gate.AllowFailedRows) measures the rows that
// have a value while at most two lack one, and counts them all against
// the candidate beyond that. For a test set on which production already
// fails some app calls, "app_errors <= baseline" (NoMoreAppErrorsThanBaseline)
// bounds the candidate's failed app calls by the baseline's.
//
// # Summaries
//
// Summarize returns a Summary: per evaluator config, a Metric with the
// count of values, errors and missing results, the mean (for a bool
// evaluator, its pass rate over every row) and a 95% confidence interval
// (Wilson's for pass rates, Student's t for numbers); the rows whose app
// call failed; and the distribution of cost and latency. A metric with no
// values has a NaN mean, which reports print as "n/a".
//
// Percentiles (latency.p50, latency.p95, cost.p95) are R's type 7. Summarize
// computes them exactly at any number of rows. For an evaluation too large
// to hold, feed an Accumulator one row at a time, or let SummarizeStream
// read the stream: memory stays flat. It keeps percentiles exact for up to
// 131,072 values (1 MiB each for cost and latency), then folds them into a
// fixed 6,250-bucket logarithmic histogram (49 KiB) whose percentiles are
// within 0.5% of the exact ones; TestPercentilesPastTheExactBound checks
// that bound. Distribution.Approximate then says so, and a gate on such a
// percentile measures the end of its 0.5% range that counts against the
// candidate, so that it never passes where the exact value would fail.
//
//	summary, err := evals.SummarizeStream(client.StreamEvaluationScenarios(ctx, id))
//
// # Comparisons
//
// Compare pairs the rows of two runs of one test set by their inputs and
// their expected answers (correct_answers), whatever their order: two rows
// that ask the same question with different expected answers pair with
// their own partner. Rows that still collide pair in the order they come.
// A row whose app call failed has no expected answers on the service; it
// pairs by its inputs with the earliest row of the other side left over.
// Unpaired rows are counted (Comparison.UnpairedBaseline and
// UnpairedCandidate) and count as missing on the side that lacks them.
//
// Per evaluator, a Delta counts the rows in which the candidate's value is
// higher, lower or the same, and those where a side has no value, with a
// two-sided p-value and, in the evaluator's worse direction, a one-sided
// one (RegressionP): the exact McNemar test for pass/fail results, the
// Wilcoxon signed-rank test for numbers (exact up to 100 non-zero
// differences, ties included; normal approximation with tie and continuity
// corrections beyond). The direction of a regression comes from the test
// itself, on the same paired differences, never from the means: a
// candidate lower on 20 of 21 rows and far higher on one has a higher mean
// but a regression p of 0.0002. Compare is linear in rows; Comparer and
// CompareStream do the same one row at a time.
//
// Whether higher is better depends on the evaluator: an edit distance is
// better low. Direction says which; EvaluatorOf and EvaluatorsOf derive it
// from the evaluator key (see DirectionOf), and Report.SetDirection
// changes it. Delta.Worse, Delta.Better and Delta.RegressionP count with it.
//
// # Gates
//
// A Gate is data: a Measure of the candidate (an evaluator's mean or error
// count, the rows worse than the baseline, the p-value of a regression,
// cost, latency, app errors), an operator and a limit. Build gates with
// MinMean, MaxWorseRows, NoSignificantRegression, MaxMeanCost,
// MaxP95Latency, MaxAppErrors and NoMoreAppErrorsThanBaseline, or parse
// them from text with ParseGate:
//
//	gate, err := evals.ParseGate("Exact match >= 90%") // % fits a rate only
//	gate, err = evals.ParseGate("worse(Edit distance) <= 2")
//	gate, err = evals.ParseGate("latency.p95 <= 2.5 allowing 3 failed rows")
//	gate, err = evals.ParseGate("app_errors <= baseline")
//	gate, err = evals.ParseGate("diff_low(Exact match) >= -5%")
//	gate, err = evals.ParseGate("low(Exact match) >= 90% at 90% confidence")
//
// The bound measures judge what the data show rather than a point
// estimate, the test case the unit (with repeats, Run.Repeats, a case's
// value is its mean over its repeats): low and high, one-sided confidence
// bounds of the candidate's mean; diff_low, the lower bound of the paired
// difference from the baseline, the release gate ("at most 5 points
// worse, with 95% confidence"), which fails as inconclusive on too few
// cases, naming about how many it would need; pass_all and flaky, for
// repeats. Report.Flaky lists the cases whose repeats disagree, and every
// report shows them. docs/evals-and-statistics.md says which gate answers
// which question, and the methods.
//
// Report.Check (or the function Check, for summaries built by streaming)
// measures every gate and returns a *GateError matching ErrGateFailed when
// any failed. A gate that cannot be measured fails (see above). A gate
// that names an evaluator, a measure or an operator that does not exist
// also makes the error match ErrInvalidGate, with the names that exist and
// a suggestion when one is close: it is the user's mistake, which a
// command line reports as a usage error. So is a limit in % on a measure
// that is no rate: a count of rows, a cost, a latency, or the mean of an
// evaluator whose values are not on [0, 1] or that counts edits (a
// mid-2024 edit distance), which only the runs tell. The service names only the
// evaluators with a value on a row that answered: when some evaluator
// known by id alone has no value, a name not close to a known one may be
// that evaluator's, and the gate fails without being invalid. RequireGates does the same inside
// a go test, failing the test with the same message.
//
// # Reports
//
// A Report writes itself as Markdown for a pull-request comment
// (WriteMarkdown), JUnit XML that CI systems show as test results
// (WriteJUnit), CSV with one line per scenario in long form, the variant
// in the first column (WriteCSV), and JSON Lines (WriteJSONLines). In
// JUnit the gates are the test cases that can fail: each scenario is a
// passed case with its values in system-out, so the report is green
// exactly when every gate holds. A run that could not be judged (an
// evaluation that ended EVALUATION_FAILED, or Report.Failure, which a
// caller sets for a service error) is one more failing case with its
// reason: the service's message and the cause, the last line of its stack
// trace (such as "KeyError: 'country'"), with what to do when the cause is
// recognised.
//
// # Statistics
//
// Each statistic is a function of its own, with its formula and reference:
// WilsonInterval, TInterval, StudentTQuantile, StudentTCDF, BinomialTest,
// BinomialTestAlternative, McNemarExact, McNemarExactAlternative,
// WilcoxonSignedRank and WilcoxonSignedRankAlternative. Their tests
// compare them with published examples and with R, and
// TestAgainstScipy with scipy 1.10.1 on 10,733 random cases (32,199
// p-values, each alternative; generated by testdata/gen/scipy_reference.py
// into testdata/scipy_pvalues.jsonl.gz). The largest differences measured:
// 2.8e-13 for the binomial test and 3.0e-13 for McNemar's (both
// 4.4e-13 relative), 1.7e-15 for the exact signed-rank test without ties,
// 0 for the exact test with ties, zeros and infinite differences (against
// scipy's permutation_test over every sign assignment, n ≤ 15), and
// 2.2e-16 for the normal approximation (n from 101 to 300, with ties and
// zeros).
package evals
