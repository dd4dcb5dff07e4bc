package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realVariantBody is an AppVariantResponse as a real server sends it, with
// explicit nulls and fields the SDK does not know.
const realVariantBody = `{
  "app_id": "app-1", "app_name": "capitals",
  "variant_id": "var-1", "variant_name": "app.default",
  "parameters": {"temperature": 0.7, "model": "gpt-4o", "max_tokens": 256, "stop": null,
                 "prompt_system": "You are an expert in geography.", "inputs": [{"name": "country"}]},
  "previous_variant_name": null,
  "user_id": "u-1", "base_name": "app", "base_id": "base-1", "config_name": "default",
  "uri": "http://agenta-app-1:80", "revision": 3,
  "organization_id": null, "workspace_id": "ws-1",
  "created_at": "2024-06-26T12:22:31.775000", "modified_by_id": "u-2"
}`

func assertRealVariant(t *testing.T, v *models.AppVariantResponse) {
	t.Helper()
	require.NotNil(t, v)
	assert.Equal(t, "app-1", v.AppID)
	assert.Equal(t, "capitals", v.AppName)
	assert.Equal(t, "var-1", v.VariantID)
	assert.Equal(t, "app.default", v.VariantName)
	assert.Equal(t, json.Number("0.7"), v.Parameters["temperature"], "numbers keep their text")
	assert.Equal(t, "gpt-4o", v.Parameters["model"])
	assert.Contains(t, v.Parameters, "stop")
	assert.Nil(t, v.Parameters["stop"])
	assert.Equal(t, "", v.PreviousVariantName)
	assert.Equal(t, "u-1", v.UserID)
	assert.Equal(t, "app", v.BaseName)
	assert.Equal(t, "base-1", v.BaseID)
	assert.Equal(t, "default", v.ConfigName)
	assert.Equal(t, "http://agenta-app-1:80", v.URI)
	assert.Equal(t, 3, v.Revision)
	assert.Equal(t, "", v.OrganizationID)
	assert.Equal(t, "ws-1", v.WorkspaceID)
}

func TestGetVariant(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/variants/var-1", "").replyJSON(200, realVariantBody)

	v, err := c.GetVariant(context.Background(), "var-1")

	require.NoError(t, err)
	assertRealVariant(t, v)
	assertAllSent(t)
}

func TestGetVariantByEnvironment(t *testing.T) {
	for _, env := range []string{models.EnvironmentProduction, models.EnvironmentStaging, models.EnvironmentDevelopment, "eu-canary"} {
		t.Run(env, func(t *testing.T) {
			c := gockClient(t)
			expect("GET", "/api/apps/get_variant_by_env", "app_id=app-1&environment="+env).replyJSON(200, realVariantBody)

			v, err := c.GetVariantByEnvironment(context.Background(), "app-1", env)

			require.NoError(t, err)
			assertRealVariant(t, v)
			assertAllSent(t)
		})
	}
}

// The service answers 500 "App Variant not found" for an app with nothing
// deployed: that is not transient and must not be retried.
func TestGetVariantByEnvironmentNotFoundIs500(t *testing.T) {
	c := gockClient(t)
	expect("GET", "/api/apps/get_variant_by_env", "app_id=app-1&environment=staging").
		replyJSON(500, `{"detail":"App Variant not found"}`)

	_, err := c.GetVariantByEnvironment(context.Background(), "app-1", "staging")

	apiErr := requireAPIError(t, err, 500, "GET", "/api/apps/get_variant_by_env")
	assert.Equal(t, "App Variant not found", apiErr.Message)
	assert.True(t, errors.Is(err, ErrServer))
	assert.NotContains(t, err.Error(), "app-1", "query values stay out of the error string")
	assertAllSent(t)
}

func TestAddVariantFromBase(t *testing.T) {
	for _, tc := range []struct {
		name       string
		parameters map[string]any
		wantParams string
	}{
		{"with parameters", map[string]any{"temperature": 0.2, "model": "gpt-4o-mini", "stop": nil, "nested": map[string]any{"k": []any{1, "x"}}},
			`{"temperature":0.2,"model":"gpt-4o-mini","stop":null,"nested":{"k":[1,"x"]}}`},
		{"nil parameters", nil, `{}`},
		{"empty parameters", map[string]any{}, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gockClient(t)
			e := expect("POST", "/api/variants/from-base", "")
			e.replyJSON(200, realVariantBody)
			req := models.AddVariantFromBase{BaseID: "base-1", NewVariantName: "fork", NewConfigName: "cfg", Parameters: tc.parameters}

			v, err := c.AddVariantFromBase(context.Background(), req)

			require.NoError(t, err)
			assertRealVariant(t, v)
			sent := e.only(t)
			assert.JSONEq(t, `{"base_id":"base-1","new_variant_name":"fork","new_config_name":"cfg","parameters":`+tc.wantParams+`}`, string(sent.Body))
			assert.Equal(t, "application/json", sent.Header.Get("Content-Type"))
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(sent.Body, &raw))
			assert.Equal(t, byte('{'), raw["parameters"][0], "parameters is always a JSON object")
			assertAllSent(t)
		})
	}
}

// On failure paths the operation may answer 200 with any JSON value; that
// is a decode error, not a zero variant.
func TestAddVariantFromBaseOddAnswers(t *testing.T) {
	for _, body := range []string{`null`, `"failed"`, `[1,2]`, `42`} {
		t.Run(body, func(t *testing.T) {
			c := gockClient(t)
			expect("POST", "/api/variants/from-base", "").replyJSON(200, body)

			v, err := c.AddVariantFromBase(context.Background(), validAddVariant())

			assert.Nil(t, v)
			var derr *DecodeError
			require.True(t, errors.As(err, &derr), "expected *DecodeError, got %T: %v", err, err)
			assert.Equal(t, "/api/variants/from-base", derr.Path)
			assertAllSent(t)
		})
	}
}

func TestAddVariantFromBaseRefusesMissingFields(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		edit        func(*models.AddVariantFromBase)
	}{
		{"AddVariantFromBase.BaseID", "base_id", func(v *models.AddVariantFromBase) { v.BaseID = "" }},
		{"AddVariantFromBase.BaseID", "base_id", func(v *models.AddVariantFromBase) { v.BaseID = "\t" }},
		{"AddVariantFromBase.NewVariantName", "new_variant_name", func(v *models.AddVariantFromBase) { v.NewVariantName = "" }},
		{"AddVariantFromBase.NewConfigName", "new_config_name", func(v *models.AddVariantFromBase) { v.NewConfigName = "" }},
		{"AddVariantFromBase.NewConfigName", "new_config_name", func(v *models.AddVariantFromBase) { v.NewConfigName = "a\nb" }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			c := gockClient(t)
			req := validAddVariant()
			tc.edit(&req)

			v, err := c.AddVariantFromBase(context.Background(), req)

			assert.Nil(t, v)
			argErr := requireArgumentError(t, err, tc.name)
			assert.Equal(t, tc.field, argErr.Field)
			assert.Contains(t, err.Error(), tc.field)
			assertNothingUnmatched(t)
		})
	}
}

// A variant's parameters pass through the SDK with their numbers exact:
// read with GetVariant and sent back with AddVariantFromBase, an integer
// past 2^53 and a long decimal keep their text.
func TestVariantParametersKeepExactNumbers(t *testing.T) {
	const params = `{"seed":9007199254740993,"top_p":0.1000000000000000055511151231257827,"n":[1e400]}`
	var sent []byte
	mux, c := setup(t)
	mux.HandleFunc("/variants/v-1", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"variant_id":"v-1","base_id":"b-1","parameters":`+params+`}`)
	})
	mux.HandleFunc("/variants/from-base", func(w http.ResponseWriter, r *http.Request) {
		sent, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"variant_id":"v-2","base_id":"b-1","parameters":`+params+`}`)
	})
	v, err := c.GetVariant(context.Background(), "v-1")
	require.NoError(t, err)
	assert.Equal(t, json.Number("9007199254740993"), v.Parameters["seed"])
	fork, err := c.AddVariantFromBase(context.Background(), models.AddVariantFromBase{
		BaseID: "b-1", NewVariantName: "f", NewConfigName: "f", Parameters: v.Parameters})
	require.NoError(t, err)
	assert.Contains(t, string(sent), `"parameters":{"n":[1e400],"seed":9007199254740993,"top_p":0.1000000000000000055511151231257827}`)
	assert.Equal(t, json.Number("0.1000000000000000055511151231257827"), fork.Parameters["top_p"])
}
