package agentatest

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The objects of the 2026 generation, as the service keeps them: an
// application has variants, a variant numbered revisions; a test set has a
// variant whose revisions list its test cases; an evaluator has revisions;
// a run has scenarios, results (cells) and metrics rows; traces hold the
// outputs. Seeding goes through the same code as the service's simple
// create routes, so that a test can seed over HTTP or from Go alike.

type app26 struct {
	id, slug, name, description string
	created                     time.Time
	defaultVariant              *variant26
	application                 Application
}

type variant26 struct {
	id, slug, name, description string
	app                         *app26
	created                     time.Time
	revisions                   []*revision26 // in version order
}

type revision26 struct {
	id, slug                   string
	version                    int
	variant                    *variant26
	name, description, message string
	data                       map[string]any // nil: no data member
	date, created              time.Time
}

type env26 struct {
	id, slug, name           string
	variantID, variantSlug   string
	revisionID, revisionSlug string
	version                  int
	created                  time.Time
	deployed                 map[string]string // key → application revision id
}

type testset26 struct {
	id, slug, name, description string
	variantID, variantSlug      string
	created                     time.Time
	revisions                   []*tsRevision26
}

type tsRevision26 struct {
	id, slug      string
	version       int
	testset       *testset26
	testcaseIDs   []string
	date, created time.Time
}

type testcase26 struct {
	id, testsetID string
	data          []column
	created       time.Time
}

type evaluator26 struct {
	id, slug, name, description string
	variantID, variantSlug      string
	created                     time.Time
	revisions                   []*evRevision26
}

type evRevision26 struct {
	id, slug      string
	version       int
	evaluator     *evaluator26
	uri, url      string
	key           string // the built-in's key, from uri
	parameters    map[string]any
	date, created time.Time
}

// The built-in evaluators the fake runs, as v0.113's services do.
const (
	exactMatch26  = "auto_exact_match"
	regexTest26   = "auto_regex_test"
	levenshtein26 = "auto_levenshtein_distance"
	startsWith26  = "auto_starts_with"
)

// Application2026 seeds a 2026 application: its default variant and that
// variant's revision "1", with data.url and data.parameters.
type Application2026 struct {
	Slug        string // required, unique among applications
	Name        string // defaults to Slug
	Description string
	// URL is stored as data.url; the fake calls Application instead.
	URL        string
	Parameters map[string]any
	// Application is what the fake runs for each row; nil means
	// StandInApplication, the real test kit's stand-in.
	Application Application
}

// Application2026IDs are the ids of a seeded application.
type Application2026IDs struct {
	ApplicationID, VariantID, RevisionID string
}

// Testset2026 seeds a test set and its revision "1". Each row gets the
// service's testcase_dedup_id column and a content-hash id.
type Testset2026 struct {
	Slug        string // required, unique among test sets
	Name        string // defaults to Slug
	Description string
	// Columns orders each row's columns; columns not named come after
	// them, sorted.
	Columns []string
	Rows    []map[string]any
}

// Testset2026IDs are the ids of a seeded test set.
type Testset2026IDs struct {
	TestsetID, RevisionID string
	TestcaseIDs           []string // in row order
}

// Evaluator2026 seeds an evaluator and its revision "1": a built-in named
// by URI, such as "agenta:builtin:auto_exact_match:v0" (the fake runs
// auto_exact_match, auto_regex_test, auto_levenshtein_distance and
// auto_starts_with).
type Evaluator2026 struct {
	Slug        string // required, unique among evaluators
	Name        string // defaults to Slug
	Description string
	URI         string
	Parameters  map[string]any
}

// Evaluator2026IDs are the ids of a seeded evaluator.
type Evaluator2026IDs struct {
	EvaluatorID, RevisionID string
}

// AddApplication2026 seeds an application (see Application2026) and
// returns its ids. It panics when the Server does not serve the 2026
// generation or the slug is taken.
func (s *Server) AddApplication2026(a Application2026) Application2026IDs {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.must2026("AddApplication2026")
	data := map[string]any{}
	if a.URL != "" {
		data["url"] = a.URL
	}
	if a.Parameters != nil {
		data["parameters"] = jsonClone(a.Parameters)
	}
	app, ok := s.createApplication26(a.Slug, a.Name, a.Description, data)
	if !ok {
		panic(fmt.Sprintf("agentatest: AddApplication2026: slug %q is empty or taken", a.Slug))
	}
	app.application = a.Application
	rev := app.defaultVariant.revisions[0]
	return Application2026IDs{ApplicationID: app.id, VariantID: app.defaultVariant.id, RevisionID: rev.id}
}

// AddTestset2026 seeds a test set (see Testset2026) and returns its ids. It
// panics when the Server does not serve the 2026 generation or the slug is
// taken.
func (s *Server) AddTestset2026(t Testset2026) Testset2026IDs {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.must2026("AddTestset2026")
	rows := make([][]column, len(t.Rows))
	for i, row := range t.Rows {
		names := slices.Clone(t.Columns)
		rest := slices.Sorted(maps.Keys(row))
		for _, n := range rest {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		for _, n := range names {
			if v, ok := row[n]; ok {
				raw, err := json.Marshal(v)
				if err != nil {
					panic(fmt.Sprintf("agentatest: AddTestset2026: row %d column %q: %v", i, n, err))
				}
				rows[i] = append(rows[i], column{n, raw})
			}
		}
	}
	ts, ok := s.createTestset26(t.Slug, t.Name, t.Description, rows)
	if !ok {
		panic(fmt.Sprintf("agentatest: AddTestset2026: slug %q is empty or taken", t.Slug))
	}
	rev := ts.revisions[0]
	return Testset2026IDs{TestsetID: ts.id, RevisionID: rev.id, TestcaseIDs: slices.Clone(rev.testcaseIDs)}
}

// AddEvaluator2026 seeds an evaluator (see Evaluator2026) and returns its
// ids. It panics when the Server does not serve the 2026 generation, the
// slug is taken or the URI names no built-in the fake runs.
func (s *Server) AddEvaluator2026(e Evaluator2026) Evaluator2026IDs {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.must2026("AddEvaluator2026")
	ev, ok := s.createEvaluator26(e.Slug, e.Name, e.Description, e.URI, jsonClone(e.Parameters))
	if !ok {
		panic(fmt.Sprintf("agentatest: AddEvaluator2026: slug %q is empty or taken, or %q is no built-in the fake runs", e.Slug, e.URI))
	}
	return Evaluator2026IDs{EvaluatorID: ev.id, RevisionID: ev.revisions[0].id}
}

// Deploy2026 puts an application revision in an environment
// (development, staging or production), as POST
// /applications/revisions/deploy does. It panics on an unknown revision or
// environment.
func (s *Server) Deploy2026(revisionID, environment string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v26 := s.must2026("Deploy2026")
	s.environments26() // created on first use
	rev := v26.revisions[revisionID]
	env := v26.env(&refIn{slug: environment})
	if rev == nil || env == nil {
		panic(fmt.Sprintf("agentatest: Deploy2026: no revision %q or environment %q", revisionID, environment))
	}
	s.deploy26(rev, env, rev.variant.app.slug+".revision")
}

func (s *Server) must2026(op string) *state2026 {
	if s.v26 == nil {
		panic("agentatest: " + op + ": the Server does not serve the 2026 generation; use WithGeneration(Generation2026)")
	}
	return s.v26
}

// slug26 is a random-looking slug of 12 hex digits, derived from id.
func slug26(id string) string {
	return hex.EncodeToString(blake2b([]byte("slug:"+id), 6))
}

// hexUUID26 is a random-looking UUID derived from seed, as the service's
// trace and hash ids look.
func hexUUID26(seed string) string {
	return dashed(hex.EncodeToString(blake2b([]byte(seed), 16)))
}

// createApplication26 creates an application with its default variant and
// revision "1". Callers hold s.mu.
func (s *Server) createApplication26(slug, name, description string, data map[string]any) (*app26, bool) {
	v26 := s.v26
	if slug == "" || v26.app(&refIn{slug: slug}) != nil {
		return nil, false
	}
	if name == "" {
		name = slug
	}
	now := s.now26()
	app := &app26{id: s.newID(), slug: slug, name: name, description: description, created: now}
	v := &variant26{id: s.newID(), name: name, description: description, app: app, created: now}
	v.slug = slug26(v.id)
	app.defaultVariant = v
	rev := &revision26{id: s.newID(), version: 1, variant: v, name: name, description: description, data: data, date: now, created: now}
	rev.slug = slug26(rev.id)
	v.revisions = []*revision26{rev}
	v26.apps[app.id] = app
	v26.variants[v.id] = v
	v26.revisions[rev.id] = rev
	return app, true
}

// createTestset26 creates a test set with its variant and revision "1",
// giving each row its dedup column and content id. Callers hold s.mu.
func (s *Server) createTestset26(slug, name, description string, rows [][]column) (*testset26, bool) {
	v26 := s.v26
	if slug == "" || v26.testset(&refIn{slug: slug}) != nil {
		return nil, false
	}
	if name == "" {
		name = slug
	}
	now := s.now26()
	ts := &testset26{id: s.newID(), slug: slug, name: name, description: description, created: now}
	ts.variantID = s.newID()
	ts.variantSlug = slug26(ts.variantID)
	rev := &tsRevision26{id: s.newID(), version: 1, testset: ts, date: now, created: now}
	rev.slug = slug26(rev.id)
	for i, row := range rows {
		data := slices.Clone(row)
		if _, ok := columnValue(data, "testcase_dedup_id"); !ok {
			dedup, _ := json.Marshal(dedupID(data, i))
			data = append(data, column{"testcase_dedup_id", dedup})
		}
		id := blobID(data, ts.id)
		if _, dup := v26.testcases[id]; !dup {
			v26.testcases[id] = &testcase26{id: id, testsetID: ts.id, data: data,
				created: now.Add(time.Duration(i+1) * time.Microsecond)}
		}
		rev.testcaseIDs = append(rev.testcaseIDs, id)
	}
	ts.revisions = []*tsRevision26{rev}
	v26.testsets[ts.id] = ts
	v26.tsRevisions[rev.id] = rev
	return ts, true
}

// createEvaluator26 creates an evaluator with its variant and revision
// "1". Callers hold s.mu.
func (s *Server) createEvaluator26(slug, name, description, uri string, parameters map[string]any) (*evaluator26, bool) {
	v26 := s.v26
	key := builtinKey26(uri)
	if slug == "" || v26.evaluator(&refIn{slug: slug}) != nil || evaluatorSchemas26[key].outputs == "" {
		return nil, false
	}
	if name == "" {
		name = slug
	}
	now := s.now26()
	ev := &evaluator26{id: s.newID(), slug: slug, name: name, description: description, created: now}
	ev.variantID = s.newID()
	ev.variantSlug = slug26(ev.variantID)
	rev := &evRevision26{id: s.newID(), version: 1, evaluator: ev, uri: uri, key: key,
		url: "http://127.0.0.1:19090/" + key + "/v0", parameters: parameters, date: now, created: now}
	rev.slug = slug26(rev.id)
	ev.revisions = []*evRevision26{rev}
	v26.evaluators[ev.id] = ev
	v26.evRevisions[rev.id] = rev
	return ev, true
}

// builtinKey26 reads "auto_exact_match" from "agenta:builtin:auto_exact_match:v0".
func builtinKey26(uri string) string {
	rest, ok := strings.CutPrefix(uri, "agenta:builtin:")
	if !ok {
		return ""
	}
	key, _, _ := strings.Cut(rest, ":")
	return key
}

// deploy26 puts rev in env under key, making a new environment revision.
// Callers hold s.mu.
func (s *Server) deploy26(rev *revision26, env *env26, key string) {
	env.deployed[key] = rev.id
	env.version++
	env.revisionID = s.newID()
	env.revisionSlug = slug26(env.revisionID)
}

// environments26 returns the three environments the service's account
// route seeds, creating them on first use. Callers hold s.mu.
func (s *Server) environments26() []*env26 {
	v26 := s.v26
	if v26.envs == nil {
		now := s.now26()
		for _, name := range []string{"development", "production", "staging"} {
			e := &env26{id: s.newID(), slug: name, name: name, version: 1, created: now, deployed: map[string]string{}}
			e.variantID = s.newID()
			e.variantSlug = slug26(e.variantID)
			e.revisionID = s.newID()
			e.revisionSlug = slug26(e.revisionID)
			v26.envs = append(v26.envs, e)
		}
	}
	return v26.envs
}

func (v26 *state2026) env(ref *refIn) *env26 {
	for _, e := range v26.envs {
		if ref != nil && (ref.id != "" && e.id == ref.id || ref.id == "" && ref.slug != "" && e.slug == ref.slug) {
			return e
		}
	}
	return nil
}

// byRef finds the object of m a reference names: by its id, else by its
// slug; nil when it names neither or nothing matches.
func byRef[T any](m map[string]*T, ref *refIn, slugOf func(*T) string) *T {
	switch {
	case ref == nil:
	case ref.id != "":
		return m[ref.id]
	case ref.slug != "":
		for _, v := range m {
			if slugOf(v) == ref.slug {
				return v
			}
		}
	}
	return nil
}

// byVariantRef finds the object of m whose variant a reference names, by
// the variant's id, else by its slug; nil when none matches.
func byVariantRef[T any](m map[string]*T, ref *refIn, variantOf func(*T) (id, slug string)) *T {
	var found *T
	for _, v := range m {
		if id, slug := variantOf(v); id == ref.id || ref.id == "" && slug == ref.slug {
			found = v
		}
	}
	return found
}

func (v26 *state2026) app(ref *refIn) *app26 {
	return byRef(v26.apps, ref, func(a *app26) string { return a.slug })
}

func (v26 *state2026) variant(ref *refIn) *variant26 {
	return byRef(v26.variants, ref, func(v *variant26) string { return v.slug })
}

func (v26 *state2026) revision(ref *refIn) *revision26 {
	return byRef(v26.revisions, ref, func(r *revision26) string { return r.slug })
}

func (v26 *state2026) testset(ref *refIn) *testset26 {
	return byRef(v26.testsets, ref, func(t *testset26) string { return t.slug })
}

func (v26 *state2026) evaluator(ref *refIn) *evaluator26 {
	return byRef(v26.evaluators, ref, func(e *evaluator26) string { return e.slug })
}

// latest is a variant's last revision.
func (v *variant26) latest() *revision26 { return v.revisions[len(v.revisions)-1] }

// at is the variant's revision of that version, or nil.
func (v *variant26) at(version int) *revision26 {
	for _, r := range v.revisions {
		if r.version == version {
			return r
		}
	}
	return nil
}

func columnValue(cols []column, name string) (json.RawMessage, bool) {
	for _, c := range cols {
		if c.name == name {
			return c.value, true
		}
	}
	return nil, false
}

// columnText is a column's value as the application gets it: a string's
// text, any other value's JSON.
func columnText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// jsonClone is copyParameters for a map known to encode: a deep copy,
// numbers as json.Number, so that later changes to the caller's map change
// nothing.
func jsonClone(m map[string]any) map[string]any {
	out, err := copyParameters(m)
	if err != nil {
		panic(fmt.Sprintf("agentatest: %v", err))
	}
	return out
}

// StandInApplication is the 2026 fake's default Application: the real test
// kit's stand-in app (realserver-2026/apps/capitals.py). It answers the
// capital of the row's country (France, Germany, Italy, Spain, Japan;
// "Unknown" otherwise) and fails with "stand-in app error for <country>"
// for a country that starts with ERR.
func StandInApplication(_ map[string]any, inputs map[string]string) (string, error) {
	country := inputs["country"]
	if strings.HasPrefix(country, "ERR") {
		return "", fmt.Errorf("stand-in app error for %s", country)
	}
	return cmp.Or(standInCapitals[strings.ToLower(country)], "Unknown"), nil
}

var standInCapitals = map[string]string{"france": "Paris", "germany": "Berlin", "italy": "Rome", "spain": "Madrid", "japan": "Tokyo"}

// revisionString is a version number as the service writes it, a string.
func revisionString(n int) string { return strconv.Itoa(n) }
