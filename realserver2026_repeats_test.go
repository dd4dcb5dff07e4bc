//go:build unix

package agenta_test

// TestRealServer2026Repeats (issue 27): a run with repeats on a real v0.113
// server. The kit's stand-in app answers deterministically, so repeats of
// it could never show a flaky case; the test serves its own copy of the
// kit's app (apps/capitals.py, read from ../shared at run time, never
// copied into the repo) that answers right with probability p per call,
// seeded per country and call, and logs every call so that the calls per
// repeat are counted, not assumed.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/require"
)

const (
	rs26RepeatsP     = 0.6
	rs26RepeatsCount = 5
	// rs26AppReturn is the kit app's answer line the flaky copy replaces.
	rs26AppReturn = `return CAPITALS.get(country.lower(), "Unknown")`
)

// rs26FlakyPatch makes each call right with probability RS_FLAKY_P: a hash
// of the seed, the country and that country's call counter, so a rerun
// with the same seed answers alike. Wrong answers are "Wrong".
const rs26FlakyPatch = `
import hashlib as _hashlib
_FLAKY_SEED = os.getenv("RS_FLAKY_SEED", "1")
_FLAKY_P = float(os.getenv("RS_FLAKY_P", "0.6"))
_FLAKY_LOG = os.getenv("RS_FLAKY_LOG", "")
_FLAKY_CALLS = {}


def _flaky_right(country):
    n = _FLAKY_CALLS.get(country, 0)
    _FLAKY_CALLS[country] = n + 1
    if _FLAKY_LOG:
        with open(_FLAKY_LOG, "a") as f:
            f.write(country + "\n")
    h = _hashlib.sha256(f"{_FLAKY_SEED}/{country}/{n}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2.0**64 < _FLAKY_P
`

func TestRealServer2026Repeats(t *testing.T) {
	url, key := strings.TrimRight(os.Getenv("AGENTA_RS26_URL"), "/"), os.Getenv("AGENTA_RS26_KEY")
	idsFile, work := os.Getenv("AGENTA_RS26_IDS"), os.Getenv("AGENTA_RS26_WORK")
	kit := os.Getenv("AGENTA_RS26_KIT")
	if kit == "" {
		kit = filepath.Join("..", "shared", "realserver-2026")
	}
	appSrc, errApp := os.ReadFile(filepath.Join(kit, "apps", "capitals.py"))
	py, errPy := os.ReadFile(filepath.Join(work, "python"))
	if url == "" || key == "" || idsFile == "" || work == "" || errApp != nil || errPy != nil {
		t.Skipf("TestRealServer2026Repeats skipped: needs AGENTA_RS26_URL, AGENTA_RS26_KEY (a real Agenta v0.113 server), AGENTA_RS26_IDS, AGENTA_RS26_WORK (the kit's RS_WORK, with its python) "+
			"and the kit at %s (AGENTA_RS26_KIT); .ci/realserver2026.sh sets them (app: %v, python: %v)", kit, errApp, errPy)
	}
	var seeded struct {
		IDs map[string]string `json:"ids"`
	}
	raw, err := os.ReadFile(idsFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &seeded))
	testsetRev, evaluatorRev := seeded.IDs["testset_revision_id"], seeded.IDs["evaluator_revision_id"]
	require.NotEmpty(t, testsetRev, "ids.testset_revision_id in %s", idsFile)
	require.NotEmpty(t, evaluatorRev, "ids.evaluator_revision_id in %s", idsFile)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// The flaky app, beside a call log.
	require.True(t, bytes.Contains(appSrc, []byte(rs26AppReturn)), "the kit's capitals.py no longer has the line %q", rs26AppReturn)
	patched := bytes.Replace(appSrc, []byte("\napp = ag.app"), []byte(rs26FlakyPatch+"\n\napp = ag.app"), 1)
	patched = bytes.Replace(patched, []byte(rs26AppReturn),
		[]byte(`answer = CAPITALS.get(country.lower(), "Unknown")
    return answer if _flaky_right(country) else "Wrong"`), 1)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "capitals.py"), patched, 0o600))
	callLog := filepath.Join(dir, "calls.log")
	appURL := rs26StartFlakyApp(t, ctx, kit, work, strings.TrimSpace(string(py)), dir, callLog, url)

	c, err := agenta.NewClient(url, agenta.WithAPIKey("ApiKey "+key), agenta.WithTimeout(time.Minute))
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)

	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	slug := "i27-repeats-" + hex.EncodeToString(suffix[:])
	appRev := rs26CreateApplication(t, ctx, url, key, slug, appURL)

	started := time.Now()
	ev, err := c.CreateSimpleEvaluation(ctx, models.SimpleEvaluationCreate{Name: slug, TestsetRevisionID: testsetRev,
		ApplicationRevisionID: appRev, EvaluatorRevisionIDs: []string{evaluatorRev}, Repeats: rs26RepeatsCount, Split: true})
	require.NoError(t, err)
	run, err := c.WaitRun(ctx, ev.ID, nil)
	require.NoError(t, err)
	took := time.Since(started)

	type repeat struct {
		country string
		pass    bool
	}
	byCase := map[string]map[int]repeat{}
	rows, passed := 0, 0
	outputs := map[string]bool{}
	for row, err := range c.StreamRunRows(ctx, ev.ID, nil) {
		require.NoError(t, err)
		rows++
		require.NotEmpty(t, row.TestcaseID, "row %s has no test case", row.Scenario.ID)
		require.Equal(t, row.TestcaseID, row.Scenario.TestcaseID, "row %s", row.Scenario.ID)
		require.Len(t, row.Scenario.Inputs, 1, "row %s inputs", row.Scenario.ID)
		require.Len(t, row.Scenario.Outputs, 1, "row %s outputs", row.Scenario.ID)
		require.Len(t, row.Scenario.Results, 1, "row %s verdicts", row.Scenario.ID)
		var pass bool
		require.NoError(t, json.Unmarshal(row.Scenario.Results[0].Result.Value, &pass),
			"row %s verdict %s", row.Scenario.ID, row.Scenario.Results[0].Result.Value)
		if pass {
			passed++
		}
		outputs[string(row.Scenario.Outputs[0].Result.Value)] = true
		if byCase[row.TestcaseID] == nil {
			byCase[row.TestcaseID] = map[int]repeat{}
		}
		_, dup := byCase[row.TestcaseID][row.RepeatIdx]
		require.False(t, dup, "test case %s repeat %d twice", row.TestcaseID, row.RepeatIdx)
		byCase[row.TestcaseID][row.RepeatIdx] = repeat{country: string(row.Scenario.Inputs[0].Value), pass: pass}
	}
	calls, _ := os.ReadFile(callLog)
	callCount := strings.Count(string(calls), "\n")
	t.Logf("run %s: status %s in %s; %d rows, %d passed; the app was called %d times; outputs %v",
		ev.ID, run.Status, took.Round(time.Second), rows, passed, callCount, outputs)

	require.Len(t, byCase, 5, "test cases")
	require.Equal(t, 5*rs26RepeatsCount, rows, "rows")
	flaky := 0
	for tc, reps := range byCase {
		require.Len(t, reps, rs26RepeatsCount, "repeats of test case %s", tc)
		passes := 0
		for i := range rs26RepeatsCount {
			r, ok := reps[i]
			require.True(t, ok, "test case %s has no repeat %d", tc, i)
			require.Equal(t, reps[0].country, r.country, "test case %s: repeats of another input", tc)
			if r.pass {
				passes++
			}
		}
		if passes > 0 && passes < rs26RepeatsCount {
			flaky++
		}
	}
	// With the app called once per repeat (flags.is_split), each call is
	// a fresh draw: all 5 cases steady at p=0.6 has probability
	// 5·(0.6^5+0.4^5)^5 ≈ 2e-7 per seed.
	require.Equal(t, 5*rs26RepeatsCount, callCount, "application calls: one per repeat with Split")
	require.Positive(t, flaky, "no flaky test case: the app's answers did not vary across repeats")
	share := float64(passed) / float64(rows)
	require.True(t, share >= 0.2 && share <= 0.95, "pass share %.2f is implausible for p=%.1f", share, rs26RepeatsP)

	// The same through the SDK's request (NewEvaluation.Repeats), as
	// evals.Evaluate and agenta eval run --repeats send it: the 2024
	// request mapped onto one run with data.repeats and flags.is_split,
	// so that the app is called once per repeat here too.
	require.NoError(t, c.DetectGeneration(ctx))
	const k = 3
	created, err := c.CreateEvaluation(ctx, models.NewEvaluation{AppID: slug, VariantIDs: []string{appRev},
		EvaluatorConfigIDs: []string{evaluatorRev}, TestsetID: testsetRev, RateLimit: models.DefaultRateLimit(), Repeats: k})
	require.NoError(t, err)
	require.Len(t, created, 1, "one run per variant, its repeats inside")
	_, err = c.WaitEvaluation(ctx, created[0].ID, &agenta.WaitOptions{Interval: 500 * time.Millisecond})
	require.NoError(t, err)
	perCase := map[string][]bool{}
	for s, err := range c.StreamEvaluationScenarios(ctx, created[0].ID) {
		require.NoError(t, err)
		require.NotEmpty(t, s.TestcaseID, "scenario %s", s.ID)
		require.Len(t, s.Results, 1, "scenario %s", s.ID)
		pass, _ := s.Results[0].Result.Bool()
		perCase[s.TestcaseID] = append(perCase[s.TestcaseID], pass)
	}
	calls, _ = os.ReadFile(callLog)
	t.Logf("CreateEvaluation with Repeats %d: run %s, %d test cases, outcomes %v; %d app calls in all", k, created[0].ID, len(perCase), perCase,
		strings.Count(string(calls), "\n"))
	require.Len(t, perCase, 5, "test cases")
	for tc, outcomes := range perCase {
		require.Len(t, outcomes, k, "repeats of test case %s", tc)
	}
	require.Equal(t, 5*rs26RepeatsCount+5*k, strings.Count(string(calls), "\n"), "application calls: one per repeat")
}

// rs26StartFlakyApp serves the flaky copy with the kit's python, uvicorn
// and PYTHONPATH (env.sh's RS_LIBS and the agenta SDK under RS_WORK) on a
// free port, its process group killed at cleanup.
func rs26StartFlakyApp(t *testing.T, ctx context.Context, kit, work, py, dir, callLog, apiURL string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	absKit, err := filepath.Abs(kit)
	require.NoError(t, err)
	cmd := exec.Command("bash", "-c", `. "$KIT/env.sh" && export AGENTA_API_URL="$FLAKY_API" &&
PYTHONPATH="$RS_LIBS:$RS_WORK/agenta/sdks/python:$RS_WORK/agenta/clients/python" exec "$RS_PY" -m uvicorn capitals:app --host 127.0.0.1 --port "$FLAKY_PORT"`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KIT="+absKit, "RS_WORK="+work, "RS_PY="+py, "FLAKY_API="+apiURL,
		fmt.Sprintf("FLAKY_PORT=%d", port), "RS_FLAKY_SEED=27", fmt.Sprintf("RS_FLAKY_P=%g", rs26RepeatsP),
		"RS_FLAKY_LOG="+callLog, "RS_APP_DELAY_MS=20")
	out, err := os.Create(filepath.Join(dir, "app.log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		_ = out.Close()
	})
	appURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, appURL+"/health", nil)
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return appURL
			}
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "app.log"))
			t.Fatalf("the flaky app exited before answering /health:\n%.3000s", log)
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "app.log"))
			t.Fatalf("the flaky app gave no 200 on /health within 90 s (last: %v):\n%.3000s", err, log)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// rs26CreateApplication creates an application served at appURL through the
// service's own route and returns its revision id.
func rs26CreateApplication(t *testing.T, ctx context.Context, url, key, slug, appURL string) string {
	body, err := json.Marshal(map[string]any{"application": map[string]any{"slug": slug, "name": slug,
		"description": "flaky stand-in app (issue 27)", "data": map[string]any{"url": appURL,
			"parameters": map[string]any{"prompt_template": "What is the capital of {country}?", "temperature": 0.7}}}})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/simple/applications/", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "ApiKey "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var a struct {
		Application *struct {
			RevisionID string `json:"revision_id"`
		} `json:"application"`
	}
	err = json.NewDecoder(resp.Body).Decode(&a)
	if err == nil && (a.Application == nil || a.Application.RevisionID == "") {
		err = errors.New("no application.revision_id")
	}
	require.NoError(t, err, "create application: status %d", resp.StatusCode)
	return a.Application.RevisionID
}
