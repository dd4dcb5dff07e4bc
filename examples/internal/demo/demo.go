// Package demo is the plumbing the example programs share, kept out of them
// so that each shows the SDK calls it is about: which server to talk to (the
// one in AGENTA_HOST, or an embedded agentatest fake loaded with the demo
// data), the evaluators named by an -evaluators flag, and how a scenario's
// inputs, answer and expected answer read when printed.
//
// It is internal to the examples. Copying an example out of this module,
// replace Connect with your server's URL and API key.
package demo

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// Target is the server an example talks to.
type Target struct {
	// URL is the base URL to give agenta.NewClient: AGENTA_HOST, with /api
	// appended when it lacks it, or the embedded server's URL.
	URL string
	// APIKey is AGENTA_API_KEY against AGENTA_HOST; empty for the embedded
	// server, which wants none.
	APIKey string
	// Demo holds the ids of the demo data on the embedded server. It is nil
	// against AGENTA_HOST, where the example's flags name the objects.
	Demo *agentatest.Demo

	close func()
}

// Connect returns the server in AGENTA_HOST when that is set, doing no I/O.
// Otherwise it starts an embedded agentatest server with opts and loads the
// demo data (agentatest.SeedDemo) into it. Call Close when done.
func Connect(opts ...agentatest.Option) *Target {
	if host := os.Getenv("AGENTA_HOST"); host != "" {
		return &Target{URL: APIURL(host), APIKey: os.Getenv("AGENTA_API_KEY"), close: func() {}}
	}
	srv := agentatest.NewServer(opts...)
	d := agentatest.SeedDemo(srv)
	return &Target{URL: srv.URL(), Demo: &d, close: srv.Close}
}

// Close stops the embedded server, if there is one.
func (t *Target) Close() { t.close() }

// UniqueName returns name on the embedded server, which starts out empty on
// every run, and name-<Unix time> against AGENTA_HOST, where an earlier run
// may have taken name already.
func (t *Target) UniqueName(name string) string {
	if t.Demo != nil {
		return name
	}
	return fmt.Sprintf("%s-%d", name, time.Now().Unix())
}

// APIURL turns AGENTA_HOST, with or without its /api suffix, into the base
// URL the client needs.
func APIURL(host string) string {
	host = strings.TrimRight(host, "/")
	if strings.HasSuffix(host, "/api") {
		return host
	}
	return host + "/api"
}

// Evaluator is an evaluator config's id and the name to print for it.
type Evaluator struct{ Name, ID string }

// Evaluators returns the demo data's evaluator configs that the fake runs:
// exact match, edit distance and terse answer.
func Evaluators(d agentatest.Demo) []Evaluator {
	return []Evaluator{
		{"Exact match", d.ExactMatchID}, {"Edit distance", d.EditDistanceID}, {"Terse answer", d.TerseAnswerID},
	}
}

// ParseEvaluators reads an -evaluators flag: evaluator config ids,
// comma-separated, each optionally as name=id. An id without a name is its
// own name.
func ParseEvaluators(s string) []Evaluator {
	var out []Evaluator
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, id, ok := strings.Cut(part, "=")
		if !ok {
			name, id = part, part
		}
		out = append(out, Evaluator{Name: name, ID: id})
	}
	return out
}

// IDs returns the evaluators' config ids, in order, as
// models.NewEvaluation.EvaluatorConfigIDs wants them.
func IDs(evaluators []Evaluator) []string {
	ids := make([]string, len(evaluators))
	for i, e := range evaluators {
		ids[i] = e.ID
	}
	return ids
}

// Inputs returns a scenario's input values, comma-separated.
func Inputs(sc models.EvaluationScenario) string {
	var parts []string
	for _, in := range sc.Inputs {
		var v any
		_ = json.Unmarshal(in.Value, &v)
		parts = append(parts, fmt.Sprint(v))
	}
	return strings.Join(parts, ", ")
}

// Answer returns what the variant answered in a scenario, or "" when it has
// no output yet.
func Answer(sc models.EvaluationScenario) string {
	if len(sc.Outputs) == 0 {
		return ""
	}
	return sc.Outputs[0].Result.String()
}

// Expected returns a scenario's correct answer from either field servers
// use: correct_answer, or the newer correct_answers.
func Expected(sc models.EvaluationScenario) string {
	if sc.CorrectAnswer != "" || len(sc.CorrectAnswers) == 0 {
		return sc.CorrectAnswer
	}
	return sc.CorrectAnswers[0].Value
}
