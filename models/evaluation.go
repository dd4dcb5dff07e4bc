package models

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// NewEvaluation is the request to start an automatic evaluation: every listed
// variant runs on every row of the test set, and every evaluator config
// scores the outputs.
type NewEvaluation struct {
	AppID      string   `json:"app_id"`
	VariantIDs []string `json:"variant_ids"`
	// EvaluatorConfigIDs are the ids of the evaluator configs to apply. The
	// service calls this field evaluators_configs.
	EvaluatorConfigIDs []string  `json:"evaluators_configs"`
	TestsetID          string    `json:"testset_id"`
	RateLimit          RateLimit `json:"rate_limit"`
	// LMProvidersKeys holds live provider credentials by key name, such as
	// OPENAI_API_KEY; build it with NewProviderKeys. CreateEvaluation sends
	// the values; nothing else can read or print them.
	LMProvidersKeys ProviderKeys `json:"lm_providers_keys,omitzero"`
	// CorrectAnswerColumn is accepted and ignored by the service: evaluators
	// read the column named by their config's
	// settings_values.correct_answer_key instead. It is kept for servers
	// that read it.
	CorrectAnswerColumn string `json:"correct_answer_column,omitempty"`
	// Repeats runs each test case this many times, so that an app that
	// answers differently from call to call shows it: 0 or 1 runs it
	// once, and CreateEvaluation refuses a negative count or one over
	// MaxRepeats. It is never sent as a field of this request: a 2026
	// server runs the repeats itself (data.repeats, the app called once
	// per repeat), and on a mid-2024 server, which has none,
	// CreateEvaluation creates the evaluation this many times (see it).
	Repeats int `json:"-"`
}

// MaxRepeats is the most repeats NewEvaluation.Repeats may ask for: past
// it, a count is more likely a mistake (a row count, a seed) than a plan
// to pay for that many calls of every test case.
const MaxRepeats = 100

// RateLimit paces the service's calls to the application under evaluation.
type RateLimit struct {
	// BatchSize is the number of test-set rows run per batch.
	BatchSize int `json:"batch_size"`
	// MaxRetries is, despite its name, the number of attempts per row: 1
	// calls the app once, and 0 would never call it, every row failing
	// with "Max retries reached" (CreateEvaluation refuses it).
	MaxRetries int `json:"max_retries"`
	// RetryDelay is accepted by the service but has no effect.
	RetryDelay int `json:"retry_delay"`
	// DelayBetweenBatches is the pause, in seconds, between batches.
	DelayBetweenBatches int `json:"delay_between_batches"`
}

// DefaultRateLimit returns the pacing the service's own web UI uses.
func DefaultRateLimit() RateLimit {
	return RateLimit{BatchSize: 10, MaxRetries: 3, RetryDelay: 3, DelayBetweenBatches: 5}
}

// Provider key names the service accepts in NewEvaluation.LMProvidersKeys.
const (
	OpenAIAPIKey       = "OPENAI_API_KEY"
	MistralAPIKey      = "MISTRAL_API_KEY"
	CohereAPIKey       = "COHERE_API_KEY"
	AnthropicAPIKey    = "ANTHROPIC_API_KEY"
	AnyscaleAPIKey     = "ANYSCALE_API_KEY"
	PerplexityAIAPIKey = "PERPLEXITYAI_API_KEY"
	DeepInfraAPIKey    = "DEEPINFRA_API_KEY"
	TogetherAIAPIKey   = "TOGETHERAI_API_KEY"
	AlephAlphaAPIKey   = "ALEPHALPHA_API_KEY"
	OpenRouterAPIKey   = "OPENROUTER_API_KEY"
	GroqAPIKey         = "GROQ_API_KEY"
	GeminiAPIKey       = "GEMINI_API_KEY"
)

// ProviderKeyNames returns every provider key name the service accepts in
// NewEvaluation.LMProvidersKeys, in the order of its enumeration; it
// answers another name with a 422.
func ProviderKeyNames() []string {
	return []string{
		OpenAIAPIKey, MistralAPIKey, CohereAPIKey, AnthropicAPIKey,
		AnyscaleAPIKey, PerplexityAIAPIKey, DeepInfraAPIKey, TogetherAIAPIKey,
		AlephAlphaAPIKey, OpenRouterAPIKey, GroqAPIKey, GeminiAPIKey,
	}
}

// Format prints the request with its provider keys redacted, whatever the
// verb. Without it, fmt would print a nested *NewEvaluation under a verb
// that does not fit a pointer (%s, %t, %q…) through its error path, which
// calls no Format method, and show the keys.
func (e NewEvaluation) Format(f fmt.State, verb rune) {
	// newEvaluationFields has NewEvaluation's fields but not this method:
	// fmt prints them one by one, and ProviderKeys formats itself. (Its
	// values are sealed, so even fmt's error path shows none.)
	type newEvaluationFields NewEvaluation
	out := fmt.Sprintf(fmt.FormatString(f, verb), newEvaluationFields(e))
	if verb == 'v' && f.Flag('#') {
		out = strings.Replace(out, "newEvaluationFields", "NewEvaluation", 1)
	}
	_, _ = io.WriteString(f, out)
}

// LogValue logs the request with its provider keys redacted.
func (e NewEvaluation) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("app_id", e.AppID),
		slog.Any("variant_ids", e.VariantIDs),
		slog.Any("evaluators_configs", e.EvaluatorConfigIDs),
		slog.String("testset_id", e.TestsetID),
		slog.Any("rate_limit", e.RateLimit),
		slog.Any("lm_providers_keys", e.LMProvidersKeys),
		slog.String("correct_answer_column", e.CorrectAnswerColumn),
		slog.Int("repeats", e.Repeats),
	)
}

// Evaluation is one automatic evaluation run: one variant against one test set.
type Evaluation struct {
	// ID is the evaluation's id, the one FetchEvaluationScenarios,
	// FetchEvaluation and WaitEvaluation take.
	ID string `json:"id"`
	// AppID is the application whose variant was evaluated.
	AppID string `json:"app_id"`
	// UserID is who started the run. Servers since September 2024 send
	// project_id instead, and leave it empty.
	UserID string `json:"user_id"`
	// UserUsername is the username of who started the run.
	UserUsername string `json:"user_username"`
	// VariantIDs holds the id of the variant evaluated: one entry, since
	// CreateEvaluation makes one Evaluation per variant.
	VariantIDs []string `json:"variant_ids"`
	// VariantNames holds that variant's name, such as "capitals.default",
	// at the same index.
	VariantNames []string `json:"variant_names"`
	// VariantRevisionIDs holds the id of the variant's revision that was
	// evaluated: the saved configuration itself, which stays the same when
	// the variant later changes. Use it to tell which configuration a
	// result belongs to.
	VariantRevisionIDs []string `json:"variant_revision_ids"`
	// Revisions holds the same revision's number, as a string ("3"), as
	// AppVariantResponse.Revision counts it: for people to read, next to
	// VariantNames. It is not an id.
	Revisions []string `json:"revisions"`
	// TestsetID is the test set whose rows were run; older servers may send
	// null.
	TestsetID string `json:"testset_id,omitempty"`
	// TestsetName is that test set's name.
	TestsetName string `json:"testset_name,omitempty"`
	// Status is a Result of type "status" whose value is one of the
	// Evaluation… constants: EVALUATION_INITIALIZED right after create,
	// EVALUATION_STARTED while running, then FINISHED, FINISHED_WITH_ERRORS,
	// FAILED (with Error.Message "Evaluation Failed") or
	// AGGREGATION_FAILED. With no worker running on the server it stays
	// INITIALIZED, and a failed aggregation can leave it STARTED, so a wait
	// needs a deadline. Terminal, Failed and Running read it.
	Status Result `json:"status"`
	// AggregatedResults holds, once the run has finished, one entry per
	// evaluator config: the unrounded mean of its values over the rows whose
	// app call succeeded (a bool counts 1 or 0), or an error Result when one
	// of those values is an error. A config without such rows has no entry;
	// it is empty while the run goes on.
	AggregatedResults []AggregatedResult `json:"aggregated_results"`
	// AverageCost is the mean cost of the app calls, a Result of type
	// "cost", or an error Result when no row has a cost; nil before the run
	// is over.
	AverageCost *Result `json:"average_cost,omitempty"`
	// TotalCost is the sum of those costs, read as AverageCost is.
	TotalCost *Result `json:"total_cost,omitempty"`
	// AverageLatency is the mean latency of the app calls in seconds, a
	// Result of type "latency", read as AverageCost is.
	AverageLatency *Result `json:"average_latency,omitempty"`
	// CreatedAt is when the run was created.
	CreatedAt Timestamp `json:"created_at"`
	// UpdatedAt is when the run last changed, its status for example.
	UpdatedAt Timestamp `json:"updated_at"`
}

// AggregatedResult is one evaluator config's score over a whole evaluation.
type AggregatedResult struct {
	EvaluatorConfig EvaluatorConfig `json:"evaluator_config"`
	Result          Result          `json:"result"`
}

// EvaluatorConfig is a configured evaluator: an evaluator key such as
// auto_exact_match together with its settings.
type EvaluatorConfig struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	EvaluatorKey   string         `json:"evaluator_key"`
	SettingsValues map[string]any `json:"settings_values,omitempty"`
	CreatedAt      Timestamp      `json:"created_at"`
	UpdatedAt      Timestamp      `json:"updated_at"`
	// Slug is a 2026 evaluator's slug, such as "exact-capital", which a
	// gate may name instead of Name; 2024 servers have none.
	Slug string `json:"slug,omitempty"`
	// URI is a 2026 evaluator's URI, such as
	// "agenta:builtin:auto_exact_match:v0"; 2024 servers have none. It
	// tells a 2026 evaluator apart, whose values may mean something else
	// than the 2024 one of the same EvaluatorKey: today's
	// auto_levenshtein_distance scores a similarity, not a distance.
	URI string `json:"uri,omitempty"`
}

// EvaluationScenario is one test-set row of an evaluation: its inputs, what
// the variant answered, and each evaluator's verdict.
type EvaluationScenario struct {
	ID           string   `json:"id,omitempty"`
	EvaluationID string   `json:"evaluation_id"`
	Inputs       []Input  `json:"inputs"`
	Outputs      []Output `json:"outputs"`
	// Evaluation is sent by older servers (before July 2024) only.
	Evaluation string `json:"evaluation,omitempty"`
	// CorrectAnswer is the expected answer as older servers (before July
	// 2024) send it; servers since then send CorrectAnswers instead.
	CorrectAnswer string `json:"correct_answer,omitempty"`
	// CorrectAnswers is the expected answers as servers since July 2024
	// send them: one per evaluator config's settings_values.correct_answer_key,
	// "" when the test set lacks that column, none on a row whose app call
	// failed.
	CorrectAnswers []CorrectAnswer  `json:"correct_answers,omitempty"`
	IsPinned       bool             `json:"is_pinned,omitempty"`
	Note           string           `json:"note,omitempty"`
	Results        []ScenarioResult `json:"results"`
	// TestcaseID is the test case a row of a 2026 run ran (see RunRow);
	// 2024 servers send none. Runs over the same test-set revision share
	// test-case ids, and a comparison pairs such rows by it.
	TestcaseID string `json:"testcase_id,omitempty"`
}

// Input is one named input of a scenario's test-set row.
type Input struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Output is what the variant produced for a scenario, with its cost and
// latency when the service measured them.
type Output struct {
	Result  Result   `json:"result"`
	Cost    *float64 `json:"cost,omitempty"`
	Latency *float64 `json:"latency,omitempty"`
}

// ScenarioResult is one evaluator config's verdict on a scenario.
type ScenarioResult struct {
	// EvaluatorConfig is the id of the evaluator config.
	EvaluatorConfig string `json:"evaluator_config"`
	Result          Result `json:"result"`
}

// CorrectAnswer is one expected answer of a scenario, by test-set column.
type CorrectAnswer struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Aliases with the names the service's OpenAPI document uses, kept so that
// code written against that document compiles. Each is deprecated in favour
// of the SDK's one name, so godoc shows one name per type.
type (
	// EvaluationScenarioInput is the OpenAPI name of Input.
	//
	// Deprecated: Use Input, the one name the SDK uses for this type.
	EvaluationScenarioInput = Input
	// EvaluationScenarioOutput is the OpenAPI name of Output.
	//
	// Deprecated: Use Output, the one name the SDK uses for this type.
	EvaluationScenarioOutput = Output
	// EvaluationScenarioResult is the OpenAPI name of ScenarioResult.
	//
	// Deprecated: Use ScenarioResult, the one name the SDK uses for this type.
	EvaluationScenarioResult = ScenarioResult
	// LLMRunRateLimit is the OpenAPI name of RateLimit.
	//
	// Deprecated: Use RateLimit, the one name the SDK uses for this type.
	LLMRunRateLimit = RateLimit
)
