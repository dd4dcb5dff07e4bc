package agentatest

import (
	"fmt"
	"strings"
	"time"

	"github.com/agenta-go/agenta/models"
)

// Demo holds the ids of the demo data SeedDemo loads: "capitals", an app
// that names the capital of a country. It is an app of the cloud service,
// where the span operation exists: its variants carry organization_id,
// workspace_id and previous_variant_name, which a self-hosted server does
// not send (an app seeded without an organization shows that).
type Demo struct {
	UserID string
	AppID  string
	BaseID string
	// VariantID is capitals.default: terse answers from gpt-3.5-turbo at
	// temperature 0.7, deployed to production and development.
	VariantID string
	// VerboseVariantID is capitals.verbose: full sentences from gpt-4o,
	// deployed to staging.
	VerboseVariantID string
	// TestsetID is the test set "capitals": eight countries, with the
	// capital in the correct_answer column. TestsetRows is its row count,
	// the number of scenarios of each evaluation against it.
	TestsetID   string
	TestsetRows int
	// The evaluator configs: exact match, Levenshtein distance, and a regex
	// test that the answer is not a sentence.
	ExactMatchID, EditDistanceID, TerseAnswerID string
	// AICritiqueID is an auto_ai_critique config, which the fake cannot
	// run: it needs lm_providers_keys and its results are errors.
	AICritiqueID string
	// HumanEvaluationIDs are the app's two human evaluations.
	HumanEvaluationIDs []string
	// TraceID and SpanID identify a trace of one call to the app; SpanID is
	// its root span, with five descendants.
	TraceID, SpanID string
}

// VariantIDs returns the demo's variants, the one deployed to production
// first: capitals.default, then capitals.verbose.
func (d Demo) VariantIDs() []string {
	return []string{d.VariantID, d.VerboseVariantID}
}

// EvaluatorConfigIDs returns the evaluator configs the fake runs for real:
// exact match, edit distance and terse answer.
func (d Demo) EvaluatorConfigIDs() []string {
	return []string{d.ExactMatchID, d.EditDistanceID, d.TerseAnswerID}
}

// demoID makes the fixed ids of the demo data: UUIDv7 values of the time
// the demo was stored, marked so that no generated id can equal one, or
// under WithOlderServer ObjectIds marked the same way.
func (s *Server) demoID(n int) string {
	if s.older {
		return objectID(demoTime, demoObjectMark, uint64(n))
	}
	return uuid7(demoTime, demoMark, uint64(n))
}

// demoTime is when the demo data was stored.
var demoTime = time.Date(2024, 6, 26, 12, 22, 31, 775000000, time.UTC)

// demoCapitals is what the demo app knows: each country's capital, the city
// a careless model names instead, and how easily it gets confused.
var demoCapitals = []struct {
	country, capital, confusion string
	difficulty                  float64
}{
	{"France", "Paris", "Marseille", 0.0},
	{"Japan", "Tokyo", "Osaka", 0.1},
	{"Brazil", "Brasília", "São Paulo", 0.5},
	{"Australia", "Canberra", "Sydney", 0.7},
	{"Canada", "Ottawa", "Toronto", 0.45},
	{"Nigeria", "Abuja", "Lagos", 0.6},
	{"Switzerland", "Bern", "Zurich", 0.65},
	{"Türkiye", "Ankara", "Istanbul", 0.4},
}

// CapitalsApplication is the demo app's Application, a stand-in for an LLM
// that names capitals. It is deterministic: with a high temperature it
// names the largest city instead of the capital of the harder countries
// (gpt-4o gets confused half as easily), and it answers with the city alone
// when prompt_system asks for one word, or a full sentence otherwise.
func CapitalsApplication(parameters map[string]any, inputs map[string]string) (string, error) {
	country := inputs["country"]
	temperature, _ := models.Number(parameters["temperature"])
	model, _ := parameters["model"].(string)
	system, _ := parameters["prompt_system"].(string)
	for _, c := range demoCapitals {
		if !strings.EqualFold(c.country, country) {
			continue
		}
		difficulty := c.difficulty
		if strings.HasPrefix(model, "gpt-4o") && model != "gpt-4o-mini" {
			difficulty /= 2
		}
		city := c.capital
		if difficulty*temperature > 0.4 {
			city = c.confusion
		}
		if strings.Contains(strings.ToLower(system), "one word") {
			return city, nil
		}
		return fmt.Sprintf("The capital of %s is %s.", c.country, city), nil
	}
	if country == "" {
		return "", fmt.Errorf("missing input: country")
	}
	return "I don't know.", nil
}

// SeedDemo loads the demo data into s and returns its ids, which are always
// the same, as are its timestamps, and makes the demo user the Server's
// user. The examples, the documentation's examples and the README all run
// on it. It panics when called twice on one Server.
func SeedDemo(s *Server) Demo {
	d := Demo{
		UserID:           s.demoID(0x0001),
		AppID:            s.demoID(0x0a01),
		BaseID:           s.demoID(0x0b01),
		VariantID:        s.demoID(0x0c01),
		VerboseVariantID: s.demoID(0x0c02),
		TestsetID:        s.demoID(0x0d01),
		TestsetRows:      len(demoCapitals),
		ExactMatchID:     s.demoID(0x0e01),
		EditDistanceID:   s.demoID(0x0e02),
		TerseAnswerID:    s.demoID(0x0e03),
		AICritiqueID:     s.demoID(0x0e04),
		TraceID:          s.demoID(0x4001),
		SpanID:           s.demoID(0x5001),
	}
	s.mu.Lock()
	s.user = User{ID: d.UserID, Username: "demo"}
	s.mu.Unlock()
	s.AddApp(App{ID: d.AppID, Name: "capitals", OrganizationID: s.demoID(0x0002), WorkspaceID: s.demoID(0x0003)})
	s.AddBase(Base{ID: d.BaseID, AppID: d.AppID, Name: "capitals",
		URI: "http://capitals-default.agenta.local", Application: CapitalsApplication})
	inputs := []any{map[string]any{"name": "country"}}
	s.AddVariant(Variant{
		ID: d.VariantID, BaseID: d.BaseID, ConfigName: "default", Revision: 3, UserID: d.UserID,
		Parameters: map[string]any{
			"model":         "gpt-3.5-turbo",
			"temperature":   0.7,
			"max_tokens":    64,
			"prompt_system": "You are an expert in geography. Answer in one word.",
			"prompt_user":   "What is the capital of {country}?",
			"inputs":        inputs,
		},
	})
	s.AddVariant(Variant{
		ID: d.VerboseVariantID, BaseID: d.BaseID, ConfigName: "verbose", UserID: d.UserID,
		PreviousVariantName: "capitals.default",
		Parameters: map[string]any{
			"model":         "gpt-4o",
			"temperature":   0.2,
			"max_tokens":    256,
			"prompt_system": "You are a friendly tour guide.",
			"prompt_user":   "Which city is the capital of {country}?",
			"inputs":        inputs,
		},
	})
	s.DeployToEnvironment(d.VariantID, models.EnvironmentProduction)
	s.DeployToEnvironment(d.VariantID, models.EnvironmentDevelopment)
	s.DeployToEnvironment(d.VerboseVariantID, models.EnvironmentStaging)

	rows := make([]map[string]string, len(demoCapitals))
	for i, c := range demoCapitals {
		rows[i] = map[string]string{"country": c.country, "correct_answer": c.capital}
	}
	s.AddTestset(Testset{ID: d.TestsetID, AppID: d.AppID, Name: "capitals", Rows: rows})

	stored := models.Timestamp{Time: demoTime}
	for _, c := range []models.EvaluatorConfig{
		{ID: d.ExactMatchID, Name: "Exact match", EvaluatorKey: "auto_exact_match",
			SettingsValues: map[string]any{"correct_answer_key": "correct_answer"}},
		{ID: d.EditDistanceID, Name: "Edit distance", EvaluatorKey: "auto_levenshtein_distance",
			SettingsValues: map[string]any{"correct_answer_key": "correct_answer"}},
		{ID: d.TerseAnswerID, Name: "Terse answer", EvaluatorKey: "auto_regex_test",
			SettingsValues: map[string]any{"regex_pattern": `^[^.!?]+$`, "regex_should_match": true}},
		{ID: d.AICritiqueID, Name: "AI critique", EvaluatorKey: "auto_ai_critique",
			SettingsValues: map[string]any{
				"correct_answer_key": "correct_answer",
				"prompt_template":    "Rate the answer from 0 to 10 against the correct answer.",
			}},
	} {
		c.CreatedAt, c.UpdatedAt = stored, stored
		s.AddEvaluatorConfig(c)
	}

	s.mu.Lock()
	defaultRev := s.variants[d.VariantID].revisionIDs[3]
	verboseRev := s.variants[d.VerboseVariantID].revisionIDs[1]
	s.mu.Unlock()
	d.HumanEvaluationIDs = []string{s.demoID(0x0f01), s.demoID(0x0f02)}
	s.AddHumanEvaluation(models.HumanEvaluation{
		ID: d.HumanEvaluationIDs[0], AppID: d.AppID, UserID: d.UserID, UserUsername: "demo",
		EvaluationType:      models.HumanEvaluationABTesting,
		VariantIDs:          []string{d.VariantID, d.VerboseVariantID},
		VariantNames:        []string{"capitals.default", "capitals.verbose"},
		VariantsRevisionIDs: []string{defaultRev, verboseRev},
		Revisions:           []string{"3", "1"},
		TestsetID:           d.TestsetID, TestsetName: "capitals",
		Status:    models.EvaluationFinished,
		CreatedAt: models.Timestamp{Time: time.Date(2024, 6, 20, 9, 15, 2, 512000000, time.UTC)},
		UpdatedAt: models.Timestamp{Time: time.Date(2024, 6, 20, 10, 2, 45, 100000000, time.UTC)},
	})
	s.AddHumanEvaluation(models.HumanEvaluation{
		ID: d.HumanEvaluationIDs[1], AppID: d.AppID, UserID: d.UserID, UserUsername: "demo",
		EvaluationType:      models.HumanEvaluationSingleModelTest,
		VariantIDs:          []string{d.VariantID},
		VariantNames:        []string{"capitals.default"},
		VariantsRevisionIDs: []string{defaultRev},
		Revisions:           []string{"3"},
		TestsetID:           d.TestsetID, TestsetName: "capitals",
		Status: models.EvaluationStarted,
		// Whole seconds: Python writes these without a fraction.
		CreatedAt: models.Timestamp{Time: time.Date(2024, 6, 25, 16, 40, 11, 0, time.UTC)},
		UpdatedAt: models.Timestamp{Time: time.Date(2024, 6, 25, 16, 40, 11, 0, time.UTC)},
	})

	s.AddTrace(demoTrace(d, s.demoID))
	return d
}

// demoTrace is one call to capitals.default in production, as a span tree.
func demoTrace(d Demo, demoID func(int) string) models.Span {
	at := func(ms int) models.Timestamp {
		return models.Timestamp{Time: demoTime.Add(time.Duration(ms) * time.Millisecond)}
	}
	variant := models.SpanVariant{VariantID: d.VariantID, VariantName: "capitals.default", Revision: 3}
	meta := func(cost any, latency float64, usage map[string]any) map[string]any {
		return map[string]any{"cost": cost, "latency": latency, "usage": usage}
	}
	span := func(id int, name string, kind models.SpanKind, status models.SpanStatus, ms int, m map[string]any, content map[string]any, children ...models.Span) models.Span {
		return models.Span{
			ID: demoID(id), Name: name, CreatedAt: at(ms), Variant: variant,
			Environment: models.EnvironmentProduction, SpanKind: kind, Status: status,
			Metadata: m, Content: content, Children: children,
		}
	}
	tokens := map[string]any{"prompt_tokens": 31, "completion_tokens": 2, "total_tokens": 33}
	root := span(0x5001, "capitals", models.SpanKindWorkflow, models.SpanStatusOK, 0,
		meta(0.0000185, 1.2345, tokens),
		map[string]any{
			"inputs":    map[string]any{"country": "Australia"},
			"internals": map[string]any{},
			"outputs":   map[string]any{"answer": "Sydney"},
		},
		span(0x5002, "lookup_country", models.SpanKindRetriever, models.SpanStatusOK, 3,
			meta(nil, 0.081, nil),
			map[string]any{"inputs": map[string]any{"query": "Australia"},
				"outputs": map[string]any{"documents": []any{"Australia: federal parliamentary democracy; largest city Sydney."}}}),
		span(0x5003, "format_prompt", models.SpanKindChain, models.SpanStatusOK, 85,
			meta(nil, 0.0021, nil),
			map[string]any{"inputs": map[string]any{"country": "Australia"},
				"outputs": map[string]any{"prompt": "What is the capital of Australia?"}},
			span(0x5004, "render_template", models.SpanKindTool, models.SpanStatusOK, 86,
				meta(nil, 0.0008, nil),
				map[string]any{"inputs": map[string]any{"template": "What is the capital of {country}?"},
					"outputs": map[string]any{"text": "What is the capital of Australia?"}})),
		span(0x5005, "openai.chat.completions", models.SpanKindLLM, models.SpanStatusOK, 88,
			meta(0.0000185, 1.1023, tokens),
			map[string]any{"inputs": map[string]any{"messages": []any{
				map[string]any{"role": "system", "content": "You are an expert in geography. Answer in one word."},
				map[string]any{"role": "user", "content": "What is the capital of Australia?"}}},
				"outputs": map[string]any{"completion": "Sydney"}}),
		span(0x5006, "cache_write", models.SpanKindTool, models.SpanStatusError, 1191,
			meta(nil, 0.0043, nil),
			map[string]any{"inputs": map[string]any{"key": "capital:australia"},
				"outputs": map[string]any{"error": "redis: connection refused"}}),
	)
	root.TraceID = d.TraceID
	root.Config = map[string]any{"model": "gpt-3.5-turbo", "temperature": 0.7, "max_tokens": 64}
	return root
}
