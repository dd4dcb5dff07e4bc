package agentatest

import (
	"hash/fnv"
	"math"
	"strings"
)

// The cost model: a deterministic stand-in for what a call to a model costs
// and how long it takes, so that variants differ in cost and latency.

// modelRates are a model's prices, in USD per million prompt and
// completion tokens, and its fixed latency in seconds.
var modelRates = map[string]struct{ prompt, completion, latency float64 }{
	"gpt-3.5-turbo": {0.5, 1.5, 0.45},
	"gpt-4":         {30, 60, 1.6},
	"gpt-4-turbo":   {10, 30, 0.9},
	"gpt-4o":        {2.5, 10, 0.8},
	"gpt-4o-mini":   {0.15, 0.6, 0.35},
}

// usage estimates what a call would cost and how long it would take, from
// the model parameter and the length of the prompt and answer: a
// deterministic stand-in that lets variants differ in cost and latency.
func usage(parameters map[string]any, inputs map[string]string, output string) (cost, latency float64) {
	model, _ := parameters["model"].(string)
	prompt, _ := parameters["prompt_system"].(string)
	if tmpl, ok := promptTemplate(parameters); ok {
		prompt += " " + renderTemplate(tmpl, inputs)
	}
	pt, ct := tokens(prompt), tokens(output)
	rate, ok := modelRates[model]
	if !ok {
		rate.prompt, rate.completion, rate.latency = 1, 2, 0.5
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(output))
	cost = (float64(pt)*rate.prompt + float64(ct)*rate.completion) / 1e6
	latency = rate.latency + 0.012*float64(ct) + 0.002*float64(pt) + float64(h.Sum32()%50)/1000
	return round(cost, 10), round(latency, 4)
}

// tokens approximates a tokenizer: about four tokens per three words.
func tokens(s string) int {
	return (len(strings.Fields(s))*4 + 2) / 3
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
