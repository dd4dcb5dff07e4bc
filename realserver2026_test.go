package agenta_test

// The differential test of the 2026 generation: one sequence of calls,
// run against a real Agenta v0.113 server (../shared/realserver-2026, set
// up by .ci/realserver2026.sh) and against agentatest's 2026 fake seeded
// alike (both seeded through the same HTTP requests), with every answer
// compared field by field once ids, timestamps and slugs are normalised.
// A difference fails the test unless an entry of rs26Allowed, which says
// why, covers it. Configure it with:
//
//	AGENTA_RS26_URL      the real server's base URL, such as http://127.0.0.1:19000/api
//	AGENTA_RS26_KEY      its API key (mkaccount.py)
//	AGENTA_RS26_APP_URL  the stand-in app's URL, such as http://127.0.0.1:19080
//
// Without them the test skips, saying so; .ci/run fails when it skips.
// Keep runs small: the kit's Postgres loses cells beyond ~50 rows.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
	"github.com/stretchr/testify/require"
)

// rs26Allowed lists the differences the comparison tolerates, each with
// the reason. A pattern matches the normalised JSON path of a value
// ("$.results[].error.stacktrace"); "*" matches one segment, "**" any.
// what is "value" (both have it; its value may differ) or "presence" (one
// side may lack it).
var rs26Allowed = []struct {
	pattern, what, why string
}{
	{"**.attributes.ag.metrics.duration.cumulative", "value",
		"durations: the real stand-in app sleeps RS_APP_DELAY_MS (100 ms) and evaluators take real time; the fake's calls take microseconds"},
	{"$.metrics[].data.*.attributes.ag.metrics.duration.cumulative.**", "value",
		"statistics of those durations (sums, means, percentiles, histogram bins) follow the durations"},
	{"**.stacktrace", "value",
		"the real app's traceback names the kit's files and lines; the fake's names agentatest's. Its presence and shape are compared"},
	{"**.stacktrace[]", "presence", "the lines of that traceback: the real one has a frame per middleware (6 lines), the fake's 3"},
	{"**.exception.stacktrace", "value", "the same traceback, in the trace's exception event"},
	{"$.metrics[].data.*.attributes.ag.metrics.duration.cumulative.hist[]", "presence",
		"a histogram has ⌈√n⌉ bins when the durations spread, one when they do not: the fake's evaluators all take 0.3 ms"},
	{"$.metrics[].data.*.attributes.ag.metrics.duration.cumulative.pscs", "presence",
		"the server leaves the spreads relative to the median out when the median is under 1% of a tail (compute_pscs); its durations decide that (a slow first call), the fake's even 0.3 ms never do"},
	{"$.rows[].Scenario.outputs[].latency", "value", "the rows' latency is the application's duration, which differs as above"},
	{"$.retrieval_info.references.environment_revision.version", "value",
		"an environment's revision counts every deployment to it in the project, other tests' included; the fake's project is new"},
	{"**.evaluator_revision.data.url", "value", "the evaluator's URL names the real kit's services port; the fake names 19090"},
	{"$.evaluator.data.url", "value", "the same services URL, in the simple create answer"},
}

// rs26Probe is one request of the sequence; path and body may name seeded
// objects as {symbol}.
type rs26Probe struct {
	name, method, path, body string
	auth                     string // "" sends the key as "ApiKey <key>"; "-" sends none; else this header
	unordered                bool   // the answer's lists have no defined order
	// racy names the paths whose values depend on when the request came,
	// which this probe does not compare: its own check (see racyChecks)
	// says what both answers must hold there instead.
	racy []string
}

type rs26Answer struct {
	status int
	body   []byte
}

// rs26Target is one server of the comparison and what the sequence has
// learned of it: the ids of the objects it named, by symbol.
type rs26Target struct {
	name, base, key string
	http            *http.Client
	client          *agenta.Client
	symbols         map[string]string // symbol → id
	names           map[string]string // normalised id → symbol
}

func (tg *rs26Target) learn(symbol, id string) {
	if id == "" {
		return
	}
	tg.symbols[symbol] = id
	tg.names[strings.ToLower(id)] = symbol
	tg.names[models.NormalizeTraceID(id)] = symbol
}

func (tg *rs26Target) expand(s string) string {
	return rs26Placeholder.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := tg.symbols[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

var rs26Placeholder = regexp.MustCompile(`\{[a-z][a-z0-9_.:-]*\}`)

func (tg *rs26Target) do(t *testing.T, p rs26Probe) rs26Answer {
	t.Helper()
	var body io.Reader
	if p.body != "" {
		body = strings.NewReader(tg.expand(p.body))
	}
	req, err := http.NewRequest(p.method, tg.base+tg.expand(p.path), body)
	require.NoError(t, err)
	switch p.auth {
	case "":
		req.Header.Set("Authorization", "ApiKey "+tg.key)
	case "-":
	default:
		req.Header.Set("Authorization", p.auth)
	}
	if p.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := tg.http.Do(req)
	require.NoError(t, err, "%s: %s", tg.name, p.name)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rs26Answer{resp.StatusCode, b}
}

// rs26Diff runs probes on both targets and collects their differences.
type rs26Diff struct {
	t           *testing.T
	real, fake  *rs26Target
	differences []string
	allowedUsed map[string]int
	probes      int
}

func (d *rs26Diff) fail(format string, args ...any) {
	d.differences = append(d.differences, fmt.Sprintf(format, args...))
}

// both runs p on both targets, compares the answers, and returns them.
func (d *rs26Diff) both(p rs26Probe) (real, fake rs26Answer) {
	d.t.Helper()
	d.probes++
	real, fake = d.real.do(d.t, p), d.fake.do(d.t, p)
	d.compareAnswers(p, real, fake)
	return real, fake
}

func (d *rs26Diff) compareAnswers(p rs26Probe, real, fake rs26Answer) {
	if real.status != fake.status {
		d.fail("%s: status real %d, fake %d\n  real: %.400s\n  fake: %.400s", p.name, real.status, fake.status, real.body, fake.body)
		return
	}
	var rv, fv any
	errR, errF := decodeJSON(real.body, &rv), decodeJSON(fake.body, &fv)
	if errR != nil || errF != nil {
		if !bytes.Equal(real.body, fake.body) {
			d.fail("%s: bodies differ and are not both JSON: real %.200q, fake %.200q", p.name, real.body, fake.body)
		}
		return
	}
	rn, fn := d.real.normalise(rv), d.fake.normalise(fv)
	d.compare(p, "$", rn, fn)
}

func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

var (
	rs26UUID      = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	rs26Hex32     = regexp.MustCompile(`^[0-9a-f]{32}$`)
	rs26Hex16     = regexp.MustCompile(`^[0-9a-f]{16}$`)
	rs26Slug      = regexp.MustCompile(`^[0-9a-f]{12}$`)
	rs26CopySlug  = regexp.MustCompile(`^[0-9a-f]{12}_[0-9a-f]{32}$`)
	rs26TimeZ     = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$`)
	rs26TimeNaive = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?$`)
	rs26StepKey   = regexp.MustCompile(`^(testset|application|evaluator)-[0-9a-f]{12}$`)
)

// normalise replaces what legitimately differs between two servers seeded
// alike by tokens: the ids of seeded objects by their symbol, other ids by
// their kind, timestamps by their form, random slugs by their pattern.
func (tg *rs26Target) normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			key := k
			if tg.isID(k) || rs26StepKey.MatchString(k) {
				key = tg.token(k)
			}
			out[key] = tg.normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tg.normalise(e)
		}
		return out
	case string:
		return tg.token(x)
	}
	return v
}

func (tg *rs26Target) isID(s string) bool {
	return rs26UUID.MatchString(strings.ToLower(s)) || rs26Hex32.MatchString(s)
}

func (tg *rs26Target) token(s string) string {
	if sym, ok := tg.names[strings.ToLower(s)]; ok {
		return "<" + sym + ">"
	}
	switch {
	case rs26UUID.MatchString(s):
		return "<uuid>"
	case rs26Hex32.MatchString(s):
		return "<hex32>"
	case rs26Hex16.MatchString(s):
		return "<hex16>"
	case rs26CopySlug.MatchString(s):
		return "<slug>_<hex32>"
	case rs26Slug.MatchString(s):
		return "<slug>"
	case rs26TimeZ.MatchString(s):
		return "<time Z>"
	case rs26TimeNaive.MatchString(s):
		return "<time naive>"
	case rs26StepKey.MatchString(s):
		i := strings.IndexByte(s, '-')
		return s[:i+1] + tg.token(s[i+1:])
	}
	// Ids inside text, such as a 400's "UUID('…')".
	return rs26Embedded.ReplaceAllStringFunc(s, func(id string) string {
		if sym, ok := tg.names[id]; ok {
			return "<" + sym + ">"
		}
		return "<uuid>"
	})
}

var rs26Embedded = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// allowed reports whether a difference at path is tolerated for what.
func (d *rs26Diff) allowed(p, what string) bool {
	for _, a := range rs26Allowed {
		if (a.what == what || a.what == "presence") && rs26Match(a.pattern, p) {
			d.allowedUsed[a.pattern]++
			return true
		}
	}
	return false
}

// rs26Match matches a path against a pattern: "*" one segment, "**" any.
func rs26Match(pattern, p string) bool {
	ps, xs := rs26Segments(pattern), rs26Segments(p)
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if i == len(ps) {
			return j == len(xs)
		}
		if ps[i] == "**" {
			for k := j; k <= len(xs); k++ {
				if match(i+1, k) {
					return true
				}
			}
			return false
		}
		if j == len(xs) {
			return false
		}
		// Brackets are literal here ("results[]"), not path.Match classes.
		pat := strings.NewReplacer("[", `\[`, "]", `\]`).Replace(ps[i])
		ok, _ := path.Match(pat, xs[j])
		return ok && match(i+1, j+1)
	}
	return match(0, 0)
}

// rs26Segments splits "$.a.b[].c" into "$", "a", "b[]", "c"; members
// whose name holds a dot (the metrics' attribute paths) stay whole when
// written in the pattern, and are split alike in a path.
func rs26Segments(p string) []string { return strings.Split(p, ".") }

func (d *rs26Diff) compare(p rs26Probe, at string, real, fake any) {
	if slices.Contains(p.racy, at) {
		return
	}
	switch r := real.(type) {
	case map[string]any:
		f, ok := fake.(map[string]any)
		if !ok {
			d.mismatch(p, at, real, fake)
			return
		}
		for _, k := range sortedKeys(r, f) {
			rv, inR := r[k]
			fv, inF := f[k]
			next := at + "." + k
			switch {
			case inR && !inF:
				if !d.allowed(next, "presence") {
					d.fail("%s: %s: the real server sends it (%.200s), the fake does not", p.name, next, rs26JSON(rv))
				}
			case !inR && inF:
				if !d.allowed(next, "presence") {
					d.fail("%s: %s: the fake sends it (%.200s), the real server does not", p.name, next, rs26JSON(fv))
				}
			default:
				d.compare(p, next, rv, fv)
			}
		}
	case []any:
		f, ok := fake.([]any)
		if !ok {
			d.mismatch(p, at, real, fake)
			return
		}
		if len(r) != len(f) {
			if !d.allowed(at+"[]", "presence") {
				d.fail("%s: %s: %d items on the real server, %d on the fake", p.name, at, len(r), len(f))
			}
			return
		}
		if p.unordered {
			r, f = rs26Sorted(r), rs26Sorted(f)
		}
		for i := range r {
			d.compare(p, at+"[]", r[i], f[i])
		}
	case json.Number:
		f, ok := fake.(json.Number)
		if !ok {
			d.mismatch(p, at, real, fake)
			return
		}
		a, _ := r.Float64()
		b, _ := f.Float64()
		if math.Abs(a-b) > 1e-9*math.Max(1, math.Abs(a)) && !d.allowed(at, "value") {
			d.fail("%s: %s: real %s, fake %s", p.name, at, r, f)
		}
	default:
		if fmt.Sprintf("%T", real) != fmt.Sprintf("%T", fake) {
			d.mismatch(p, at, real, fake)
			return
		}
		if real != fake && !d.allowed(at, "value") {
			d.fail("%s: %s: real %.200s, fake %.200s", p.name, at, rs26JSON(real), rs26JSON(fake))
		}
	}
}

func (d *rs26Diff) mismatch(p rs26Probe, at string, real, fake any) {
	if d.allowed(at, "value") && fmt.Sprintf("%T", real) == fmt.Sprintf("%T", fake) {
		return
	}
	if _, isList := real.([]any); isList && d.allowed(at+"[]", "value") {
		return
	}
	d.fail("%s: %s: real %.200s, fake %.200s", p.name, at, rs26JSON(real), rs26JSON(fake))
}

func sortedKeys(a, b map[string]any) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// rs26Sorted orders a list by each item's normalised JSON, ignoring the
// values the allow-list lets differ (so that a duration does not decide
// which items are paired).
func rs26Sorted(items []any) []any {
	out := slices.Clone(items)
	key := func(v any) string {
		b, _ := json.Marshal(rs26Blind(v))
		return string(b)
	}
	sort.SliceStable(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// rs26Blind drops what the allow-list lets differ (durations and their
// statistics, latencies, tracebacks), for ordering only.
func rs26Blind(v any) any { return rs26BlindIn(v, false) }

func rs26BlindIn(v any, timing bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch {
			case k == "stacktrace":
			case strings.Contains(k, "duration") || k == "latency":
				out[k] = "#" // its statistics too: even the histogram's length
			default:
				out[k] = rs26BlindIn(e, timing)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rs26BlindIn(e, timing)
		}
		return out
	case json.Number:
		if timing {
			return "#"
		}
	}
	return v
}

func rs26JSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// rs26Field reads a dotted path from a JSON answer, "" when absent.
func rs26Field(body []byte, dotted string) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	for _, k := range strings.Split(dotted, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				return ""
			}
			v = x[i]
		default:
			return ""
		}
	}
	s, _ := v.(string)
	return s
}

// learnBoth records the id at dotted in both answers under symbol.
func (d *rs26Diff) learnBoth(symbol string, real, fake rs26Answer, dotted string) {
	d.t.Helper()
	r, f := rs26Field(real.body, dotted), rs26Field(fake.body, dotted)
	if r == "" || f == "" {
		d.t.Fatalf("%s: no %s in an answer: real %.300s, fake %.300s", symbol, dotted, real.body, fake.body)
	}
	d.real.learn(symbol, r)
	d.fake.learn(symbol, f)
}

func rs26Config(t *testing.T) (url, key, appURL string) {
	url, key, appURL = os.Getenv("AGENTA_RS26_URL"), os.Getenv("AGENTA_RS26_KEY"), os.Getenv("AGENTA_RS26_APP_URL")
	if url == "" || key == "" || appURL == "" {
		t.Skip("TestRealServer2026 skipped: set AGENTA_RS26_URL, AGENTA_RS26_KEY and AGENTA_RS26_APP_URL to a real Agenta v0.113 " +
			"server (.ci/realserver2026.sh sets one up from ../shared/realserver-2026)")
	}
	return strings.TrimRight(url, "/"), key, strings.TrimRight(appURL, "/")
}

func TestRealServer2026(t *testing.T) {
	url, key, appURL := rs26Config(t)
	// The fake paces its worker like the kit (a row about every 100 ms to
	// a second): a stop sent right after create must find the run running
	// on both servers.
	fake := agentatest.NewTestServer(t, agentatest.WithGeneration(agentatest.Generation2026), agentatest.WithAPIKey(key),
		agentatest.WithEvaluationPace(time.Second))
	newTarget := func(name, base string) *rs26Target {
		c, err := agenta.NewClient(base, agenta.WithAPIKey("ApiKey "+key), agenta.WithTimeout(2*time.Minute))
		require.NoError(t, err)
		t.Cleanup(c.CloseIdleConnections)
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		return &rs26Target{name: name, base: base, key: key, client: c, http: &http.Client{Transport: tr, Timeout: 2 * time.Minute},
			symbols: map[string]string{}, names: map[string]string{}}
	}
	d := &rs26Diff{t: t, real: newTarget("real", url), fake: newTarget("fake", fake.URL()), allowedUsed: map[string]int{}}
	started := time.Now()
	rs26Sequence(t, d, appURL)
	used := make([]string, 0, len(d.allowedUsed))
	for p, n := range d.allowedUsed {
		used = append(used, fmt.Sprintf("%s ×%d", p, n))
	}
	sort.Strings(used)
	t.Logf("real-server 2026 differential: %d probes in %s; allow-list entries used: %s", d.probes,
		time.Since(started).Round(time.Second), strings.Join(used, "; "))
	if len(d.differences) > 0 {
		t.Errorf("%d differences between the real v0.113 server and agentatest's 2026 generation, not covered by rs26Allowed:\n%s",
			len(d.differences), strings.Join(d.differences, "\n"))
	}
}

// rs26Sequence is the sequence of calls, in the order of the research's
// differential probes (2026-findings.md §d).
func rs26Sequence(t *testing.T, d *rs26Diff, appURL string) {
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	s := "i22a-" + hex.EncodeToString(suffix[:])
	for _, tg := range []*rs26Target{d.real, d.fake} {
		tg.learn("s", s) // not an id: only for expand
	}

	// 1. Detection, auth, health.
	d.both(rs26Probe{name: "probe", method: "GET", path: "/evaluations/runs/00000000-0000-0000-0000-000000000000"})
	d.both(rs26Probe{name: "probe without key", method: "GET", path: "/evaluations/runs/00000000-0000-0000-0000-000000000000", auth: "-"})
	d.both(rs26Probe{name: "probe with Bearer junk", method: "GET", path: "/evaluations/runs/00000000-0000-0000-0000-000000000000", auth: "Bearer junk"})
	d.both(rs26Probe{name: "unknown route without key", method: "GET", path: "/definitely-not-a-route", auth: "-"})
	d.both(rs26Probe{name: "unknown route", method: "GET", path: "/definitely-not-a-route"})
	d.both(rs26Probe{name: "2024 route", method: "GET", path: "/evaluations/00000000-0000-0000-0000-000000000000/status"})
	d.both(rs26Probe{name: "health", method: "GET", path: "/health", auth: "-"})
	for _, tg := range []*rs26Target{d.real, d.fake} {
		g, err := tg.client.Generation(context.Background())
		require.NoError(t, err, tg.name)
		require.Equal(t, agenta.Generation2026, g, tg.name)
	}

	// Seeding, alike on both, through the service's own create routes.
	params := `{"prompt_template":"What is the capital of {country}?","temperature":0.7}`
	r, f := d.both(rs26Probe{name: "create application", method: "POST", path: "/simple/applications/",
		body: `{"application":{"slug":"{s}","name":"{s}","description":"realserver stand-in app","data":{"url":"` + appURL + `","parameters":` + params + `}}}`})
	d.learnBoth("user", r, f, "application.created_by_id")
	d.learnBoth("app", r, f, "application.id")
	d.learnBoth("variant", r, f, "application.variant_id")
	d.learnBoth("rev1", r, f, "application.revision_id")
	d.both(rs26Probe{name: "create application, slug taken", method: "POST", path: "/simple/applications/",
		body: `{"application":{"slug":"{s}","data":{"url":"` + appURL + `"}}}`})
	rows := func(pairs ...string) string {
		var items []string
		for i := 0; i+1 < len(pairs); i += 2 {
			items = append(items, `{"data":{"country":"`+pairs[i]+`","correct_answer":"`+pairs[i+1]+`"}}`)
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	for _, ts := range []struct{ symbol, slug, rows string }{
		{"ts", "{s}", rows("France", "Paris", "Germany", "Berlin", "Italy", "Rome", "Spain", "Madrid", "Japan", "Tokyo")},
		{"err", "{s}-err", rows("France", "Paris", "ERRland", "X", "Germany", "Berlin", "ERRor2", "Y", "Italy", "Naples")},
		{"dup", "{s}-dup", rows("France", "Paris", "France", "Paris", "Spain", "Madrid")},
		{"empty", "{s}-empty", "[]"},
	} {
		r, f := d.both(rs26Probe{name: "create test set " + ts.symbol, method: "POST", path: "/simple/testsets/",
			body: `{"testset":{"slug":"` + ts.slug + `","name":"` + ts.slug + `","data":{"testcases":` + ts.rows + `}}}`})
		d.learnBoth(ts.symbol, r, f, "testset.id")
		d.learnBoth(ts.symbol+"-rev", r, f, "testset.revision_id")
		for i := 0; i < 5; i++ {
			if rs26Field(r.body, fmt.Sprintf("testset.data.testcase_ids.%d", i)) != "" {
				d.learnBoth(fmt.Sprintf("%s-tc%d", ts.symbol, i), r, f, fmt.Sprintf("testset.data.testcase_ids.%d", i))
			}
		}
	}
	// The revisions' slugs name the runs' steps: learn them.
	for _, sym := range []string{"ts-rev", "err-rev", "dup-rev"} {
		r, f := d.both(rs26Probe{name: "retrieve " + sym, method: "POST", path: "/testsets/revisions/retrieve",
			body: `{"testset_revision_ref":{"id":"{` + sym + `}"},"include_testcases":false}`})
		d.learnBoth(sym+"-slug", r, f, "testset_revision.slug")
	}
	for _, ev := range []struct{ symbol, slug, uri, params string }{
		{"exact", "{s}-exact", "auto_exact_match", `{"correct_answer_key":"correct_answer"}`},
		{"regex", "{s}-regex", "auto_regex_test", `{"regex_pattern":"^[A-Z][a-z]+$","regex_should_match":true}`},
		{"lev", "{s}-lev", "auto_levenshtein_distance", `{"correct_answer_key":"correct_answer"}`},
	} {
		r, f := d.both(rs26Probe{name: "create evaluator " + ev.symbol, method: "POST", path: "/simple/evaluators/",
			body: `{"evaluator":{"slug":"` + ev.slug + `","name":"` + ev.slug + `","data":{"uri":"agenta:builtin:` + ev.uri + `:v0","parameters":` + ev.params + `}}}`})
		d.learnBoth(ev.symbol, r, f, "evaluator.id")
		d.learnBoth(ev.symbol+"-rev", r, f, "evaluator.revision_id")
		r, f = d.both(rs26Probe{name: "retrieve " + ev.symbol, method: "POST", path: "/evaluators/revisions/retrieve",
			body: `{"evaluator_revision_ref":{"id":"{` + ev.symbol + `-rev}"}}`})
		d.learnBoth(ev.symbol+"-rev-slug", r, f, "evaluator_revision.slug")
	}

	// 2. Application revisions and variants.
	retrieve := func(name, body string) (rs26Answer, rs26Answer) {
		return d.both(rs26Probe{name: "retrieve " + name, method: "POST", path: "/applications/revisions/retrieve", body: body})
	}
	r, f = retrieve("by revision id", `{"application_revision_ref":{"id":"{rev1}"}}`)
	d.learnBoth("rev1-slug", r, f, "application_revision.slug")
	d.learnBoth("variant-slug", r, f, "application_revision.application_variant_slug")
	retrieve("by variant", `{"application_variant_ref":{"id":"{variant}"}}`)
	retrieve("by app id", `{"application_ref":{"id":"{app}"}}`)
	retrieve("by app slug", `{"application_ref":{"slug":"{s}"}}`)
	retrieve("by variant and version", `{"application_variant_ref":{"id":"{variant}"},"application_revision_ref":{"version":"1"}}`)
	retrieve("version only", `{"application_revision_ref":{"version":"1"}}`)
	retrieve("empty", `{}`)
	retrieve("unknown revision", `{"application_revision_ref":{"id":"01a215fe-0000-7000-8000-000000000000"}}`)
	retrieve("test-set revision id", `{"application_revision_ref":{"id":"{ts-rev}"}}`)
	retrieve("bad uuid", `{"application_revision_ref":{"id":"not-a-uuid"}}`)
	d.both(rs26Probe{name: "fetch revision", method: "GET", path: "/applications/revisions/{rev1}"})
	d.both(rs26Probe{name: "fetch revision unknown", method: "GET", path: "/applications/revisions/01a215fe-0000-7000-8000-000000000000"})
	d.both(rs26Probe{name: "fetch revision bad id", method: "GET", path: "/applications/revisions/xyz"})
	d.both(rs26Probe{name: "fetch variant", method: "GET", path: "/applications/variants/{variant}"})
	d.both(rs26Probe{name: "fetch variant with a revision id", method: "GET", path: "/applications/variants/{rev1}"})

	// 3. Environments.
	byEnv := `{"environment_ref":{"slug":"production"},"application_ref":{"slug":"{s}"}}`
	retrieve("by environment before deploy", byEnv)
	r, f = d.both(rs26Probe{name: "deploy", method: "POST", path: "/applications/revisions/deploy",
		body: `{"application_revision_ref":{"id":"{rev1}"},"environment_ref":{"slug":"production"},"message":"i22a deploy"}`})
	_, _ = r, f
	rs26IgnoreEnvironmentRevision(d)
	retrieve("by environment", byEnv)
	retrieve("by environment and key", `{"environment_ref":{"slug":"production"},"key":"{s}.revision"}`)
	retrieve("by environment and app id", `{"environment_ref":{"slug":"production"},"application_ref":{"id":"{app}"}}`)
	retrieve("staging, nothing deployed", `{"environment_ref":{"slug":"staging"},"application_ref":{"slug":"{s}"}}`)
	retrieve("unknown environment", `{"environment_ref":{"slug":"nope-env"},"application_ref":{"slug":"{s}"}}`)
	retrieve("environment without key", `{"environment_ref":{"slug":"production"}}`)
	d.both(rs26Probe{name: "deploy to an unknown environment", method: "POST", path: "/applications/revisions/deploy",
		body: `{"application_revision_ref":{"id":"{rev1}"},"environment_ref":{"slug":"nope-env"}}`})

	// 4. Fork and commit.
	r, f = d.both(rs26Probe{name: "fork", method: "POST", path: "/applications/variants/fork",
		body: `{"application_variant_ref":{"id":"{variant}"},"application_variant":{"slug":"{s}-fork-a","name":"fork a","description":"research fork"}}`})
	d.learnBoth("fork-a", r, f, "application_variant.id")
	r, f = retrieve("fork's latest", `{"application_variant_ref":{"id":"{fork-a}"}}`)
	d.learnBoth("fork-a-rev1", r, f, "application_revision.id")
	d.both(rs26Probe{name: "fork onto a taken slug", method: "POST", path: "/applications/variants/fork",
		body: `{"application_variant_ref":{"id":"{variant}"},"application_variant":{"slug":"{s}-fork-a"}}`})
	d.both(rs26Probe{name: "fork without slug", method: "POST", path: "/applications/variants/fork",
		body: `{"application_variant_ref":{"id":"{variant}"},"application_variant":{}}`})
	d.both(rs26Probe{name: "fork an unknown variant", method: "POST", path: "/applications/variants/fork",
		body: `{"application_variant_ref":{"id":"01a215fe-0000-7000-8000-000000000000"},"application_variant":{"slug":"{s}-x"}}`})
	commit := func(name, body string) (rs26Answer, rs26Answer) {
		return d.both(rs26Probe{name: "commit " + name, method: "POST", path: "/applications/revisions/commit", body: body})
	}
	r, f = commit("data", `{"application_revision":{"application_variant_id":"{fork-a}","message":"full data","data":{"url":"`+appURL+`","parameters":{"prompt_template":"Capital of {country}?","temperature":0.2}}}}`)
	d.learnBoth("fork-a-rev2", r, f, "application_revision.id")
	r, f = commit("delta set", `{"application_revision":{"application_variant_id":"{fork-a}","message":"delta","delta":{"set":{"parameters":{"temperature":0.9,"extra":{"a":1}}}}}}`)
	d.learnBoth("fork-a-rev3", r, f, "application_revision.id")
	commit("stale base", `{"application_revision":{"application_variant_id":"{fork-a}","base_revision_id":"{fork-a-rev2}","message":"stale","delta":{"set":{"parameters":{"temperature":0.1}}}}}`)
	commit("fresh base, remove", `{"application_revision":{"application_variant_id":"{fork-a}","base_revision_id":"{fork-a-rev3}","message":"fresh base","delta":{"remove":["parameters.extra"]}}}`)
	commit("unknown variant", `{"application_revision":{"application_variant_id":"01a215fe-0000-7000-8000-000000000000","message":"x","data":{"parameters":{}}}}`)
	commit("neither data nor delta", `{"application_revision":{"application_variant_id":"{fork-a}","message":"empty"}}`)
	r, f = d.both(rs26Probe{name: "fork at revision 2", method: "POST", path: "/applications/variants/fork",
		body: `{"application_variant_ref":{"id":"{fork-a}"},"application_revision_ref":{"id":"{fork-a-rev2}"},"application_variant":{"slug":"{s}-fork-b"}}`})
	d.learnBoth("fork-b", r, f, "application_variant.id")
	retrieve("fork at revision 2, latest", `{"application_variant_ref":{"id":"{fork-b}"}}`)
	retrieve("contradictory", `{"application_variant_ref":{"id":"{variant}"},"application_revision_ref":{"id":"{fork-a-rev2}"}}`)

	// 5. Test-set and evaluator revisions.
	for name, body := range map[string]string{
		"by id": `{"testset_ref":{"id":"{ts}"},"include_testcases":true}`, "by slug": `{"testset_ref":{"slug":"{s}"}}`,
		"by revision": `{"testset_revision_ref":{"id":"{ts-rev}"}}`, "ids only": `{"testset_revision_ref":{"id":"{ts-rev}"},"include_testcases":false}`,
		"unknown": `{"testset_ref":{"slug":"{s}-nope"}}`, "empty": `{}`, "empty test set": `{"testset_ref":{"id":"{empty}"}}`,
		"version only": `{"testset_revision_ref":{"version":"1"}}`,
	} {
		d.both(rs26Probe{name: "retrieve test set " + name, method: "POST", path: "/testsets/revisions/retrieve", body: body})
	}
	for name, body := range map[string]string{
		"by id": `{"evaluator_ref":{"id":"{exact}"}}`, "by slug": `{"evaluator_ref":{"slug":"{s}-lev"}}`,
		"by revision": `{"evaluator_revision_ref":{"id":"{regex-rev}"}}`, "unknown": `{"evaluator_ref":{"slug":"{s}-nope"}}`, "empty": `{}`,
	} {
		d.both(rs26Probe{name: "retrieve evaluator " + name, method: "POST", path: "/evaluators/revisions/retrieve", body: body})
	}
	d.both(rs26Probe{name: "fetch test case", method: "GET", path: "/testcases/{ts-tc2}"})
	d.both(rs26Probe{name: "fetch unknown test case", method: "GET", path: "/testcases/01a215fe-0000-7000-8000-000000000000"})
	ids := `["{ts-tc0}","{ts-tc1}","{ts-tc2}","{ts-tc3}","{ts-tc4}"]`
	r, f = d.both(rs26Probe{name: "test cases by ids, page 1", method: "POST", path: "/testcases/query", body: `{"testcase_ids":` + ids + `,"windowing":{"limit":2}}`})
	for page := 2; page <= 3; page++ {
		var rw, fw any
		_ = json.Unmarshal(r.body, &map[string]any{"windowing": &rw})
		_ = json.Unmarshal(f.body, &map[string]any{"windowing": &fw})
		rb, _ := json.Marshal(rw)
		fb, _ := json.Marshal(fw)
		p := rs26Probe{name: fmt.Sprintf("test cases by ids, page %d", page), method: "POST", path: "/testcases/query"}
		r, f = d.real.do(t, rs26Probe{method: "POST", path: p.path, body: `{"testcase_ids":` + ids + `,"windowing":` + string(rb) + `}`}),
			d.fake.do(t, rs26Probe{method: "POST", path: p.path, body: `{"testcase_ids":` + ids + `,"windowing":` + string(fb) + `}`})
		d.probes++
		d.compareAnswers(p, r, f)
	}
	d.both(rs26Probe{name: "test cases by ids, exact limit", method: "POST", path: "/testcases/query", body: `{"testcase_ids":` + ids + `,"windowing":{"limit":5}}`})
	d.both(rs26Probe{name: "test cases by revision", method: "POST", path: "/testcases/query", body: `{"testset_revision_ref":{"id":"{ts-rev}"},"windowing":{"limit":3}}`})
	d.both(rs26Probe{name: "test cases by revision, exact", method: "POST", path: "/testcases/query", body: `{"testset_revision_ref":{"id":"{ts-rev}"},"windowing":{"limit":5}}`})
	d.both(rs26Probe{name: "test cases without filter", method: "POST", path: "/testcases/query", body: `{}`})
	d.both(rs26Probe{name: "test cases unknown", method: "POST", path: "/testcases/query", body: `{"testcase_ids":["01a215fe-0000-7000-8000-000000000000"]}`})

	// 6. Creates that fail.
	create := func(name, data string) (rs26Answer, rs26Answer) {
		return d.both(rs26Probe{name: "create " + name, method: "POST", path: "/simple/evaluations/", body: `{"evaluation":{"name":"` + name + `","data":` + data + `}}`})
	}
	steps := func(ts, app, evs string) string {
		return `{"testset_steps":{"{` + ts + `}":"auto"},"application_steps":{` + app + `},"evaluator_steps":{` + evs + `}}`
	}
	create("empty test set", steps("empty-rev", `"{rev1}":"auto"`, `"{exact-rev}":"auto"`))
	create("unknown app revision", steps("ts-rev", `"01a215fe-0000-7000-8000-000000000000":"auto"`, `"{exact-rev}":"auto"`))
	create("variant id", steps("ts-rev", `"{variant}":"auto"`, `"{exact-rev}":"auto"`))
	create("evaluator id", steps("ts-rev", `"{rev1}":"auto"`, `"{exact}":"auto"`))
	d.both(rs26Probe{name: "create without data", method: "POST", path: "/simple/evaluations/", body: `{"evaluation":{"name":"no data"}}`})
	d.both(rs26Probe{name: "create with an empty body", method: "POST", path: "/simple/evaluations/"})
	create("bad origin", `{"testset_steps":{"{ts-rev}":"nope"},"application_steps":{"{rev1}":"auto"},"evaluator_steps":{"{exact-rev}":"auto"}}`)
	r, f = create("two apps", steps("ts-rev", `"{rev1}":"auto","{fork-a-rev2}":"auto"`, `"{exact-rev}":"auto"`))
	d.learnBoth("two-apps", r, f, "evaluation.id")

	// 7–10. Runs: the basic run, failing rows with three evaluators,
	// repeats stopped at once, repeats split, and the list form.
	r, f = create("basic", steps("ts-rev", `"{rev1}":"auto"`, `"{exact-rev}":"auto"`))
	d.learnBoth("basic", r, f, "evaluation.id")
	first := rs26Probe{name: "basic run, first read", method: "GET", path: "/evaluations/runs/{basic}"}
	d.compareStatus(first)
	r, f = create("err", steps("err-rev", `"{rev1}":"auto"`, `"{exact-rev}":"auto","{regex-rev}":"auto","{lev-rev}":"auto"`))
	d.learnBoth("errrun", r, f, "evaluation.id")
	r, f = d.both(rs26Probe{name: "create repeats 3", method: "POST", path: "/simple/evaluations/",
		body: `{"evaluation":{"name":"repeats","data":` + strings.Replace(steps("ts-rev", `"{rev1}":"auto"`, `"{exact-rev}":"auto"`), "}}", `},"repeats":3}`, 1) + `}}`})
	d.learnBoth("repeats", r, f, "evaluation.id")
	// Whether the run is still going when the stop arrives depends on
	// how fast each server runs it: the fake's worker may have finished
	// its 15 cells, the real one rarely has (it failed once as
	// real "running", fake "success"). So the status is not compared;
	// what holds whenever the stop comes is: the stop cancels nothing and
	// fails nothing, and it clears is_active (compared). That the run
	// then ends success on both is the "repeats run" probe below.
	r, f = d.both(rs26Probe{name: "stop a run at once", method: "POST", path: "/simple/evaluations/{repeats}/stop",
		racy: []string{"$.evaluation.data.status"}})
	for _, a := range []struct {
		side   string
		answer rs26Answer
	}{{"real", r}, {"fake", f}} {
		var stopped struct {
			Evaluation struct {
				Data struct {
					Status string `json:"status"`
				} `json:"data"`
			} `json:"evaluation"`
		}
		if err := json.Unmarshal(a.answer.body, &stopped); err != nil ||
			!slices.Contains([]string{"pending", "running", "success"}, stopped.Evaluation.Data.Status) {
			d.fail("stop a run at once: the %s server's answer has status %q (%v), want pending, running or success: a stop neither cancels nor fails a run",
				a.side, stopped.Evaluation.Data.Status, err)
		}
	}
	r, f = d.both(rs26Probe{name: "create repeats 2 split", method: "POST", path: "/simple/evaluations/",
		body: `{"evaluation":{"name":"split","flags":{"is_split":true},"data":` + strings.Replace(steps("err-rev", `"{rev1}":"auto"`, `"{exact-rev}":"auto"`), "}}", `},"repeats":2}`, 1) + `}}`})
	d.learnBoth("split", r, f, "evaluation.id")
	r, f = d.both(rs26Probe{name: "create list form", method: "POST", path: "/simple/evaluations/",
		body: `{"evaluation":{"name":"list","data":{"testset_steps":["{dup-rev}"],"application_steps":["{rev1}"],"evaluator_steps":["{exact-rev}"]}}}`})
	d.learnBoth("list", r, f, "evaluation.id")

	runs := []string{"basic", "errrun", "repeats", "split"}
	d.waitRuns(runs)
	d.both(rs26Probe{name: "two apps run", method: "GET", path: "/evaluations/runs/{two-apps}"})
	d.both(rs26Probe{name: "list-form run, stopped", method: "POST", path: "/simple/evaluations/{list}/stop"})
	d.both(rs26Probe{name: "stop an unknown run", method: "POST", path: "/simple/evaluations/01a215fe-0000-7000-8000-000000000000/stop"})
	d.both(rs26Probe{name: "stop a bad id", method: "POST", path: "/simple/evaluations/xyz/stop"})
	for _, run := range runs {
		d.both(rs26Probe{name: run + " run", method: "GET", path: "/evaluations/runs/{" + run + "}"})
		d.both(rs26Probe{name: run + " simple", method: "GET", path: "/simple/evaluations/{" + run + "}"})
		d.both(rs26Probe{name: run + " scenarios", method: "POST", path: "/evaluations/scenarios/query", body: `{"scenario":{"run_id":"{` + run + `}"}}`, unordered: true})
		d.both(rs26Probe{name: run + " results", method: "POST", path: "/evaluations/results/query", body: `{"result":{"run_id":"{` + run + `}"}}`, unordered: true})
		d.both(rs26Probe{name: run + " metrics", method: "POST", path: "/evaluations/metrics/query", body: `{"metrics":{"run_id":"{` + run + `}"}}`, unordered: true})
		d.compareRows(run)
	}
	d.both(rs26Probe{name: "stop a finished run", method: "POST", path: "/simple/evaluations/{basic}/stop"})

	// 11. Windowing.
	for _, q := range []struct{ name, path, member string }{
		{"scenarios", "/evaluations/scenarios/query", "scenario"}, {"results", "/evaluations/results/query", "result"},
		{"metrics", "/evaluations/metrics/query", "metrics"},
	} {
		for _, limit := range []int{2, 4} {
			d.pages(q.name, q.path, `{"`+q.member+`":{"run_id":"{basic}"},"windowing":{"limit":`+strconv.Itoa(limit)+`%s}}`)
		}
	}
	d.pages("results limit 0", "/evaluations/results/query", `{"result":{"run_id":"{basic}"},"windowing":{"limit":0%s}}`)
	d.both(rs26Probe{name: "results bad next", method: "POST", path: "/evaluations/results/query", body: `{"result":{"run_id":"{basic}"},"windowing":{"limit":3,"next":"not-a-uuid"}}`})
	d.both(rs26Probe{name: "scenarios of an unknown run", method: "POST", path: "/evaluations/scenarios/query", body: `{"scenario":{"run_id":"01a215fe-0000-7000-8000-000000000000"}}`})
	d.both(rs26Probe{name: "results by status", method: "POST", path: "/evaluations/results/query", body: `{"result":{"run_id":"{errrun}","statuses":["failure"]}}`, unordered: true})

	// 12. Traces and spans.
	d.traces()

	// 13. Metrics refresh.
	d.both(rs26Probe{name: "refresh", method: "POST", path: "/evaluations/metrics/refresh", body: `{"metrics":{"run_id":"{basic}"}}`})
	d.both(rs26Probe{name: "refresh an unknown run", method: "POST", path: "/evaluations/metrics/refresh", body: `{"metrics":{"run_id":"01a215fe-0000-7000-8000-000000000000"}}`})
}

// rs26IgnoreEnvironmentRevision names the environment's ids on each
// server: the project's environments exist before the test and differ.
func rs26IgnoreEnvironmentRevision(d *rs26Diff) {
	for _, tg := range []*rs26Target{d.real, d.fake} {
		a := tg.do(d.t, rs26Probe{method: "POST", path: "/environments/query", body: `{}`})
		var doc struct {
			Environments []struct{ ID, Slug string } `json:"environments"`
		}
		_ = json.Unmarshal(a.body, &doc)
		for _, e := range doc.Environments {
			tg.learn("env-"+e.Slug, e.ID)
		}
	}
}

// compareStatus compares the status of a read without its body (the
// first read of a run races its worker on both servers).
func (d *rs26Diff) compareStatus(p rs26Probe) {
	d.probes++
	r, f := d.real.do(d.t, p), d.fake.do(d.t, p)
	rs, fs := rs26Field(r.body, "run.status"), rs26Field(f.body, "run.status")
	if r.status != f.status || rs != fs {
		d.fail("%s: real %d %s, fake %d %s", p.name, r.status, rs, f.status, fs)
	}
}

// waitRuns waits for the runs with WaitRun on both servers at once, and
// compares the status each ends with.
func (d *rs26Diff) waitRuns(runs []string) {
	var wg sync.WaitGroup
	type end struct {
		status models.RunStatus
		err    error
	}
	ends := map[string]*end{}
	var mu sync.Mutex
	for _, tg := range []*rs26Target{d.real, d.fake} {
		for _, run := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
				defer cancel()
				got, err := tg.client.WaitRun(ctx, tg.symbols[run], &agenta.WaitRunOptions{Interval: time.Second})
				e := &end{err: err}
				if got != nil {
					e.status = got.Status
				}
				mu.Lock()
				ends[tg.name+"/"+run] = e
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	for _, run := range runs {
		r, f := ends["real/"+run], ends["fake/"+run]
		if r.err != nil {
			d.t.Fatalf("WaitRun %s on the real server: %v", run, r.err)
		}
		if f.err != nil || r.status != f.status {
			d.fail("WaitRun %s: real ends %s, fake ends %s (%v)", run, r.status, f.status, f.err)
		}
	}
}

// compareRows compares the rows StreamRunRows builds on each server.
func (d *rs26Diff) compareRows(run string) {
	d.probes++
	read := func(tg *rs26Target) []any {
		var out []any
		for row, err := range tg.client.StreamRunRows(context.Background(), tg.symbols[run], nil) {
			if err != nil {
				d.fail("StreamRunRows %s on %s: %v", run, tg.name, err)
				return nil
			}
			b, _ := json.Marshal(row)
			var v any
			_ = decodeJSON(b, &v)
			out = append(out, tg.normalise(v))
		}
		return out
	}
	real, fake := read(d.real), read(d.fake)
	d.compare(rs26Probe{name: run + " rows (StreamRunRows)", unordered: true}, "$.rows", rs26RowsWithoutIDs(real), rs26RowsWithoutIDs(fake))
}

// rs26RowsWithoutIDs drops the scenario ids ("<uuid>#1" for a repeat).
func rs26RowsWithoutIDs(rows []any) []any {
	for _, r := range rows {
		if m, ok := r.(map[string]any); ok {
			if sc, ok := m["Scenario"].(map[string]any); ok {
				delete(sc, "id")
			}
		}
	}
	return rows
}

// pages follows a query's id cursor on each server, compares each page's
// size, and then the rows of all pages together: which row comes first
// depends on the order rows ran in, on both servers alike (body is a
// format with one %s for the cursor).
func (d *rs26Diff) pages(name, path, body string) {
	type pageOf struct {
		sizes []int
		rows  []any
	}
	read := func(tg *rs26Target) pageOf {
		var out pageOf
		cursor := ""
		for page := 1; page <= 30; page++ {
			next := ""
			if cursor != "" {
				next = `,"next":"` + cursor + `"`
			}
			a := tg.do(d.t, rs26Probe{method: "POST", path: path, body: fmt.Sprintf(body, next)})
			var doc map[string]json.RawMessage
			if a.status != 200 || json.Unmarshal(a.body, &doc) != nil {
				d.fail("%s on %s: %d %.300s", name, tg.name, a.status, a.body)
				return out
			}
			size := 0
			for k, raw := range doc {
				if k == "count" {
					continue
				}
				var rows []map[string]any
				_ = decodeJSON(raw, &rows)
				size = len(rows)
				for _, r := range rows {
					out.rows = append(out.rows, tg.normalise(map[string]any(r)))
					if id, ok := r["id"].(string); ok {
						cursor = id
					}
				}
			}
			out.sizes = append(out.sizes, size)
			if size == 0 {
				return out
			}
		}
		d.fail("%s on %s: the paging did not end within 30 pages", name, tg.name)
		return out
	}
	d.probes++
	real, fake := read(d.real), read(d.fake)
	p := rs26Probe{name: fmt.Sprintf("%s pages %s", name, body), unordered: true}
	if !slices.Equal(real.sizes, fake.sizes) {
		d.fail("%s: page sizes real %v, fake %v", p.name, real.sizes, fake.sizes)
		return
	}
	d.compare(p, "$."+name, real.rows, fake.rows)
}

// traces reads the basic run's traces every way v0.113 serves them.
func (d *rs26Diff) traces() {
	pick := func(tg *rs26Target) (app, eval string) {
		a := tg.do(d.t, rs26Probe{method: "POST", path: "/evaluations/results/query", body: `{"result":{"run_id":"{basic}"}}`})
		var doc struct {
			Results []struct {
				StepKey    string `json:"step_key"`
				TraceID    string `json:"trace_id"`
				TestcaseID string `json:"testcase_id"`
			} `json:"results"`
		}
		_ = json.Unmarshal(a.body, &doc)
		// The same row on both servers: France's.
		for _, r := range doc.Results {
			if r.TestcaseID != tg.symbols["ts-tc0"] {
				continue
			}
			if strings.HasPrefix(r.StepKey, "application-") && app == "" {
				app = r.TraceID
			}
			if strings.HasPrefix(r.StepKey, "evaluator-") && eval == "" {
				eval = r.TraceID
			}
		}
		return app, eval
	}
	for _, tg := range []*rs26Target{d.real, d.fake} {
		app, eval := pick(tg)
		tg.learn("app-trace", app)
		tg.learn("eval-trace", eval)
		tg.symbols["app-trace-hex"] = models.NormalizeTraceID(app)
		tg.symbols["app-trace-upper"] = strings.ToUpper(models.NormalizeTraceID(app))
		a := tg.do(d.t, rs26Probe{method: "GET", path: "/traces/" + app})
		var doc struct {
			Trace struct {
				Spans map[string]struct {
					SpanID string `json:"span_id"`
				} `json:"spans"`
			} `json:"trace"`
		}
		_ = json.Unmarshal(a.body, &doc)
		for _, s := range doc.Trace.Spans {
			tg.symbols["app-span"] = s.SpanID
		}
	}
	d.both(rs26Probe{name: "trace, dashed", method: "GET", path: "/traces/{app-trace}"})
	d.both(rs26Probe{name: "trace, hex", method: "GET", path: "/traces/{app-trace-hex}"})
	d.both(rs26Probe{name: "trace, upper-case hex", method: "GET", path: "/traces/{app-trace-upper}"})
	d.both(rs26Probe{name: "annotation trace", method: "GET", path: "/traces/{eval-trace}"})
	d.both(rs26Probe{name: "unknown trace", method: "GET", path: "/traces/0123456789abcdef0123456789abcdef"})
	d.both(rs26Probe{name: "bad trace id", method: "GET", path: "/traces/not-a-trace"})
	d.both(rs26Probe{name: "traces, batch", method: "GET", path: "/traces/?trace_ids={app-trace},{eval-trace},0123456789abcdef0123456789abcdef", unordered: true})
	d.both(rs26Probe{name: "traces, none", method: "GET", path: "/traces/"})
	d.both(rs26Probe{name: "traces, one bad", method: "GET", path: "/traces/?trace_ids=zz,{app-trace}"})
	d.both(rs26Probe{name: "span", method: "GET", path: "/spans/{app-trace-hex}/{app-span}"})
	d.both(rs26Probe{name: "unknown span", method: "GET", path: "/spans/{app-trace-hex}/0000000000000000"})
	d.both(rs26Probe{name: "bad span id", method: "GET", path: "/spans/{app-trace-hex}/zz"})
}

// TestRealServer2026Comparator proves the comparison can fail: it must
// catch a changed value, a missing or extra member, a type and a length,
// and let through only ids, timestamps, slugs and the allow-list.
func TestRealServer2026Comparator(t *testing.T) {
	newTarget := func() *rs26Target { return &rs26Target{symbols: map[string]string{}, names: map[string]string{}} }
	const real = `{"count":1,"run":{"id":"01a215ff-3341-785a-b54e-256ae5528d3d","created_at":"2026-11-26T03:56:16.062117Z",
		"slug":"c701227fa04d","key":"evaluator-2ee240d33f79","status":"success","n":2,"list":[1,2],
		"attributes":{"ag":{"metrics":{"duration":{"cumulative":101.9}}}}}}`
	for _, tc := range []struct {
		fake string
		want string // "" means no difference
	}{
		{`{"count":1,"run":{"id":"0190b606-17b8-7000-8000-00000000000d","created_at":"2024-07-15T10:52:51.1Z",
			"slug":"5eb84fd76292","key":"evaluator-aaaaaaaaaaaa","status":"success","n":2,"list":[1,2],
			"attributes":{"ag":{"metrics":{"duration":{"cumulative":5.01}}}}}}`, ""},
		{`{"count":1,"run":{"id":"x","created_at":"2026-11-26T03:56:16Z","slug":"c701227fa04d","key":"evaluator-2ee240d33f79","status":"success","n":2,"list":[1,2],"attributes":{"ag":{"metrics":{"duration":{"cumulative":1}}}}}}`, "$.run.id"},
		{`{"count":1,"run":{"id":"0190b606-17b8-7000-8000-00000000000d","created_at":"2026-11-26T03:56:16.062117","slug":"c701227fa04d","key":"evaluator-2ee240d33f79","status":"success","n":2,"list":[1,2],"attributes":{"ag":{"metrics":{"duration":{"cumulative":1}}}}}}`, "$.run.created_at"},
		{`{"count":1,"run":{"id":"0190b606-17b8-7000-8000-00000000000d","created_at":"2026-11-26T03:56:16Z","slug":"c701227fa04d","key":"evaluator-2ee240d33f79","status":"errors","n":2,"list":[1,2],"attributes":{"ag":{"metrics":{"duration":{"cumulative":1}}}}}}`, "$.run.status"},
		{`{"count":1,"run":{"id":"0190b606-17b8-7000-8000-00000000000d","created_at":"2026-11-26T03:56:16Z","slug":"c701227fa04d","key":"evaluator-2ee240d33f79","status":"success","n":"2","list":[1,2],"attributes":{"ag":{"metrics":{"duration":{"cumulative":1}}}}}}`, "$.run.n"},
		{`{"count":1,"run":{"id":"0190b606-17b8-7000-8000-00000000000d","created_at":"2026-11-26T03:56:16Z","slug":"c701227fa04d","key":"evaluator-2ee240d33f79","status":"success","n":2,"list":[1],"attributes":{"ag":{"metrics":{"duration":{"cumulative":1}}}}}}`, "$.run.list"},
		{`{"count":1,"run":{"id":"0190b606-17b8-7000-8000-00000000000d","created_at":"2026-11-26T03:56:16Z","slug":"c701227fa04d","key":"evaluator-2ee240d33f79","status":"success","n":2,"list":[1,2],"extra":true,"attributes":{"ag":{"metrics":{"duration":{"cumulative":1}}}}}}`, "$.run.extra"},
		{`{"count":1,"run":{"id":"0190b606-17b8-7000-8000-00000000000d","created_at":"2026-11-26T03:56:16Z","slug":"c701227fa04d","key":"testset-2ee240d33f79","status":"success","n":2,"list":[1,2],"attributes":{"ag":{"metrics":{"duration":{"cumulative":1}}}}}}`, "$.run.key"},
	} {
		d := &rs26Diff{t: t, real: newTarget(), fake: newTarget(), allowedUsed: map[string]int{}}
		d.compareAnswers(rs26Probe{name: "p"}, rs26Answer{200, []byte(real)}, rs26Answer{200, []byte(tc.fake)})
		if tc.want == "" {
			require.Empty(t, d.differences, tc.fake)
			continue
		}
		require.Len(t, d.differences, 1, "%s: %v", tc.fake, d.differences)
		require.Contains(t, d.differences[0], tc.want+":")
	}
	d := &rs26Diff{t: t, real: newTarget(), fake: newTarget(), allowedUsed: map[string]int{}}
	d.compareAnswers(rs26Probe{name: "p"}, rs26Answer{200, []byte(`{}`)}, rs26Answer{404, []byte(`{}`)})
	require.Len(t, d.differences, 1, "a status is compared")

	// A racy path is left out of that probe's comparison, and of no other
	// path's: the stop's status ("running" on the real server, "success"
	// on a fake that had finished), not its is_active.
	stop := func(status string, active bool) rs26Answer {
		return rs26Answer{200, []byte(fmt.Sprintf(`{"count":1,"evaluation":{"flags":{"is_active":%t},"data":{"status":%q}}}`, active, status))}
	}
	racy := rs26Probe{name: "stop", racy: []string{"$.evaluation.data.status"}}
	d = &rs26Diff{t: t, real: newTarget(), fake: newTarget(), allowedUsed: map[string]int{}}
	d.compareAnswers(racy, stop("running", false), stop("success", false))
	require.Empty(t, d.differences, "the status of a racy probe is not compared")
	d.compareAnswers(racy, stop("running", false), stop("running", true))
	require.Len(t, d.differences, 1, "the rest of a racy probe is: %v", d.differences)
	d = &rs26Diff{t: t, real: newTarget(), fake: newTarget(), allowedUsed: map[string]int{}}
	d.compareAnswers(rs26Probe{name: "stop"}, stop("running", false), stop("success", false))
	require.Len(t, d.differences, 1, "the status of another probe is")
}
