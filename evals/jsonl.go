package evals

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// jsonLine is one scenario in WriteJSONLines.
type jsonLine struct {
	Variant      string            `json:"variant"`
	EvaluationID string            `json:"evaluation_id,omitempty"`
	ScenarioID   string            `json:"scenario_id,omitempty"`
	Row          int               `json:"row"`
	Inputs       map[string]string `json:"inputs"`
	Expected     string            `json:"expected"`
	Output       string            `json:"output"`
	AppError     *string           `json:"app_error"`
	Cost         *serverNumber     `json:"cost"`
	Latency      *serverNumber     `json:"latency"`
	Results      []jsonResult      `json:"results"`
	// Flaky names the evaluators on which the row's test case is flaky
	// in its run; absent elsewhere.
	Flaky []string `json:"flaky,omitempty"`
}

type jsonResult struct {
	Evaluator       string          `json:"evaluator"`
	EvaluatorConfig string          `json:"evaluator_config"`
	Type            string          `json:"type"`
	Value           json.RawMessage `json:"value"`
	Error           *string         `json:"error"`
}

// WriteJSONLines writes one JSON object per line and per scenario, baseline
// rows first: the variant, the evaluation and scenario ids, the row's
// position in its run (from 1), the inputs as text by name, the expected
// answer, the output, the app's error or null, cost and latency or null,
// and each result with its evaluator's name and id, type, value as the
// server sent it, and error message or null.
func (r *Report) WriteJSONLines(w io.Writer) error {
	cat := r.catalog()
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	runs := r.runs()
	flaky := r.flakyRowsOf(runs, cat)
	for n, run := range runs {
		i := 0
		for s, err := range run.distinct() {
			if err != nil {
				return err
			}
			i++
			line := newJSONLine(run.name, i, s, cat)
			if flaky != nil {
				line.Flaky = flaky[n].of(s)
			}
			if err := enc.Encode(line); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

func newJSONLine(variant string, row int, s models.EvaluationScenario, cat catalog) jsonLine {
	line := jsonLine{
		Variant:      variant,
		EvaluationID: s.EvaluationID,
		ScenarioID:   s.ID,
		Row:          row,
		Inputs:       make(map[string]string, len(s.Inputs)),
		Expected:     s.ExpectedAnswer(),
		Output:       s.OutputText(),
		Results:      make([]jsonResult, 0, len(s.Results)),
	}
	for _, in := range s.Inputs {
		line.Inputs[in.Name] = in.Text()
	}
	if msg, ok := appError(s); ok {
		line.AppError = &msg
	}
	if c, ok := s.Cost(); ok {
		line.Cost = (*serverNumber)(&c)
	}
	if l, ok := s.Latency(); ok {
		line.Latency = (*serverNumber)(&l)
	}
	for _, res := range s.Results {
		jr := jsonResult{
			Evaluator:       cat.label(res.EvaluatorConfig),
			EvaluatorConfig: res.EvaluatorConfig,
			Type:            res.Result.Type,
			Value:           res.Result.Value,
		}
		if !res.Result.HasValue() {
			jr.Value = json.RawMessage("null")
		}
		if res.Result.Error != nil {
			msg := res.Result.Error.Message
			jr.Error = &msg
		}
		line.Results = append(line.Results, jr)
	}
	return line
}

// serverNumber is a number the service sent, written as the service's
// Python writes it (repr of a float): 1e-05, not encoding/json's 0.00001,
// and 2.0 for a whole one, so that a report keeps the server's spelling.
type serverNumber float64

// MarshalJSON writes Python's repr of the float; a value JSON cannot hold
// (the service never sends one) is null.
func (n serverNumber) MarshalJSON() ([]byte, error) {
	x := float64(n)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return []byte(pythonRepr(x)), nil
}

// pythonRepr is Python's repr of a float: the shortest digits that read
// back as x, positional for exponents from -4 to 15 (with ".0" when whole),
// scientific with a two-digit exponent beyond.
func pythonRepr(x float64) string {
	sci := strconv.FormatFloat(x, 'e', -1, 64)
	exp, _ := strconv.Atoi(sci[strings.IndexByte(sci, 'e')+1:])
	if x != 0 && (exp < -4 || exp >= 16) {
		return sci
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
