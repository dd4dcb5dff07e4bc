package evals

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// Result values pass through the machine reports (CSV, JSON Lines) with
// their numbers as the server wrote them.
func TestReportsKeepExactNumbers(t *testing.T) {
	const big, long = "9007199254740993", "0.1000000000000000055511151231257827"
	ev := models.Evaluation{ID: "e-1", VariantNames: []string{"app.default"}, AggregatedResults: []models.AggregatedResult{
		{EvaluatorConfig: models.EvaluatorConfig{ID: "c-1", Name: "seed"}},
		{EvaluatorConfig: models.EvaluatorConfig{ID: "c-2", Name: "score"}}}}
	s := models.EvaluationScenario{ID: "s-1", Inputs: []models.Input{{Name: "n", Type: "number", Value: json.RawMessage(big)}},
		Outputs: []models.Output{{Result: models.Result{Type: "text", Value: json.RawMessage(`"x"`)}}},
		Results: []models.ScenarioResult{
			{EvaluatorConfig: "c-1", Result: models.Result{Type: "number", Value: json.RawMessage(big)}},
			{EvaluatorConfig: "c-2", Result: models.Result{Type: "number", Value: json.RawMessage(long)}}}}
	r := NewReport(Run{}, Run{Evaluation: ev, Scenarios: []models.EvaluationScenario{s}})
	for name, write := range map[string]func(*bytes.Buffer) error{
		"CSV":        func(b *bytes.Buffer) error { return r.WriteCSV(b) },
		"JSON Lines": func(b *bytes.Buffer) error { return r.WriteJSONLines(b) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{big, long} {
			if strings.Count(b.String(), want) == 0 {
				t.Errorf("%s report lacks %s: %s", name, want, b.String())
			}
		}
	}
}

func TestWriteCSV(t *testing.T) {
	r := checkedReport(t)
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v", err)
	}
	wantHeader := []string{"variant", "row", "input.country", "expected", "output", "app_error", "cost", "latency", "Edit distance", "Exact match"}
	if strings.Join(records[0], ",") != strings.Join(wantHeader, ",") {
		t.Fatalf("header = %q, want %q", records[0], wantHeader)
	}
	if len(records) != 1+16 {
		t.Fatalf("%d lines, want a header and 16 rows", len(records))
	}
	byKey := map[string][]string{}
	for _, rec := range records[1:] {
		byKey[rec[0]+"/"+rec[2]] = rec
	}
	if got := byKey["capitals.precise/Australia"]; strings.Join(got[3:], "|") != "Canberra|Sydney||0.0008|0.7|7|false" {
		t.Errorf("the candidate's Australia line = %q", got)
	}
	if got := byKey["capitals.precise/Nigeria"]; strings.Join(got[3:], "|") != "||rate limited|||error: rate limited|error: rate limited" {
		t.Errorf("the candidate's Nigeria line = %q", got)
	}
	if got := byKey["capitals.default/Brazil"]; got[4] != "São Paulo" || got[9] != "false" {
		t.Errorf("the baseline's Brazil line = %q", got)
	}
}
