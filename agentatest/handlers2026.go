package agentatest

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The 2026 handlers for applications, environments, test sets, test cases
// and evaluators. Each checks the request as v0.113 does (422 for its
// shape, then 400 for what it cannot resolve), answers {"count":0} for
// nothing found, and builds its whole answer under s.mu.

func (s *Server) handleRetrieveApplicationRevision(c *call) answer {
	var in struct {
		App      *refIn `body:"application_ref"`
		Variant  *refIn `body:"application_variant_ref"`
		Revision *refIn `body:"application_revision_ref"`
		Env      *refIn `body:"environment_ref"`
		EnvVar   *refIn `body:"environment_variant_ref"`
		EnvRev   *refIn `body:"environment_revision_ref"`
		Key      string `body:"key"`
	}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	appRef, varRef, revRef, envRef, envVarRef, envRevRef, key := in.App, in.Variant, in.Revision, in.Env, in.EnvVar, in.EnvRev, in.Key
	s.mu.Lock()
	defer s.mu.Unlock()
	v26 := s.v26
	envGiven := !envRef.empty() || !envVarRef.empty() || !envRevRef.empty()
	if appRef.empty() && varRef.empty() && revRef.empty() && !envGiven {
		return detailAnswer(http.StatusBadRequest, "Provide application refs or environment refs with key to retrieve an application revision.")
	}
	if envGiven {
		const nothing = "Environment revision does not contain application references for the requested key."
		if key == "" && !appRef.empty() {
			slug := appRef.slug
			if app := v26.app(appRef); slug == "" && app != nil {
				slug = app.slug
			}
			if slug == "" {
				return detailAnswer(http.StatusNotFound, nothing)
			}
			key = slug + ".revision"
		}
		if key == "" {
			return detailAnswer(http.StatusBadRequest, "Environment-backed application retrieve requires key.")
		}
		s.environments26()
		env := v26.env(envRef)
		if env == nil {
			return detailAnswer(http.StatusNotFound, nothing)
		}
		rev := v26.revisions[env.deployed[key]]
		if rev == nil {
			return detailAnswer(http.StatusNotFound, nothing)
		}
		refs := append(env.lineage().references("environment"), rev.lineage().references("application")...)
		return envelope1("application_revision", s.revisionWire26(rev),
			field{"retrieval_info", object{{"references", refs}, {"selector", object{{"key", key}}}}})
	}
	if unscopedVersion26(revRef, varRef, appRef) {
		return versionUnscoped26("application")
	}
	var rev *revision26
	switch {
	case revRef != nil && (revRef.id != "" || revRef.slug != ""):
		rev = v26.revision(revRef)
		if rev != nil && varRef != nil && varRef.id != "" && varRef.id != rev.variant.id {
			return detailAnswer(http.StatusBadRequest, "workflow_variant_ref.id=UUID('"+varRef.id+"') does not match resolved revision's variant_id=UUID('"+rev.variant.id+"')")
		}
	case !varRef.empty() || !appRef.empty():
		v := v26.variant(varRef)
		if app := v26.app(appRef); varRef.empty() && app != nil {
			v = app.defaultVariant
		}
		if v != nil {
			rev = v.latest()
			if revRef != nil && revRef.version != "" {
				n, _ := strconv.Atoi(revRef.version)
				rev = v.at(n)
			}
		}
	}
	if rev == nil {
		return count0()
	}
	return envelope1("application_revision", s.revisionWire26(rev),
		field{"retrieval_info", object{{"references", rev.lineage().references("application")}}})
}

func (s *Server) handleFetchApplicationRevision(c *call) answer {
	return fetch26(s, c, "application_revision_id", func() map[string]*revision26 { return s.v26.revisions },
		"application_revision", s.revisionWire26)
}

func (s *Server) handleFetchApplicationVariant(c *call) answer {
	return fetch26(s, c, "application_variant_id", func() map[string]*variant26 { return s.v26.variants },
		"application_variant", func(v *variant26) object { return s.variantWire26(v, true) })
}

func (s *Server) handleForkApplicationVariant(c *call) answer {
	var in struct {
		Variant struct {
			Slug        string `body:"slug"`
			Name        string `body:"name"`
			Description string `body:"description"`
		} `body:"application_variant,required"`
		Source *refIn `body:"application_variant_ref,required"`
		At     *refIn `body:"application_revision_ref"`
	}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	src, at, slug, name, description := in.Source, in.At, in.Variant.Slug, in.Variant.Name, in.Variant.Description
	s.mu.Lock()
	defer s.mu.Unlock()
	v26 := s.v26
	source := v26.variant(src)
	if source == nil {
		return detailAnswer(http.StatusBadRequest, "Fork source variant could not be resolved.")
	}
	upTo := source.latest()
	if !at.empty() {
		r := v26.revision(at)
		if at.id == "" && at.slug == "" {
			n, _ := strconv.Atoi(at.version)
			r = source.at(n)
		}
		if r == nil || r.variant != source {
			return detailAnswer(http.StatusBadRequest, "Fork source revision could not be resolved.")
		}
		upTo = r
	}
	if slug == "" || v26.variant(&refIn{slug: slug}) != nil {
		return count0()
	}
	if name == "" {
		name = slug
	}
	now := s.now26()
	v := &variant26{id: s.newID(), slug: slug, name: name, description: description, app: source.app, created: now}
	suffix := strings.ReplaceAll(v.id, "-", "")
	for _, r := range source.revisions {
		if r.version > upTo.version {
			break
		}
		copied := *r
		copied.id, copied.variant, copied.date, copied.created = s.newID(), v, now, now
		copied.slug = r.slug
		if i := strings.IndexByte(copied.slug, '_'); i >= 0 {
			copied.slug = copied.slug[:i]
		}
		copied.slug += "_" + suffix
		copied.data = jsonClone(r.data)
		v.revisions = append(v.revisions, &copied)
		v26.revisions[copied.id] = &copied
	}
	v26.variants[v.id] = v
	return envelope1("application_variant", s.variantWire26(v, false))
}

func (s *Server) handleCommitApplicationRevision(c *call) answer {
	var in struct {
		Revision struct {
			VariantID    string `body:"application_variant_id,uuid"`
			OldVariantID string `body:"variant_id,uuid"`
			Message      string `body:"message"`
			Base         string `body:"base_revision_id,uuid"`
			Data         body26 `body:"data"`
			Delta        body26 `body:"delta"`
		} `body:"application_revision,required"`
	}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	spec := in.Revision
	variantID, message, base, data, delta := cmp.Or(spec.VariantID, spec.OldVariantID), spec.Message, spec.Base, spec.Data, spec.Delta
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.v26.variants[variantID]
	if v == nil {
		return count0()
	}
	latest := v.latest()
	if base != "" && base != latest.id {
		return s.unexpected26("commit_application_revision")
	}
	var next map[string]any
	switch {
	case data != nil:
		next = jsonClone(data)
	case delta != nil:
		next = jsonClone(latest.data)
		if next == nil {
			next = map[string]any{}
		}
		if set, ok := delta["set"].(map[string]any); ok {
			deepMerge(next, set)
		}
		if remove, ok := delta["remove"].([]any); ok {
			for _, p := range remove {
				if path, ok := p.(string); ok {
					removePath(next, strings.Split(path, "."))
				}
			}
		}
	}
	now := s.now26()
	rev := &revision26{id: s.newID(), version: latest.version + 1, variant: v, message: message, data: next, date: now, created: now}
	rev.slug = slug26(rev.id)
	v.revisions = append(v.revisions, rev)
	s.v26.revisions[rev.id] = rev
	return envelope1("application_revision", s.revisionWire26(rev))
}

func (s *Server) handleDeployApplicationRevision(c *call) answer {
	var in struct {
		Revision *refIn `body:"application_revision_ref"`
		Env      *refIn `body:"environment_ref"`
		Key      string `body:"key"`
	}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	revRef, envRef, key := in.Revision, in.Env, in.Key
	s.mu.Lock()
	defer s.mu.Unlock()
	s.environments26()
	rev := s.v26.revision(revRef)
	env := s.v26.env(envRef)
	switch {
	case env == nil:
		return detailAnswer(http.StatusNotFound, "Environment revision not found.")
	case rev == nil:
		return detailAnswer(http.StatusNotFound, "Application revision not found.")
	}
	if key == "" {
		key = rev.variant.app.slug + ".revision"
	}
	s.deploy26(rev, env, key)
	return envelope1("application_revision", s.revisionWire26(rev))
}

func (s *Server) handleQueryEnvironments(c *call) answer {
	if refused, ok := decode26(c, false, &struct{}{}); !ok {
		return refused
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var items []any
	for _, e := range s.environments26() {
		items = append(items, s.named26(nil, e.name, "", e.created, 0, e.slug, e.id))
	}
	return envelopeList("environments", items)
}

func (s *Server) handleRetrieveTestsetRevision(c *call) answer {
	in := struct {
		Testset  *refIn `body:"testset_ref"`
		Variant  *refIn `body:"testset_variant_ref"`
		Revision *refIn `body:"testset_revision_ref"`
		IDs      bool   `body:"include_testcase_ids"`
		Cases    bool   `body:"include_testcases"`
	}{IDs: true, Cases: true}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	tsRef, varRef, revRef, ids, cases := in.Testset, in.Variant, in.Revision, in.IDs, in.Cases
	if unscopedVersion26(revRef, varRef, tsRef) {
		return versionUnscoped26("testset")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rev := s.v26.testsetRevision(tsRef, varRef, revRef)
	if rev == nil {
		return count0()
	}
	return envelope1("testset_revision", s.testsetRevisionWire26(rev, ids, cases),
		field{"retrieval_info", object{{"references", rev.lineage().references("testset")}}})
}

// unscopedVersion26 reports a revision asked by version alone, with no
// variant or artifact to number it in.
func unscopedVersion26(revRef, varRef, artifactRef *refIn) bool {
	return revRef != nil && revRef.id == "" && revRef.slug == "" && revRef.version != "" && varRef.empty() && artifactRef.empty()
}

// versionUnscoped26 is v0.113's 400 for such a request; kind is
// "application" or "testset".
func versionUnscoped26(kind string) answer {
	return detailAnswer(http.StatusBadRequest, kind+"_revision_ref.version is a per-variant sequence number and requires a "+
		kind+"_variant_ref or "+kind+"_ref to scope it. Provide either, or identify the revision by "+
		kind+"_revision_ref.id or "+kind+"_revision_ref.slug (both are project-unique).")
}

// testsetRevision resolves test-set references to a revision, or nil.
func (v26 *state2026) testsetRevision(tsRef, varRef, revRef *refIn) *tsRevision26 {
	if revRef != nil && (revRef.id != "" || revRef.slug != "") {
		return byRef(v26.tsRevisions, revRef, func(r *tsRevision26) string { return r.slug })
	}
	ts := v26.testset(tsRef)
	if varRef != nil && (varRef.id != "" || varRef.slug != "") {
		ts = byVariantRef(v26.testsets, varRef, func(t *testset26) (string, string) { return t.variantID, t.variantSlug })
	}
	if ts == nil {
		return nil
	}
	if revRef != nil && revRef.version != "" {
		for _, r := range ts.revisions {
			if strconv.Itoa(r.version) == revRef.version {
				return r
			}
		}
		return nil
	}
	return ts.revisions[len(ts.revisions)-1]
}

func (s *Server) handleRetrieveEvaluatorRevision(c *call) answer {
	var in struct {
		Evaluator *refIn `body:"evaluator_ref"`
		Variant   *refIn `body:"evaluator_variant_ref"`
		Revision  *refIn `body:"evaluator_revision_ref"`
	}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	evRef, varRef, revRef := in.Evaluator, in.Variant, in.Revision
	if evRef.empty() && varRef.empty() && revRef.empty() {
		return detailAnswer(http.StatusBadRequest, "Provide evaluator refs or environment refs with key to retrieve an evaluator revision.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var rev *evRevision26
	if revRef != nil && (revRef.id != "" || revRef.slug != "") {
		rev = byRef(s.v26.evRevisions, revRef, func(r *evRevision26) string { return r.slug })
	} else {
		ev := s.v26.evaluator(evRef)
		if !varRef.empty() {
			ev = byVariantRef(s.v26.evaluators, varRef, func(e *evaluator26) (string, string) { return e.variantID, e.variantSlug })
		}
		if ev != nil {
			rev = ev.revisions[len(ev.revisions)-1]
		}
	}
	if rev == nil {
		return count0()
	}
	return envelope1("evaluator_revision", s.evaluatorRevisionWire26(rev),
		field{"retrieval_info", object{{"references", rev.lineage().references("evaluator")}}})
}

func (s *Server) handleFetchTestcase(c *call) answer {
	return fetch26(s, c, "testcase_id", func() map[string]*testcase26 { return s.v26.testcases },
		"testcase", func(tc *testcase26) object { return s.testcaseWire26(tc, true) })
}

// handleQueryTestcases pages as v0.113 does: by the ids asked (or a test
// set's bag) in created_at order, with a windowing to send back while the
// page is full, an exact last page included; or by a revision's rows in
// their order, with a windowing only while rows remain.
func (s *Server) handleQueryTestcases(c *call) answer {
	var in struct {
		IDs       []string `body:"testcase_ids"`
		TestsetID string   `body:"testset_id,uuid"`
		Testset   *refIn   `body:"testset_ref"`
		Variant   *refIn   `body:"testset_variant_ref"`
		Revision  *refIn   `body:"testset_revision_ref"`
		Windowing struct { // v0.113's Windowing: next before limit
			Next  string `body:"next,uuid"`
			Limit *int   `body:"limit"`
		} `body:"windowing"`
	}
	if refused, ok := decode26(c, false, &in); !ok {
		return refused
	}
	ids, testsetID, tsRef, varRef, revRef := in.IDs, in.TestsetID, in.Testset, in.Variant, in.Revision
	limit, limited, next := 0, in.Windowing.Limit != nil, in.Windowing.Next
	if limited {
		limit = max(*in.Windowing.Limit, 1)
	}
	if ids == nil && testsetID == "" && tsRef.empty() && varRef.empty() && revRef.empty() {
		return detailAnswer(http.StatusBadRequest, "At least one filter is required: testcase_ids, testset_id, testset_ref/testset_variant_ref/testset_revision_ref.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v26 := s.v26
	var rows []*testcase26
	byRevision := false
	if ids == nil && testsetID == "" {
		rev := v26.testsetRevision(tsRef, varRef, revRef)
		if rev == nil {
			return envelopeList("testcases", nil)
		}
		byRevision = true
		for _, id := range rev.testcaseIDs {
			if tc := v26.testcases[id]; tc != nil {
				rows = append(rows, tc)
			}
		}
	} else {
		for _, tc := range v26.testcases {
			if ids != nil && !slices.Contains(ids, tc.id) || testsetID != "" && tc.testsetID != testsetID {
				continue
			}
			rows = append(rows, tc)
		}
		slices.SortFunc(rows, func(x, y *testcase26) int {
			if c := x.created.Compare(y.created); c != 0 {
				return c
			}
			return strings.Compare(x.id, y.id)
		})
	}
	if next != "" {
		for i, tc := range rows {
			if tc.id == next {
				rows = rows[i+1:]
				break
			}
		}
	}
	more := false
	if limited && len(rows) > limit {
		rows, more = rows[:limit], true
	}
	items := make([]any, len(rows))
	for i, tc := range rows {
		items[i] = s.testcaseWire26(tc, true)
	}
	if !limited || len(rows) == 0 || byRevision && !more || !byRevision && len(rows) < limit {
		return envelopeList("testcases", items)
	}
	last := rows[len(rows)-1]
	window := object{}
	if !byRevision {
		window = append(window, field{"oldest", time26(last.created)})
	}
	window = append(window, field{"next", last.id}, field{"limit", limit})
	return envelopeList("testcases", items, field{"windowing", window})
}

// handleCreateSimpleApplication is POST /simple/applications/: an
// application, its default variant and revision "1".
func (s *Server) handleCreateSimpleApplication(c *call) answer {
	var in struct {
		Spec simpleSpec26 `body:"application"`
	}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	slug, name, description, data := in.Spec.Slug, in.Spec.Name, in.Spec.Description, in.Spec.Data
	s.mu.Lock()
	defer s.mu.Unlock()
	if slug == "" {
		return count0()
	}
	app, ok := s.createApplication26(slug, name, description, jsonClone(data))
	if !ok {
		return conflict26(slug)
	}
	rev := app.defaultVariant.revisions[0]
	o := s.named26(object{{"flags", appFlags26(true, false, false, data["url"] != nil)}},
		app.name, app.description, app.created, 0, app.slug, app.id)
	if rev.data != nil {
		o = append(o, field{"data", rev.data})
	}
	o = append(o, field{"variant_id", app.defaultVariant.id}, field{"revision_id", rev.id})
	return envelope1("application", o)
}

// handleCreateSimpleTestset is POST /simple/testsets/.
func (s *Server) handleCreateSimpleTestset(c *call) answer {
	var in struct {
		Spec simpleSpec26 `body:"testset"`
	}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	slug, name, description, data := in.Spec.Slug, in.Spec.Name, in.Spec.Description, in.Spec.Data
	rows, err := testcaseRows(c.body)
	if err != nil {
		return refusal26([]fail26{{typ: "model_attributes_type", msg: "Input should be a valid dictionary or object to extract fields from",
			loc: []any{"body", "testset", "data", "testcases"}, input: data["testcases"]}})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slug == "" {
		return count0()
	}
	ts, ok := s.createTestset26(slug, name, description, rows)
	if !ok {
		return conflict26(slug)
	}
	rev := ts.revisions[0]
	o := s.named26(nil, ts.name, ts.description, ts.created, 0, ts.slug, ts.id)
	if len(rev.testcaseIDs) > 0 {
		o = append(o, field{"data", object{{"testcase_ids", rev.testcaseIDs}, {"testcases", s.testcasesWire26(rev.testcaseIDs, false)}}})
	}
	o = append(o, field{"revision_id", rev.id})
	return envelope1("testset", o)
}

// testcaseRows reads testset.data.testcases[].data from a create body,
// keeping each row's column order.
func testcaseRows(body []byte) ([][]column, error) {
	var doc struct {
		Testset struct {
			Data struct {
				Testcases []struct {
					Data json.RawMessage `json:"data"`
				} `json:"testcases"`
			} `json:"data"`
		} `json:"testset"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	rows := make([][]column, 0, len(doc.Testset.Data.Testcases))
	for _, tc := range doc.Testset.Data.Testcases {
		cols, err := orderedColumns(tc.Data)
		if err != nil {
			return nil, err
		}
		rows = append(rows, cols)
	}
	return rows, nil
}

// orderedColumns reads a JSON object's members in order.
func orderedColumns(raw json.RawMessage) ([]column, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var cols []column
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		cols = append(cols, column{name, v})
	}
	return cols, nil
}

// handleCreateSimpleEvaluator is POST /simple/evaluators/.
func (s *Server) handleCreateSimpleEvaluator(c *call) answer {
	var in struct {
		Spec struct {
			Slug        string `body:"slug"`
			Name        string `body:"name"`
			Description string `body:"description"`
			Data        struct {
				URI        string `body:"uri"`
				Parameters body26 `body:"parameters"`
			} `body:"data"`
		} `body:"evaluator"`
	}
	if refused, ok := decode26(c, true, &in); !ok {
		return refused
	}
	spec := in.Spec
	slug, name, description, uri, params := spec.Slug, spec.Name, spec.Description, spec.Data.URI, spec.Data.Parameters
	s.mu.Lock()
	defer s.mu.Unlock()
	if slug == "" {
		return count0()
	}
	if s.v26.evaluator(&refIn{slug: slug}) != nil {
		return conflict26(slug)
	}
	ev, ok := s.createEvaluator26(slug, name, description, uri, jsonClone(params))
	if !ok {
		return s.unexpected26("create_simple_evaluator")
	}
	rev := ev.revisions[0]
	o := s.named26(object{{"flags", appFlags26(false, true, true, true)}},
		ev.name, ev.description, ev.created, 0, ev.slug, ev.id)
	return envelope1("evaluator", append(o, field{"data", evaluatorDataWire(rev)},
		field{"variant_id", ev.variantID}, field{"revision_id", rev.id}))
}

// simpleSpec26 is the object a /simple/ create names its resource by.
type simpleSpec26 struct {
	Slug        string `body:"slug"`
	Name        string `body:"name"`
	Description string `body:"description"`
	Data        body26 `body:"data"`
}

// deepMerge merges src into dst: objects merge, scalars and lists replace.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if into, ok := dst[k].(map[string]any); ok {
				deepMerge(into, sub)
				continue
			}
			dst[k] = jsonClone(sub)
			continue
		}
		dst[k] = v
	}
}

// removePath deletes a dotted path from m.
func removePath(m map[string]any, path []string) {
	for len(path) > 1 {
		next, ok := m[path[0]].(map[string]any)
		if !ok {
			return
		}
		m, path = next, path[1:]
	}
	delete(m, path[0])
}
