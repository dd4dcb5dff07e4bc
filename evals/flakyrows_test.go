package evals

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// flakyByRow writes the report as CSV and as JSON Lines and returns, for
// each, the "flaky" value of every row by scenario id (CSV: the cell, ""
// when empty; JSON Lines: the names joined by "; ", absent rows left out),
// and whether the CSV has the column.
func flakyByRow(t *testing.T, r *Report) (csvCells, jsonCells map[string]string, column bool) {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSONLines(&b); err != nil {
		t.Fatal(err)
	}
	jsonCells = map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var row struct {
			ScenarioID string    `json:"scenario_id"`
			Flaky      *[]string `json:"flaky"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		if row.Flaky != nil {
			if len(*row.Flaky) == 0 {
				t.Errorf("row %s: an empty flaky member", row.ScenarioID)
			}
			jsonCells[row.ScenarioID] = strings.Join(*row.Flaky, "; ")
		}
	}
	b.Reset()
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := records[0]
	column = header[len(header)-1] == "flaky"
	if !column {
		return nil, jsonCells, false
	}
	// The rows are in the runs' order; the scenario ids come from the
	// JSON Lines, which has them.
	var ids []string
	b.Reset()
	_ = r.WriteJSONLines(&b)
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var row struct {
			ScenarioID string `json:"scenario_id"`
		}
		_ = json.Unmarshal([]byte(line), &row)
		ids = append(ids, row.ScenarioID)
	}
	if len(ids) != len(records)-1 {
		t.Fatalf("%d CSV rows, %d JSON lines", len(records)-1, len(ids))
	}
	csvCells = map[string]string{}
	for i, rec := range records[1:] {
		csvCells[ids[i]] = rec[len(rec)-1]
	}
	return csvCells, jsonCells, true
}

// With repeats, each row of a flaky case names, in both reports by row,
// the evaluators its case is flaky on in its own run; the other rows
// carry nothing.
func TestFlakyRowsInCSVAndJSONLines(t *testing.T) {
	// Candidate: case 0 passes 1 of 3, case 1 2 of 3. Baseline: case 2
	// passes 2 of 3. The score is a number: never flaky.
	noisy := func(i, j int) bool { return !(i == 0 && j > 0 || i == 1 && j == 2) }
	baseNoisy := func(i, j int) bool { return !(i == 2 && j == 0) }
	base, cand := casesRuns(6, 3, baseNoisy, noisy)
	cand.Scenarios[0], cand.Scenarios[5] = cand.Scenarios[5], cand.Scenarios[0] // repeats need not be adjacent
	r := NewReport(base, cand)
	want := map[string]string{}
	for j := range 3 {
		want[fmt.Sprintf("c-0-%d", j)] = "Exact match"
		want[fmt.Sprintf("c-1-%d", j)] = "Exact match"
		want[fmt.Sprintf("b-2-%d", j)] = "Exact match"
	}
	csvCells, jsonCells, column := flakyByRow(t, r)
	if !column {
		t.Fatal("the CSV of a run with repeats has no flaky column")
	}
	if len(csvCells) != len(base.Scenarios)+len(cand.Scenarios) {
		t.Errorf("%d CSV rows, want every row", len(csvCells))
	}
	for id, cell := range csvCells {
		if cell != want[id] {
			t.Errorf("CSV row %s: flaky %q, want %q", id, cell, want[id])
		}
	}
	if len(jsonCells) != len(want) {
		t.Errorf("JSON Lines: flaky on %v, want %v", jsonCells, want)
	}
	for id, names := range want {
		if jsonCells[id] != names {
			t.Errorf("JSON Lines row %s: flaky %q, want %q", id, jsonCells[id], names)
		}
	}
	// The candidate alone: the same rows of the candidate.
	_, jsonCells, _ = flakyByRow(t, NewReport(Run{}, cand))
	if len(jsonCells) != 6 || jsonCells["c-0-1"] != "Exact match" {
		t.Errorf("candidate alone: flaky on %v, want the 6 rows of cases 0 and 1", jsonCells)
	}
}

// More flaky cases than a listing holds: every row of every one is
// marked, the listing still keeps MaxFlakyListed.
func TestFlakyRowsBeyondTheListing(t *testing.T) {
	n := MaxFlakyListed + 15
	flakyAll := func(i, j int) bool { return j != 0 }
	always := func(i, j int) bool { return true }
	base, cand := casesRuns(n, 3, always, flakyAll)
	r := NewReport(base, cand)
	if f := r.Flaky(); len(f) != 1 || f[0].Total != n || len(f[0].Cases) != MaxFlakyListed {
		t.Fatalf("Flaky = %+v, want %d cases, %d listed", f, n, MaxFlakyListed)
	}
	_, jsonCells, _ := flakyByRow(t, r)
	if len(jsonCells) != 3*n {
		t.Errorf("JSON Lines: %d rows marked flaky, want all %d candidate rows", len(jsonCells), 3*n)
	}
}

// A 2026 run's rows are keyed by test case id; a mid-2024 repeat whose
// app call failed (without expected answers) joins its case by its
// inputs, and is marked with it.
func TestFlakyRowsByTestcaseAndFailedRepeat(t *testing.T) {
	always := func(i, j int) bool { return true }
	odd := func(i, j int) bool { return !(i == 3 && j == 1) }
	base, cand := casesRuns(5, 3, always, odd)
	for i := range cand.Scenarios {
		base.Scenarios[i].TestcaseID = fmt.Sprintf("tc-%d", i/3)
		cand.Scenarios[i].TestcaseID = fmt.Sprintf("tc-%d", i/3)
		// Inputs alike: only the test case tells the cases apart.
		base.Scenarios[i].Inputs = base.Scenarios[0].Inputs
		cand.Scenarios[i].Inputs = cand.Scenarios[0].Inputs
	}
	_, jsonCells, _ := flakyByRow(t, NewReport(base, cand))
	if got := slices.Sorted(maps.Keys(jsonCells)); !slices.Equal(got, []string{"c-3-0", "c-3-1", "c-3-2"}) {
		t.Errorf("by test case: flaky rows %v, want those of tc-3", got)
	}

	base, cand = casesRuns(5, 3, always, always)
	cand.Scenarios[13] = failedRow("K0004", "timeout", exactMatch.ID, scoreConfig.ID)
	cand.Scenarios[13].ID = "c-failed"
	_, jsonCells, _ = flakyByRow(t, NewReport(base, cand))
	if got := slices.Sorted(maps.Keys(jsonCells)); !slices.Equal(got, []string{"c-4-0", "c-4-2", "c-failed"}) {
		t.Errorf("a failed repeat: flaky rows %v, want case 4's three", got)
	}
}

// Without repeats nothing changes: no column, no member.
func TestNoFlakyColumnWithoutRepeats(t *testing.T) {
	mixed := func(i, j int) bool { return i%2 == 0 }
	base, cand := casesRuns(6, 0, mixed, mixed)
	_, jsonCells, column := flakyByRow(t, NewReport(base, cand))
	if column || len(jsonCells) != 0 {
		t.Errorf("without repeats: flaky column %v, flaky rows %v", column, jsonCells)
	}
}

// The index holds the flaky cases' keys only, whatever the number of
// rows and cases.
func TestFlakyRowsHoldOnlyTheFlakyCases(t *testing.T) {
	always := func(i, j int) bool { return true }
	few := func(i, j int) bool { return !(i%400 == 7 && j == 1) } // 3 of 1200 cases flaky
	_, cand := casesRuns(1200, 3, always, few)
	r := NewReport(Run{}, cand)
	f := newFlakyRows(r.CandidateCases, r.CandidateSummary.EvaluatorIDs, r.catalog())
	if f == nil || len(f.byKey) != 3 || len(f.byInputs) != 3 {
		t.Fatalf("index of %+v: want the 3 flaky cases", f)
	}
	if s := r.CandidateCases.Evaluators[exactMatch.ID]; len(s.flakyKeys) != 3 {
		t.Errorf("%d keys kept, want 3", len(s.flakyKeys))
	}
}
