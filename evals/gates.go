package evals

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrGateFailed matches (with errors.Is) the error of a check in which at
// least one gate failed; errors.As to *GateError gives the details.
var ErrGateFailed = errors.New("evals: gate failed")

// Measure names what a gate measures on the candidate run.
type Measure string

// The measures a Gate can bound. The evaluator measures need
// Gate.Evaluator; the comparison measures need a baseline.
const (
	// MeasureMean is an evaluator's mean: the pass rate of a bool
	// evaluator. It is the default measure.
	MeasureMean Measure = "mean"
	// MeasureErrors is the number of an evaluator's results that failed.
	MeasureErrors Measure = "errors"
	// MeasureWorseRows is the number of paired rows in which the candidate
	// did worse than the baseline on an evaluator, by its Direction.
	MeasureWorseRows Measure = "worse"
	// MeasureRegressionP is the p-value of a regression on an evaluator:
	// Delta.PValue when the candidate's mean moved the wrong way, 1
	// otherwise. "regression_p(X) >= 0.05" means no significant
	// regression at level 0.05.
	MeasureRegressionP Measure = "regression_p"

	MeasureCostMean    Measure = "cost.mean"    // mean cost per row
	MeasureCostP95     Measure = "cost.p95"     // 95th percentile of the cost per row
	MeasureCostMax     Measure = "cost.max"     // highest cost of a row
	MeasureCostTotal   Measure = "cost.total"   // cost of all rows
	MeasureLatencyMean Measure = "latency.mean" // mean latency in seconds
	MeasureLatencyP50  Measure = "latency.p50"  // median latency in seconds
	MeasureLatencyP95  Measure = "latency.p95"  // 95th percentile latency in seconds
	MeasureLatencyMax  Measure = "latency.max"  // highest latency in seconds
	MeasureAppErrors   Measure = "app_errors"   // rows whose app call failed
)

// evaluatorMeasures are the measures of one evaluator, written "m(NAME)".
var evaluatorMeasures = map[Measure]bool{
	MeasureMean: true, MeasureErrors: true, MeasureWorseRows: true, MeasureRegressionP: true,
}

// runMeasures are the measures of the whole run, written bare.
var runMeasures = map[Measure]bool{
	MeasureCostMean: true, MeasureCostP95: true, MeasureCostMax: true, MeasureCostTotal: true,
	MeasureLatencyMean: true, MeasureLatencyP50: true, MeasureLatencyP95: true, MeasureLatencyMax: true,
	MeasureAppErrors: true,
}

// Op is a gate's comparison operator.
type Op string

// The operators a gate accepts.
const (
	AtLeast Op = ">="
	Above   Op = ">"
	AtMost  Op = "<="
	Below   Op = "<"
)

func (op Op) holds(measured, limit float64) bool {
	switch op {
	case AtLeast:
		return measured >= limit
	case Above:
		return measured > limit
	case AtMost:
		return measured <= limit
	case Below:
		return measured < limit
	}
	return false
}

// Gate is one release condition, as data: a measure of the candidate run,
// an operator and a limit, such as "mean(Exact match) >= 0.8". It can be
// built with the constructors below, parsed from text with ParseGate, and
// read from configuration through encoding.TextUnmarshaler.
type Gate struct {
	Measure Measure // what to measure; "" means MeasureMean
	// Evaluator is the evaluator config's name or id, for the evaluator
	// measures.
	Evaluator string
	Op        Op
	Limit     float64
}

// MinMean gates an evaluator's mean (for a bool evaluator, its pass rate)
// at min or more.
func MinMean(evaluator string, min float64) Gate {
	return Gate{Measure: MeasureMean, Evaluator: evaluator, Op: AtLeast, Limit: min}
}

// MaxWorseRows allows at most n paired rows in which the candidate did
// worse than the baseline on an evaluator.
func MaxWorseRows(evaluator string, n int) Gate {
	return Gate{Measure: MeasureWorseRows, Evaluator: evaluator, Op: AtMost, Limit: float64(n)}
}

// NoSignificantRegression fails when the candidate is worse than the
// baseline on an evaluator with a two-sided p-value below alpha (see
// Delta.Regressed).
func NoSignificantRegression(evaluator string, alpha float64) Gate {
	return Gate{Measure: MeasureRegressionP, Evaluator: evaluator, Op: AtLeast, Limit: alpha}
}

// MaxMeanCost bounds the mean cost per row.
func MaxMeanCost(limit float64) Gate {
	return Gate{Measure: MeasureCostMean, Op: AtMost, Limit: limit}
}

// MaxP95Latency bounds the 95th percentile of the latency, in seconds.
func MaxP95Latency(seconds float64) Gate {
	return Gate{Measure: MeasureLatencyP95, Op: AtMost, Limit: seconds}
}

// MaxAppErrors allows at most n rows whose app call failed.
func MaxAppErrors(n int) Gate {
	return Gate{Measure: MeasureAppErrors, Op: AtMost, Limit: float64(n)}
}

func (g Gate) measure() Measure {
	if g.Measure == "" {
		return MeasureMean
	}
	return g.Measure
}

// String writes the gate in the form ParseGate reads: "NAME OP LIMIT" for
// an evaluator's mean, "worse(NAME) <= 3" for another evaluator measure,
// "latency.p95 <= 2" for a measure of the run.
func (g Gate) String() string {
	limit := strconv.FormatFloat(g.Limit, 'g', -1, 64)
	m := g.measure()
	if !evaluatorMeasures[m] {
		return fmt.Sprintf("%s %s %s", m, g.Op, limit)
	}
	name := bound(g.Evaluator, 120)
	if m == MeasureMean && !runMeasures[Measure(name)] && !strings.ContainsAny(name, "()<>") &&
		name == strings.TrimSpace(name) && name != "" && !strings.HasSuffix(name, "=") && !strings.HasSuffix(name, "!") {
		return fmt.Sprintf("%s %s %s", name, g.Op, limit)
	}
	return fmt.Sprintf("%s(%s) %s %s", m, name, g.Op, limit)
}

// MarshalText writes the gate as String does.
func (g Gate) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText parses a gate as ParseGate does, so that gates can be read
// from flags (flag.TextVar) and configuration files.
func (g *Gate) UnmarshalText(text []byte) error {
	parsed, err := ParseGate(string(text))
	if err != nil {
		return err
	}
	*g = parsed
	return nil
}

// ParseGate reads a gate from text, as a command line gives it:
//
//	NAME OP NUMBER          the mean (pass rate) of evaluator NAME
//	MEASURE(NAME) OP NUMBER mean, errors, worse or regression_p of NAME
//	MEASURE OP NUMBER       cost.mean, cost.p95, cost.max, cost.total,
//	                        latency.mean, latency.p50, latency.p95,
//	                        latency.max or app_errors
//
// NAME is an evaluator config's name or id; OP is one of >=, >, <=, <, with
// or without spaces around it; NUMBER may end in % ("80%" is 0.8). The bare
// names of run measures take precedence: write mean(cost.mean) for an
// evaluator of that name. A name may hold parentheses ("Score (v2)"); only
// mean, errors, worse and regression_p open the function form.
func ParseGate(text string) (Gate, error) {
	fail := func(format string, args ...any) (Gate, error) {
		return Gate{}, fmt.Errorf("evals: gate %s: %s", bound(strconv.Quote(text), 200), fmt.Sprintf(format, args...))
	}
	i := strings.LastIndexAny(text, "<>")
	if i < 0 {
		if strings.Contains(text, "=") {
			return fail("unknown operator: want one of >=, >, <=, <")
		}
		return fail("no operator: want NAME OP NUMBER with OP one of >=, >, <=, <")
	}
	op, end := Op(text[i:i+1]), i+1
	if end < len(text) && text[end] == '=' {
		op, end = op+"=", end+1
	}
	left, right := strings.TrimSpace(text[:i]), strings.TrimSpace(text[end:])
	if left == "" {
		return fail("no measure or evaluator name before %s", op)
	}
	if strings.ContainsAny(left[len(left)-1:], "=!<>") {
		return fail("unknown operator %q: want one of >=, >, <=, <", left[len(left)-1:]+string(op))
	}
	limit, err := parseLimit(right)
	if err != nil {
		return fail("%v", err)
	}
	g := Gate{Op: op, Limit: limit}
	if open := strings.IndexByte(left, '('); open > 0 && strings.HasSuffix(left, ")") {
		// Only a known measure opens the function form, so that a name
		// such as "Score (v2)" stays a name.
		if m := Measure(strings.TrimSpace(left[:open])); evaluatorMeasures[m] {
			g.Measure, g.Evaluator = m, strings.TrimSpace(left[open+1:len(left)-1])
			if g.Evaluator == "" {
				return fail("no evaluator name inside %s()", m)
			}
			return g, nil
		}
	}
	if runMeasures[Measure(left)] {
		g.Measure = Measure(left)
		return g, nil
	}
	g.Measure, g.Evaluator = MeasureMean, left
	return g, nil
}

func parseLimit(s string) (float64, error) {
	if s == "" {
		return 0, errors.New("no number after the operator")
	}
	scale := 1.0
	if rest, ok := strings.CutSuffix(s, "%"); ok {
		s, scale = strings.TrimSpace(rest), 0.01
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("limit %q is not a finite number", bound(s, 40))
	}
	return x * scale, nil
}

// GateResult is the outcome of one gate.
type GateResult struct {
	Gate     Gate
	Measured float64 // the measured value; NaN when it could not be measured
	Passed   bool
	// Reason says why the gate could not be measured, such as a missing
	// baseline or an unknown evaluator; such a gate fails.
	Reason string
}

// String describes the outcome: the gate, the measured value and the limit.
func (r GateResult) String() string {
	verdict := "passed"
	if !r.Passed {
		verdict = "failed"
	}
	if r.Reason != "" {
		return fmt.Sprintf("%s %s: %s", r.Gate, verdict, r.Reason)
	}
	return fmt.Sprintf("%s %s: measured %s, limit %s %s", r.Gate, verdict,
		formatNumber(r.Measured), r.Gate.Op, strconv.FormatFloat(r.Gate.Limit, 'g', -1, 64))
}

// GateError is the error of a check in which gates failed. It matches
// ErrGateFailed.
type GateError struct {
	Failed []GateResult // every failing gate
	Total  int          // gates checked
}

// Error lists every failing gate with its measured value and limit.
func (e *GateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "evals: %d of %d gates failed", len(e.Failed), e.Total)
	for _, r := range e.Failed {
		b.WriteString("\n  ")
		b.WriteString(r.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrGateFailed) true.
func (e *GateError) Is(target error) bool { return target == ErrGateFailed }

// Check measures each gate on a candidate run, with the comparison against
// a baseline when there is one (comparison may be nil), and returns every
// result and, when any gate failed, a *GateError matching ErrGateFailed.
// Evaluator names are resolved through evaluators; an evaluator it cannot
// find, a measure without values and a comparison measure without a
// baseline all fail the gate, so that a typo never passes.
func Check(candidate Summary, comparison *Comparison, evaluators []Evaluator, gates ...Gate) ([]GateResult, error) {
	var seen [][]string
	seen = append(seen, candidate.EvaluatorIDs)
	if comparison != nil {
		seen = append(seen, comparison.EvaluatorIDs)
	}
	return checkGates(candidate, comparison, newCatalog(evaluators, seen...), gates)
}

func checkGates(candidate Summary, comparison *Comparison, cat catalog, gates []Gate) ([]GateResult, error) {
	results := make([]GateResult, len(gates))
	var failed []GateResult
	for i, g := range gates {
		r := measureGate(g, candidate, comparison, cat)
		if r.Reason == "" && !math.IsNaN(r.Measured) && !math.IsInf(r.Measured, 0) {
			r.Passed = g.Op.holds(r.Measured, g.Limit)
		}
		results[i] = r
		if !r.Passed {
			failed = append(failed, r)
		}
	}
	if len(failed) > 0 {
		return results, &GateError{Failed: failed, Total: len(gates)}
	}
	return results, nil
}

func measureGate(g Gate, candidate Summary, comparison *Comparison, cat catalog) GateResult {
	r := GateResult{Gate: g, Measured: math.NaN()}
	if !g.Op.valid() {
		r.Reason = fmt.Sprintf("unknown operator %q: want one of >=, >, <=, <", bound(string(g.Op), 10))
		return r
	}
	if math.IsNaN(g.Limit) || math.IsInf(g.Limit, 0) {
		r.Reason = "the limit is not a finite number"
		return r
	}
	m := g.measure()
	if runMeasures[m] {
		return measureRun(r, m, candidate)
	}
	if !evaluatorMeasures[m] {
		r.Reason = fmt.Sprintf("unknown measure %q", bound(string(m), 40))
		return r
	}
	ev, ok := cat.find(g.Evaluator)
	if !ok {
		r.Reason = fmt.Sprintf("no evaluator named %q (known: %s)", bound(g.Evaluator, 80), bound(cat.names(), 400))
		return r
	}
	switch m {
	case MeasureMean, MeasureErrors:
		metric, ok := candidate.Evaluators[ev.ID]
		switch {
		case !ok:
			r.Reason = "the candidate has no results for this evaluator"
		case m == MeasureErrors:
			r.Measured = float64(metric.Errors)
		case metric.Count == 0:
			r.Reason = fmt.Sprintf("no bool or number values (%d errors, %d other)", metric.Errors, metric.Other)
		default:
			r.Measured = metric.Mean
		}
		return r
	}
	if comparison == nil {
		r.Reason = "needs a baseline to compare with"
		return r
	}
	delta, ok := comparison.Evaluators[ev.ID]
	if !ok || comparison.Paired == 0 || delta.Higher+delta.Lower+delta.Tied == 0 {
		r.Reason = "no paired rows with values on both sides"
		return r
	}
	switch m {
	case MeasureWorseRows:
		r.Measured = float64(delta.Worse(ev.Direction))
	case MeasureRegressionP:
		r.Measured = 1
		if delta.Regressed(ev.Direction, math.Inf(1)) {
			r.Measured = delta.PValue
		}
	}
	return r
}

func measureRun(r GateResult, m Measure, s Summary) GateResult {
	if m == MeasureAppErrors {
		r.Measured = float64(s.AppErrors)
		return r
	}
	d, what := s.Latency, "latency"
	if strings.HasPrefix(string(m), "cost.") {
		d, what = s.Cost, "cost"
	}
	if d.Count == 0 {
		r.Reason = fmt.Sprintf("no row has a %s", what)
		return r
	}
	switch m {
	case MeasureCostMean, MeasureLatencyMean:
		r.Measured = d.Mean
	case MeasureLatencyP50:
		r.Measured = d.P50
	case MeasureCostP95, MeasureLatencyP95:
		r.Measured = d.P95
	case MeasureCostMax, MeasureLatencyMax:
		r.Measured = d.Max
	case MeasureCostTotal:
		r.Measured = d.Sum
	}
	return r
}

func (op Op) valid() bool {
	switch op {
	case AtLeast, Above, AtMost, Below:
		return true
	}
	return false
}

// TB is the part of testing.TB that RequireGates uses; *testing.T and
// *testing.B satisfy it, and so can a test of your own.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// RequireGates checks the gates on a report and fails the test at once,
// with the same message as the check's error, when any gate fails: the
// release gate as a go test.
func RequireGates(t TB, report *Report, gates ...Gate) {
	t.Helper()
	if err := report.Check(gates...); err != nil {
		t.Fatalf("%v", err)
	}
}
