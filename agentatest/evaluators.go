package agentatest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// SupportedEvaluators lists the evaluator keys the Server computes for
// real. Any other key gives each scenario an error Result, as an evaluator
// that fails does on the service.
func SupportedEvaluators() []string {
	return []string{
		"auto_exact_match", "auto_contains", "auto_contains_any", "auto_contains_all",
		"auto_starts_with", "auto_ends_with", "auto_regex_test", "auto_levenshtein_distance",
		"auto_similarity_match", "auto_contains_json", "field_match_test",
	}
}

// unrunEvaluators are the service's evaluator keys that the fake cannot
// run (they call an LLM, a webhook or user code, or ask a person): they
// fail with an explanation. The service's other keys are SupportedEvaluators.
var unrunEvaluators = []string{
	"auto_ai_critique", "auto_custom_code_run", "auto_webhook_test", "human_a_b_testing", "human_single_model_test",
	"auto_json_diff", "auto_semantic_similarity", "rag_faithfulness", "rag_context_relevancy",
}

// evaluate runs one evaluator on one output, reading settings_values as the
// service's evaluators do.
func evaluate(key string, settings map[string]any, output string, row map[string]string) result {
	correct := func() (string, *result) {
		col, ok := settings["correct_answer_key"].(string)
		if !ok {
			r := errorResult("No correct answer keys provided.", "")
			return "", &r
		}
		v, ok := row[col]
		if !ok {
			r := errorResult(fmt.Sprintf("Correct answer column '%s' not found in the test set.", col), "")
			return "", &r
		}
		return v, nil
	}
	text := func(name string) string {
		s, _ := settings[name].(string)
		return s
	}
	caseSensitive := func() bool {
		b, ok := settings["case_sensitive"].(bool)
		return !ok || b
	}
	fold := func(out string, needles ...string) (string, []string) {
		if caseSensitive() {
			return out, needles
		}
		for i := range needles {
			needles[i] = strings.ToLower(needles[i])
		}
		return strings.ToLower(out), needles
	}
	substrings := func() []string {
		var out []string
		for _, part := range strings.Split(text("substrings"), ",") {
			out = append(out, strings.TrimSpace(part))
		}
		return out
	}

	switch key {
	case "auto_exact_match":
		want, failed := correct()
		if failed != nil {
			return *failed
		}
		return result{Type: "bool", Value: output == want}
	case "auto_contains":
		out, n := fold(output, text("substring"))
		return result{Type: "bool", Value: strings.Contains(out, n[0])}
	case "auto_contains_any", "auto_contains_all":
		out, n := fold(output, substrings()...)
		some, all := false, true
		for _, sub := range n {
			in := strings.Contains(out, sub)
			some, all = some || in, all && in
		}
		if key == "auto_contains_any" {
			return result{Type: "bool", Value: some}
		}
		return result{Type: "bool", Value: all}
	case "auto_starts_with":
		out, n := fold(output, text("prefix"))
		return result{Type: "bool", Value: strings.HasPrefix(out, n[0])}
	case "auto_ends_with":
		out, n := fold(output, text("suffix"))
		return result{Type: "bool", Value: strings.HasSuffix(out, n[0])}
	case "auto_regex_test":
		pattern, okP := settings["regex_pattern"].(string)
		should, okS := settings["regex_should_match"].(bool)
		if !okP || !okS {
			return errorResult("Error during Auto Regex evaluation", "KeyError: settings_values needs regex_pattern and regex_should_match")
		}
		re, err := regexp.Compile("(?i)" + pattern)
		if err != nil {
			return errorResult("Error during Auto Regex evaluation", "re.error: "+err.Error())
		}
		return result{Type: "bool", Value: re.MatchString(output) == should}
	case "auto_levenshtein_distance":
		want, failed := correct()
		if failed != nil {
			return *failed
		}
		if want == "" {
			// The service's implementation fails on an empty answer.
			return errorResult("Error during Levenshtein threshold evaluation", "TypeError: argument of type 'int' is not iterable")
		}
		d := levenshtein(output, want)
		if raw, ok := settings["threshold"]; ok {
			threshold, _ := models.Number(raw)
			return result{Type: "bool", Value: float64(d) <= threshold}
		}
		return result{Type: "number", Value: d}
	case "auto_similarity_match":
		want, failed := correct()
		if failed != nil {
			return *failed
		}
		threshold, ok := models.Number(settings["similarity_threshold"])
		if !ok {
			return errorResult("Error during Auto Similarity Match evaluation", "KeyError: 'similarity_threshold'")
		}
		return result{Type: "bool", Value: jaccard(output, want) > threshold}
	case "field_match_test":
		// The output read as a JSON object: its json_field must equal the
		// expected answer. Any output that is not such an object is false.
		want, failed := correct()
		if failed != nil {
			return *failed
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(output), &doc); err != nil {
			return result{Type: "bool", Value: false}
		}
		got, ok := doc[text("json_field")].(string)
		return result{Type: "bool", Value: ok && got == want}
	case "auto_contains_json":
		start, end := strings.Index(output, "{"), strings.LastIndex(output, "}")
		ok := start >= 0 && end > start && json.Valid([]byte(output[start:end+1]))
		return result{Type: "bool", Value: ok}
	}
	if slices.Contains(unrunEvaluators, key) {
		return errorResult(fmt.Sprintf("Error during %s evaluation", key),
			"agentatest does not run "+key+"; it runs "+strings.Join(SupportedEvaluators(), ", "))
	}
	return errorResult(fmt.Sprintf("Evaluation method '%s' not found.", key), "")
}

// levenshtein is the edit distance between a and b, in characters.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i, ca := range ra {
		cur := make([]int, len(rb)+1)
		cur[0] = i + 1
		for j, cb := range rb {
			cost := 1
			if ca == cb {
				cost = 0
			}
			cur[j+1] = min(prev[j+1]+1, cur[j]+1, prev[j]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// jaccard is the overlap of the two texts' sets of words.
func jaccard(a, b string) float64 {
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(s) {
			m[w] = true
		}
		return m
	}
	sa, sb := set(a), set(b)
	inter, union := 0, len(sb)
	for w := range sa {
		if sb[w] {
			inter++
		} else {
			union++
		}
	}
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}
