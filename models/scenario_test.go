package models

import (
	"encoding/json"
	"testing"
)

func scenarioFrom(t *testing.T, body string) EvaluationScenario {
	t.Helper()
	var s EvaluationScenario
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return s
}

func TestInputText(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`"France"`, "France"},
		{`"say \"hi\"\n\u00e9"`, "say \"hi\"\né"},
		{`""`, ""},
		{`42`, "42"},
		{`-1.5e3`, "-1.5e3"},
		{`true`, "true"},
		{`null`, ""},
		{``, ""},
		{` { "a" : [1, 2] } `, `{"a":[1,2]}`},
		{`"`, `"`},
		{"\"tab\tinside\"", "\"tab\tinside\""}, // invalid JSON comes back as sent
		{"\"\xff\"", "\uFFFD"},
	}
	for _, tt := range tests {
		if got := (Input{Value: json.RawMessage(tt.raw)}).Text(); got != tt.want {
			t.Errorf("Input{Value: %s}.Text() = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestScenarioReading(t *testing.T) {
	newer := scenarioFrom(t, `{"inputs":[{"name":"country","type":"text","value":"France"},{"name":"n","type":"text","value":3}],
		"outputs":[{"result":{"type":"text","value":"Paris","error":null},"cost":0.002,"latency":1.25}],
		"correct_answers":[{"key":"other","value":""},{"key":"correct_answer","value":"Paris"}],
		"results":[{"evaluator_config":"ev1","result":{"type":"bool","value":true,"error":null}},
		           {"evaluator_config":"ev2","result":{"type":"number","value":0,"error":null}}]}`)
	older := scenarioFrom(t, `{"inputs":[{"name":"country","type":"text","value":"Japan"}],
		"outputs":[{"result":{"type":"error","value":null,"error":{"message":"rate limited","stacktrace":"..."}},"cost":null,"latency":null}],
		"correct_answer":"Tokyo","evaluation":"",
		"results":[{"evaluator_config":"ev1","result":{"type":"error","value":null,"error":{"message":"rate limited"}}}]}`)
	onlyOther := scenarioFrom(t, `{"correct_answers":[{"key":"answer","value":"Bern"}]}`)

	if got, ok := newer.Input("country"); !ok || got != "France" {
		t.Errorf(`Input("country") = %q, %v; want "France", true`, got, ok)
	}
	if _, ok := newer.Input("missing"); ok {
		t.Error(`Input("missing") reported true, want false`)
	}
	if got := newer.InputsText(); got != "country=France, n=3" {
		t.Errorf("InputsText() = %q, want %q", got, "country=France, n=3")
	}
	if got := newer.OutputText(); got != "Paris" {
		t.Errorf("OutputText() = %q, want Paris", got)
	}
	if got := older.OutputText(); got != "" {
		t.Errorf("OutputText() of a failed row = %q, want empty", got)
	}
	if newer.Failed() || !older.Failed() {
		t.Errorf("Failed() = %v and %v, want false for the good row and true for the failed one", newer.Failed(), older.Failed())
	}
	if msg, ok := older.AppError(); !ok || msg != "rate limited" {
		t.Errorf("AppError() = %q, %v; want \"rate limited\", true", msg, ok)
	}
	if c, ok := newer.Cost(); !ok || c != 0.002 {
		t.Errorf("Cost() = %v, %v; want 0.002, true", c, ok)
	}
	if l, ok := newer.Latency(); !ok || l != 1.25 {
		t.Errorf("Latency() = %v, %v; want 1.25, true", l, ok)
	}
	if _, ok := older.Cost(); ok {
		t.Error("Cost() of a row with a null cost reported true")
	}
	if _, ok := (EvaluationScenario{}).Latency(); ok {
		t.Error("Latency() of a row without outputs reported true")
	}

	expected := []struct {
		s    EvaluationScenario
		want string
	}{{newer, "Paris"}, {older, "Tokyo"}, {onlyOther, "Bern"}, {EvaluationScenario{}, ""}}
	for i, tt := range expected {
		if got := tt.s.ExpectedAnswer(); got != tt.want {
			t.Errorf("case %d: ExpectedAnswer() = %q, want %q", i, got, tt.want)
		}
	}
	if got, ok := newer.ExpectedAnswerFor("other"); !ok || got != "" {
		t.Errorf(`ExpectedAnswerFor("other") = %q, %v; want "", true (the column exists but is empty)`, got, ok)
	}
	if got, ok := older.ExpectedAnswerFor(""); !ok || got != "Tokyo" {
		t.Errorf(`older ExpectedAnswerFor("") = %q, %v; want "Tokyo", true`, got, ok)
	}
	if _, ok := onlyOther.ExpectedAnswerFor("correct_answer"); ok {
		t.Error(`ExpectedAnswerFor("correct_answer") found a column the row does not have`)
	}

	r, ok := newer.Result("ev2")
	if f, isNum := r.Float64(); !ok || !isNum || f != 0 {
		t.Errorf(`Result("ev2") = %+v, %v; want the number 0`, r, ok)
	}
	if _, ok := newer.Result("nope"); ok {
		t.Error(`Result("nope") reported true`)
	}
}
