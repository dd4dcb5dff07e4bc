package agentatest

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agenta-go/agenta/models"
)

// Application is the code behind a base, run on every test-set row during
// an evaluation in place of the real deployed application. It gets the
// variant's parameters and the row's inputs (the columns the variant reads)
// and returns the answer; an error becomes an error output for the row, as
// a failing application does on the service. It must be deterministic for
// tests to be, and safe for concurrent use.
type Application func(parameters map[string]any, inputs map[string]string) (string, error)

// templateKeys are the parameters TemplateApplication reads its template
// from, in order of preference.
var templateKeys = []string{"prompt_user", "prompt_template", "prompt", "template"}

var placeholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// TemplateApplication is the Application of a base that has none: it
// answers with the variant's prompt template (the parameter prompt_user,
// prompt_template, prompt or template) with each {input} replaced by the
// row's value, so that a variant whose template is "{country}" echoes its
// input and two templates give two different answers. Without a template
// it answers the input values joined by spaces, in name order.
func TemplateApplication(parameters map[string]any, inputs map[string]string) (string, error) {
	if tmpl, ok := promptTemplate(parameters); ok {
		return renderTemplate(tmpl, inputs), nil
	}
	names := make([]string, 0, len(inputs))
	for name := range inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	values := make([]string, len(names))
	for i, name := range names {
		values[i] = inputs[name]
	}
	return strings.Join(values, " "), nil
}

func promptTemplate(parameters map[string]any) (string, bool) {
	for _, key := range templateKeys {
		if s, ok := parameters[key].(string); ok {
			return s, true
		}
	}
	return "", false
}

func renderTemplate(tmpl string, inputs map[string]string) string {
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		if v, ok := inputs[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// inputNames returns the inputs a variant reads: parameters["inputs"] as the
// service's templates declare them ([{"name": "country"}, ...]), or else the
// placeholders of its prompts, or else every column but the answer column.
func inputNames(parameters map[string]any, rows []map[string]string, answerColumn string) []string {
	var names []string
	seen := map[string]bool{}
	addName := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if list, ok := parameters["inputs"].([]any); ok {
		for _, item := range list {
			switch t := item.(type) {
			case map[string]any:
				if n, ok := t["name"].(string); ok {
					addName(n)
				}
			case string:
				addName(t)
			}
		}
		return names
	}
	for _, key := range append([]string{"prompt_system"}, templateKeys...) {
		if s, ok := parameters[key].(string); ok {
			for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
				addName(m[1])
			}
		}
	}
	if len(names) > 0 || len(rows) == 0 {
		return names
	}
	for col := range rows[0] {
		if col != answerColumn {
			names = append(names, col)
		}
	}
	sort.Strings(names)
	return names
}

// --- Cost and latency ---

// modelPrices are USD per million prompt and completion tokens.
var modelPrices = map[string][2]float64{
	"gpt-3.5-turbo": {0.5, 1.5},
	"gpt-4":         {30, 60},
	"gpt-4-turbo":   {10, 30},
	"gpt-4o":        {2.5, 10},
	"gpt-4o-mini":   {0.15, 0.6},
}

// modelLatency is a model's fixed latency in seconds.
var modelLatency = map[string]float64{
	"gpt-3.5-turbo": 0.45,
	"gpt-4":         1.6,
	"gpt-4-turbo":   0.9,
	"gpt-4o":        0.8,
	"gpt-4o-mini":   0.35,
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
	price, ok := modelPrices[model]
	if !ok {
		price = [2]float64{1, 2}
	}
	base, ok := modelLatency[model]
	if !ok {
		base = 0.5
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(output))
	cost = (float64(pt)*price[0] + float64(ct)*price[1]) / 1e6
	latency = base + 0.012*float64(ct) + 0.002*float64(pt) + float64(h.Sum32()%50)/1000
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

// --- Evaluators ---

// SupportedEvaluators lists the evaluator keys the Server computes for
// real. Any other key gives each scenario an error Result, as an evaluator
// that fails does on the service.
func SupportedEvaluators() []string {
	return []string{
		"auto_exact_match", "auto_contains", "auto_contains_any", "auto_contains_all",
		"auto_starts_with", "auto_ends_with", "auto_regex_test", "auto_levenshtein_distance",
		"auto_similarity_match", "auto_contains_json",
	}
}

// knownEvaluators are the service's evaluator keys; the ones the fake cannot
// run (they call an LLM, a webhook or user code) fail with an explanation.
var knownEvaluators = map[string]bool{
	"auto_exact_match": true, "auto_contains_json": true, "auto_similarity_match": true,
	"auto_regex_test": true, "field_match_test": true, "auto_ai_critique": true,
	"auto_custom_code_run": true, "auto_webhook_test": true, "human_a_b_testing": true,
	"human_single_model_test": true, "auto_starts_with": true, "auto_ends_with": true,
	"auto_contains": true, "auto_contains_any": true, "auto_contains_all": true,
	"auto_levenshtein_distance": true, "auto_json_diff": true, "auto_semantic_similarity": true,
	"rag_faithfulness": true, "rag_context_relevancy": true,
}

// evaluate runs one evaluator on one output, reading settings_values as the
// service's evaluators do.
func evaluate(key string, settings map[string]any, output string, row map[string]string, answerColumn string) result {
	correct := func() (string, *result) {
		col := answerColumn
		if k, ok := settings["correct_answer_key"].(string); ok {
			col = k
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
		// The service really reports this one with type "text".
		return result{Type: "text", Value: strings.HasPrefix(out, n[0])}
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
			threshold, _ := raw.(float64)
			// The service reports the verdict with type "number".
			return result{Type: "number", Value: float64(d) <= threshold}
		}
		return result{Type: "number", Value: d}
	case "auto_similarity_match":
		want, failed := correct()
		if failed != nil {
			return *failed
		}
		threshold, ok := settings["similarity_threshold"].(float64)
		if !ok {
			return errorResult("Error during Auto Similarity Match evaluation", "KeyError: 'similarity_threshold'")
		}
		return result{Type: "bool", Value: jaccard(output, want) > threshold}
	case "auto_contains_json":
		start, end := strings.Index(output, "{"), strings.LastIndex(output, "}")
		ok := start >= 0 && end > start && json.Valid([]byte(output[start:end+1]))
		return result{Type: "bool", Value: ok}
	}
	if knownEvaluators[key] {
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

// --- Evaluation runs ---

// evaluationRun is one evaluation: one variant against one test set.
type evaluationRun struct {
	id, appID              string
	variantID, variantName string
	revisionID             string
	revision               int
	parameters             map[string]any
	application            Application
	testsetID, testsetName string
	rows                   []map[string]string
	inputs                 []string
	evaluators             []*evaluatorRecord
	answerColumn           string
	created, updated       time.Time
	status                 string
	failure                string // why the run failed, when it did
	slots                  []*scenarioRecord
	claimed, completed     int
	aggregated             []aggregate
	done                   chan struct{}
}

type scenarioRecord struct {
	id      string
	inputs  []string // values, in the order of run.inputs
	output  result
	cost    *float64
	latency *float64
	answer  *string
	results []result // in the order of run.evaluators
}

type aggregate struct {
	evaluator *evaluatorRecord
	result    result
}

// runRow computes one scenario. It reads only what the run owns, so it
// needs no lock.
func (run *evaluationRun) runRow(i int) *scenarioRecord {
	row := run.rows[i]
	inputs := make(map[string]string, len(run.inputs))
	sc := &scenarioRecord{}
	for _, name := range run.inputs {
		inputs[name] = row[name]
		sc.inputs = append(sc.inputs, row[name])
	}
	if a, ok := row[run.answerColumn]; ok {
		sc.answer = &a
	}
	output, err := callApplication(run.application, run.parameters, inputs)
	if err != nil {
		sc.output = errorResult(err.Error(), "")
		for range run.evaluators {
			sc.results = append(sc.results, errorResult("Error during evaluation: the application failed: "+err.Error(), ""))
		}
		return sc
	}
	cost, latency := usage(run.parameters, inputs, output)
	sc.output, sc.cost, sc.latency = result{Type: "text", Value: output}, &cost, &latency
	for _, e := range run.evaluators {
		sc.results = append(sc.results, evaluate(e.key, e.settings, output, row, run.answerColumn))
	}
	return sc
}

// callApplication runs an Application, turning a panic into an error.
func callApplication(app Application, parameters map[string]any, inputs map[string]string) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("application panicked: %v", p)
		}
	}()
	params, _ := copyParameters(parameters)
	return app(params, inputs)
}

// claimRow reserves the next row of a run; it reports false when none is
// left. Callers hold s.mu.
func (run *evaluationRun) claimRow() (int, bool) {
	if run.status != models.EvaluationStarted || run.claimed >= len(run.rows) {
		return 0, false
	}
	run.claimed++
	return run.claimed - 1, true
}

// completeRow stores a computed scenario and finishes the run after its
// last row. Callers hold s.mu.
func (s *Server) completeRow(run *evaluationRun, i int, sc *scenarioRecord) {
	sc.id = s.newID()
	run.slots[i] = sc
	run.completed++
	run.updated = s.clock()
	if run.completed == len(run.rows) {
		s.finish(run)
	}
}

// finish sets a run's final status and aggregates. Callers hold s.mu.
func (s *Server) finish(run *evaluationRun) {
	if run.failure != "" {
		run.status = models.EvaluationFailed
	} else {
		run.status = models.EvaluationFinished
		for _, sc := range run.slots {
			if sc.output.failed() {
				run.status = models.EvaluationFinishedWithErrors
			}
			for _, r := range sc.results {
				if r.failed() {
					run.status = models.EvaluationFinishedWithErrors
				}
			}
		}
		for i, e := range run.evaluators {
			run.aggregated = append(run.aggregated, aggregate{evaluator: e, result: aggregateResults(run.slots, i)})
		}
	}
	run.updated = s.clock()
	close(run.done)
}

// aggregateResults averages one evaluator's verdicts: booleans as the share
// of true, numbers as their mean.
func aggregateResults(slots []*scenarioRecord, i int) result {
	sum, n := 0.0, 0
	for _, sc := range slots {
		if i >= len(sc.results) || sc.results[i].failed() {
			continue
		}
		switch v := sc.results[i].Value.(type) {
		case bool:
			if v {
				sum++
			}
			n++
		case int:
			sum += float64(v)
			n++
		case float64:
			sum += v
			n++
		}
	}
	if n == 0 {
		return errorResult("Failed to compute the average score", "no scenario has a usable result")
	}
	return result{Type: "number", Value: round(sum/float64(n), 5)}
}

// start runs or schedules a new run according to the Server's mode.
// Callers hold s.mu; in synchronous mode it releases it while computing.
func (s *Server) start(run *evaluationRun) {
	if run.status != models.EvaluationStarted {
		return
	}
	if run.failure != "" || len(run.rows) == 0 {
		s.finish(run)
		return
	}
	switch s.mode {
	case runSync:
		run.claimed = len(run.rows)
		computed := make([]*scenarioRecord, len(run.rows))
		func() {
			s.mu.Unlock()
			defer s.mu.Lock() // even if a row panics, so the caller's unlock holds
			for i := range run.rows {
				computed[i] = run.runRow(i)
			}
		}()
		for i, sc := range computed {
			s.completeRow(run, i, sc)
		}
	case runPaced:
		s.runners.Add(1)
		go s.pace1(run)
	}
}

// pace1 fills in a run's scenarios in the background, one per pace.
func (s *Server) pace1(run *evaluationRun) {
	defer s.runners.Done()
	t := time.NewTimer(s.pace)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
		}
		s.mu.Lock()
		i, ok := run.claimRow()
		s.mu.Unlock()
		if !ok {
			return
		}
		sc := run.runRow(i)
		s.mu.Lock()
		s.completeRow(run, i, sc)
		s.mu.Unlock()
		t.Reset(s.pace)
	}
}

// AdvanceEvaluations fills in up to n pending scenarios, oldest evaluation
// first, and returns how many it filled. It is how a test drives
// evaluations under WithManualEvaluations; in the other modes it finishes
// rows not yet run.
func (s *Server) AdvanceEvaluations(n int) int {
	ran := 0
	for ran < n {
		s.mu.Lock()
		var run *evaluationRun
		var i int
		for _, id := range s.evalOrder {
			r := s.evaluations[id]
			if idx, ok := r.claimRow(); ok {
				run, i = r, idx
				break
			}
		}
		s.mu.Unlock()
		if run == nil {
			break
		}
		sc := run.runRow(i)
		s.mu.Lock()
		s.completeRow(run, i, sc)
		s.mu.Unlock()
		ran++
	}
	return ran
}

// WaitEvaluations blocks until every evaluation created so far has
// finished, or ctx ends. Under WithEvaluationPace it waits for the
// background runs; under WithManualEvaluations only AdvanceEvaluations
// makes progress.
func (s *Server) WaitEvaluations(ctx context.Context) error {
	s.mu.Lock()
	var pending []chan struct{}
	for _, run := range s.evaluations {
		pending = append(pending, run.done)
	}
	s.mu.Unlock()
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing:
			return fmt.Errorf("agentatest: server closed")
		}
	}
	return nil
}

// Evaluation returns an evaluation's current state, as the service stores
// it: its status, and once finished its aggregated results, costs and
// latency. No operation of the SDK reads these; tests can.
func (s *Server) Evaluation(id string) (models.Evaluation, bool) {
	s.mu.Lock()
	run, ok := s.evaluations[id]
	var w object
	if ok {
		w = s.evaluationWire(run, false)
	}
	s.mu.Unlock()
	if !ok {
		return models.Evaluation{}, false
	}
	var ev models.Evaluation
	data, err := json.Marshal(w)
	if err == nil {
		err = json.Unmarshal(data, &ev)
	}
	return ev, err == nil
}

// EvaluationIDs returns the ids of every evaluation created, oldest first.
func (s *Server) EvaluationIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.evalOrder...)
}

// evaluationWire renders an evaluation. fresh gives created objects'
// zoned timestamps. Callers hold s.mu.
func (s *Server) evaluationWire(run *evaluationRun, fresh bool) object {
	ts := naiveTime
	if fresh {
		ts = zonedTime
	}
	aggregated := []any{}
	var avgCost, totalCost, avgLatency any
	if run.status == models.EvaluationFinished || run.status == models.EvaluationFinishedWithErrors {
		for _, a := range run.aggregated {
			aggregated = append(aggregated, object{{"evaluator_config", a.evaluator.wire()}, {"result", a.result.wire()}})
		}
		var costs, latencies []float64
		for _, sc := range run.slots {
			if sc.cost != nil {
				costs = append(costs, *sc.cost)
			}
			if sc.latency != nil {
				latencies = append(latencies, *sc.latency)
			}
		}
		if len(costs) > 0 {
			total := sum(costs)
			totalCost = result{Type: "cost", Value: round(total, 10)}.wire()
			avgCost = result{Type: "cost", Value: round(total/float64(len(costs)), 10)}.wire()
		}
		if len(latencies) > 0 {
			avgLatency = result{Type: "latency", Value: round(sum(latencies)/float64(len(latencies)), 4)}.wire()
		}
	}
	status := s.statusResult(run)
	return object{
		{"id", run.id},
		{"app_id", run.appID},
		{"user_id", s.user.ID},
		{"user_username", s.user.Username},
		{"variant_ids", []string{run.variantID}},
		{"variant_names", []string{run.variantName}},
		{"variant_revision_ids", []string{run.revisionID}},
		{"revisions", []string{revisionString(run.revision)}},
		{"testset_id", nullable(run.testsetID)},
		{"testset_name", nullable(run.testsetName)},
		{"status", status.wire()},
		{"aggregated_results", aggregated},
		{"average_cost", avgCost},
		{"total_cost", totalCost},
		{"average_latency", avgLatency},
		{"created_at", ts(run.created)},
		{"updated_at", ts(run.updated)},
	}
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// statusResult is a run's status as the service stores it: a Result of
// type status, carrying the error of a failed run. Callers hold s.mu.
func (s *Server) statusResult(run *evaluationRun) result {
	status := result{Type: "status", Value: run.status}
	if run.failure != "" {
		status.Err = &resultError{Message: run.failure}
	}
	return status
}

// scenarioWire renders a scenario. Callers hold s.mu.
func (s *Server) scenarioWire(run *evaluationRun, sc *scenarioRecord) object {
	inputs := make([]any, len(run.inputs))
	for i, name := range run.inputs {
		inputs[i] = object{{"name", name}, {"type", "text"}, {"value", sc.inputs[i]}}
	}
	var cost, latency any
	if sc.cost != nil {
		cost = *sc.cost
	}
	if sc.latency != nil {
		latency = *sc.latency
	}
	results := make([]any, len(sc.results))
	for i, r := range sc.results {
		results[i] = object{{"evaluator_config", run.evaluators[i].id}, {"result", r.wire()}}
	}
	o := object{
		{"id", sc.id},
		{"evaluation_id", run.id},
		{"inputs", inputs},
		{"outputs", []any{object{{"result", sc.output.wire()}, {"cost", cost}, {"latency", latency}}}},
		{"evaluation", nil},
	}
	if s.correctAnswers {
		answers := []any{}
		if sc.answer != nil {
			answers = append(answers, object{{"key", run.answerColumn}, {"value", *sc.answer}})
		}
		o = append(o, field{"correct_answers", answers})
	} else {
		var answer any
		if sc.answer != nil {
			answer = *sc.answer
		}
		o = append(o, field{"correct_answer", answer})
	}
	return append(o,
		field{"is_pinned", false},
		field{"note", ""},
		field{"results", results},
	)
}
