package agenta_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// Errors are classified with errors.Is and errors.As, never by their text.
// A *agenta.APIError keeps the status, the server's message and the raw
// body; the service's not-found answers that come as 500 match
// agenta.ErrNotFound as well as agenta.ErrServer.
func ExampleAPIError() {
	srv := agentatest.NewServer() // a fake of the service; use your server's URL instead
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	describe := func(err error) string {
		var validation *agenta.ValidationError
		var apiErr *agenta.APIError
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, agenta.ErrInvalidArgument):
			return "refused before sending: " + err.Error()
		case errors.As(err, &validation):
			d := validation.Details[0]
			return fmt.Sprintf("%d, field %s refused (%s)", validation.StatusCode, d.Field(), d.Type)
		case errors.Is(err, agenta.ErrNotFound) && errors.As(err, &apiErr):
			return fmt.Sprintf("not found (%d %q)", apiErr.StatusCode, apiErr.Message)
		case errors.As(err, &apiErr):
			return fmt.Sprintf("%d from %s: %s", apiErr.StatusCode, apiErr.Operation, apiErr.Message)
		default:
			return "no answer: " + err.Error()
		}
	}

	_, err = client.GetVariant(ctx, "")
	fmt.Println(describe(err))

	const unknownApp = "0190b5a2-7c1e-7d3a-9f00-4b1d2c3e4f50"
	_, err = client.GetVariantByEnvironment(ctx, unknownApp, models.EnvironmentProduction)
	fmt.Println(describe(err))
	fmt.Println("also a server error:", errors.Is(err, agenta.ErrServer))

	_, err = client.AddVariantFromBase(ctx, models.AddVariantFromBase{
		BaseID: demo.BaseID, NewVariantName: "again", NewConfigName: "default",
	})
	fmt.Println(describe(err))

	_, err = client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{demo.VariantID}, EvaluatorConfigIDs: []string{demo.ExactMatchID},
		TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit(),
		LMProvidersKeys: models.NewProviderKeys(map[string]string{"OPENAI_KEY": "sk-…"}), // not a name the service knows
	})
	fmt.Println(describe(err))
	// Output:
	// refused before sending: agenta: invalid argument variantID (variant_id): is required
	// not found (500 "App Variant not found")
	// also a server error: true
	// 500 from AddVariantFromBase: App variant with the same name already exists
	// 422, field body.lm_providers_keys.OPENAI_KEY.[key] refused (enum)
}
