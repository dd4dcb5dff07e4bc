package agentatest

import (
	"fmt"
	"regexp"
	"strconv"
)

// Aggregation, as the service's aggregation_service computes it at the
// end of a run, with the messages and tracebacks it stores when it fails.
// The tracebacks are those of the production image (Python 3.9, code in
// /app); the frames name the service's own lines.

// floatAggregated are the evaluators whose results the service averages
// with aggregate_float: Python's sum of the values over their count, where
// a bool counts 1 or 0 and anything else that is not a number fails.
var floatAggregated = map[string]bool{
	"auto_exact_match": true, "auto_similarity_match": true, "field_match_test": true,
	"auto_webhook_test": true, "auto_custom_code_run": true, "auto_starts_with": true,
	"auto_ends_with": true, "auto_contains": true, "auto_contains_any": true,
	"auto_contains_all": true, "auto_contains_json": true, "auto_levenshtein_distance": true,
}

// aggregateResults is the service's aggregate of the evaluator at index i,
// of key evaluatorKey, over the rows whose app call succeeded (a failed
// row gives its evaluators no result to aggregate). Without such rows
// there is no aggregate. The rule depends on the evaluator: a mean for most
// (a number, unrounded, or an error when a value is not a number), the
// share of true values for a regex test (null when one is not a bool), the
// mean of the first integer in each text for an AI critique, and an error
// for any other evaluator.
func aggregateResults(evaluatorKey string, scenarios []*scenarioRecord, i int) (result, bool) {
	var values []any
	for _, sc := range scenarios {
		if sc.output.Type != "error" && i < len(sc.results) {
			values = append(values, sc.results[i].Value)
		}
	}
	if len(values) == 0 {
		return result{}, false
	}
	switch {
	case evaluatorKey == "auto_regex_test":
		return aggregateBinary(values), true
	case evaluatorKey == "auto_ai_critique":
		return aggregateCritique(values), true
	case floatAggregated[evaluatorKey]:
		return aggregateFloat(values), true
	}
	return result{Type: "error", Err: &resultError{Message: "Aggregation failed"}}, true
}

// aggregateFloat is aggregate_float: sum(values) / len(values). The sum
// starts from the int 0, stays an int through bools and ints, becomes a
// float at the first float, and fails as Python's + does at a value of any
// other type.
func aggregateFloat(values []any) result {
	total, sumType := 0.0, "int"
	for _, v := range values {
		switch t := v.(type) {
		case bool:
			if t {
				total++
			}
		case int:
			total += float64(t)
		case float64:
			total, sumType = total+t, "float"
		case pythonFloatValue:
			total, sumType = total+float64(t), "float"
		default:
			message := fmt.Sprintf("unsupported operand type(s) for +: '%s' and '%s'", sumType, pythonTypeName(v))
			return errorResult(message, pythonTraceback(message, "TypeError",
				frame{"services/aggregation_service.py", 75, "aggregate_float",
					"average_value = sum(result.value for result in results) / len(results)"}))
		}
	}
	return result{Type: "number", Value: pythonFloatValue(total / float64(len(values)))}
}

// aggregateBinary is aggregate_binary, for the regex test: the share of
// true values when every value is a bool, else a number result with a null
// value and no error.
func aggregateBinary(values []any) result {
	trues := 0
	for _, v := range values {
		b, ok := v.(bool)
		if !ok {
			return result{Type: "number"}
		}
		if b {
			trues++
		}
	}
	return result{Type: "number", Value: pythonFloatValue(float64(trues) / float64(len(values)))}
}

var firstInteger = regexp.MustCompile(`\d+`)

// aggregateCritique is aggregate_ai_critique: the mean of the first
// integer found in each text, or a null value when no text holds one. A
// value that is not a text fails re.search, as the errors the fake's AI
// critiques always give do.
func aggregateCritique(values []any) result {
	total, n := 0, 0
	for _, v := range values {
		text, ok := v.(string)
		if !ok {
			const message = "expected string or bytes-like object"
			return errorResult(message, pythonTraceback(message, "TypeError",
				frame{"services/aggregation_service.py", 23, "aggregate_ai_critique",
					`match = re.search(r"\d+", result.value)`},
				frame{"/usr/local/lib/python3.9/re.py", 201, "search",
					"return _compile(pattern, flags).search(string)"}))
		}
		if m := firstInteger.FindString(text); m != "" {
			if score, err := strconv.Atoi(m); err == nil {
				total, n = total+score, n+1
			}
		}
	}
	if n == 0 {
		return result{Type: "number"}
	}
	return result{Type: "number", Value: pythonFloatValue(float64(total) / float64(n))}
}

// averageOf is aggregate_float_from_llm_app_response, the average cost or
// latency of the rows that have one, or an error Result when none has.
func averageOf(kind string, values []float64) *result {
	return floatsOf(kind, values, "", 99, "aggregate_float_from_llm_app_response")
}

// sumOf is sum_float_from_llm_app_response, the total cost, or an error
// Result when no row has one.
func sumOf(kind string, values []float64) *result {
	return floatsOf(kind, values, " sum", 125, "sum_float_from_llm_app_response")
}

// floatsOf is what averageOf and sumOf share: the service's ValueError,
// raised at line of fn, when no value is found; else the total, divided by
// the count unless sum is " sum".
func floatsOf(kind string, values []float64, sum string, line int, fn string) *result {
	if len(values) == 0 {
		message := fmt.Sprintf("No valid values found for %s%s aggregation.", kind, sum)
		r := errorResult(message, pythonTraceback(message, "ValueError",
			frame{"services/aggregation_service.py", line, fn,
				`raise ValueError(f"No valid values found for {key}` + sum + ` aggregation.")`}))
		return &r
	}
	total := 0.0
	for _, v := range values {
		total += v
	}
	if sum == "" {
		total /= float64(len(values))
	}
	return &result{Type: kind, Value: pythonFloatValue(total)}
}

// missingInputTraceback is why a run breaks on a row that lacks the app's
// input name: the worker's KeyError while it writes the row's scenario.
func missingInputTraceback(name string) string {
	return pythonTraceback(fmt.Sprintf("'%s'", name), "KeyError",
		frame{"tasks/evaluations.py", 158, "evaluate", "inputs = ["},
		frame{"tasks/evaluations.py", 162, "<listcomp>", "value=data_point["})
}

// unknownEvaluatorTraceback is why a run breaks before any app call when
// one of its evaluator configs does not exist.
const unknownEvaluatorMessage = "'NoneType' object has no attribute 'id'"

func unknownEvaluatorTraceback() string {
	return pythonTraceback(unknownEvaluatorMessage, "AttributeError",
		frame{"tasks/evaluations.py", 129, "evaluate", "evaluators_aggregated_data = {"},
		frame{"tasks/evaluations.py", 130, "<dictcomp>", "str(evaluator_config_db.id): {"})
}

// frame is one frame of a Python traceback: a file of the service (under
// /app/agenta_backend) or an absolute path, a line, a function and its
// source line.
type frame struct {
	file     string
	line     int
	function string
	source   string
}

// pythonTraceback renders an exception as traceback.format_exc does.
func pythonTraceback(message, exception string, frames ...frame) string {
	text := "Traceback (most recent call last):\n"
	for _, f := range frames {
		file := f.file
		if file[0] != '/' {
			file = "/app/agenta_backend/" + file
		}
		text += fmt.Sprintf("  File %q, line %d, in %s\n    %s\n", file, f.line, f.function, f.source)
	}
	return text + exception + ": " + message + "\n"
}

// pythonTypeName is the name Python gives the type of a JSON value.
func pythonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case string:
		return "str"
	case bool:
		return "bool"
	case map[string]any, object:
		return "dict"
	case []any:
		return "list"
	}
	return "float"
}
