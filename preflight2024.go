package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agenta-go/agenta/models"
)

// The preflight reads of a mid-2024 server. Its variant and evaluator
// config reads answer an unknown id with a 500, so existence comes from
// the app's lists of variants and evaluator configs, which also carry the
// variants' URIs and the configs' settings; only the test-set read has a
// real 404. The app's inputs are in its own OpenAPI document.

// preflight runs the reads of a mid-2024 server: three, and one
// OpenAPI document per distinct app URI.
func (c api2024) preflight(ctx context.Context, req models.PreflightRequest, report *models.PreflightReport) (*preflightFacts, error) {
	facts := &preflightFacts{}
	appID, err := segment("PreflightRequest.AppID", "app_id", req.AppID)
	if err != nil {
		return nil, err
	}
	testsetID, err := segment("PreflightRequest.TestsetID", "testset_id", req.TestsetID)
	if err != nil {
		return nil, err
	}
	testset, err := getOne[testset2024](ctx, c.Client, &request{operation: "Preflight", method: http.MethodGet, path: "/testsets/" + testsetID + "/"})
	switch {
	case notServed(err):
		skip(report, checkInputs, "the server does not serve GET /testsets/{id}/: the test set's columns were not checked")
	case errors.Is(err, ErrNotFound):
		c.notFound(report, models.PreflightTestset, req.TestsetID, "does not exist")
	case errors.Is(err, ErrAnswerTooLarge):
		// The run reads it in the service, not here: too large to read
		// whole is no reason to refuse it.
		skip(report, checkInputs, "the test set is larger than ResponseLimits.Single: its columns were not checked")
	case err != nil:
		return nil, err
	case len(testset.CSVData) == 0:
		skip(report, checkInputs, "the test set has no rows: its columns were not checked")
	default:
		facts.columns = testset.columns()
		report.Rows = len(testset.CSVData)
	}

	variants, err := getList(ctx, c.Client, &request{operation: "Preflight", method: http.MethodGet, path: "/apps/" + appID + "/variants/"}, jsonList[models.AppVariantResponse])
	switch {
	case notServed(err):
		skip(report, checkVariants, "the server does not serve GET /apps/{app_id}/variants/: the variants and the app's inputs were not checked")
	case err != nil:
		return nil, err
	default:
		byURI := map[string]appDocument{}
		for _, id := range req.VariantIDs {
			i := slices.IndexFunc(variants, func(v models.AppVariantResponse) bool { return v.VariantID == id })
			if i < 0 {
				c.notFound(report, models.PreflightVariant, id, "is not a variant of app "+c.text(req.AppID, maxMessage))
				continue
			}
			inputs, err := c.appInputs2024(ctx, variants[i], byURI)
			if err != nil {
				skip(report, checkInputs, "the inputs of variant %s were not read from its app's OpenAPI document: %s", c.text(variants[i].VariantName, maxMessage), c.text(err.Error(), maxMessage))
				continue
			}
			facts.inputs = append(facts.inputs, variantInputs{variant: variants[i].VariantName, names: inputs})
		}
	}

	configs, err := getList(ctx, c.Client, &request{operation: "Preflight", method: http.MethodGet, path: "/evaluators/configs/", query: appQuery{AppID: req.AppID}}, jsonList[models.EvaluatorConfig])
	switch {
	case notServed(err):
		skip(report, checkEvaluators, "the server does not serve GET /evaluators/configs/: the evaluators and their correct-answer columns were not checked")
		return facts, nil
	case err != nil:
		return nil, err
	}
	for _, id := range req.EvaluatorConfigIDs {
		i := slices.IndexFunc(configs, func(e models.EvaluatorConfig) bool { return e.ID == id })
		if i < 0 {
			c.notFound(report, models.PreflightEvaluator, id, "is not an evaluator config of app "+c.text(req.AppID, maxMessage))
			continue
		}
		config := configs[i]
		report.Evaluators = append(report.Evaluators, config)
		if !takesCorrectAnswer2024[config.EvaluatorKey] {
			continue
		}
		column, _ := config.SettingsValues["correct_answer_key"].(string)
		if column == "" {
			report.Findings = append(report.Findings, models.PreflightFinding{
				Problem: models.PreflightMissingCorrectAnswer, Subject: models.PreflightEvaluator, ID: config.ID, Name: config.Name,
				Message: fmt.Sprintf("evaluator %s names no correct-answer column (settings_values.correct_answer_key), and this server has no default: every row would fail with \"No correct answer keys provided.\"",
					c.evaluatorTitle(config)),
			})
			continue
		}
		facts.answers = append(facts.answers, answerColumn{config: config, column: column})
	}
	return facts, nil
}

// takesCorrectAnswer2024 are the mid-2024 evaluators that compare with a
// correct answer, read from the column their settings_values'
// correct_answer_key names (the service's evaluator templates).
var takesCorrectAnswer2024 = map[string]bool{
	"auto_exact_match": true, "auto_similarity_match": true, "field_match_test": true,
	"auto_ai_critique": true, "auto_custom_code_run": true, "auto_webhook_test": true,
	"auto_levenshtein_distance": true,
}

type appQuery struct {
	AppID string `url:"app_id"`
}

// testset2024 is a mid-2024 test set: its rows by column name.
type testset2024 struct {
	ID      string                       `json:"id"`
	Name    string                       `json:"name"`
	CSVData []map[string]json.RawMessage `json:"csvdata"`
}

// columns are the columns every row has, sorted: the service's worker
// reads each input from each row, so a column some row lacks fails the run
// there.
func (t *testset2024) columns() []string {
	var out []string
	for name := range t.CSVData[0] {
		every := true
		for _, row := range t.CSVData[1:] {
			if _, ok := row[name]; !ok {
				every = false
				break
			}
		}
		if every {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// openAPILimit bounds the app's OpenAPI document.
const openAPILimit = 1 << 20

// appInputs2024 reads the inputs of a variant's app from the app's own
// {uri}/openapi.json, as the service does: the properties of its
// /generate body without "x-parameter" (those are the configuration), and
// for a "dict" input the names in the variant's "inputs" parameter. The
// app is another server than the service: it gets no credentials, only a
// plain GET bounded by ctx and 5 s. Each URI is read once.
func (c *Client) appInputs2024(ctx context.Context, v models.AppVariantResponse, byURI map[string]appDocument) ([]string, error) {
	if v.URI == "" {
		return nil, errors.New("the variant has no uri")
	}
	doc, ok := byURI[v.URI]
	if !ok {
		doc.openAPI, doc.err = readOpenAPI(ctx, v.URI)
		byURI[v.URI] = doc
	}
	if doc.err != nil {
		return nil, doc.err
	}
	return doc.openAPI.inputs(v.Parameters)
}

// appDocument is an app's OpenAPI document as read, or why it was not.
type appDocument struct {
	openAPI *openAPI2024
	err     error
}

// readOpenAPI reads {uri}/openapi.json with a plain client of its own.
func readOpenAPI(ctx context.Context, uri string) (*openAPI2024, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(uri, "/")+"/openapi.json", nil)
	if err != nil {
		return nil, errors.New("the variant's uri is not a URL")
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(r)
	if err != nil {
		return nil, errors.New("the app could not be reached")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the app answered %d", resp.StatusCode)
	}
	var doc openAPI2024
	if err := json.NewDecoder(io.LimitReader(resp.Body, openAPILimit)).Decode(&doc); err != nil {
		return nil, errors.New("the app's document is not the JSON of an OpenAPI document (or is over 1 MiB)")
	}
	return &doc, nil
}

// openAPI2024 is what appInputs2024 reads of an app's OpenAPI document.
type openAPI2024 struct {
	Paths map[string]struct {
		Post *struct {
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"post"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]struct {
				Parameter string `json:"x-parameter"`
			} `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

func (d *openAPI2024) inputs(parameters map[string]any) ([]string, error) {
	generate, ok := d.Paths["/generate"]
	if !ok || generate.Post == nil {
		return nil, errors.New("the app's document has no POST /generate")
	}
	ref := generate.Post.RequestBody.Content["application/json"].Schema.Ref
	body, ok := d.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
	if !ok {
		return nil, errors.New("the app's document does not describe the body of POST /generate")
	}
	names := []string{}
	for name, p := range body.Properties {
		switch p.Parameter {
		case "":
			names = append(names, name)
		case "dict":
			list, ok := parameters["inputs"].([]any)
			if !ok {
				return nil, fmt.Errorf("the app takes a dict input %q, and the variant has no \"inputs\" parameter naming its keys", name)
			}
			for _, item := range list {
				if m, ok := item.(map[string]any); ok {
					if n, ok := m["name"].(string); ok && n != "" {
						names = append(names, n)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names, nil
}
