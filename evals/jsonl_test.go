package evals

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
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

// Numbers keep the service's spelling, Python's repr of a float
// (issue 28): 1e-05 stays 1e-05, a whole cost is 2.0.
func TestPythonRepr(t *testing.T) {
	for x, want := range map[float64]string{
		1e-05: "1e-05", 0.0001: "0.0001", 0.00014: "0.00014", 2: "2.0", 0: "0.0", -1.5: "-1.5",
		1234567: "1234567.0", 1e15: "1000000000000000.0", 1e16: "1e+16", 1.5e16: "1.5e+16",
		1e308: "1e+308", 0.1: "0.1", 123.456: "123.456", 5e-324: "5e-324", 2.5e-05: "2.5e-05",
	} {
		if got := pythonRepr(x); got != want {
			t.Errorf("pythonRepr(%v) = %s, want %s (Python's repr)", x, got, want)
		}
	}
}

// End to end: the JSON report writes a cost of 1e-05 as the service did.
func TestWriteJSONLinesKeepsTheServersSpelling(t *testing.T) {
	_, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		return answered(country, "Capital of "+country, "Capital of "+country, 1e-05, 2,
			boolResult(exactMatch.ID, true), numberResult(scoreConfig.ID, 1))
	})
	var buf bytes.Buffer
	if err := NewReport(Run{}, candidate).WriteJSONLines(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"cost":1e-05,"latency":2.0,`) {
		t.Errorf("the JSON report does not keep the server's spelling of 1e-05 and 2.0:\n%.400s", buf.String())
	}
}

// Values near the largest float64 overflow their sum, not their mean; a
// mean that is infinite says so (issue 28).
func TestMeanOfHugeValues(t *testing.T) {
	_, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		return answered(country, "Capital of "+country, "Capital of "+country, 0.001, 1,
			boolResult(exactMatch.ID, true), numberResult(scoreConfig.ID, 1e308))
	})
	r := NewReport(Run{}, candidate)
	if err := r.Check(MinMean(scoreConfig.Name, 1e307)); err != nil || r.Gates[0].Measured != 1e308 {
		t.Errorf("a mean of 1e308s: %v, measured %v; want 1e308, passing", err, r.Gates[0].Measured)
	}

	// Costs of 1e308 have no finite mean: the gate says why it fails.
	_, costly := twentyRuns(func(i int, country string) models.EvaluationScenario {
		return answered(country, "Capital of "+country, "Capital of "+country, 1e308, 1,
			boolResult(exactMatch.ID, true), numberResult(scoreConfig.ID, 1))
	})
	r = NewReport(Run{}, costly)
	if err := r.Check(MaxMeanCost(1)); err == nil || !strings.Contains(r.Gates[0].Reason, "the measure is infinite") {
		t.Errorf("a mean cost beyond float64: %v, reason %q; want a failure that says the mean is infinite", err, r.Gates[0].Reason)
	}
}
