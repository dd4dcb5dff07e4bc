package main

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run this test binary as the agenta command, so
// that the scripts exercise the real main: flags, stdout, stderr and exit
// codes.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"agenta": main})
}

// bigRows is the size of the BIG_HOST evaluation: large enough that holding
// its rows (35 MB of JSON) would show in the peak RSS.
const bigRows = 50_000

// leakKey is a provider key that LEAKY_TESTSET's rows hold.
const leakKey = "sk-leak-provider-key-0123456789"

// testAPIKey is the key the AUTH_HOST server requires.
const testAPIKey = "s3cret-key-0123456789"

// TestScripts runs testdata/script/*.txtar. Each script gets its own fake
// services, and their ids in its environment:
//
//	AGENTA_HOST       the demo fake (agentatest with SeedDemo), ending in /api
//	APP_ID TESTSET_ID BASE_ID PRODUCTION VERBOSE EXACT EDIT TERSE CRITIQUE SPAN_ID
//	EXACT_NUMBERS     a variant whose parameters hold 9007199254740993 and a long decimal
//	EVALUATION_ID     a finished evaluation of PRODUCTION with the three evaluators
//	MISMATCH_TESTSET  a test set whose columns do not match the app's inputs
//	FAILED_EVALUATION_ID an evaluation against it, which ended EVALUATION_FAILED
//	TRICKY_EVALUATION_ID an evaluation of PRODUCTION on inputs with commas, quotes and line breaks
//	TRICKY_TESTSET    its test set
//	LEAKY_TESTSET     a test set whose rows hold LEAK_KEY, raw, in base64 and in hex
//	LEAKY_EVALUATION_ID an evaluation of PRODUCTION on it
//	AUTH_HOST         a fake that requires the key testAPIKey (AUTH_ROOT: without /api)
//	STUCK_HOST        a fake without a worker, where STUCK_EVALUATION_ID stays INITIALIZED
//	BIG_HOST          a server of BIG_EVALUATION_ID, an evaluation of bigRows scenarios
//	DOWN_HOST         a port of 127.0.0.1 that refuses connections
//	HTML_HOST         a web server answering 200 with an HTML page to everything
//	HANG_HOST         a web server that accepts every request and never answers
//	BROKEN_ENV_HOST   a server whose environment lookup answers the mid-2024 500
//	SLOW_BODY_HOST    one that starts a 200 answer and never ends it
//	CUT_BODY_HOST     one that cuts the connection in the middle of a 200 answer
//	FAKE_PORT         a free port for agenta fake
//	FLAKY_APP FLAKY_TESTSET  an app whose variants fail on chosen rows of a 20-row test set
//	FLAKY_GOOD        its variant that answers every row right
//	FLAKY_BROKEN      its variant whose app call fails on 18 of the 20 rows
//	FLAKY_PROD FLAKY_SAME FLAKY_WORSE  variants failing on 2, the same 2, and 3 rows
//	SPARSE_TESTSET    20 rows, 18 without an expected answer: edit distance errs on them
//	EMPTY_TESTSET     a test set without rows
//	FLAKY_MISMATCHED  a variant of it that takes the input "nation": its evaluation ends EVALUATION_FAILED
//	FLAKY_DOWN        its variant whose app call fails on every row
//	MANUAL_HOST       a demo fake without a worker, driven by the ctl command (same demo ids)
//	MANUAL_EVALUATION_ID a finished evaluation of PRODUCTION there
//	BIG_RUN_HOST      a server whose evaluations of any variants finish at once with BIG_RUN_ROWS rows each
//	MISSING_RUN_HOST  the same with 20 rows, where the variant "missing" has no evaluator result on 18 of them,
//	                  the variant "repeats" lists its first 5 rows again in place of the last 5, and the
//	                  variant "nooutput" has no output (and no app error) on its last 2
//	PACED_HOST        the demo with test sets of PACED_500 and PACED_1000 rows
//	CELL_RUN_HOST     the same with 3 rows, each with a cell of 15 MiB
//	HUGE_RUN_HOST     the same with HUGE_RUN_ROWS rows of about 6.7 KB: HUGE_RUN_MIB MiB of scenarios per evaluation
//	BIG_EXACT         the id of their "Exact match" evaluator config
//	W26_HOST T26_HOST 2026 fakes, worker down and tracing down (see setup2026)
//	NOISY_HOST NOISY26_HOST fakes of both generations with an app right 60% of the time (see setupNoisy)
//
// The condition [race] holds under the race detector.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup:               setupScript,
		Condition: func(cond string) (bool, error) {
			if cond == "race" {
				return raceEnabled, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"ctl":             cmdCtl,
			"follow":          cmdFollow,
			"exits":           cmdExits,
			"waitlisten":      cmdWaitListen,
			"signal":          cmdSignal,
			"exitedin":        cmdExitedIn,
			"exitcode":        cmdExitCode,
			"waitstatusreads": cmdWaitStatusReads,
			"peakrss":         cmdPeakRSS,
			"csvrecords":      cmdCSVRecords,
			"jsonvalues":      cmdJSONValues,
			"evalexports":     cmdEvalExports,
			"processgone":     cmdProcessGone,
			"workflowstep":    cmdWorkflowStep,
		},
	})
}

func setupScript(env *testscript.Env) error {
	srv := agentatest.NewServer()
	env.Defer(srv.Close)
	demo := agentatest.SeedDemo(srv)
	mismatch := srv.AddTestset(agentatest.Testset{AppID: demo.AppID, Name: "mismatch",
		Rows: []map[string]string{{"nation": "France", "correct_answer": "Paris"}}})

	client, err := agenta.NewClient(srv.URL())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	created, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{demo.VariantID}, EvaluatorConfigIDs: demo.EvaluatorConfigIDs(),
		TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit(),
	})
	if err != nil {
		return err
	}
	failed, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{demo.VariantID}, EvaluatorConfigIDs: demo.EvaluatorConfigIDs(),
		TestsetID: mismatch, RateLimit: models.DefaultRateLimit(),
	})
	if err != nil {
		return err
	}
	// Inputs that CSV must quote: a comma, quotes, a line break.
	tricky := srv.AddTestset(agentatest.Testset{AppID: demo.AppID, Name: "tricky", Rows: []map[string]string{
		{"country": "Korea, Republic of", "correct_answer": "Seoul"},
		{"country": `Côte d'Ivoire "CI"`, "correct_answer": "Yamoussoukro"},
		{"country": "line one\nline two\r\n", "correct_answer": "x,\"y\""},
	}})
	trickyRun, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{demo.VariantID}, EvaluatorConfigIDs: demo.EvaluatorConfigIDs(),
		TestsetID: tricky, RateLimit: models.DefaultRateLimit(),
	})
	if err != nil {
		return err
	}
	// Rows that carry a provider key, raw and encoded, as a provider's
	// error echoed into a result would: eval run's output must not.
	leaky := srv.AddTestset(agentatest.Testset{AppID: demo.AppID, Name: "leaky", Rows: []map[string]string{
		{"country": leakKey, "correct_answer": base64.StdEncoding.EncodeToString([]byte(leakKey))},
		{"country": "France " + hex.EncodeToString([]byte(leakKey)), "correct_answer": "Paris"},
	}})
	leakyRun, err := client.CreateEvaluation(ctx, models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{demo.VariantID}, EvaluatorConfigIDs: []string{demo.ExactMatchID},
		TestsetID: leaky, RateLimit: models.DefaultRateLimit(),
	})
	if err != nil {
		return err
	}
	if err := srv.WaitEvaluations(ctx); err != nil {
		return err
	}
	flaky := seedFlaky(srv)
	if err := setup2026(env); err != nil {
		return err
	}
	setupNoisy(env)

	// A variant whose parameters a float64 would change: an integer past
	// 2^53 and a decimal longer than a float64 keeps.
	exact := srv.AddVariant(agentatest.Variant{BaseID: demo.BaseID, ConfigName: "exact", Parameters: map[string]any{
		"seed": json.Number("9007199254740993"), "top_p": json.Number("0.1000000000000000055511151231257827"),
		"model": "gpt-4o"}})

	authed := agentatest.NewServer(agentatest.WithAPIKey(testAPIKey))
	env.Defer(authed.Close)
	agentatest.SeedDemo(authed)

	// A server without a worker: its evaluation stays INITIALIZED.
	stuck := agentatest.NewServer(agentatest.WithManualEvaluations())
	env.Defer(stuck.Close)
	stuckDemo := agentatest.SeedDemo(stuck)
	stuckClient, err := agenta.NewClient(stuck.URL())
	if err != nil {
		return err
	}
	stuckEvaluation, err := stuckClient.CreateEvaluation(ctx, models.NewEvaluation{
		AppID: stuckDemo.AppID, VariantIDs: []string{stuckDemo.VariantID}, EvaluatorConfigIDs: []string{stuckDemo.ExactMatchID},
		TestsetID: stuckDemo.TestsetID, RateLimit: models.DefaultRateLimit(),
	})
	if err != nil {
		return err
	}
	env.Values[stuckKey{}] = stuck
	env.Values[signalledKey{}] = &signalled{}

	// A server without a worker, driven by ctl: its evaluations move when
	// the script says, its faults come when the script injects them.
	manual := agentatest.NewServer(agentatest.WithManualEvaluations())
	env.Defer(manual.Close)
	agentatest.SeedDemo(manual)
	manualClient, err := agenta.NewClient(manual.URL())
	if err != nil {
		return err
	}
	manualEvaluation, err := manualClient.CreateEvaluation(ctx, models.NewEvaluation{
		AppID: demo.AppID, VariantIDs: []string{demo.VariantID}, EvaluatorConfigIDs: demo.EvaluatorConfigIDs(),
		TestsetID: demo.TestsetID, RateLimit: models.DefaultRateLimit(),
	})
	if err != nil {
		return err
	}
	manual.AdvanceEvaluations(math.MaxInt)
	manual.ResetRequests()
	env.Values[manualKey{}] = manual

	// Large runs, written row by row as they are sent.
	bigRunRows := bigRows
	if raceEnabled {
		bigRunRows = bigRows / 10
	}
	missingRun := httptest.NewServer(runServerOf(20, 0, missingResultsRow))
	env.Defer(missingRun.Close)
	bigRun := httptest.NewServer(runServer(bigRunRows, 0))
	env.Defer(bigRun.Close)
	hugeRun := httptest.NewServer(runServer(hugeRows, hugePadding))
	env.Defer(hugeRun.Close)
	// A fake with test sets of 500 and 1,000 rows, for the pacing.
	paced := agentatest.NewServer()
	env.Defer(paced.Close)
	pacedDemo := agentatest.SeedDemo(paced)
	manyRows := func(n int) []map[string]string {
		rows := make([]map[string]string, n)
		for i := range rows {
			rows[i] = map[string]string{"country": "France", "correct_answer": "Paris"}
		}
		return rows
	}
	paced500 := paced.AddTestset(agentatest.Testset{AppID: pacedDemo.AppID, Name: "five hundred", Rows: manyRows(500)})
	paced1000 := paced.AddTestset(agentatest.Testset{AppID: pacedDemo.AppID, Name: "a thousand", Rows: manyRows(1000)})
	// Rows whose one cell is just under the 16 MiB element limit.
	cellRun := httptest.NewServer(runServer(3, 15<<20))
	env.Defer(cellRun.Close)

	// A web server that is not the service: a login page for every path.
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>Please sign in</body></html>")
	}))
	env.Defer(html.Close)

	// A server that accepts every request and never answers it, until the
	// client goes away or the script ends.
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	// One that starts a 200 answer and never ends it, and one that cuts it.
	slowBody := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"variant_id":`)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	cutBody := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, `{"variant_id":`)
		w.(http.Flusher).Flush()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	}))
	env.Defer(func() { close(stop); hang.Close(); slowBody.Close(); cutBody.Close() })

	// A server of mid-2024, whose environment lookup answers every call
	// with the same 500.
	brokenEnv := agentatest.NewServer(agentatest.WithBrokenEnvironmentLookup())
	env.Defer(brokenEnv.Close)
	agentatest.SeedDemo(brokenEnv)

	// A large evaluation, written row by row as it is sent.
	big := httptest.NewServer(scenarioServer(func(w io.Writer) error { return writeBenchScenarios(w, bigRows) }))
	env.Defer(big.Close)

	down, err := freeAddr()
	if err != nil {
		return err
	}
	fakeAddr, err := freeAddr()
	if err != nil {
		return err
	}
	_, fakePort, _ := net.SplitHostPort(fakeAddr)

	for _, kv := range [][2]string{
		{"AGENTA_HOST", srv.URL()},
		{"APP_ID", demo.AppID}, {"TESTSET_ID", demo.TestsetID}, {"BASE_ID", demo.BaseID},
		{"PRODUCTION", demo.VariantID}, {"VERBOSE", demo.VerboseVariantID},
		{"EXACT", demo.ExactMatchID}, {"EDIT", demo.EditDistanceID}, {"TERSE", demo.TerseAnswerID},
		{"CRITIQUE", demo.AICritiqueID}, {"EXACT_NUMBERS", exact},
		{"SPAN_ID", demo.SpanID}, {"EVALUATION_ID", created[0].ID}, {"MISMATCH_TESTSET", mismatch},
		{"FAILED_EVALUATION_ID", failed[0].ID}, {"TRICKY_EVALUATION_ID", trickyRun[0].ID}, {"TRICKY_TESTSET", tricky},
		{"LEAKY_TESTSET", leaky}, {"LEAKY_EVALUATION_ID", leakyRun[0].ID}, {"LEAK_KEY", leakKey},
		{"LEAK_KEY_BASE64", base64.StdEncoding.EncodeToString([]byte(leakKey))}, {"LEAK_KEY_HEX", hex.EncodeToString([]byte(leakKey))},
		{"AUTH_HOST", authed.URL()}, {"AUTH_ROOT", strings.TrimSuffix(authed.URL(), "/api")}, {"TEST_API_KEY", testAPIKey},
		{"STUCK_HOST", stuck.URL()}, {"STUCK_EVALUATION_ID", stuckEvaluation[0].ID},
		{"BIG_HOST", big.URL + "/api"}, {"BIG_EVALUATION_ID", benchEvaluationID},
		{"DOWN_HOST", "http://" + down + "/api"}, {"HTML_HOST", html.URL + "/api"}, {"HANG_HOST", hang.URL + "/api"},
		{"BROKEN_ENV_HOST", brokenEnv.URL()},
		{"SLOW_BODY_HOST", slowBody.URL + "/api"}, {"CUT_BODY_HOST", cutBody.URL + "/api"}, {"FAKE_PORT", fakePort},
		{"FLAKY_APP", flaky.app}, {"FLAKY_TESTSET", flaky.testset}, {"FLAKY_GOOD", flaky.variants["good"]},
		{"FLAKY_BROKEN", flaky.variants["broken"]}, {"FLAKY_PROD", flaky.variants["prod"]},
		{"FLAKY_SAME", flaky.variants["same"]}, {"FLAKY_WORSE", flaky.variants["worse"]},
		{"SPARSE_TESTSET", flaky.sparse}, {"EMPTY_TESTSET", flaky.empty}, {"FLAKY_MISMATCHED", flaky.variants["mismatched"]},
		{"FLAKY_DOWN", flaky.variants["down"]},
		{"MANUAL_HOST", manual.URL()}, {"MANUAL_EVALUATION_ID", manualEvaluation[0].ID},
		{"MISSING_RUN_HOST", missingRun.URL + "/api"},
		{"BIG_RUN_HOST", bigRun.URL + "/api"}, {"BIG_RUN_ROWS", strconv.Itoa(bigRunRows)},
		{"CELL_RUN_HOST", cellRun.URL + "/api"},
		{"PACED_HOST", paced.URL()}, {"PACED_500", paced500}, {"PACED_1000", paced1000},
		{"HUGE_RUN_HOST", hugeRun.URL + "/api"}, {"HUGE_RUN_ROWS", strconv.Itoa(hugeRows)},
		{"HUGE_RUN_MIB", strconv.Itoa(hugeRows * (hugePadding + 700) >> 20)}, {"BIG_EXACT", benchEvaluators[0]},
	} {
		env.Setenv(kv[0], kv[1])
	}
	return nil
}

// flakyApp holds the ids seedFlaky adds.
type flakyApp struct {
	app, testset, sparse, empty string
	variants                    map[string]string // by config name
}

// seedFlaky adds an app that names "Capital of X" for country X, except
// that a variant's app call fails on the countries its parameter "fails"
// lists, and its test sets: 20 countries C01 … C20; the same with an
// expected answer on C01 and C02 only; and none.
func seedFlaky(srv *agentatest.Server) flakyApp {
	app := srv.AddApp(agentatest.App{Name: "flaky"})
	base := srv.AddBase(agentatest.Base{AppID: app, Name: "flaky", Application: func(parameters map[string]any, inputs map[string]string) (string, error) {
		fails, _ := parameters["fails"].(string)
		if slices.Contains(strings.Split(fails, ","), inputs["country"]) {
			return "", fmt.Errorf("model overloaded on %s", inputs["country"])
		}
		return "Capital of " + inputs["country"], nil
	}})
	countries := func(from, to int) string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf("C%02d", i))
		}
		return strings.Join(out, ",")
	}
	f := flakyApp{app: app, variants: map[string]string{}}
	for name, fails := range map[string]string{
		"good": "", "broken": countries(3, 20), "prod": countries(19, 20), "same": countries(19, 20), "worse": countries(18, 20),
		"down": countries(1, 20),
	} {
		f.variants[name] = srv.AddVariant(agentatest.Variant{BaseID: base, ConfigName: name, Parameters: map[string]any{
			"inputs": []any{map[string]any{"name": "country"}}, "fails": fails,
		}})
	}
	var rows, sparse []map[string]string
	for i := 1; i <= 20; i++ {
		country := fmt.Sprintf("C%02d", i)
		rows = append(rows, map[string]string{"country": country, "correct_answer": "Capital of " + country})
		answer := ""
		if i <= 2 {
			answer = "Capital of " + country
		}
		sparse = append(sparse, map[string]string{"country": country, "correct_answer": answer})
	}
	// A variant that reads a column the test sets do not have: the
	// service's worker breaks on it, and its evaluation ends FAILED.
	f.variants["mismatched"] = srv.AddVariant(agentatest.Variant{BaseID: base, ConfigName: "mismatched", Parameters: map[string]any{
		"inputs": []any{map[string]any{"name": "nation"}},
	}})
	f.testset = srv.AddTestset(agentatest.Testset{AppID: app, Name: "twenty", Rows: rows})
	f.sparse = srv.AddTestset(agentatest.Testset{AppID: app, Name: "sparse", Rows: sparse})
	f.empty = srv.AddTestset(agentatest.Testset{AppID: app, Name: "empty", Rows: []map[string]string{}})
	return f
}

// freeAddr returns an address of 127.0.0.1 that nothing listens on.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

type manualKey struct{}

// cmdCtl drives the MANUAL_HOST fake:
//
//	ctl advance [N]            make N steps of the worker, oldest evaluation first, all by
//	                           default (agentatest.AdvanceEvaluations: 2 per row)
//	ctl reads OP N             wait until OP (such as fetch_evaluation_status) has had N requests
//	                           since the last ctl reads, then forget them
//	ctl fault OP KEY=VALUE...  inject a fault in front of OP (any: every request):
//	                           for=D (a window) or times=N (always by default), status=N,
//	                           stall=D, drop, trickle=D, trickle-bytes=N, stall-after=N, cut-after=N
//	ctl restart D              drop every connection and refuse new ones for D
//	ctl clear                  remove every fault and forget the requests: before a command whose
//	                           requests a ctl reads counts
func cmdCtl(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: ctl advance|reads|fault|restart|clear ...")
	}
	srv := ts.Value(manualKey{}).(*agentatest.Server)
	number := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			ts.Fatalf("ctl %s: %q is not a number", args[0], s)
		}
		return n
	}
	duration := func(s string) time.Duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			ts.Fatalf("ctl %s: %v", args[0], err)
		}
		return d
	}
	operation := func(s string) agentatest.Operation {
		if s == "any" {
			return agentatest.AnyOperation
		}
		if !slices.Contains(agentatest.Operations(), agentatest.Operation(s)) {
			ts.Fatalf("ctl %s: no operation %q", args[0], s)
		}
		return agentatest.Operation(s)
	}
	switch args[0] {
	case "advance":
		n := math.MaxInt
		if len(args) == 2 {
			n = number(args[1])
		}
		ts.Logf("ctl advance: %d steps", srv.AdvanceEvaluations(n))
	case "reads":
		if len(args) != 3 {
			ts.Fatalf("usage: ctl reads OP N")
		}
		op, n := operation(args[1]), number(args[2])
		deadline := time.Now().Add(30 * time.Second)
		for len(srv.RequestsFor(op)) < n {
			if time.Now().After(deadline) {
				ts.Fatalf("the manual server got %d requests to %s in 30s, want %d", len(srv.RequestsFor(op)), op, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		srv.ResetRequests()
	case "fault":
		if len(args) < 3 {
			ts.Fatalf("usage: ctl fault OP KEY=VALUE...")
		}
		op := operation(args[1])
		var f agentatest.Fault
		var window time.Duration
		times := agentatest.Always
		for _, kv := range args[2:] {
			key, value, _ := strings.Cut(kv, "=")
			switch key {
			case "for":
				window = duration(value)
			case "times":
				times = number(value)
			case "status":
				f.Status = number(value)
			case "stall":
				f.Stall = duration(value)
			case "drop":
				f.Drop = true
			case "trickle":
				f.Trickle = duration(value)
			case "trickle-bytes":
				f.TrickleBytes = number(value)
			case "stall-after":
				f.StallAfter = number(value)
			case "cut-after":
				f.CutAfter = number(value)
			default:
				ts.Fatalf("ctl fault: unknown setting %q", kv)
			}
		}
		if window > 0 {
			srv.InjectFaultFor(op, window, f)
		} else {
			srv.InjectFault(op, times, f)
		}
	case "restart":
		if len(args) != 2 {
			ts.Fatalf("usage: ctl restart DURATION")
		}
		srv.Restart(duration(args[1]))
	case "clear":
		srv.ClearFaults()
		srv.ResetRequests()
	default:
		ts.Fatalf("ctl: unknown command %q", args[0])
	}
}

// cmdWaitListen waits until something accepts connections on HOST:PORT.
//
//	waitlisten 127.0.0.1:$FAKE_PORT
func cmdWaitListen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitlisten HOST:PORT")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", args[0], time.Second)
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nothing listens on %s after 20s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// signalled is the command a script last signalled, kept past wait
// (which drops it from the background list) for exitedin and exitcode.
type signalled struct {
	cmd *exec.Cmd
	at  time.Time
}

type signalledKey struct{}

// cmdSignal sends a signal, TERM (the default) or INT, to the most recent
// background command. (The built-in kill sends only SIGINT and SIGKILL.)
//
//	signal [TERM|INT]
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	sig := syscall.SIGTERM
	switch {
	case neg || len(args) > 1:
		ts.Fatalf("usage: signal [TERM|INT]")
	case len(args) == 1 && args[0] == "INT":
		sig = syscall.SIGINT
	case len(args) == 1 && args[0] != "TERM":
		ts.Fatalf("signal: unknown signal %q, want TERM or INT", args[0])
	}
	cmds := ts.BackgroundCmds()
	if len(cmds) == 0 {
		ts.Fatalf("signal: no background command")
	}
	last := cmds[len(cmds)-1]
	ts.Check(last.Process.Signal(sig))
	*ts.Value(signalledKey{}).(*signalled) = signalled{cmd: last, at: time.Now()}
}

// cmdFollow remembers the most recent background command, as signal does
// without signalling it, for exitcode after wait.
//
//	follow
func cmdFollow(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: follow")
	}
	cmds := ts.BackgroundCmds()
	if len(cmds) == 0 {
		ts.Fatalf("follow: no background command")
	}
	*ts.Value(signalledKey{}).(*signalled) = signalled{cmd: cmds[len(cmds)-1], at: time.Now()}
}

// cmdExitedIn checks, after wait, that the signalled command ended within
// a bound of the signal: a guard against a hang, with a wide margin.
//
//	exitedin 3s
func cmdExitedIn(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: exitedin DURATION")
	}
	limit, err := time.ParseDuration(args[0])
	ts.Check(err)
	last := ts.Value(signalledKey{}).(*signalled)
	if last.cmd == nil || last.cmd.ProcessState == nil {
		ts.Fatalf("exitedin: no signalled command has ended (run signal, then wait)")
	}
	// wait returned as soon as the process ended, so this bounds the exit.
	took := time.Since(last.at)
	ts.Logf("exited %s after the signal", took.Round(time.Millisecond))
	if took > limit {
		ts.Fatalf("exited %s after the signal, want within %s", took.Round(time.Millisecond), limit)
	}
}

// cmdExitCode checks, after wait, the exit code of the signalled (or
// followed) command.
//
//	exitcode 130
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: exitcode CODE")
	}
	var want int
	if _, err := fmt.Sscan(args[0], &want); err != nil {
		ts.Fatalf("exitcode: CODE %q is not a number", args[0])
	}
	last := ts.Value(signalledKey{}).(*signalled)
	if last.cmd == nil || last.cmd.ProcessState == nil {
		ts.Fatalf("exitcode: no signalled command has ended (run signal, then wait)")
	}
	if got := last.cmd.ProcessState.ExitCode(); got != want {
		ts.Fatalf("the signalled command exited %d (%s), want %d", got, last.cmd.ProcessState, want)
	}
}

// cmdWaitStatusReads waits until the STUCK_HOST server has answered n
// status reads since the last one, then forgets them: the command polling
// it is then inside its wait, with its signal handlers in place.
//
//	waitstatusreads 2
func cmdWaitStatusReads(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitstatusreads N")
	}
	var n int
	if _, err := fmt.Sscan(args[0], &n); err != nil {
		ts.Fatalf("waitstatusreads: N %q is not a number", args[0])
	}
	stuck := ts.Value(stuckKey{}).(*agentatest.Server)
	deadline := time.Now().Add(20 * time.Second)
	for len(stuck.RequestsFor(agentatest.OpFetchEvaluationStatus)) < n {
		if time.Now().After(deadline) {
			ts.Fatalf("the stuck server got %d status reads in 20s, want %d", len(stuck.RequestsFor(agentatest.OpFetchEvaluationStatus)), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stuck.ResetRequests()
}

type stuckKey struct{}

// cmdExits runs a command and checks its exit code; stdout and stderr are
// kept for the checks that follow, as exec keeps them.
//
//	exits 2 agenta eval run --bogus
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE COMMAND [ARGS...]")
	}
	var want int
	if _, err := fmt.Sscan(args[0], &want); err != nil {
		ts.Fatalf("exits: CODE %q is not a number", args[0])
	}
	err := ts.Exec(args[1], args[2:]...)
	got := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		got = exitErr.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdPeakRSS watches the most recent background command until it exits
// and fails when its peak RSS went over the limit, in MiB (three times
// that under the race detector). Where /proc
// does not give it, it says so and checks nothing.
//
//	peakrss 64
func cmdPeakRSS(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: peakrss MiB")
	}
	var limit int64
	if _, err := fmt.Sscan(args[0], &limit); err != nil {
		ts.Fatalf("peakrss: %q is not a number of MiB", args[0])
	}
	if raceEnabled {
		// The race detector's shadow memory roughly triples the binary's
		// RSS (42 MiB here for 17); the bound without it is the real one.
		limit *= 3
	}
	cmds := ts.BackgroundCmds()
	if len(cmds) == 0 {
		ts.Fatalf("peakrss: no background command")
	}
	peak := watchPeakRSS(cmds[len(cmds)-1].Process.Pid)()
	if peak == 0 {
		ts.Logf("peakrss: no VmHWM in /proc on this system, so the bound is not checked")
		return
	}
	ts.Logf("peak RSS %.1f MiB", float64(peak)/1024)
	if peak > limit<<10 {
		ts.Fatalf("peak RSS %.1f MiB, want at most %d MiB", float64(peak)/1024, limit)
	}
}

// cmdCSVRecords parses FILE (or stdout) as CSV and checks that it holds n
// records after the header, each with the header's number of fields, and
// that field NAME of record I (1-based) is VALUE, byte for byte, when given.
//
//	csvrecords stdout 3 [2 input.country 'Korea, Republic of']
func cmdCSVRecords(ts *testscript.TestScript, neg bool, args []string) {
	if neg || (len(args) != 2 && len(args) != 5) {
		ts.Fatalf("usage: csvrecords FILE N [RECORD COLUMN VALUE]")
	}
	file := args[0]
	args = args[1:]
	var n int
	if _, err := fmt.Sscan(args[0], &n); err != nil {
		ts.Fatalf("csvrecords: N %q is not a number", args[0])
	}
	records, err := csv.NewReader(strings.NewReader(ts.ReadFile(file))).ReadAll()
	if err != nil {
		ts.Fatalf("%s is not valid CSV: %v", file, err)
	}
	if len(records) != n+1 {
		ts.Fatalf("%s holds %d CSV records after the header, want %d", file, len(records)-1, n)
	}
	if len(args) == 1 {
		return
	}
	var row int
	if _, err := fmt.Sscan(args[1], &row); err != nil || row < 1 || row > n {
		ts.Fatalf("csvrecords: RECORD %q is not between 1 and %d", args[1], n)
	}
	column := slices.Index(records[0], args[2])
	if column < 0 {
		ts.Fatalf("the CSV header %q has no column %q", records[0], args[2])
	}
	if got := records[row][column]; got != args[3] {
		ts.Fatalf("CSV record %d, column %s is %q, want %q", row, args[2], got, args[3])
	}
}

// cmdJSONValues checks that stdout is n JSON values, one per line
// (jsonvalues lines N), or one JSON array of n elements (jsonvalues array N).
//
//	jsonvalues array 3
func cmdJSONValues(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 || (args[0] != "lines" && args[0] != "array") {
		ts.Fatalf("usage: jsonvalues lines|array N")
	}
	var n int
	if _, err := fmt.Sscan(args[1], &n); err != nil {
		ts.Fatalf("jsonvalues: N %q is not a number", args[1])
	}
	out := ts.ReadFile("stdout")
	var values []json.RawMessage
	if args[0] == "array" {
		if err := json.Unmarshal([]byte(out), &values); err != nil {
			ts.Fatalf("stdout is not one JSON array: %v", err)
		}
	} else {
		for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if line == "" && n == 0 {
				break
			}
			if !json.Valid([]byte(line)) {
				ts.Fatalf("line %d of stdout is not one JSON value: %.80q", i+1, line)
			}
			values = append(values, json.RawMessage(line))
		}
	}
	if len(values) != n {
		ts.Fatalf("stdout holds %d JSON values, want %d", len(values), n)
	}
}

// stoppedProcess is what agenta fake stop says when it has stopped a fake.
var stoppedProcess = regexp.MustCompile(`stopped process (\d+)`)

// cmdWorkflowStep writes the script of a step of a GitHub Actions workflow,
// the "run: |" block of the step with that name, to a file, unindented.
//
//	workflowstep release-gate.yml 'Release gate' gate.sh
func cmdWorkflowStep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: workflowstep WORKFLOW STEP_NAME FILE")
	}
	script, err := workflowStep(ts.ReadFile(args[0]), args[1])
	if err != nil {
		ts.Fatalf("workflowstep: %v", err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(script), 0o644))
}

// cmdEvalExports sets, in the script's environment, the variables of the
// export lines on stdout, as a shell's eval "$(agenta fake --background)"
// would. A fake whose AGENTA_FAKE_PID it sets is killed when the script
// ends, should the script fail before it stops the fake.
//
//	evalexports
func cmdEvalExports(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: evalexports")
	}
	n := 0
	for _, line := range strings.Split(ts.ReadFile("stdout"), "\n") {
		assignment, ok := strings.CutPrefix(line, "export ")
		if !ok {
			continue
		}
		name, value, ok := strings.Cut(assignment, "=")
		if !ok {
			ts.Fatalf("evalexports: %q is not NAME=VALUE", line)
		}
		if strings.HasPrefix(value, "'") {
			ts.Fatalf("evalexports: %q is quoted; the fake's values need no quotes", line)
		}
		ts.Setenv(name, value)
		n++
		if name == "AGENTA_FAKE_PID" {
			pid, err := strconv.Atoi(value)
			ts.Check(err)
			ts.Defer(func() {
				if state, err := inspectProcess(pid); err == nil && state == processFake {
					kill(pid)
				}
			})
		}
	}
	if n == 0 {
		ts.Fatalf("evalexports: stdout has no export lines")
	}
}

// cmdProcessGone checks that process PID, or the one whose id FILE holds
// (@FILE: the file's text, or the N of its last "stopped process N"), has
// ended: it is a guard against a fake left behind.
//
//	processgone $AGENTA_FAKE_PID
//	processgone @fake.pid
//	processgone @stderr
func cmdProcessGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: [!] processgone PID|@FILE")
	}
	text := args[0]
	if file, ok := strings.CutPrefix(text, "@"); ok {
		text = strings.TrimSpace(ts.ReadFile(file))
		if m := stoppedProcess.FindAllStringSubmatch(text, -1); m != nil {
			text = m[len(m)-1][1]
		}
	}
	pid, err := strconv.Atoi(text)
	if err != nil || pid <= 1 {
		ts.Fatalf("processgone: %q is not a process id", text)
	}
	state, err := inspectProcess(pid)
	ts.Check(err)
	if gone := state == processGone; gone == neg {
		ts.Fatalf("process %d: gone %v, want %v", pid, gone, !neg)
	}
}
