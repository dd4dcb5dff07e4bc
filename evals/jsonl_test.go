package evals

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

func TestWriteJSONLines(t *testing.T) {
	r := checkedReport(t)
	var buf bytes.Buffer
	if err := r.WriteJSONLines(&buf); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		n++
		var line struct {
			Variant  string            `json:"variant"`
			Row      int               `json:"row"`
			Inputs   map[string]string `json:"inputs"`
			Expected string            `json:"expected"`
			Output   string            `json:"output"`
			AppError *string           `json:"app_error"`
			Cost     *float64          `json:"cost"`
			Results  []struct {
				Evaluator       string          `json:"evaluator"`
				EvaluatorConfig string          `json:"evaluator_config"`
				Type            string          `json:"type"`
				Value           json.RawMessage `json:"value"`
				Error           *string         `json:"error"`
			} `json:"results"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", n, err, sc.Text())
		}
		if line.Variant == "capitals.precise" && line.Inputs["country"] == "Nigeria" {
			if line.AppError == nil || *line.AppError != "rate limited" || line.Cost != nil || line.Results[0].Error == nil || string(line.Results[0].Value) != "null" {
				t.Errorf("Nigeria's line = %s, want the app error, a null cost and error results", sc.Text())
			}
		}
		if line.Variant == "capitals.default" && line.Inputs["country"] == "France" {
			if line.Row != 1 || line.Output != "Paris" || line.Expected != "Paris" || line.Results[0].Evaluator != "Exact match" || string(line.Results[0].Value) != "true" {
				t.Errorf("France's line = %s", sc.Text())
			}
		}
	}
	if n != 16 {
		t.Errorf("%d lines, want 16", n)
	}
}
