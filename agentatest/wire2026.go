package agentatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The JSON the 2026 generation writes: members in v0.113's order, absent
// rather than null (the service serializes with exclude_none), and
// Pydantic 2's timestamps.

// time26 writes a timestamp as v0.113 does: UTC with "Z", microseconds
// unless they are zero.
func time26(t time.Time) string { return naiveTime(t) + "Z" }

// count0 is the 2026 answer for "nothing": 200 {"count":0}.
func count0() answer { return jsonAnswer(http.StatusOK, object{{"count", 0}}) }

// fetch26 answers a read by the id in the path as v0.113 does: a malformed
// id is refused (idName names it), an unknown one is {"count":0}, a known
// one is wire's form of it under member. rows is read under the lock.
func fetch26[T any](s *Server, c *call, idName string, rows func() map[string]*T, member string, wire func(*T) object) answer {
	id, refused, ok := pathUUID26(c.id, idName)
	if !ok {
		return refused
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	row := rows()[id]
	if row == nil {
		return count0()
	}
	return envelope1(member, wire(row))
}

// envelope1 is the 2026 envelope of one object.
func envelope1(member string, v any, extra ...field) answer {
	o := object{{"count", 1}, {member, v}}
	return jsonAnswer(http.StatusOK, append(o, extra...))
}

// envelopeList is the 2026 envelope of a list.
func envelopeList(member string, items []any, extra ...field) answer {
	if items == nil {
		items = []any{}
	}
	o := object{{"count", len(items)}, {member, items}}
	return jsonAnswer(http.StatusOK, append(o, extra...))
}

// unexpected26 is v0.113's answer to an unhandled error: 500 with the
// handler's operation id and a support id header.
func (s *Server) unexpected26(operation string) answer {
	a := jsonAnswer(http.StatusInternalServerError, object{{"detail", object{
		{"message", "An unexpected error occurred. Please try again later or contact support."},
		{"operation_id", operation},
	}}})
	now := time.Now()
	a.header = http.Header{"X-Ag-Support-Id": {hexUUID26(now.String())}, "X-Ag-Support-Ts": {time26(now)}}
	return a
}

// conflict26 is v0.113's 409 for a slug taken.
func conflict26(slug string) answer {
	return jsonAnswer(http.StatusConflict, object{{"detail", object{
		{"message", fmt.Sprintf("A resource with slug '%s' already exists in this project.", slug)},
		{"conflict", object{{"slug", slug}}},
	}}})
}

// ref26 is a Reference: version, slug, id, each when set.
func ref26(id, slug, version string) object {
	o := object{}
	if version != "" {
		o = append(o, field{"version", version})
	}
	if slug != "" {
		o = append(o, field{"slug", slug})
	}
	return append(o, field{"id", id})
}

// appFlags26 are the 17 flags of an application (or evaluator) revision.
func appFlags26(application, evaluator, managed, hasURL bool) object {
	return object{
		{"is_application", application}, {"is_evaluator", evaluator}, {"is_snippet", false},
		{"is_managed", managed}, {"is_custom", false}, {"is_llm", false}, {"is_hook", false},
		{"is_code", false}, {"is_match", false}, {"is_feedback", false}, {"is_agent", false},
		{"is_skill", false}, {"is_chat", false}, {"has_url", hasURL}, {"has_script", false},
		{"has_handler", false}, {"is_static", false},
	}
}

// workflowIDs26 open a workflow revision (an application's or an
// evaluator's): its variant's and artifact's slugs and ids, under its
// kind's names, the workflow's and the bare ones.
func workflowIDs26(kind, variantSlug, slug, variantID, id string) object {
	return object{
		{kind + "_variant_slug", variantSlug}, {"workflow_variant_slug", variantSlug},
		{kind + "_slug", slug}, {"workflow_slug", slug},
		{kind + "_variant_id", variantID}, {"workflow_variant_id", variantID},
		{kind + "_id", id}, {"workflow_id", id},
		{"variant_slug", variantSlug}, {"artifact_slug", slug},
		{"variant_id", variantID}, {"artifact_id", id},
	}
}

// named26 closes the object of one of the service's named entities: its
// name and description where set, who created it and when, its version
// where it has one (0: none), its slug and id. Callers hold s.mu.
func (s *Server) named26(o object, name, description string, created time.Time, version int, slug, id string) object {
	if name != "" {
		o = append(o, field{"name", name})
	}
	if description != "" {
		o = append(o, field{"description", description})
	}
	o = append(o, field{"created_at", time26(created)}, field{"created_by_id", s.user.ID})
	if version > 0 {
		o = append(o, field{"version", revisionString(version)})
	}
	return append(o, field{"slug", slug}, field{"id", id})
}

// revisionWire26 is an application revision. Callers hold s.mu.
func (s *Server) revisionWire26(r *revision26) object {
	v, app := r.variant, r.variant.app
	o := append(workflowIDs26("application", v.slug, app.slug, v.id, app.id),
		field{"author", s.user.ID}, field{"date", time26(r.date)})
	if r.message != "" {
		o = append(o, field{"message", r.message})
	}
	_, hasURL := r.data["url"]
	o = s.named26(append(o, field{"flags", appFlags26(true, false, false, hasURL)}),
		r.name, r.description, r.created, r.version, r.slug, r.id)
	if r.data != nil {
		o = append(o, field{"data", r.data})
	}
	return o
}

// lineage26 is a revision with its artifact and variant: each one's id,
// slug and, the revision's alone, version.
type lineage26 [3][3]string

// references are the lineage's references under kind's names (application,
// testset, evaluator), as retrieval_info and a run's steps list them.
func (l lineage26) references(kind string) object {
	o := object{}
	for i, name := range [3]string{kind, kind + "_variant", kind + "_revision"} {
		o = append(o, field{name, ref26(l[i][0], l[i][1], l[i][2])})
	}
	return o
}

func (r *revision26) lineage() lineage26 {
	v, app := r.variant, r.variant.app
	return lineage26{{app.id, app.slug}, {v.id, v.slug}, {r.id, r.slug, revisionString(r.version)}}
}

func (r *tsRevision26) lineage() lineage26 {
	ts := r.testset
	return lineage26{{ts.id, ts.slug}, {ts.variantID, ts.variantSlug}, {r.id, r.slug, revisionString(r.version)}}
}

func (r *evRevision26) lineage() lineage26 {
	ev := r.evaluator
	return lineage26{{ev.id, ev.slug}, {ev.variantID, ev.variantSlug}, {r.id, r.slug, revisionString(r.version)}}
}

func (e *env26) lineage() lineage26 {
	return lineage26{{e.id, e.slug}, {e.variantID, e.variantSlug}, {e.revisionID, e.revisionSlug, revisionString(e.version)}}
}

// variantWire26 is an application variant; full adds the slugs the read
// sends and the fork answer leaves out. Callers hold s.mu.
func (s *Server) variantWire26(v *variant26, full bool) object {
	app := v.app
	o := object{}
	if full {
		o = append(o, field{"application_slug", app.slug}, field{"workflow_slug", app.slug})
	}
	o = append(o, field{"application_id", app.id}, field{"workflow_id", app.id})
	if full {
		o = append(o, field{"artifact_slug", app.slug})
	}
	o = append(o, field{"artifact_id", app.id},
		field{"flags", object{{"is_application", true}, {"is_evaluator", false}, {"is_snippet", false}}})
	return s.named26(o, v.name, v.description, v.created, 0, v.slug, v.id)
}

// testcaseWire26 is a test case; set adds set_id, as the testcase routes do.
// Callers hold s.mu.
func (s *Server) testcaseWire26(tc *testcase26, set bool) object {
	o := object{{"testset_id", tc.testsetID}}
	if set {
		o = append(o, field{"set_id", tc.testsetID})
	}
	return append(o, field{"created_at", time26(tc.created)}, field{"created_by_id", s.user.ID},
		field{"id", tc.id}, field{"data", columnsWire(tc.data)})
}

// columnsWire is a row's data, its columns in order.
func columnsWire(cols []column) object {
	o := make(object, len(cols))
	for i, c := range cols {
		o[i] = field{c.name, c.value}
	}
	return o
}

// testsetRevisionWire26 is a test-set revision, with its ids and test cases
// as asked. Callers hold s.mu.
func (s *Server) testsetRevisionWire26(r *tsRevision26, ids, cases bool) object {
	ts := r.testset
	o := object{
		{"testset_variant_slug", ts.variantSlug}, {"variant_slug", ts.variantSlug},
		{"testset_slug", ts.slug}, {"artifact_slug", ts.slug},
		{"testset_variant_id", ts.variantID}, {"testset_id", ts.id},
		{"author", s.user.ID}, {"date", time26(r.date)},
	}
	o = s.named26(o, ts.name, ts.description, r.created, r.version, r.slug, r.id)
	if len(r.testcaseIDs) > 0 {
		data := object{}
		if ids {
			data = append(data, field{"testcase_ids", r.testcaseIDs})
		}
		if cases {
			data = append(data, field{"testcases", s.testcasesWire26(r.testcaseIDs, false)})
		}
		o = append(o, field{"data", data})
	}
	return o
}

func (s *Server) testcasesWire26(ids []string, set bool) []any {
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		if tc := s.v26.testcases[id]; tc != nil {
			out = append(out, s.testcaseWire26(tc, set))
		}
	}
	return out
}

// evaluatorRevisionWire26 is an evaluator revision. Callers hold s.mu.
func (s *Server) evaluatorRevisionWire26(r *evRevision26) object {
	ev := r.evaluator
	o := append(workflowIDs26("evaluator", ev.variantSlug, ev.slug, ev.variantID, ev.id),
		field{"author", s.user.ID}, field{"date", time26(r.date)},
		field{"flags", appFlags26(false, true, true, true)})
	o = s.named26(o, ev.name, ev.description, r.created, r.version, r.slug, r.id)
	return append(o, field{"data", evaluatorDataWire(r)})
}

func evaluatorDataWire(r *evRevision26) object {
	schemas := evaluatorSchemas26[r.key]
	params := r.parameters
	if params == nil {
		params = map[string]any{}
	}
	return object{
		{"uri", r.uri}, {"url", r.url},
		{"schemas", object{{"parameters", json.RawMessage(schemas.parameters)}, {"outputs", json.RawMessage(schemas.outputs)}}},
		{"parameters", params},
	}
}

// evaluatorSchemas26 are the parameter and output schemas of the
// built-ins the fake runs, as v0.113's services declare them.
var evaluatorSchemas26 = map[string]struct{ parameters, outputs string }{
	exactMatch26: {
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"correct_answer_key":{"type":"string","default":"correct_answer","x-ag-type":"text","x-ag-ui-advanced":true}},"additionalProperties":false}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"success":{"type":"boolean"}},"required":["success"],"additionalProperties":false}`,
	},
	regexTest26: {
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"regex_pattern":{"type":"string","default":"","x-ag-type":"regex"},"regex_should_match":{"type":"boolean","default":true,"x-ag-type":"bool"}},"additionalProperties":false,"required":["regex_pattern"]}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"success":{"type":"boolean"}},"required":["success"],"additionalProperties":false}`,
	},
	levenshtein26: {
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"threshold":{"type":"number","x-ag-type":"float"},"correct_answer_key":{"type":"string","default":"correct_answer","x-ag-type":"text","x-ag-ui-advanced":true}},"additionalProperties":false}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"score":{"type":"number"},"success":{"type":"boolean"}},"required":[],"additionalProperties":false}`,
	},
	startsWith26: {
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"prefix":{"type":"string","x-ag-type":"text"},"case_sensitive":{"type":"boolean","default":true,"x-ag-type":"bool"}},"additionalProperties":false,"required":["prefix"]}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"success":{"type":"boolean"}},"required":["success"],"additionalProperties":false}`,
	},
}

// outputNames26 are the members an evaluator's outputs schema declares, in
// its order.
func outputNames26(key string) []string {
	switch key {
	case levenshtein26:
		return []string{"score", "success"}
	case "":
		return nil
	}
	return []string{"success"}
}

// decodeNumbers decodes JSON keeping numbers as json.Number, so that they
// are written back as they came.
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// traceID26 accepts a trace id as v0.113 does, dashed or 32 hex digits in
// either case, and returns its 32 lower-case hex digits.
func traceID26(id string) (string, bool) {
	hex := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	if !isHex(hex, 32) || strings.Count(id, "-") != 0 && strings.Count(id, "-") != 4 {
		return "", false
	}
	return hex, true
}

// dashed writes 32 hex digits as a dashed UUID.
func dashed(hex string) string {
	return hex[:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:]
}
