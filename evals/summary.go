package evals

import (
	"bytes"
	"hash/maphash"
	"iter"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/agenta-go/agenta/models"
)

// Summary is what one evaluation's scenarios add up to: per evaluator
// config, the mean of its verdicts with a 95% confidence interval, and the
// cost and latency of the application calls.
type Summary struct {
	Rows int // scenarios read, each scenario id once
	// AppErrors counts the rows whose app call failed (an output Result
	// of type "error") or that hold no output of it at all (none, or one
	// without a value and without an error): a row without the app's
	// answer is no evidence that the app answered, whatever its results
	// say.
	AppErrors  int
	Evaluators map[string]Metric // by evaluator config id (ScenarioResult.EvaluatorConfig)
	Cost       Distribution      // per-row cost, over rows that have one
	Latency    Distribution      // per-row latency in seconds, over rows that have one

	// EvaluatorIDs lists the keys of Evaluators in the order they were
	// first seen, so that output built from a Summary is stable.
	EvaluatorIDs []string

	// Duplicates counts the rows left out because they repeat the
	// scenario id (EvaluationScenario.ID) of an earlier row: a scenario
	// counts once, as its first row, so that a listing that repeats rows
	// inflates neither a mean nor a pass rate. The service writes each
	// scenario once, so a repeat means its listing is not to be trusted
	// (a page that shifted repeats a row and may have lost another):
	// every gate on a candidate with Duplicates fails (see Check).
	// DuplicateID is the first id repeated.
	Duplicates  int
	DuplicateID string
}

// Metric summarises one evaluator config's results over a set of rows.
//
// Every row is one of: a value (Count), an error (Errors: the result
// failed, or the row's app call did), a missing result (Missing: the row
// has no result for this evaluator) or another kind of value (Other).
// Absence of evidence is never success: for a pass/fail evaluator, a row
// without a value counts as a fail in Mean and its interval, so Mean is
// the pass rate over every row; for a numeric evaluator, Mean is the mean
// of the values, and a gate on it fails while any row lacks one (see
// Gate.AllowFailedRows to accept some).
type Metric struct {
	Count   int // results with a bool or number value
	Errors  int // rows whose result for this evaluator failed (type "error"), or whose app call failed or left no output (see Summary.AppErrors)
	Missing int // rows whose app call answered but that have no result for this evaluator
	// Mean is, for a bool evaluator, the pass rate over every row (a row
	// without a value counts as a fail); for numbers, the mean of the
	// values. It is NaN when Count is 0.
	Mean      float64
	Low, High float64 // 95% confidence interval of Mean: Wilson's over every row for bools, Student's t over the values for numbers
	// Min and Max are the smallest and the largest value (0 and 1 for
	// bools), NaN when Count is 0: a gate tells a score on [0, 1], which
	// a limit in % fits, from a count or a score of another scale.
	Min, Max float64

	// Bool reports that every value was a bool: Mean is then a pass rate,
	// and Low and High are Wilson's interval. The interval is NaN when
	// Count is 0, and for numbers when Count is 1.
	Bool bool
	// Other counts results whose value is neither a bool nor a number,
	// such as the text of an AI critique: they are not scored.
	Other int
}

// Rows returns the number of rows the metric covers: Count + Errors +
// Missing + Other.
func (m Metric) Rows() int { return m.Count + m.Errors + m.Missing + m.Other }

// WithoutValue returns the number of rows that have no bool or number
// value: errored, missing or another kind of value. A gate counts them
// against the candidate.
func (m Metric) WithoutValue() int { return m.Errors + m.Missing + m.Other }

// Passed returns the number of true results of a bool evaluator.
func (m Metric) Passed() int {
	if !m.Bool || m.Count == 0 {
		return 0
	}
	return int(math.Round(m.Mean * float64(m.Rows())))
}

// Distribution describes a set of values, such as the cost of each row.
//
// P50 and P95 are R's type 7 percentiles (linear interpolation between
// the order statistics around (n−1)·p). Summarize computes them exactly
// at any count. An Accumulator (and SummarizeStream) computes them exactly
// for up to 131,072 values; beyond that, so that memory stays flat however
// many rows stream by, it folds the values into a fixed-size logarithmic
// histogram (6,250 buckets, 49 KiB) and its percentiles of non-negative
// values are within 0.5% of the exact ones. Count, Sum, Mean and Max are
// always exact. Every field is 0 when Count is 0.
type Distribution struct {
	Count                    int
	Sum, Mean, P50, P95, Max float64
	// Approximate reports that P50 and P95 are the histogram's estimates,
	// within 0.5% of the exact values. A gate on them then measures the
	// end of that range that counts against the candidate.
	Approximate bool
}

// Accumulator builds a Summary one scenario at a time, in memory that does
// not grow with the number of rows past a bound (131,072 cost and latency
// values, 2 MiB; see Distribution) but for a hash of each scenario id
// (11 to 21 bytes a row, 2 MiB for 100,000), so that an evaluation streamed by
// StreamEvaluationScenarios can be summarised whatever its size. The zero
// value is ready to use. An Accumulator is not safe for concurrent use.
type Accumulator struct {
	rows, appErrors int
	metrics         map[string]*metricAccumulator
	order           []string
	cost, latency   distributionAccumulator
	ids             scenarioIDs
	duplicates      int
	duplicateID     string
}

// Add counts one scenario. A row whose app call failed, or that has no
// output (see Summary.AppErrors), counts as an error for every evaluator,
// whatever its results say; an evaluator's second
// result in one row is ignored. A row that repeats the scenario id of an
// earlier row is left out, and counted in Summary.Duplicates; the ids
// seen are kept as 64-bit hashes, 11 to 21 bytes a row.
func (a *Accumulator) Add(s models.EvaluationScenario) {
	if !a.ids.first(s.ID) {
		a.duplicates++
		if a.duplicateID == "" {
			a.duplicateID = bound(s.ID, 120)
		}
		return
	}
	a.rows++
	failed := appFailed(&s)
	if failed {
		a.appErrors++
	}
	if c, ok := s.Cost(); ok {
		a.cost.add(c)
	}
	if l, ok := s.Latency(); ok {
		a.latency.add(l)
	}
	for _, r := range s.Results {
		m := a.metrics[r.EvaluatorConfig]
		if m == nil {
			if a.metrics == nil {
				a.metrics = map[string]*metricAccumulator{}
			}
			m = &metricAccumulator{}
			a.metrics[r.EvaluatorConfig] = m
			a.order = append(a.order, r.EvaluatorConfig)
		}
		if m.lastRow == a.rows {
			continue // a second result for the evaluator in this row
		}
		m.lastRow = a.rows
		m.seen++
		if failed {
			m.appFailedSeen++
			m.addScore(kindError, 0)
			continue
		}
		m.add(r.Result)
	}
}

// Summary returns the summary of the scenarios added so far. The
// Accumulator can go on taking scenarios afterwards.
func (a *Accumulator) Summary() Summary {
	s := Summary{
		Rows:         a.rows,
		AppErrors:    a.appErrors,
		Evaluators:   make(map[string]Metric, len(a.metrics)),
		Cost:         a.cost.distribution(),
		Latency:      a.latency.distribution(),
		EvaluatorIDs: append([]string(nil), a.order...),
		Duplicates:   a.duplicates,
		DuplicateID:  a.duplicateID,
	}
	for id, m := range a.metrics {
		// The rows without a result for the evaluator: an error where
		// the app call failed, missing where it answered.
		withAppError := a.appErrors - m.appFailedSeen
		counted := *m
		counted.errors += withAppError
		counted.missing += a.rows - m.seen - withAppError
		s.Evaluators[id] = counted.metric()
	}
	return s
}

// Summarize summarises an evaluation's scenarios. Its percentiles are
// exact at any number of rows.
func Summarize(scenarios []models.EvaluationScenario) Summary {
	var a Accumulator
	a.cost.unbounded, a.latency.unbounded = true, true
	for i := range scenarios {
		a.Add(scenarios[i])
	}
	return a.Summary()
}

// SummarizeStream summarises the scenarios of a sequence such as
// client.StreamEvaluationScenarios(ctx, id), in flat memory (see
// Accumulator). It stops at the first error and returns it with the
// summary of the rows before it.
func SummarizeStream(scenarios iter.Seq2[models.EvaluationScenario, error]) (Summary, error) {
	var a Accumulator
	for s, err := range scenarios {
		if err != nil {
			return a.Summary(), err
		}
		a.Add(s)
	}
	return a.Summary(), nil
}

// appFailed reports whether a row holds no answer of its app to judge: the
// call failed, or the row has no output (a 2024 row with "outputs": []),
// or an output without a value (absent or null) and without an error.
// Absence of evidence is never success: such a row counts as an app error,
// and its evaluators' results as errors, as the service writes them for a
// failed call.
//
// It reads the row in place: it is on every row's path.
func appFailed(s *models.EvaluationScenario) bool {
	if len(s.Outputs) == 0 {
		return true
	}
	r := &s.Outputs[0].Result
	return r.Error != nil || r.Type == models.ResultTypeError || !hasValue(r.Value)
}

// hasValue is Result.HasValue, without trimming a value that starts with
// neither a space nor the n of null.
func hasValue(v []byte) bool {
	if len(v) > 0 && v[0] > ' ' && v[0] < utf8.RuneSelf && v[0] != 'n' {
		return true
	}
	return models.Result{Value: v}.HasValue()
}

// noOutputError is the app error of a row without any output.
const noOutputError = "no output: the row holds no answer of the app, and no error"

// noOutput reports whether a row that appFailed holds no output rather
// than a failed call.
func noOutput(s *models.EvaluationScenario) bool {
	return len(s.Outputs) == 0 || !s.Outputs[0].Result.Failed()
}

// appError returns the message of a row's failed app call, or noOutput for
// a row without an answer, and whether there is one (see appFailed).
func appError(s models.EvaluationScenario) (string, bool) {
	if msg, failed := s.AppError(); failed {
		return msg, true
	}
	if out, ok := s.Output(); ok && out.Result.HasValue() {
		return "", false
	}
	return noOutputError, true
}

// scenarioIDs is the set of the scenario ids seen, to count a scenario
// listed twice once. It keeps a 64-bit hash of each id (with a seed of its
// own) in an open-addressing table at most 3/4 full: 11 to 21 bytes a row
// (100,000 rows: 2 MiB), where a Go map took 25 and the ids as strings
// about 80. Two distinct ids share a hash with a chance of about n²/2⁶⁵ in
// n rows (3·10⁻⁸ in a million); the second row would then be left out and
// the gates fail, never pass. The zero value is ready to use.
type scenarioIDs struct {
	seed  maphash.Seed
	slots []uint64 // 0 marks an empty slot
	n     int
}

// first reports whether id is seen for the first time, and remembers it. A
// row without an id (a 2026 test case no scenario ran) is always new.
func (s *scenarioIDs) first(id string) bool {
	if id == "" {
		return true
	}
	if s.slots == nil {
		s.seed = maphash.MakeSeed()
		s.slots = make([]uint64, 1024)
	}
	return s.add(maphash.String(s.seed, id))
}

// add remembers a hash, reporting false when it is there already.
func (s *scenarioIDs) add(h uint64) bool {
	if h == 0 {
		h = 1 // 0 is an empty slot
	}
	if (s.n+1)*4 > len(s.slots)*3 {
		old := s.slots
		s.slots = make([]uint64, 2*len(old))
		for _, x := range old {
			if x != 0 {
				s.insert(x)
			}
		}
	}
	if !s.insert(h) {
		return false
	}
	s.n++
	return true
}

// insert puts h in its slot, or the next free one (linear probing), and
// reports false when it is there already.
func (s *scenarioIDs) insert(h uint64) bool {
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = h
			return true
		case h:
			return false
		}
	}
}

// valueKind is how a result counts in a Metric.
type valueKind uint8

const (
	kindNone   valueKind = iota // absent
	kindBool                    // a true or false value
	kindNumber                  // a JSON number
	kindError                   // a failed result
	kindOther                   // another value: text, an object, null
	// kindNoOutput is a result of a row without any output: an error,
	// and on the baseline's side of a comparison no evidence either way.
	kindNoOutput
)

// scoreOf classifies a result and returns its value as a number, a bool
// counting 1 for true.
//
// It reads the value as Result.Bool, then Result.Float64, would, trimming
// it once: it is on every result's path.
func scoreOf(r models.Result) (valueKind, float64) {
	if r.Failed() {
		return kindError, 0
	}
	switch v := bytes.TrimSpace(r.Value); {
	case len(v) == 0:
	case string(v) == "true":
		return kindBool, 1
	case string(v) == "false":
		return kindBool, 0
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		if x, err := strconv.ParseFloat(string(v), 64); err == nil && !math.IsInf(x, 0) {
			return kindNumber, x
		}
	}
	return kindOther, 0
}

// metricAccumulator gathers one evaluator's results.
type metricAccumulator struct {
	errors, other, missing int
	bools, trues           int
	values                 moments
	// For an Accumulator: the last row (from 1) with a result, the rows
	// with one, and those of them whose app call failed.
	lastRow, seen, appFailedSeen int
}

func (m *metricAccumulator) add(r models.Result) {
	kind, x := scoreOf(r)
	m.addScore(kind, x)
}

func (m *metricAccumulator) addScore(kind valueKind, x float64) {
	switch kind {
	case kindNone:
		m.missing++
	case kindError, kindNoOutput:
		m.errors++
	case kindOther:
		m.other++
	case kindBool:
		m.bools++
		if x == 1 {
			m.trues++
		}
		m.values.add(x)
	case kindNumber:
		m.values.add(x)
	}
}

func (m *metricAccumulator) metric() Metric {
	out := Metric{Count: m.values.n, Errors: m.errors, Missing: m.missing, Other: m.other, Mean: math.NaN(), Low: math.NaN(), High: math.NaN(),
		Min: math.NaN(), Max: math.NaN()}
	if out.Count > 0 {
		out.Min, out.Max = m.values.min, m.values.max
	}
	switch {
	case out.Count == 0:
	case m.bools == out.Count:
		// A row without a value is a fail: the pass rate is over every row.
		out.Bool = true
		rows := out.Rows()
		out.Mean = float64(m.trues) / float64(rows)
		out.Low, out.High = WilsonInterval(m.trues, rows, 0.95)
	default:
		out.Mean = m.values.average()
		out.Low, out.High = TInterval(out.Mean, m.values.sd(), out.Count, 0.95)
	}
	return out
}

// moments keeps the count, the sum and the sum of squared deviations of a
// stream of values. The sum is compensated (Neumaier's improved
// Kahan–Babuška summation, ZAMM 54 (1974) 39–51), so the mean of values
// that add up exactly is exact; the squared deviations follow Welford's
// update, which stays accurate where the textbook Σx² − n·mean² cancels
// (B. P. Welford, Technometrics 4 (1962) 419–420).
type moments struct {
	n          int
	sum, carry float64
	mean, m2   float64 // Welford's running mean, for m2 only
	min, max   float64
}

func (m *moments) add(x float64) {
	if m.n == 0 || x < m.min {
		m.min = x
	}
	if m.n == 0 || x > m.max {
		m.max = x
	}
	m.n++
	m.sum, m.carry = compensatedAdd(m.sum, m.carry, x)
	d := x - m.mean
	m.mean += d / float64(m.n)
	m.m2 += d * (x - m.mean)
}

// average returns the mean, NaN with no values.
func (m moments) average() float64 {
	if m.n == 0 {
		return math.NaN()
	}
	if sum := m.sum + m.carry; !math.IsInf(sum, 0) && !math.IsNaN(sum) {
		return sum / float64(m.n)
	}
	// Values near ±1.8e308 overflow the sum, not their mean: Welford's
	// running mean never adds them up.
	return m.mean
}

// sd returns the sample standard deviation, NaN below two values.
func (m moments) sd() float64 {
	if m.n < 2 {
		return math.NaN()
	}
	return math.Sqrt(m.m2 / float64(m.n-1))
}

// compensatedAdd adds x to sum, keeping the rounding error in carry
// (Neumaier 1974).
func compensatedAdd(sum, carry, x float64) (float64, float64) {
	t := sum + x
	if math.Abs(sum) >= math.Abs(x) {
		carry += (sum - t) + x
	} else {
		carry += (x - t) + sum
	}
	return t, carry
}

// withMissing returns the metric with n more rows without a result, such
// as the rows of a baseline that the candidate has no row for: a pass
// rate and its interval stay over every row.
func (m Metric) withMissing(n int) Metric {
	if n <= 0 {
		return m
	}
	passed := m.Passed()
	m.Missing += n
	if m.Bool {
		m.Mean = float64(passed) / float64(m.Rows())
		m.Low, m.High = WilsonInterval(passed, m.Rows(), 0.95)
	}
	return m
}
