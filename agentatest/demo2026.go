package agentatest

// Demo2026 holds the ids of the 2026 demo data SeedDemo2026 loads: what the
// real test kit's seed.py creates (realserver-2026), plus a test set with
// failing rows.
type Demo2026 struct {
	// ApplicationID, VariantID and RevisionID are the application
	// "capitals", its default variant and revision "1": the stand-in app
	// (StandInApplication) with a prompt_template and temperature 0.7.
	ApplicationID, VariantID, RevisionID string
	// TestsetID and TestsetRevisionID are the test set "capitals": five
	// countries (France, Germany, Italy, Spain, Japan) with the capital in
	// correct_answer; TestcaseIDs are its rows in order.
	TestsetID, TestsetRevisionID string
	TestcaseIDs                  []string
	// ErrTestsetID and ErrTestsetRevisionID are "capitals-err": France,
	// ERRland, Germany, ERRor2 and Italy expecting "Naples"; the stand-in
	// app fails on the two ERR rows, and exact match fails Italy.
	ErrTestsetID, ErrTestsetRevisionID string
	// EvaluatorID and EvaluatorRevisionID are "exact-capital", the built-in
	// exact match on correct_answer.
	EvaluatorID, EvaluatorRevisionID string
}

// The demo's stand-in app, as seed.py creates it.
const (
	demoAppURL          = "http://127.0.0.1:19080"
	demoPromptTemplate  = "What is the capital of {country}?"
	demoAppDescription  = "realserver stand-in app"
	demoEvaluatorURI    = "agenta:builtin:auto_exact_match:v0"
	demoCorrectAnswerID = "correct_answer"
)

// SeedDemo2026 loads the 2026 demo data into a Server that serves the 2026
// generation (WithGeneration) and returns its ids. Its objects are those
// of the real test kit's seed.py, so that a script runs alike against
// both; unlike SeedDemo's, the ids differ from run to run of a test only
// by WithClock.
func SeedDemo2026(s *Server) Demo2026 {
	app := s.AddApplication2026(Application2026{
		Slug: "capitals", Description: demoAppDescription, URL: demoAppURL,
		Parameters: map[string]any{"prompt_template": demoPromptTemplate, "temperature": 0.7},
	})
	columns := []string{"country", demoCorrectAnswerID}
	rows := func(pairs ...string) []map[string]any {
		var out []map[string]any
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, map[string]any{"country": pairs[i], demoCorrectAnswerID: pairs[i+1]})
		}
		return out
	}
	ts := s.AddTestset2026(Testset2026{Slug: "capitals", Columns: columns,
		Rows: rows("France", "Paris", "Germany", "Berlin", "Italy", "Rome", "Spain", "Madrid", "Japan", "Tokyo")})
	errTS := s.AddTestset2026(Testset2026{Slug: "capitals-err", Columns: columns,
		Rows: rows("France", "Paris", "ERRland", "X", "Germany", "Berlin", "ERRor2", "Y", "Italy", "Naples")})
	ev := s.AddEvaluator2026(Evaluator2026{Slug: "exact-capital", Name: "Exact capital", URI: demoEvaluatorURI,
		Parameters: map[string]any{"correct_answer_key": demoCorrectAnswerID}})
	return Demo2026{
		ApplicationID: app.ApplicationID, VariantID: app.VariantID, RevisionID: app.RevisionID,
		TestsetID: ts.TestsetID, TestsetRevisionID: ts.RevisionID, TestcaseIDs: ts.TestcaseIDs,
		ErrTestsetID: errTS.TestsetID, ErrTestsetRevisionID: errTS.RevisionID,
		EvaluatorID: ev.EvaluatorID, EvaluatorRevisionID: ev.RevisionID,
	}
}
