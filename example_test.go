package agenta_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// The examples run against agentatest, the SDK's in-memory fake of the
// service, loaded with its demo data: an app named "capitals" that names
// the capital of a country. Against a real server, pass its URL, such as
// "https://cloud.agenta.ai/api", and your API key instead.

func ExampleNewClient() {
	// A fake of the service that wants an API key, loaded with demo data.
	srv := agentatest.NewServer(agentatest.WithAPIKey("my-api-key"))
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)

	// NewClient does no network I/O; it only checks its arguments.
	client, err := agenta.NewClient(srv.URL(), // for example "https://cloud.agenta.ai/api"
		agenta.WithAPIKey("my-api-key"),
		agenta.WithTimeout(10*time.Second),
		agenta.WithMaxRetries(2),
	)
	if err != nil {
		log.Fatal(err)
	}
	variant, err := client.GetVariant(context.Background(), demo.VariantID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(variant.VariantName)

	// A base URL without a scheme is refused before anything is sent.
	_, err = agenta.NewClient("cloud.agenta.ai/api")
	fmt.Println(errors.Is(err, agenta.ErrInvalidArgument))
	// Output:
	// capitals.default
	// true
}

func ExampleNewClientFromEnv() {
	// A fake of the service loaded with demo data, standing for the server
	// your environment names.
	srv := agentatest.NewServer(agentatest.WithAPIKey("my-api-key"))
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	os.Setenv("AGENTA_HOST", strings.TrimSuffix(srv.URL(), "/api")) // /api is added to a URL without a path
	os.Setenv("AGENTA_API_KEY", "my-api-key")                       // optional: without it, no Authorization header
	defer os.Unsetenv("AGENTA_HOST")
	defer os.Unsetenv("AGENTA_API_KEY")

	client, err := agenta.NewClientFromEnv(agenta.WithTimeout(10 * time.Second))
	if err != nil {
		log.Fatal(err) // AGENTA_HOST unset, or not a URL
	}
	variant, err := client.GetVariant(context.Background(), demo.VariantID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.TrimPrefix(client.BaseURL(), strings.TrimSuffix(srv.URL(), "/api")), variant.VariantName)

	os.Unsetenv("AGENTA_HOST")
	_, err = agenta.NewClientFromEnv()
	fmt.Println(err)
	// Output:
	// /api capitals.default
	// agenta: invalid argument AGENTA_HOST: is not set; set it to your server's URL, such as https://cloud.agenta.ai, or pass WithBaseURL
}

func ExampleClient_GetVariantByEnvironment() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	for _, env := range []string{models.EnvironmentProduction, models.EnvironmentStaging, "playground"} {
		v, err := client.GetVariantByEnvironment(ctx, demo.AppID, env)
		if err != nil {
			// Nothing deployed: the service answers 500 "App Variant not
			// found", which matches ErrNotFound as well as ErrServer.
			var apiErr *agenta.APIError
			if errors.As(err, &apiErr) {
				fmt.Printf("%-10s %d %s\n", env, apiErr.StatusCode, apiErr.Message)
			}
			continue
		}
		fmt.Printf("%-10s %s revision %d, model %v\n", env, v.VariantName, v.Revision, v.Parameters["model"])
	}
	// Output:
	// production capitals.default revision 3, model gpt-3.5-turbo
	// staging    capitals.verbose revision 1, model gpt-4o
	// playground 500 App Variant not found
}

func ExampleClient_GetVariant() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	v, err := client.GetVariant(ctx, demo.VerboseVariantID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.VariantName, "of app", v.AppName, "from base", v.BaseName)
	fmt.Println("prompt:", v.Parameters["prompt_user"])

	// The service has no 404 here: an unknown variant is a 500, which
	// matches ErrNotFound as well as ErrServer.
	_, err = client.GetVariant(ctx, "0190b5a2-0000-7000-8000-0000000000ff")
	var apiErr *agenta.APIError
	if errors.As(err, &apiErr) {
		fmt.Println("unknown id:", apiErr.StatusCode, apiErr.Message)
	}
	fmt.Println("not found:", errors.Is(err, agenta.ErrNotFound))
	// Output:
	// capitals.verbose of app capitals from base capitals
	// prompt: Which city is the capital of {country}?
	// unknown id: 500 'NoneType' object has no attribute 'base_id'
	// not found: true
}

func ExampleClient_AddVariantFromBase() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}

	v, err := client.AddVariantFromBase(context.Background(), models.AddVariantFromBase{
		BaseID:         demo.BaseID,
		NewVariantName: "precise",
		NewConfigName:  "precise",
		Parameters: map[string]any{
			"model":         "gpt-4o-mini",
			"temperature":   0,
			"prompt_system": "Answer in one word.",
			"prompt_user":   "What is the capital of {country}?",
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The service names the variant {base_name}.{new_config_name}.
	fmt.Println(v.VariantName, "revision", v.Revision, "forked from", v.PreviousVariantName)
	fmt.Println("model:", v.Parameters["model"])
	// Output:
	// capitals.precise revision 1 forked from capitals.default
	// model: gpt-4o-mini
}

func ExampleClient_CreateEvaluation() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	// A fixed clock makes the ids and times printed below the same on every
	// run; a real server needs none of this.
	fixed := time.Date(2024, 7, 1, 9, 30, 0, 0, time.UTC)
	srv := agentatest.NewServer(agentatest.WithClock(func() time.Time { return fixed }))
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}

	evaluations, err := client.CreateEvaluation(context.Background(), models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         []string{demo.VariantID, demo.VerboseVariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID, demo.EditDistanceID},
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	// One evaluation per variant, in the order of VariantIDs, each waiting
	// for the service's worker to start it.
	for _, ev := range evaluations {
		fmt.Println(ev.ID, ev.VariantNames[0], ev.State(), ev.CreatedAt.Format(time.RFC3339))
	}
	// Output:
	// 01906da1-35c0-7000-8000-000000000003 capitals.default EVALUATION_INITIALIZED 2024-07-01T09:30:00Z
	// 01906da1-35c0-7000-8000-000000000004 capitals.verbose EVALUATION_INITIALIZED 2024-07-01T09:30:00Z
}

func ExampleClient_FetchEvaluationScenarios() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// An evaluation of capitals.default, started as in the CreateEvaluation example.
	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID, demo.EditDistanceID},
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	evaluationID := evaluations[0].ID
	// Its scenarios are written when the run ends: wait for it, as in the
	// WaitEvaluation example.
	if _, err := client.WaitEvaluation(ctx, evaluationID, &agenta.WaitOptions{Interval: 50 * time.Millisecond}); err != nil {
		log.Fatal(err)
	}

	scenarios, err := client.FetchEvaluationScenarios(ctx, evaluationID)
	if err != nil {
		log.Fatal(err)
	}
	for _, sc := range scenarios[:4] {
		var country string
		_ = json.Unmarshal(sc.Inputs[0].Value, &country)
		exact, _ := sc.Results[0].Result.Bool()
		distance, _ := sc.Results[1].Result.Float64()
		fmt.Printf("%-9s %-9s want %-9s exact=%-5t distance=%v\n",
			country, sc.Outputs[0].Result, sc.ExpectedAnswer(), exact, distance)
	}
	fmt.Println(len(scenarios), "scenarios")
	// Output:
	// France    Paris     want Paris     exact=true  distance=0
	// Japan     Tokyo     want Tokyo     exact=true  distance=0
	// Brazil    Brasília  want Brasília  exact=true  distance=0
	// Australia Sydney    want Canberra  exact=false distance=7
	// 8 scenarios
}

func ExampleClient_StreamEvaluationScenarios() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// An evaluation of capitals.default, started as in the CreateEvaluation example.
	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID},
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	evaluationID := evaluations[0].ID
	// Its scenarios are written when the run ends: wait for it, as in the
	// WaitEvaluation example.
	if _, err := client.WaitEvaluation(ctx, evaluationID, &agenta.WaitOptions{Interval: 50 * time.Millisecond}); err != nil {
		log.Fatal(err)
	}

	// Scenarios arrive one at a time; memory stays flat however many
	// there are. Breaking out of the loop closes the response.
	passed, seen := 0, 0
	for sc, err := range client.StreamEvaluationScenarios(ctx, evaluationID) {
		if err != nil {
			log.Fatal(err)
		}
		seen++
		if ok, _ := sc.Results[0].Result.Bool(); ok {
			passed++
		}
	}
	fmt.Printf("exact match: %d of %d\n", passed, seen)
	// Output:
	// exact match: 5 of 8
}

func ExampleClient_GetSpan() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}

	span, err := client.GetSpan(context.Background(), demo.SpanID, nil)
	if err != nil {
		log.Fatal(err)
	}
	span.Walk(func(s *models.Span, depth int) bool {
		latency, _ := s.Latency()
		fmt.Printf("%s%s %s %s %.4fs\n", strings.Repeat("  ", depth), s.Name, s.SpanKind, s.Status, latency)
		return true
	})
	// Output:
	// capitals WORKFLOW OK 1.2345s
	//   lookup_country RETRIEVER OK 0.0810s
	//   format_prompt CHAIN OK 0.0021s
	//     render_template TOOL OK 0.0008s
	//   openai.chat.completions LLM OK 1.1023s
	//   cache_write TOOL ERROR 0.0043s
}

func ExampleClient_ListHumanEvaluations() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}

	humans, err := client.ListHumanEvaluations(context.Background(), demo.AppID)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range humans {
		// Stored timestamps come without a zone; they are UTC.
		fmt.Println(h.EvaluationType, strings.Join(h.VariantNames, " vs "), h.Status, h.CreatedAt.Format(time.DateTime))
	}
	// Output:
	// human_a_b_testing capitals.default vs capitals.verbose EVALUATION_FINISHED 2024-06-20 09:15:02
	// single_model_test capitals.default EVALUATION_STARTED 2024-06-25 16:40:11
}

func ExampleClient_WaitEvaluation() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	// Bound the wait: a run that no worker of the server picks up stays
	// EVALUATION_INITIALIZED for ever.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// An evaluation of capitals.default, started as in the CreateEvaluation example.
	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID, demo.EditDistanceID},
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	evaluationID := evaluations[0].ID

	// The fake runs the 8 rows in well under a second, so poll often; the
	// default, right for a real server, is every 2 s.
	ev, err := client.WaitEvaluation(ctx, evaluationID, &agenta.WaitOptions{Interval: 50 * time.Millisecond})
	switch {
	case errors.Is(err, agenta.ErrEvaluationFailed):
		log.Fatalf("the run failed: %v", err) // ev holds the failed evaluation
	case err != nil:
		log.Fatal(err) // ctx ended (the error names the last status), or a read failed
	}
	fmt.Println(ev.State(), "terminal:", ev.Terminal(), "failed:", ev.Failed())
	for _, agg := range ev.AggregatedResults {
		fmt.Printf("%s: %s\n", agg.EvaluatorConfig.Name, agg.Result)
	}
	// Output:
	// EVALUATION_FINISHED terminal: true failed: false
	// Exact match: 0.625
	// Edit distance: 2.125
}

func ExampleClient_FetchEvaluation() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// An evaluation of capitals.default, started as in the CreateEvaluation example.
	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID},
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	evaluationID := evaluations[0].ID
	// Its scenarios are written when the run ends: wait for it, as in the
	// WaitEvaluation example.
	if _, err := client.WaitEvaluation(ctx, evaluationID, &agenta.WaitOptions{Interval: 50 * time.Millisecond}); err != nil {
		log.Fatal(err)
	}

	ev, err := client.FetchEvaluation(ctx, evaluationID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.VariantNames[0], "on", ev.TestsetName+":", ev.State())
	// One aggregated result per evaluator config: the mean over the rows.
	for _, agg := range ev.AggregatedResults {
		fmt.Printf("%s (%s): %s\n", agg.EvaluatorConfig.Name, agg.EvaluatorConfig.EvaluatorKey, agg.Result)
	}
	// Output:
	// capitals.default on capitals: EVALUATION_FINISHED
	// Exact match (auto_exact_match): 0.625
}

func ExampleClient_FetchEvaluationStatus() {
	// A fake of the service loaded with demo data: an app "capitals" that
	// names the capital of a country. Against your server, use
	// agenta.NewClientFromEnv() instead.
	srv := agentatest.NewServer()
	defer srv.Close()
	demo := agentatest.SeedDemo(srv)
	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// An evaluation of capitals.default, started as in the CreateEvaluation example.
	evaluations, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID:              demo.AppID,
		VariantIDs:         []string{demo.VariantID},
		EvaluatorConfigIDs: []string{demo.ExactMatchID},
		TestsetID:          demo.TestsetID,
		RateLimit:          models.DefaultRateLimit(),
	})
	if err != nil {
		log.Fatal(err)
	}
	evaluationID := evaluations[0].ID

	// A status read is about 100 bytes: poll it, never the scenario list.
	// WaitEvaluation runs this loop for you.
	for {
		status, err := client.FetchEvaluationStatus(ctx, evaluationID)
		if err != nil {
			log.Fatal(err)
		}
		if s := status.EvaluationStatus(); s.Terminal() {
			fmt.Println(s, "failed:", s.Failed())
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Output:
	// EVALUATION_FINISHED failed: false
}
