package models_test

import (
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// A Result keeps its value as the server sent it; the accessor for the
// value's JSON type reads it, and reports false for any other type.
func ExampleResult() {
	var results []models.Result
	err := json.Unmarshal([]byte(`[
		{"type": "bool", "value": true},
		{"type": "number", "value": 0.75},
		{"type": "text", "value": "Paris"},
		{"type": "error", "value": null, "error": {"message": "No correct answer keys provided."}}
	]`), &results)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		switch {
		case r.Failed():
			fmt.Printf("%-6s failed: %s\n", r.Type, r.Error.Message)
		case r.Type == models.ResultTypeBool:
			b, _ := r.Bool()
			fmt.Printf("%-6s %v\n", r.Type, b)
		case r.Type == models.ResultTypeNumber:
			f, _ := r.Float64()
			fmt.Printf("%-6s %.2f\n", r.Type, f)
		default:
			text, ok := r.Text()
			fmt.Printf("%-6s %q %v\n", r.Type, text, ok)
		}
	}
	// Reading a value as another type reports false rather than guessing.
	_, ok := results[2].Float64()
	fmt.Println("text as a number:", ok)
	// String renders any Result for display.
	fmt.Println(results[1], results[3])
	// Output:
	// bool   true
	// number 0.75
	// text   "Paris" true
	// error  failed: No correct answer keys provided.
	// text as a number: false
	// 0.75 error: No correct answer keys provided.
}

// Decode reads a structured value into a Go type.
func ExampleResult_Decode() {
	r := models.Result{Type: "json", Value: json.RawMessage(`{"score": 4, "reason": "concise"}`)}
	var verdict struct {
		Score  int    `json:"score"`
		Reason string `json:"reason"`
	}
	if err := r.Decode(&verdict); err != nil {
		log.Fatal(err)
	}
	fmt.Println(verdict.Score, verdict.Reason)

	// A Result without a value says so.
	err := models.Result{Type: "text", Value: json.RawMessage("null")}.Decode(&verdict)
	fmt.Println(err)
	// Output:
	// 4 concise
	// models: result has no value
}

// Walk visits a trace depth first, in order, with each span's depth.
func ExampleSpan_Walk() {
	var root models.Span
	err := json.Unmarshal([]byte(`{
		"id": "s1", "name": "capitals", "spankind": "WORKFLOW", "status": "OK",
		"metadata": {"cost": 0.0003, "latency": 1.2},
		"children": [
			{"id": "s2", "name": "retrieve", "spankind": "RETRIEVER", "status": "OK"},
			{"id": "s3", "name": "answer", "spankind": "LLM", "status": "ERROR",
			 "children": [{"id": "s4", "name": "openai", "spankind": "LLM", "status": "ERROR"}]}
		]
	}`), &root)
	if err != nil {
		log.Fatal(err)
	}
	root.Walk(func(s *models.Span, depth int) bool {
		fmt.Printf("%s%s (%s, %s)\n", strings.Repeat("  ", depth), s.Name, s.SpanKind, s.Status)
		return true
	})

	// Returning false skips a span's children: here, find the first failed
	// span and stop below it.
	var failed string
	root.Walk(func(s *models.Span, _ int) bool {
		if failed == "" && s.Status == models.SpanStatusError {
			failed = s.Name
		}
		return failed == ""
	})
	cost, _ := root.Cost()
	fmt.Println("first failure:", failed, "cost:", cost)
	// Output:
	// capitals (WORKFLOW, OK)
	//   retrieve (RETRIEVER, OK)
	//   answer (LLM, ERROR)
	//     openai (LLM, ERROR)
	// first failure: answer cost: 0.0003
}

// The service writes timestamps in three forms; Timestamp reads them all, a
// time without a zone as UTC.
func ExampleTimestamp() {
	var doc struct {
		Evaluation models.Timestamp `json:"evaluation"` // evaluations
		Human      models.Timestamp `json:"human"`      // human evaluations and evaluator configs: Python's str(datetime)
		Older      models.Timestamp `json:"older"`      // older servers: no zone
		Missing    models.Timestamp `json:"missing"`
	}
	err := json.Unmarshal([]byte(`{
		"evaluation": "2024-07-15T10:52:51.123456Z",
		"human": "2024-07-15 10:52:51+00:00",
		"older": "2024-06-26T12:22:31.775000",
		"missing": null
	}`), &doc)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(doc.Evaluation.UTC())
	fmt.Println(doc.Human.UTC())
	fmt.Println(doc.Older.UTC())
	fmt.Println(doc.Missing.IsZero())

	// Timestamp embeds time.Time, so its methods apply directly.
	fmt.Println(doc.Evaluation.Sub(doc.Older.Time).Round(1e9))
	// Output:
	// 2024-07-15 10:52:51.123456 +0000 UTC
	// 2024-07-15 10:52:51 +0000 UTC
	// 2024-06-26 12:22:31.775 +0000 UTC
	// true
	// 454h30m19s
}

// ParseTimestamp is strict: it refuses what a time.Time cannot hold exactly.
func ExampleParseTimestamp() {
	for _, s := range []string{"2024-07-15 10:52:51.123456+02:00", "2024-02-30T00:00:00"} {
		t, err := models.ParseTimestamp(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(t.UTC())
	}
	// Output:
	// 2024-07-15 08:52:51.123456 +0000 UTC
	// models: invalid timestamp "2024-02-30T00:00:00"
}
