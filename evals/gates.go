package evals

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Measure names what a gate measures on the candidate run.
type Measure string

// The measures a Gate can bound. The evaluator measures need
// Gate.Evaluator; the comparison measures need a baseline.
const (
	// MeasureMean is an evaluator's mean: the pass rate of a bool
	// evaluator. It is the default measure.
	MeasureMean Measure = "mean"
	// MeasureErrors is the number of rows whose result for an evaluator
	// failed or is missing, or whose app call failed: the rows where the
	// evaluator could not judge the candidate, the baseline's rows that
	// the candidate has no row for included.
	MeasureErrors Measure = "errors"
	// MeasureWorseRows is the number of paired rows in which the candidate
	// did worse than the baseline on an evaluator, by its Direction.
	MeasureWorseRows Measure = "worse"
	// MeasureRegressionP is the one-sided p-value of a regression on an
	// evaluator, in its worse direction (Delta.RegressionP), computed
	// from the same paired differences as the test: small when the
	// candidate is significantly worse, near 1 when it is better.
	// "regression_p(X) >= 0.05" means no significant regression at level
	// 0.05.
	MeasureRegressionP Measure = "regression_p"

	// The bound measures read the test case as the unit: with repeats,
	// a case's value is its mean over its repeats. Each bound is
	// one-sided, at Gate.Confidence (else Report.Confidence, else
	// DefaultConfidence, 0.95).

	// MeasureLow is the lower confidence bound of the candidate's mean
	// over cases: Wilson's for a pass rate without repeats, Korn and
	// Graubard's cluster-aware one with repeats, Student's t for number
	// scores (see PassRateLow, MeanLow). "low(Exact match) >= 90%" holds
	// when the data show, with 95% confidence, a pass rate of 90% or
	// more, where "Exact match >= 90%" reads the estimate alone. A case
	// without a value is a fail in a pass rate, and fails a gate on
	// numbers unless allowed.
	MeasureLow Measure = "low"
	// MeasureHigh is the upper confidence bound of the candidate's mean
	// over cases, for lower-is-better scores: "high(Hallucination) <= 5%".
	MeasureHigh Measure = "high"
	// MeasureDiffLow is the lower confidence bound of the paired case
	// difference, candidate − baseline, in the evaluator's better
	// direction (baseline − candidate when lower is better): Tango's
	// score bound for pass rates, Student's t for number scores and for
	// pass rates over repeats (see PassRateDiffLow). "diff_low(Exact
	// match) >= -5%" is the release gate: with 95% confidence the
	// candidate is at most 5 points worse. It fails when the data can't
	// show it, saying about how many paired cases would.
	MeasureDiffLow Measure = "diff_low"
	// MeasurePassAll is the share of cases whose repeats all passed
	// (pass^k), for a pass/fail evaluator; without repeats, the pass rate.
	MeasurePassAll Measure = "pass_all"
	// MeasureFlaky is the number of cases whose repeats disagree on a
	// pass/fail evaluator (some passed, some failed), listed in every
	// report. A run without repeats shows nothing of it: the gate fails.
	MeasureFlaky Measure = "flaky"

	MeasureCostMean    Measure = "cost.mean"    // mean cost per row
	MeasureCostP95     Measure = "cost.p95"     // 95th percentile of the cost per row
	MeasureCostMax     Measure = "cost.max"     // highest cost of a row
	MeasureCostTotal   Measure = "cost.total"   // cost of all rows
	MeasureLatencyMean Measure = "latency.mean" // mean latency in seconds
	MeasureLatencyP50  Measure = "latency.p50"  // median latency in seconds
	MeasureLatencyP95  Measure = "latency.p95"  // 95th percentile latency in seconds
	MeasureLatencyMax  Measure = "latency.max"  // highest latency in seconds
	// MeasureAppErrors is the number of rows whose app call failed, with,
	// against a baseline, the baseline's rows that the candidate has no
	// row for (no evidence that its app answered them). Its limit may be
	// the baseline's count ("app_errors <= baseline"; see
	// Gate.RelativeToBaseline), for a test set on which production
	// already fails some rows: the baseline's failed calls, not its rows
	// without output, which are no evidence that it failed.
	MeasureAppErrors Measure = "app_errors"
)

// evaluatorMeasures are the measures of one evaluator, written "m(NAME)".
var evaluatorMeasures = map[Measure]bool{
	MeasureMean: true, MeasureErrors: true, MeasureWorseRows: true, MeasureRegressionP: true,
	MeasureLow: true, MeasureHigh: true, MeasureDiffLow: true, MeasurePassAll: true, MeasureFlaky: true,
}

// boundMeasures are the measures that take a confidence level.
var boundMeasures = map[Measure]bool{MeasureLow: true, MeasureHigh: true, MeasureDiffLow: true}

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
//
// Absence of evidence is never success. A gate fails, saying why, when the
// candidate run has no rows (scenarios), when it lists a scenario id more
// than once (Summary.Duplicates), when a comparison measure has no
// baseline (or an empty one), when the evaluator has no values. Rows
// without a value (an errored or missing result, an app call that failed,
// a row without partner in the baseline) count against the candidate: a
// fail in a pass rate, a worse row in worse(...) and regression_p(...);
// a gate on the mean of numbers, on cost or on latency fails while any
// candidate row lacks its value. AllowFailedRows is the explicit way to
// accept some.
type Gate struct {
	Measure Measure // what to measure; "" means MeasureMean
	// Evaluator is the evaluator config's name or id, for the evaluator
	// measures.
	Evaluator string
	Op        Op
	Limit     float64
	// RelativeToBaseline makes the limit the baseline's value of the
	// measure plus Limit: "app_errors <= baseline" allows as many failed
	// app calls as the baseline had, "app_errors <= baseline + 2" two
	// more. Only app_errors takes it; the gate needs a baseline.
	RelativeToBaseline bool
	// AllowFailedRows accepts up to this many candidate rows without a
	// value for the measure (errored, missing, without partner): while
	// there are at most that many, the gate measures the other rows
	// alone; with more, they all count against the candidate as by
	// default. Written "... allowing 2 failed rows". 0, the default,
	// accepts none. It does not apply to app_errors and errors(NAME),
	// which count such rows.
	AllowFailedRows int
	// Percent records that the limit was written in % ("90%", Limit 0.9),
	// as ParseGate reads it, so that String writes it back that way. A %
	// fits a rate only (a pass rate, a score on [0, 1], a p-value): Check
	// finds the gate invalid on another measure, such as the mean of an
	// edit distance, whose "<= 10%" would mean 0.1 edits.
	Percent bool
	// Confidence is the level of a bound measure's one-sided bound (low,
	// high, diff_low), in (0.5, 1); 0 takes Report.Confidence, else
	// DefaultConfidence (0.95). Written "... at 90% confidence".
	Confidence float64
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
// baseline on an evaluator with a one-sided p-value below alpha, in the
// evaluator's worse direction (see Delta.RegressionP).
func NoSignificantRegression(evaluator string, alpha float64) Gate {
	return Gate{Measure: MeasureRegressionP, Evaluator: evaluator, Op: AtLeast, Limit: alpha}
}

// NotWorseThanBaseline is the release gate "diff_low(NAME) >= -margin":
// with the report's confidence (95% by default), the candidate is at most
// margin worse than the baseline on an evaluator, in its better direction
// (see MeasureDiffLow). It fails when the data can't show it.
func NotWorseThanBaseline(evaluator string, margin float64) Gate {
	return Gate{Measure: MeasureDiffLow, Evaluator: evaluator, Op: AtLeast, Limit: -margin}
}

// MinLow gates the lower confidence bound of an evaluator's mean over
// cases at min or more: "low(NAME) >= min" (see MeasureLow).
func MinLow(evaluator string, min float64) Gate {
	return Gate{Measure: MeasureLow, Evaluator: evaluator, Op: AtLeast, Limit: min}
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

// NoMoreAppErrorsThanBaseline allows no more rows whose app call failed
// than the baseline had: "app_errors <= baseline".
func NoMoreAppErrorsThanBaseline() Gate {
	return Gate{Measure: MeasureAppErrors, Op: AtMost, RelativeToBaseline: true}
}

// AllowingFailedRows returns the gate accepting up to n candidate rows
// without a value (see Gate.AllowFailedRows).
func (g Gate) AllowingFailedRows(n int) Gate {
	g.AllowFailedRows = n
	return g
}

func (g Gate) measure() Measure {
	if g.Measure == "" {
		return MeasureMean
	}
	return g.Measure
}

// String writes the gate in the form ParseGate reads: "NAME OP LIMIT" for
// an evaluator's mean, "worse(NAME) <= 3" for another evaluator measure,
// "latency.p95 <= 2" for a measure of the run, "app_errors <= baseline"
// for a relative limit, each followed by "allowing N failed rows" when
// AllowFailedRows is set.
func (g Gate) String() string {
	limit := strconv.FormatFloat(g.Limit, 'g', -1, 64)
	if g.Percent {
		limit = percentText(g.Limit) + "%"
	}
	if g.RelativeToBaseline {
		switch {
		case g.Limit > 0:
			limit = "baseline + " + limit
		case g.Limit < 0:
			limit = "baseline - " + strconv.FormatFloat(-g.Limit, 'g', -1, 64)
		default:
			limit = "baseline"
		}
	}
	if g.Confidence != 0 {
		limit += " at " + percentText(g.Confidence) + "% confidence"
	}
	if g.AllowFailedRows > 0 {
		limit += fmt.Sprintf(" allowing %d failed row", g.AllowFailedRows)
		if g.AllowFailedRows > 1 {
			limit += "s"
		}
	}
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

// allowingSuffix is the end of a gate that accepts failed rows.
var allowingSuffix = regexp.MustCompile(`(?i)\s+allowing\s+(\d{1,9})\s+failed\s+rows?\s*$`)

// confidenceSuffix is the end of a bound gate at another confidence.
var confidenceSuffix = regexp.MustCompile(`(?i)\s+at\s+([0-9][0-9.eE+-]{0,30})\s*%\s+confidence\s*$`)

// ParseGate reads a gate from text, as a command line gives it:
//
//	NAME OP NUMBER          the mean (pass rate) of evaluator NAME
//	MEASURE(NAME) OP NUMBER mean, errors, worse, regression_p, low,
//	                        high, diff_low, pass_all or flaky of NAME
//	MEASURE OP NUMBER       cost.mean, cost.p95, cost.max, cost.total,
//	                        latency.mean, latency.p50, latency.p95,
//	                        latency.max or app_errors
//	app_errors OP baseline [+ NUMBER]
//	                        app errors against the baseline's
//
// NAME is an evaluator config's name or id; OP is one of >=, >, <=, <, with
// or without spaces around it; NUMBER may end in % ("80%" is 0.8, exactly
// as "0.8" reads; Gate.Percent records it) where the measure is a rate: a
// regression_p, or the mean of a pass/fail evaluator or of a score on
// [0, 1], never a count of rows (worse, errors, app_errors) or a cost or
// latency, where it is an error rather than a fraction of one row or one
// second. Which evaluators are rates only the runs tell: Check finds a %
// on the mean of an edit distance, or of values beyond [0, 1], an invalid
// gate. The bare
// names of run measures take precedence: write mean(cost.mean) for an
// evaluator of that name. A name may hold parentheses ("Score (v2)"); only
// mean, errors, worse and regression_p open the function form. Any gate
// may end in "allowing N failed rows" (see Gate.AllowFailedRows), and a
// bound (low, high, diff_low), before that, in "at 90% confidence" (see
// Gate.Confidence).
func ParseGate(text string) (Gate, error) {
	fail := func(format string, args ...any) (Gate, error) {
		return Gate{}, fmt.Errorf("evals: gate %s: %s", bound(strconv.Quote(text), 200), fmt.Sprintf(format, args...))
	}
	if !utf8.ValidString(text) {
		// A name shown with U+FFFD in place of its bytes could not be
		// given back as the same gate.
		return fail("is not valid UTF-8")
	}
	body, allow := text, 0
	if m := allowingSuffix.FindStringSubmatchIndex(text); m != nil {
		n, err := strconv.Atoi(text[m[2]:m[3]])
		if err != nil {
			return fail("%q is not a number of rows", text[m[2]:m[3]])
		}
		body, allow = text[:m[0]], n
	}
	confidence := 0.0
	if m := confidenceSuffix.FindStringSubmatchIndex(body); m != nil {
		c, err := strconv.ParseFloat(body[m[2]:m[3]], 64)
		if err != nil || !(c > 50 && c < 100) {
			return fail("confidence %q%% is not a level between 50%% and 100%%, such as 95%%", bound(body[m[2]:m[3]], 40))
		}
		body, confidence = body[:m[0]], hundredth(body[m[2]:m[3]], c)
	}
	i := strings.LastIndexAny(body, "<>")
	if i < 0 {
		if strings.Contains(body, "=") {
			return fail("unknown operator: want one of >=, >, <=, <")
		}
		return fail("no operator: want NAME OP NUMBER with OP one of >=, >, <=, <")
	}
	op, end := Op(body[i:i+1]), i+1
	if end < len(body) && body[end] == '=' {
		op, end = op+"=", end+1
	}
	left, right := strings.TrimSpace(body[:i]), strings.TrimSpace(body[end:])
	if left == "" {
		return fail("no measure or evaluator name before %s", op)
	}
	if strings.ContainsAny(left[len(left)-1:], "=!<>") {
		return fail("unknown operator %q: want one of >=, >, <=, <", left[len(left)-1:]+string(op))
	}
	g := Gate{Op: op, AllowFailedRows: allow}
	if rest, ok := cutWord(right, "baseline"); ok {
		if !runMeasures[Measure(left)] || Measure(left) != MeasureAppErrors {
			return fail("only app_errors takes a limit relative to the baseline")
		}
		g.Measure, g.RelativeToBaseline = MeasureAppErrors, true
		if rest = strings.TrimSpace(rest); rest != "" {
			sign := 1.0
			switch rest[0] {
			case '+':
			case '-':
				sign = -1
			default:
				return fail("want baseline, baseline + NUMBER or baseline - NUMBER after the operator")
			}
			offset, percent, err := parseLimit(strings.TrimSpace(rest[1:]))
			if err != nil {
				return fail("%v", err)
			}
			if percent {
				return fail("%s", percentRefused(MeasureAppErrors, ""))
			}
			g.Limit = sign * offset
		}
		return g, nil
	}
	limit, percent, err := parseLimit(right)
	if err != nil {
		return fail("%v", err)
	}
	g.Limit, g.Percent = limit, percent
	g.Measure, g.Evaluator = MeasureMean, left
	if open := strings.IndexByte(left, '('); open > 0 && strings.HasSuffix(left, ")") {
		// Only a known measure opens the function form, so that a name
		// such as "Score (v2)" stays a name.
		if m := Measure(strings.TrimSpace(left[:open])); evaluatorMeasures[m] {
			g.Measure, g.Evaluator = m, strings.TrimSpace(left[open+1:len(left)-1])
			if g.Evaluator == "" {
				return fail("no evaluator name inside %s()", m)
			}
		}
	}
	if runMeasures[Measure(left)] {
		g.Measure, g.Evaluator = Measure(left), ""
	}
	if reason := percentRefused(g.Measure, g.Evaluator); percent && reason != "" {
		return fail("%s", reason)
	}
	if confidence != 0 && !boundMeasures[g.Measure] {
		return fail("only low, high and diff_low take a confidence")
	}
	g.Confidence = confidence
	return g, nil
}

// cutWord reports whether s starts with word, case-insensitively, as a
// whole word, and returns the rest.
func cutWord(s, word string) (string, bool) {
	if len(s) < len(word) || !strings.EqualFold(s[:len(word)], word) {
		return s, false
	}
	rest := s[len(word):]
	if rest != "" && (rest[0] == '_' || rest[0] == '.' || ('a' <= rest[0]|0x20 && rest[0]|0x20 <= 'z') || ('0' <= rest[0] && rest[0] <= '9')) {
		return s, false
	}
	return rest, true
}

// parseLimit reads a gate's limit, a number that may end in %, and
// reports whether it did.
func parseLimit(s string) (x float64, percent bool, err error) {
	if s == "" {
		return 0, false, errors.New("no number after the operator")
	}
	if rest, ok := strings.CutSuffix(s, "%"); ok {
		s, percent = strings.TrimSpace(rest), true
	}
	x, err = strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, false, fmt.Errorf("limit %q is not a finite number", bound(s, 40))
	}
	if percent {
		x = hundredth(s, x)
	}
	return x, percent, nil
}

// hundredth returns the number that the decimal text s (whose value is x)
// is with its exponent lowered by 2, rounded once: "57" gives exactly the
// float64 of 0.57, where 57 * 0.01 is 0.5700000000000001 and a pass rate
// of 57 rows in 100 would fail ">= 57%". Other texts (hexadecimal) give
// x / 100.
func hundredth(s string, x float64) float64 {
	if strings.ContainsAny(s, "xXpP") {
		return x / 100
	}
	mantissa, exponent := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return x / 100
		}
		mantissa, exponent = s[:i], e
	}
	y, err := strconv.ParseFloat(mantissa+"e"+strconv.Itoa(exponent-2), 64)
	if err != nil {
		return x / 100
	}
	return y
}

// percentText writes x in percent, in the fewest digits that hundredth
// reads back as x exactly: 0.57 gives "57".
func percentText(x float64) string {
	if x == 0 {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	// The shortest decimal of x, d.ddd × 10^e, times 100.
	digits, exponent, _ := strings.Cut(strconv.FormatFloat(x, 'e', -1, 64), "e")
	sign := ""
	if digits[0] == '-' {
		sign, digits = "-", digits[1:]
	}
	digits = strings.Replace(digits, ".", "", 1)
	e, _ := strconv.Atoi(exponent)
	e += 2
	switch {
	case e >= 0 && e < 21:
		if len(digits) <= e+1 {
			return sign + digits + strings.Repeat("0", e+1-len(digits))
		}
		return sign + digits[:e+1] + "." + digits[e+1:]
	case e < 0 && e > -7:
		return sign + "0." + strings.Repeat("0", -e-1) + digits
	}
	if len(digits) > 1 {
		digits = digits[:1] + "." + digits[1:]
	}
	return sign + digits + "e" + strconv.Itoa(e)
}

// percentRefused says why a limit in % does not fit a measure, or "" when
// it does: % is for a rate (a pass rate, a score on [0, 1], a p-value),
// and a count of rows or a cost or latency is none. "worse(X) <= 80%"
// would otherwise read as 0.8 rows.
func percentRefused(m Measure, evaluator string) string {
	switch {
	case m == MeasureFlaky:
		return fmt.Sprintf("flaky(%s) counts cases, and a limit in %% would be a fraction of one case: write a number of cases, such as 2", bound(evaluator, 80))
	case m == MeasureWorseRows, m == MeasureErrors:
		return fmt.Sprintf("%s(%s) counts rows, and a limit in %% would be a fraction of one row: write a number of rows, such as 4", m, bound(evaluator, 80))
	case m == MeasureAppErrors:
		return "app_errors counts rows, and a limit in % would be a fraction of one row: write a number of rows, such as 4"
	case strings.HasPrefix(string(m), "cost."):
		return fmt.Sprintf("%s is a cost, not a rate: write the limit without %%", m)
	case strings.HasPrefix(string(m), "latency."):
		return fmt.Sprintf("%s is in seconds, not a rate: write the limit without %%", m)
	}
	return ""
}

// notARate says why the mean of an evaluator is no rate, which a limit in
// % would not fit, or "" when it is one: a pass rate, or numbers within
// [0, 1] on both sides from an evaluator not known to count something. A
// mid-2024 edit distance counts edits whatever its values on these rows;
// today's (2026) Levenshtein evaluator scores a similarity on [0, 1].
func notARate(ev Evaluator, label string, candidate Summary, comparison *Comparison) string {
	metrics := []Metric{candidate.Evaluators[ev.ID]}
	if metrics[0].Bool {
		return ""
	}
	if ev.countsEdits() {
		return editsNotARate(label)
	}
	if comparison != nil {
		if d, ok := comparison.Evaluators[ev.ID]; ok {
			metrics = append(metrics, d.Baseline)
		}
	}
	for _, m := range metrics {
		if m.Count > 0 && !m.Bool && (m.Min < 0 || m.Max > 1) {
			return fmt.Sprintf("the values of %q go from %s to %s, beyond [0, 1]: its mean is not a rate; write the limit without %%, in its own unit",
				label, formatNumber(m.Min), formatNumber(m.Max))
		}
	}
	return ""
}

// editsNotARate refuses a limit in % on the mean of an edit distance.
func editsNotARate(label string) string {
	return fmt.Sprintf("%q is an edit distance, a count of edits, not a rate: write the limit without %%, in edits, such as 2", label)
}

// GateResult is the outcome of one gate.
type GateResult struct {
	Gate     Gate
	Measured float64 // the measured value; NaN when it could not be measured
	// Limit is the limit the measure was held to: Gate.Limit, or for a
	// gate relative to the baseline, the baseline's value plus Gate.Limit.
	Limit  float64
	Passed bool
	// Reason says why the gate could not be measured, such as a missing
	// baseline or an unknown evaluator; such a gate fails.
	Reason string
	// Invalid reports that the gate itself is wrong: it names an
	// evaluator, a measure or an operator that does not exist (Reason
	// says which, and what does exist). The check's error then matches
	// ErrInvalidGate.
	Invalid bool
	// Detail says how rows without a value counted in the measure, such
	// as "18 of 20 rows errored, counted as fails", and for a bound, its
	// method and estimate; "" when there is nothing to say.
	Detail string
}

// String describes the outcome: the gate, the measured value and the
// limit, and how rows without a value counted.
func (r GateResult) String() string {
	verdict := "passed"
	if !r.Passed {
		verdict = "failed"
	}
	if r.Reason != "" && r.Detail != "" {
		return fmt.Sprintf("%s %s: %s (%s)", r.Gate, verdict, r.Reason, r.Detail)
	}
	if r.Reason != "" {
		return fmt.Sprintf("%s %s: %s", r.Gate, verdict, r.Reason)
	}
	limit := strconv.FormatFloat(r.Limit, 'g', -1, 64)
	if r.Gate.RelativeToBaseline {
		limit += " (the baseline's)"
		if r.Gate.Limit != 0 {
			limit = fmt.Sprintf("%s (the baseline's %s)", strconv.FormatFloat(r.Limit, 'g', -1, 64), strconv.FormatFloat(r.Limit-r.Gate.Limit, 'g', -1, 64))
		}
	}
	s := fmt.Sprintf("%s %s: measured %s, limit %s %s", r.Gate, verdict, formatNumber(r.Measured), r.Gate.Op, limit)
	if r.Detail != "" {
		s += " (" + r.Detail + ")"
	}
	return s
}

// Check measures each gate on a candidate run, with the comparison against
// a baseline when there is one (comparison may be nil), and returns every
// result and, when any gate failed, a *GateError matching ErrGateFailed.
// Evaluator names are resolved through evaluators. A gate fails when it
// cannot be measured (an empty run, a candidate that lists a scenario id
// twice, a comparison measure without a baseline, worse or regression_p
// against one that lists a scenario id twice, an evaluator without
// values) and when rows without a value
// count against the candidate (see Gate); a gate naming an evaluator,
// measure or operator that does not exist also makes the error match
// ErrInvalidGate, so that a typo never passes.
func Check(candidate Summary, comparison *Comparison, evaluators []Evaluator, gates ...Gate) ([]GateResult, error) {
	var seen [][]string
	seen = append(seen, candidate.EvaluatorIDs)
	if comparison != nil {
		seen = append(seen, comparison.EvaluatorIDs)
	}
	return checkGates(candidate, comparison, newCatalog(evaluators, seen...), gates, nil, checkOptions{})
}

// checkGates measures the gates; failure, when set, is why the run could
// not be judged at all, and fails every gate.
func checkGates(candidate Summary, comparison *Comparison, cat catalog, gates []Gate, failure error, opts checkOptions) ([]GateResult, error) {
	if failure == nil && candidate.Duplicates > 0 {
		// Counting the scenario once keeps the repeats from inflating
		// the measures, but a listing that repeats rows is no evidence
		// that it holds them all.
		failure = fmt.Errorf("the candidate run lists scenario %q more than once (%s repeating an earlier row's scenario id, left out): a listing that repeats rows may have lost others, so it is no evidence to judge on",
			candidate.DuplicateID, rowCount(candidate.Duplicates))
	}
	results := make([]GateResult, len(gates))
	var failed []GateResult
	for i, g := range gates {
		r := measureGate(g, candidate, comparison, cat, opts)
		if failure != nil && g.wellFormed() {
			// A run that failed names no evaluators: the failure is the
			// reason, whatever the gate names.
			r.Measured, r.Reason, r.Invalid, r.Detail = math.NaN(), bound(oneLine(failure.Error()), 500), false, ""
		}
		switch {
		case r.Reason != "":
		case math.IsInf(r.Measured, 0):
			r.Reason = "the measure is infinite: the values are too large to add up in a float64 (beyond ±1.8e308)"
		case math.IsNaN(r.Measured):
			r.Reason = "the measure is not a number: its values overflow a float64 (beyond ±1.8e308)"
		default:
			r.Passed = g.Op.holds(r.Measured, r.Limit)
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

// wellFormed reports whether the gate's operator, limit and measure are
// valid, whatever evaluator it names.
func (g Gate) wellFormed() bool { return g.malformed() == "" }

// malformed says what is wrong with the gate's operator, limit, measure or
// unit, whatever the runs and the evaluator it names, or "" when nothing.
func (g Gate) malformed() string {
	m := g.measure()
	switch {
	case !g.Op.valid():
		return fmt.Sprintf("unknown operator %q: want one of >=, >, <=, <", bound(string(g.Op), 10))
	case math.IsNaN(g.Limit) || math.IsInf(g.Limit, 0):
		return "the limit is not a finite number"
	case g.AllowFailedRows < 0:
		return fmt.Sprintf("a negative number of failed rows allowed (%d)", g.AllowFailedRows)
	case !runMeasures[m] && !evaluatorMeasures[m]:
		return fmt.Sprintf("unknown measure %q%s", bound(string(m), 40), suggestion(string(m), allMeasures()))
	case g.RelativeToBaseline && m != MeasureAppErrors:
		return "only app_errors takes a limit relative to the baseline"
	case g.Confidence != 0 && !(g.Confidence > 0.5 && g.Confidence < 1):
		return fmt.Sprintf("Gate.Confidence %v is outside (0.5, 1): it is the level of a one-sided bound, such as 0.95", g.Confidence)
	case g.Confidence != 0 && !boundMeasures[m]:
		return fmt.Sprintf("Gate.Confidence is set on %s, which is no bound: only low, high and diff_low take a confidence", m)
	case g.Percent:
		return percentRefused(m, g.Evaluator)
	}
	return ""
}

// NeedsBaseline reports whether the gate measures the candidate against
// the baseline (worse, regression_p, diff_low, app_errors <= baseline), so that it
// can only be judged on a comparison.
func (g Gate) NeedsBaseline() bool { return g.comparesWithBaseline() }

// comparesWithBaseline reports whether a gate needs a baseline.
func (g Gate) comparesWithBaseline() bool {
	m := g.measure()
	return m == MeasureWorseRows || m == MeasureRegressionP || m == MeasureDiffLow || g.RelativeToBaseline
}

func measureGate(g Gate, candidate Summary, comparison *Comparison, cat catalog, opts checkOptions) GateResult {
	r := GateResult{Gate: g, Measured: math.NaN(), Limit: g.Limit}
	invalid := func(format string, args ...any) GateResult {
		r.Reason, r.Invalid = fmt.Sprintf(format, args...), true
		return r
	}
	fail := func(format string, args ...any) GateResult {
		r.Reason = fmt.Sprintf(format, args...)
		return r
	}
	if reason := g.malformed(); reason != "" {
		return invalid("%s", reason)
	}
	m := g.measure()
	var ev Evaluator
	if evaluatorMeasures[m] {
		var ok bool
		if ev, ok = cat.find(g.Evaluator); !ok && candidate.Rows > 0 {
			text, hinted := unknownEvaluator(g.Evaluator, cat)
			if unnamed := cat.unnamedWithoutValues(candidate); len(unnamed) > 0 && !hinted {
				// The service names only the evaluators with a value: the
				// gate may well name one of these, and then the candidate
				// is to blame, not the gate.
				return fail("the candidate has no value for an evaluator named %q: the service names only evaluators with a value, and these have none on any row: %s (name one by id to gate on it)",
					bound(g.Evaluator, 80), bound(strings.Join(unnamed, ", "), 300))
			}
			return invalid("%s", text)
		}
	}
	if (m == MeasureMean || boundMeasures[m]) && g.Percent && ev.ID != "" {
		// Only the values tell a rate: the parser knows no evaluator.
		if reason := notARate(ev, cat.label(ev.ID), candidate, comparison); reason != "" {
			return invalid("%s", reason)
		}
	}
	// The gate is well formed: now the runs. Without rows, the service
	// names no evaluator, so an unknown name says nothing of the gate.
	if candidate.Rows == 0 {
		return fail("the candidate run has no rows")
	}
	if reason := opts.short(g, candidate, comparison); reason != "" {
		return fail("%s", reason)
	}
	if g.comparesWithBaseline() {
		switch {
		case comparison == nil:
			return fail("needs a baseline to compare with")
		case comparison.BaselineRows == 0:
			return fail("the baseline run has no rows")
		case comparison.BaselineDuplicates > 0 && m != MeasureAppErrors:
			// Counted once, a repeat would hide the row a shifted page
			// lost: the candidate's row of it, left without a partner,
			// is no evidence either way, and a regression on it passed.
			// (A lost row can only lower the limit of "app_errors <=
			// baseline", so that gate still judges.)
			return fail("the baseline run lists scenario %q more than once (%s repeating an earlier row's scenario id, left out): a listing that repeats rows may have lost others, so it is no evidence to compare with",
				comparison.BaselineDuplicateID, rowCount(comparison.BaselineDuplicates))
		case comparison.CandidateRepeats > 0 && m != MeasureAppErrors:
			// Paired once, the first copy of a case would hide a second
			// that fails an input the baseline passed.
			return fail("the candidate run lists the test case %q more than once (%s repeating an earlier row's inputs and expected answer, with ids of their own): a comparison pairs each case once, so a listing that repeats cases is no evidence to compare with; ask for repeats instead",
				comparison.CandidateRepeatedCase, rowCount(comparison.CandidateRepeats))
		case comparison.BaselineRepeats > 0 && m != MeasureAppErrors:
			return fail("the baseline run lists the test case %q more than once (%s repeating an earlier row's inputs and expected answer, with ids of their own): a comparison pairs each case once, so a listing that repeats cases is no evidence to compare with; ask for repeats instead",
				comparison.BaselineRepeatedCase, rowCount(comparison.BaselineRepeats))
		}
	}
	// The baseline's rows that the candidate has no row for are rows
	// the candidate lacks: missing, in every measure of the candidate.
	unpaired := 0
	if comparison != nil {
		unpaired = comparison.UnpairedBaseline
	}
	if runMeasures[m] {
		return measureRun(r, m, candidate, comparison)
	}
	switch m {
	case MeasureLow, MeasureHigh, MeasurePassAll, MeasureFlaky:
		return measureCases(r, ev, candidate, comparison, opts)
	case MeasureDiffLow:
		return measureDiff(r, ev, comparison, opts)
	}
	switch m {
	case MeasureMean, MeasureErrors:
		metric, ok := candidate.Evaluators[ev.ID]
		if !ok {
			return fail("the candidate has no result for this evaluator on any of its %d rows", candidate.Rows)
		}
		metric = metric.withMissing(unpaired)
		if m == MeasureErrors {
			r.Measured = float64(metric.Errors + metric.Missing)
			if unpaired > 0 {
				r.Detail = fmt.Sprintf("%s of the baseline without a candidate row counted", rowCount(unpaired))
			}
			return r
		}
		return measureMean(r, metric, ev.Direction, unpaired)
	}
	delta, ok := comparison.Evaluators[ev.ID]
	if !ok || delta.Higher+delta.Lower+delta.Tied+delta.CandidateLacks+delta.BaselineLacks+delta.BaselineWithoutOutput == 0 {
		return fail("no values for this evaluator on either side")
	}
	if delta.Baseline.Count == 0 {
		return fail("the baseline has no value for this evaluator on any row: nothing to compare with")
	}
	lacking := delta.CandidateLacks
	allowed := lacking > 0 && lacking <= g.AllowFailedRows
	if allowed && delta.Higher+delta.Lower+delta.Tied == 0 {
		// Leaving out the rows allowed to fail leaves nothing.
		return fail("no row with a value on both sides: every row with a baseline value is one of the %s allowed to fail", rowCount(lacking))
	}
	switch m {
	case MeasureWorseRows:
		r.Measured = float64(delta.Worse(ev.Direction))
		if allowed {
			r.Measured -= float64(lacking)
		}
	case MeasureRegressionP:
		r.Measured = delta.RegressionP(ev.Direction)
		if allowed {
			r.Measured = delta.valuesOnlyP[ev.Direction.index()]
		}
	}
	switch {
	case allowed:
		r.Detail = fmt.Sprintf("%s without a candidate value left out, as allowed", rowCount(lacking))
	case lacking > 0:
		r.Detail = fmt.Sprintf("%s without a candidate value counted as worse", rowCount(lacking))
	}
	return r
}

// measureMean measures an evaluator's mean: for a pass rate, rows without
// a value count as fails (the worse value by the direction); for numbers,
// the gate fails while rows lack a value, unless allowed.
func measureMean(r GateResult, metric Metric, dir Direction, unpaired int) GateResult {
	lacking := metric.WithoutValue()
	allowed := lacking > 0 && lacking <= r.Gate.AllowFailedRows
	if metric.Count == 0 {
		r.Reason = "no bool or number values: " + lackingText(metric, unpaired)
		return r
	}
	if !metric.Bool {
		if lacking > 0 && !allowed {
			r.Reason = lackingText(metric, unpaired) + "; " + acceptText(lacking)
			return r
		}
		r.Measured = metric.Mean
		if allowed {
			r.Detail = lackingText(metric, unpaired) + ", left out as allowed"
		}
		return r
	}
	passed := metric.Passed()
	switch {
	case allowed:
		r.Measured = float64(passed) / float64(metric.Count)
		r.Detail = lackingText(metric, unpaired) + ", left out as allowed"
	case dir == LowerIsBetter:
		// The worse value of a bool that is better false is true.
		r.Measured = float64(passed+lacking) / float64(metric.Rows())
	default:
		r.Measured = metric.Mean
	}
	if lacking > 0 && !allowed {
		r.Detail = lackingText(metric, unpaired) + ", counted as fails"
	}
	return r
}

// lackingText says how many of a metric's rows have no value, and why;
// unpaired of the missing rows are the baseline's, which the candidate
// has no row for.
func lackingText(m Metric, unpaired int) string {
	var parts []string
	if m.Errors > 0 {
		parts = append(parts, fmt.Sprintf("%d errored", m.Errors))
	}
	if m.Missing > 0 {
		missing := fmt.Sprintf("%d missing", m.Missing)
		if unpaired > 0 {
			missing += fmt.Sprintf(", %d of them rows of the baseline without a candidate row", unpaired)
		}
		parts = append(parts, missing)
	}
	if m.Other > 0 {
		parts = append(parts, fmt.Sprintf("%d not a bool or number", m.Other))
	}
	text := fmt.Sprintf("%d of %d rows without a value", m.WithoutValue(), m.Rows())
	if len(parts) > 0 {
		text += " (" + strings.Join(parts, ", ") + ")"
	}
	return text
}

func rowCount(n int) string { return plural(n, "row") }

// plural writes a count of things: "1 row", "2 rows".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// acceptText says how to accept n failed rows.
func acceptText(n int) string {
	return fmt.Sprintf("accept them with %q", "allowing "+plural(n, "failed row"))
}

// measureRun measures a measure of the whole run. The baseline's rows that
// the candidate has no row for count as rows it lacks.
func measureRun(r GateResult, m Measure, s Summary, comparison *Comparison) GateResult {
	unpaired := 0
	if comparison != nil {
		unpaired = comparison.UnpairedBaseline
	}
	if m == MeasureAppErrors {
		// A row the candidate lacks is no evidence that its app call
		// answered.
		r.Measured = float64(s.AppErrors + unpaired)
		if unpaired > 0 {
			r.Detail = fmt.Sprintf("%s of the baseline without a candidate row counted", rowCount(unpaired))
		}
		if r.Gate.RelativeToBaseline {
			// A baseline row without output is no evidence that its app
			// failed: it allows the candidate no failure.
			r.Limit = float64(comparison.BaselineAppErrors-comparison.BaselineWithoutOutput) + r.Gate.Limit
			if n := comparison.BaselineWithoutOutput; n > 0 {
				detail := fmt.Sprintf("%s of the baseline without output not counted in its app errors", rowCount(n))
				if r.Detail != "" {
					detail = r.Detail + "; " + detail
				}
				r.Detail = detail
			}
		}
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
	rows := s.Rows + unpaired
	if lacking := rows - d.Count; lacking > 0 {
		why := plural(s.AppErrors, "app error")
		if unpaired > 0 {
			why += fmt.Sprintf(", %s of the baseline without a candidate row", rowCount(unpaired))
		}
		if lacking > r.Gate.AllowFailedRows {
			r.Reason = fmt.Sprintf("%d of %d rows have no %s (%s); %s", lacking, rows, what, why, acceptText(lacking))
			return r
		}
		r.Detail = fmt.Sprintf("%d of %d rows without a %s left out, as allowed", lacking, rows, what)
	}
	switch m {
	case MeasureCostMean, MeasureLatencyMean:
		r.Measured = d.Mean
	case MeasureLatencyP50:
		r.Measured = estimated(&r, d, d.P50)
	case MeasureCostP95, MeasureLatencyP95:
		r.Measured = estimated(&r, d, d.P95)
	case MeasureCostMax, MeasureLatencyMax:
		r.Measured = d.Max
	case MeasureCostTotal:
		r.Measured = d.Sum
	}
	return r
}

// estimated returns a percentile as a gate measures it: the value itself
// when exact; for an estimate from the histogram (non-negative values,
// within histogramError of the exact one), the end of its range that
// counts against the candidate, so that the gate never passes on an
// estimate where the exact value would fail it.
func estimated(r *GateResult, d Distribution, p float64) float64 {
	if !d.Approximate {
		return p
	}
	low, high := p/(1+histogramError), min(p/(1-histogramError), d.Max)
	measured, end := low, "lowest"
	if r.Gate.Op == AtMost || r.Gate.Op == Below {
		measured, end = high, "highest"
	}
	detail := fmt.Sprintf("a percentile of %d values estimated within 0.5%%, %s to %s: its %s counted", d.Count, formatNumber(low), formatNumber(high), end)
	if r.Detail != "" {
		detail = r.Detail + "; " + detail
	}
	r.Detail = detail
	return measured
}

// allMeasures lists every measure's name, for suggestions.
func allMeasures() []string {
	var out []string
	for m := range evaluatorMeasures {
		out = append(out, string(m))
	}
	for m := range runMeasures {
		out = append(out, string(m))
	}
	slices.Sort(out)
	return out
}

// unknownEvaluator explains a name that resolves to no evaluator: what
// exists, and a suggestion when the name is close to an evaluator's, to a
// measure of the run, or is a misspelt measure around a known evaluator;
// hinted reports that there is a suggestion.
func unknownEvaluator(name string, cat catalog) (text string, hinted bool) {
	var candidates []string
	for _, e := range cat.list {
		candidates = append(candidates, cat.labels[e.ID])
	}
	hint := suggestion(name, candidates)
	if hint == "" {
		var runs []string
		for m := range runMeasures {
			runs = append(runs, string(m))
		}
		slices.Sort(runs)
		hint = suggestion(name, runs)
	}
	if open := strings.IndexByte(name, '('); hint == "" && open > 0 && strings.HasSuffix(name, ")") {
		word, inner := strings.TrimSpace(name[:open]), strings.TrimSpace(name[open+1:len(name)-1])
		var measures []string
		for m := range evaluatorMeasures {
			measures = append(measures, string(m))
		}
		slices.Sort(measures)
		if close := closest(word, measures); close != "" {
			if e, ok := cat.find(inner); ok {
				hint = fmt.Sprintf("; did you mean %s(%s)?", close, cat.labels[e.ID])
			} else if inner := closest(inner, candidates); inner != "" {
				hint = fmt.Sprintf("; did you mean %s(%s)?", close, inner)
			}
		}
	}
	return fmt.Sprintf("no evaluator named %q%s (known: %s)", bound(name, 80), hint, bound(cat.names(), 400)), hint != ""
}

// suggestion returns "; did you mean X?" for the candidate closest to
// name, or "" when none is close.
func suggestion(name string, candidates []string) string {
	if c := closest(name, candidates); c != "" {
		return fmt.Sprintf("; did you mean %q?", bound(c, 80))
	}
	return ""
}

// closest returns the candidate nearest to name, ignoring case, when it is
// within about a third of its length in edits (at least 1, at most 3),
// or "".
func closest(name string, candidates []string) string {
	if len(name) > 200 {
		return ""
	}
	lower := strings.ToLower(strings.TrimSpace(name))
	best, bestDistance := "", 0
	for _, c := range candidates {
		if len(c) > 200 {
			continue
		}
		d := levenshteinDistance(lower, strings.ToLower(c))
		limit := min(3, max(1, (len([]rune(c))+2)/3))
		if d <= limit && (best == "" || d < bestDistance) {
			best, bestDistance = c, d
		}
	}
	return best
}

// levenshteinDistance is the Levenshtein distance between a and b, in runes.
func levenshteinDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
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
