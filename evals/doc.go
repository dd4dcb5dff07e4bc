// Package evals judges evaluations: it summarises an evaluation's
// scenarios, compares a candidate variant with a baseline row by row with
// significance tests, checks release gates, and writes reports for people
// and for CI. It does no network I/O: it reads the scenarios the agenta
// client returns.
//
// # The release gate
//
// Start an evaluation of the candidate and of the variant in production on
// the same test set, wait for both, then judge:
//
//	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
//		AppID: appID, VariantIDs: []string{productionID, candidateID},
//		EvaluatorConfigIDs: evaluatorIDs, TestsetID: testsetID,
//		RateLimit: models.DefaultRateLimit(),
//	})
//	if err != nil { ... }
//	var runs [2]evals.Run
//	for i, ev := range evaluations {
//		finished, err := client.WaitEvaluation(ctx, ev.ID, nil)
//		if err != nil { ... }
//		scenarios, err := client.FetchEvaluationScenarios(ctx, ev.ID)
//		if err != nil { ... }
//		runs[i] = evals.Run{Evaluation: *finished, Scenarios: scenarios}
//	}
//	report := evals.NewReport(runs[0], runs[1])
//	err = report.Check(
//		evals.MinMean("Exact match", 0.9),
//		evals.NoSignificantRegression("Exact match", 0.05),
//		evals.MaxWorseRows("Edit distance", 0),
//		evals.MaxAppErrors(0),
//	)
//	report.WriteMarkdown(os.Stdout)
//	if errors.Is(err, evals.ErrGateFailed) {
//		log.Fatal(err) // lists every failing gate, measured value and limit
//	}
//
// The finished Evaluation names the variant and, in its aggregated
// results, the evaluator configs, so reports and gates use evaluator names
// ("Exact match") as well as ids. The service leaves out an evaluator with
// no value on any row: such an evaluator shows by id.
//
// # Summaries
//
// Summarize returns a Summary: per evaluator config, a Metric with the
// count of values and errors, the mean (for a bool evaluator, its pass
// rate) and a 95% confidence interval (Wilson's for pass rates, Student's t
// for numbers); the rows whose app call failed; and the distribution of
// cost and latency. A metric with no values has a NaN mean, which reports
// print as "n/a".
//
// For an evaluation too large to hold, feed an Accumulator one row at a
// time, or let SummarizeStream read the stream: memory stays flat.
//
//	summary, err := evals.SummarizeStream(client.StreamEvaluationScenarios(ctx, id))
//
// # Comparisons
//
// Compare pairs the rows of two runs of one test set by their inputs
// (names and values as text, in any order; rows with the same inputs pair
// in the order they come) and, per evaluator, counts the pairs in which the
// candidate's value is higher, lower or the same, with a two-sided p-value:
// the exact McNemar test for pass/fail results, the Wilcoxon signed-rank
// test for numbers. It is linear in rows; Comparer and CompareStream do the
// same one row at a time.
//
// Whether higher is better depends on the evaluator: an edit distance is
// better low. Direction says which; EvaluatorOf and EvaluatorsOf derive it
// from the evaluator key (see DirectionOf), and Report.SetDirection
// changes it. Delta.Worse and Delta.Better count with it.
//
// # Gates
//
// A Gate is data: a Measure of the candidate (an evaluator's mean or error
// count, the rows worse than the baseline, the p-value of a regression,
// cost, latency, app errors), an operator and a limit. Build gates with
// MinMean, MaxWorseRows, NoSignificantRegression, MaxMeanCost,
// MaxP95Latency and MaxAppErrors, or parse them from text with ParseGate:
//
//	gate, err := evals.ParseGate("Exact match >= 90%")
//	gate, err = evals.ParseGate("worse(Edit distance) <= 2")
//	gate, err = evals.ParseGate("latency.p95 <= 2.5")
//
// Report.Check (or the function Check, for summaries built by streaming)
// measures every gate and returns a *GateError matching ErrGateFailed when
// any failed. A gate that cannot be measured fails: an unknown evaluator
// name, an evaluator without values, a comparison without a baseline.
// RequireGates does the same inside a go test, failing the test with the
// same message.
//
// # Reports
//
// A Report writes itself as Markdown for a pull-request comment
// (WriteMarkdown), JUnit XML that CI systems show as test results, one test
// case per scenario and variant and one per gate (WriteJUnit), CSV with one
// line per scenario in long form, the variant in the first column
// (WriteCSV), and JSON Lines (WriteJSONLines).
//
// # Statistics
//
// Each statistic is a function of its own, with its formula and reference:
// WilsonInterval, TInterval, StudentTQuantile, StudentTCDF, BinomialTest,
// McNemarExact and WilcoxonSignedRank. Their tests compare them with
// published examples and with R.
package evals
