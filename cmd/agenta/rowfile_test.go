package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// TestRowFile: the rows kept while they stream come back as they were
// added, in order, through any number of passes, overlapping ones
// included; and the file is gone from the directory from the start.
func TestRowFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	var scenarios []models.EvaluationScenario
	if err := json.Unmarshal(benchScenarios(300), &scenarios); err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	// A line past the 64 KiB read buffer, with what JSON escapes.
	long, _ := json.Marshal(strings.Repeat("très long, \"quoted\" <html> & \u2028 ", 5000))
	scenarios = append(scenarios,
		models.EvaluationScenario{ // what the service writes for a failed row
			Inputs:         []models.Input{{Name: "country", Type: "text", Value: json.RawMessage(`"Nigeria"`)}},
			Outputs:        []models.Output{{Result: models.Result{Type: "error", Value: json.RawMessage("null"), Error: &models.Error{Message: "", Stacktrace: "Traceback"}}}},
			CorrectAnswers: []models.CorrectAnswer{},
			Results:        []models.ScenarioResult{{EvaluatorConfig: "e", Result: models.Result{Type: "error", Error: &models.Error{}}}},
		},
		models.EvaluationScenario{ // a free row: cost and latency 0, kept as 0, not as missing
			Inputs:  []models.Input{{Name: "country", Type: "text", Value: long}},
			Outputs: []models.Output{{Result: models.Result{Type: "text", Value: json.RawMessage(`"ok"`)}, Cost: &zero, Latency: &zero}},
			Results: []models.ScenarioResult{{EvaluatorConfig: "e", Result: models.Result{Type: "number", Value: json.RawMessage(`1.50`)}}},
		},
	)
	rf, err := newRowFile()
	if err != nil {
		t.Fatal(err)
	}
	defer rf.close()
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); rf.removed && len(left) != 0 {
		t.Errorf("the row file shows in the temporary directory: %v", left)
	}
	for i := range scenarios {
		if err := rf.add(&scenarios[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := rf.finish(); err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(scenarios))
	for i := range scenarios {
		data, _ := json.Marshal(scenarios[i])
		want[i] = string(data)
	}
	var wg sync.WaitGroup
	for pass := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := 0
			for s, err := range rf.rows() {
				if err != nil {
					t.Errorf("pass %d, row %d: %v", pass, i, err)
					return
				}
				if got, _ := json.Marshal(s); i >= len(want) || string(got) != want[i] {
					t.Errorf("pass %d, row %d came back as\n%.300s\nwant\n%.300s", pass, i, got, want[min(i, len(want)-1)])
					return
				}
				i++
			}
			if i != len(want) {
				t.Errorf("pass %d read %d rows, want %d", pass, i, len(want))
			}
		}()
	}
	wg.Wait()
	if o := scenarios[len(scenarios)-1].Outputs[0]; o.Cost == nil || *o.Cost != 0 {
		t.Fatalf("the fixture lost its zero cost")
	}
}

// TestRowFileBroken: a row file whose writes failed gives that error to
// every pass, never a shorter list.
func TestRowFileBroken(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	rf, err := newRowFile()
	if err != nil {
		t.Fatal(err)
	}
	if err := rf.spill(); err != nil { // as a run past rowsInMemory does
		t.Fatal(err)
	}
	rf.f.Close() // the writes that follow fail
	rf.add(&models.EvaluationScenario{ID: "x"})
	if err := rf.finish(); err == nil {
		t.Fatal("finish on a closed file succeeded")
	}
	for _, err := range rf.rows() {
		if err == nil {
			t.Fatal("a pass over a broken row file yielded a row")
		}
		return
	}
	t.Fatal("a pass over a broken row file yielded nothing, not its error")
}

// TestRowFileWithoutTMPDIR: a run's rows stay in memory up to
// rowsInMemory, so a missing $TMPDIR costs a small run nothing (issue 28);
// past it, the rows need the file, and the error says why.
func TestRowFileWithoutTMPDIR(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	rf, err := newRowFile()
	if err != nil {
		t.Fatal(err)
	}
	defer rf.close()
	for i := range 100 {
		if err := rf.add(&models.EvaluationScenario{ID: strconv.Itoa(i)}); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if err := rf.finish(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for s, err := range rf.rows() {
		if err != nil || s.ID != strconv.Itoa(n) {
			t.Fatalf("row %d: %v, %q", n, err, s.ID)
		}
		n++
	}
	if n != 100 {
		t.Fatalf("%d rows read back, want 100", n)
	}

	big, _ := newRowFile()
	defer big.close()
	long := strings.Repeat("x", 1<<20)
	var addErr error
	for i := 0; addErr == nil && i < 10; i++ {
		addErr = big.add(&models.EvaluationScenario{ID: long})
	}
	if !errors.Is(addErr, fs.ErrNotExist) {
		t.Fatalf("past %d bytes without a $TMPDIR: %v, want the missing directory", rowsInMemory, addErr)
	}
}
