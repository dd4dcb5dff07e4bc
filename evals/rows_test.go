package evals

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// rowsOf gives a run's scenarios through Run.Rows instead of Scenarios,
// counting the passes made over them.
func rowsOf(run Run, passes *int) Run {
	scenarios := run.Scenarios
	run.Scenarios = nil
	run.Rows = func() iter.Seq2[models.EvaluationScenario, error] {
		*passes++
		return func(yield func(models.EvaluationScenario, error) bool) {
			for _, s := range scenarios {
				if !yield(s, nil) {
					return
				}
			}
		}
	}
	return run
}

// writeAll writes a report in every format, one after the other.
func writeAll(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{{"junit", r.WriteJUnit}, {"csv", r.WriteCSV}, {"jsonl", r.WriteJSONLines}, {"markdown", r.WriteMarkdown}} {
		fmt.Fprintf(&b, "== %s\n", w.name)
		if err := w.write(&b); err != nil {
			t.Fatalf("Write %s: %v", w.name, err)
		}
	}
	return b.String()
}

// TestReportFromRows: a report whose runs come through Run.Rows (as a
// command that kept them in a file while they streamed gives them) has the
// same summaries, comparison and gates, and writes byte for byte the same
// reports as one built from the scenarios in memory.
func TestReportFromRows(t *testing.T) {
	baseline, candidate := capitalsRuns()
	gates := []Gate{MinMean("Exact match", 0.8), MaxAppErrors(0), MaxWorseRows("Exact match", 0)}

	inMemory := NewReport(baseline, candidate)
	memoryErr := inMemory.Check(gates...)

	var passes int
	streamed := NewReport(rowsOf(baseline, &passes), rowsOf(candidate, &passes))
	if streamed.Failure != nil {
		t.Fatalf("NewReport from rows: Failure %v, want none", streamed.Failure)
	}
	streamedErr := streamed.Check(gates...)
	if fmt.Sprint(memoryErr) != fmt.Sprint(streamedErr) {
		t.Errorf("Check from rows = %v, want %v as in memory", streamedErr, memoryErr)
	}
	for _, pair := range []struct {
		name      string
		got, want any
	}{
		{"candidate summary", streamed.CandidateSummary, inMemory.CandidateSummary},
		{"baseline summary", streamed.BaselineSummary, inMemory.BaselineSummary},
		{"comparison", *streamed.Comparison, *inMemory.Comparison},
		{"gates", fmt.Sprint(streamed.Gates), fmt.Sprint(inMemory.Gates)},
	} {
		if !approxEqual(reflect.ValueOf(pair.got), reflect.ValueOf(pair.want)) {
			t.Errorf("%s from rows:\n%+v\nwant, as in memory:\n%+v", pair.name, pair.got, pair.want)
		}
	}
	passes = 0
	got, want := writeAll(t, streamed), writeAll(t, inMemory)
	if got != want {
		t.Errorf("the reports written from rows differ from those written from memory:\n%s\nwant:\n%s", got, want)
	}
	// JUnit and CSV read each run twice, JSON Lines once, Markdown once
	// (the rows the candidate did worse on).
	if passes != 2*(2+2+1+1) {
		t.Errorf("the writers made %d passes over the two runs, want 12", passes)
	}
}

// approxEqual is reflect.DeepEqual with floats equal to 1e-9 relative:
// streamed from two sides in turn, the comparison adds the same numbers
// in another order than in memory.
func approxEqual(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || math.IsNaN(x) && math.IsNaN(y) || math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y))
	case reflect.Struct:
		for i := range a.NumField() {
			if !approxEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !approxEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if !b.MapIndex(k).IsValid() || !approxEqual(a.MapIndex(k), b.MapIndex(k)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// TestReportRowsError: a pass over the rows that fails ends each writer
// with its error, and makes NewReport's report unjudged: every gate fails
// with the reason.
func TestReportRowsError(t *testing.T) {
	baseline, candidate := capitalsRuns()
	broken := errors.New("the disk is gone")
	rows := candidate.Scenarios
	candidate.Scenarios = nil
	candidate.Rows = func() iter.Seq2[models.EvaluationScenario, error] {
		return func(yield func(models.EvaluationScenario, error) bool) {
			for i, s := range rows {
				if i == 3 {
					yield(models.EvaluationScenario{}, broken)
					return
				}
				if !yield(s, nil) {
					return
				}
			}
		}
	}
	r := NewReport(baseline, candidate)
	if !errors.Is(r.Failure, broken) {
		t.Fatalf("NewReport's Failure = %v, want the rows' error", r.Failure)
	}
	err := r.Check(MinMean("Exact match", 0))
	if !errors.Is(err, ErrGateFailed) || r.Gates[0].Passed || !strings.Contains(r.Gates[0].Reason, "the disk is gone") {
		t.Errorf("Check = %v, gates %+v; want the gate failed with the rows' error", err, r.Gates)
	}
	for name, write := range map[string]func(io.Writer) error{"junit": r.WriteJUnit, "csv": r.WriteCSV, "jsonl": r.WriteJSONLines} {
		if err := write(io.Discard); !errors.Is(err, broken) {
			t.Errorf("Write %s = %v, want the rows' error", name, err)
		}
	}
	if err := r.WriteMarkdown(io.Discard); err != nil {
		t.Errorf("WriteMarkdown reads no row, yet = %v", err)
	}
}

// TestWriteJUnitRowsPeakHeap writes the JUnit report of two runs of
// 50,000 generated rows each (with a long output each, about 60 MB of
// XML), given through Run.Rows, sampling the heap every 500 rows: the
// writer keeps one row at a time, so the peak stays under 16 MB, where
// building the document in memory took over 100 MB. Under -race or
// -short it writes 5,000 rows per run.
func TestWriteJUnitRowsPeakHeap(t *testing.T) {
	rows := 50_000
	if testing.Short() || raceEnabled {
		rows = 5_000
	}
	const limit = 16 << 20
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	var ms runtime.MemStats
	var peak uint64
	generated := func(variant string) Run {
		return Run{
			Evaluation: evaluationOf("eval-"+variant, variant, exactMatch, editDistance),
			Rows: func() iter.Seq2[models.EvaluationScenario, error] {
				return func(yield func(models.EvaluationScenario, error) bool) {
					for i := range rows {
						if i%500 == 0 {
							runtime.ReadMemStats(&ms)
							peak = max(peak, ms.HeapInuse)
						}
						country := fmt.Sprintf("country %d", i)
						output := strings.Repeat("a long answer ", 40)
						s := answered(country, "capital", output, 0.0001, 0.5,
							boolResult(exactMatch.ID, i%3 == 0), numberResult(editDistance.ID, float64(i%7)))
						if !yield(s, nil) {
							return
						}
					}
				}
			},
		}
	}
	r := &Report{Evaluators: []Evaluator{EvaluatorOf(exactMatch), EvaluatorOf(editDistance)},
		Baseline: generated("capitals.default"), Candidate: generated("capitals.precise"), Comparison: &Comparison{}}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	start := ms.HeapInuse
	var written countingWriter
	if err := r.WriteJUnit(&written); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows per run, %.1f MB of XML: peak HeapInuse %.2f MB (%.2f MB at start)",
		rows, float64(written.n)/1e6, float64(peak)/(1<<20), float64(start)/(1<<20))
	if want := 2 * rows; written.cases != want {
		t.Fatalf("wrote %d test cases, want %d", written.cases, want)
	}
	if peak >= limit {
		t.Errorf("peak HeapInuse while writing the JUnit report of %d rows was %.2f MB, want under 16 MB", 2*rows, float64(peak)/(1<<20))
	}
}

// countingWriter counts the bytes and the test cases written to it,
// however the writes split them.
type countingWriter struct {
	n, cases int
	tail     []byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	const tag = "<testcase "
	w.n += len(p)
	joined := append(w.tail, p...)
	w.cases += bytes.Count(joined, []byte(tag))
	// Keep what could begin a tag split by the next write, never a whole one.
	keep := min(len(joined), len(tag)-1)
	w.tail = append(w.tail[:0], joined[len(joined)-keep:]...)
	return len(p), nil
}
