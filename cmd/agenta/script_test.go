package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
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

// testAPIKey is the key the AUTH_HOST server requires.
const testAPIKey = "s3cret-key-0123456789"

// TestScripts runs testdata/script/*.txtar. Each script gets its own fake
// services, and their ids in its environment:
//
//	AGENTA_HOST       the demo fake (agentatest with SeedDemo), ending in /api
//	APP_ID TESTSET_ID BASE_ID PRODUCTION VERBOSE EXACT EDIT TERSE SPAN_ID
//	EVALUATION_ID     a finished evaluation of PRODUCTION with the three evaluators
//	MISMATCH_TESTSET  a test set whose columns do not match the app's inputs
//	AUTH_HOST         a fake that requires the key testAPIKey (AUTH_ROOT: without /api)
//	DOWN_HOST         a port of 127.0.0.1 that refuses connections
//	FAKE_PORT         a free port for agenta fake
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup:               setupScript,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      cmdExits,
			"waitlisten": cmdWaitListen,
			"sigterm":    cmdSIGTERM,
			"exitedin":   cmdExitedIn,
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
	if err := srv.WaitEvaluations(ctx); err != nil {
		return err
	}

	authed := agentatest.NewServer(agentatest.WithAPIKey(testAPIKey))
	env.Defer(authed.Close)
	agentatest.SeedDemo(authed)

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
		{"SPAN_ID", demo.SpanID}, {"EVALUATION_ID", created[0].ID}, {"MISMATCH_TESTSET", mismatch},
		{"AUTH_HOST", authed.URL()}, {"AUTH_ROOT", strings.TrimSuffix(authed.URL(), "/api")}, {"TEST_API_KEY", testAPIKey},
		{"DOWN_HOST", "http://" + down + "/api"}, {"FAKE_PORT", fakePort},
	} {
		env.Setenv(kv[0], kv[1])
	}
	return nil
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

// cmdSIGTERM sends SIGTERM to the most recent background command. (The
// built-in kill sends only SIGINT and SIGKILL.)
func cmdSIGTERM(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: sigterm")
	}
	cmds := ts.BackgroundCmds()
	if len(cmds) == 0 {
		ts.Fatalf("sigterm: no background command")
	}
	ts.Check(cmds[len(cmds)-1].Process.Signal(syscall.SIGTERM))
	ts.Setenv("SIGNALLED_AT", fmt.Sprint(time.Now().UnixNano()))
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
	var sent int64
	if _, err := fmt.Sscan(strings.TrimSpace(ts.Getenv("SIGNALLED_AT")), &sent); err != nil {
		ts.Fatalf("exitedin: no signal was sent (run sigterm first)")
	}
	took := time.Since(time.Unix(0, sent))
	ts.Logf("exited %s after the signal", took.Round(time.Millisecond))
	if took > limit {
		ts.Fatalf("exited %s after the signal, want within %s", took.Round(time.Millisecond), limit)
	}
}

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
