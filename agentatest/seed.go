package agentatest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agenta-go/agenta/models"
)

// The seeding API builds the state the seven operations read. Seeding
// methods panic on a bad seed (an unknown reference, a duplicate id), which
// is a bug in the test rather than a condition to handle. An empty ID is
// replaced by a fresh one, which the method returns.

// App is an application: the owner of bases, variants, test sets and
// environments.
type App struct {
	ID   string
	Name string
	// OrganizationID and WorkspaceID make the app one of the cloud's: its
	// variants then carry organization_id, workspace_id and
	// previous_variant_name (null when empty). When both are empty the app
	// is a self-hosted server's, whose variants have none of the three
	// fields, as the contract's README says.
	OrganizationID string
	WorkspaceID    string
}

// Base is the code of an application, which its variants configure.
type Base struct {
	ID    string
	AppID string
	// Name defaults to the app's name. A variant of the base is named
	// "<Name>.<config name>".
	Name string
	// URI is where the base is served, sent as the variants' uri. Empty
	// means what a self-hosted server gives a started base:
	// "http://localhost/<user id>/<app name>/<base name>" (its DOMAIN_NAME,
	// then the path its proxy serves the app under), with the Server's
	// user; for a cloud app (see App.OrganizationID) it means null.
	URI string
	// Application computes what the base answers during an evaluation.
	// Nil means TemplateApplication.
	Application Application
}

// Variant is a named configuration of a base: its parameters at a revision.
type Variant struct {
	ID     string
	BaseID string
	// ConfigName defaults to "default".
	ConfigName string
	// Parameters is the configuration, such as the prompt and the model.
	// It is copied.
	Parameters map[string]any
	// Revision is the variant's current revision; it defaults to 1.
	Revision int
	// PreviousVariantName is sent as previous_variant_name (empty means
	// null) when the app is a cloud one; see App.OrganizationID.
	PreviousVariantName string
	// UserID defaults to the Server's user.
	UserID string
}

// Testset is a test set: rows of named columns, one scenario each when an
// evaluation runs.
type Testset struct {
	ID    string
	AppID string
	Name  string
	Rows  []map[string]string
}

type appRecord struct {
	App
	environments map[string]string // environment name → variant id
}

type baseRecord struct {
	Base
}

type variantRecord struct {
	id, appID, baseID   string
	configName          string
	parameters          map[string]any
	revision            int
	revisionIDs         map[int]string
	previousVariantName string
	userID              string
	order               int // creation order, to find a base's first variant
}

type testsetRecord struct {
	Testset
}

type evaluatorRecord struct {
	id, name, key    string
	settings         map[string]any
	created, updated time.Time
	order            int // creation order, the order of a run's aggregates
}

type humanEvaluationRecord struct {
	models.HumanEvaluation
}

type spanRecord struct {
	span     models.Span // without Children
	children []string
}

// AddApp adds an application and returns its id.
func (s *Server) AddApp(a App) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seedID(s, &a.ID, s.apps, "AddApp: app")
	if a.Name == "" {
		a.Name = "app"
	}
	s.apps[a.ID] = &appRecord{App: a, environments: map[string]string{}}
	return a.ID
}

// AddBase adds a base to an existing app and returns its id.
func (s *Server) AddBase(b Base) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	app := seeded(s.apps, b.AppID, "AddBase: unknown app")
	seedID(s, &b.ID, s.bases, "AddBase: base")
	if b.Name == "" {
		b.Name = app.Name
	}
	if b.URI == "" && app.OrganizationID == "" && app.WorkspaceID == "" {
		b.URI = fmt.Sprintf("http://localhost/%s/%s/%s", s.user.ID, app.Name, b.Name)
	}
	s.bases[b.ID] = &baseRecord{Base: b}
	return b.ID
}

// AddVariant adds a variant of an existing base and returns its id.
func (s *Server) AddVariant(v Variant) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	base := seeded(s.bases, v.BaseID, "AddVariant: unknown base")
	if v.ConfigName == "" {
		v.ConfigName = "default"
	}
	if s.variantNamed(base.AppID, base.Name+"."+v.ConfigName) != nil {
		panic(fmt.Sprintf("agentatest: AddVariant: app %q already has a variant %s.%s", base.AppID, base.Name, v.ConfigName))
	}
	seedID(s, &v.ID, s.variants, "AddVariant: variant")
	params, err := copyParameters(v.Parameters)
	if err != nil {
		panic(fmt.Sprintf("agentatest: AddVariant: parameters: %v", err))
	}
	if v.Revision <= 0 {
		v.Revision = 1
	}
	if v.UserID == "" {
		v.UserID = s.user.ID
	}
	s.variants[v.ID] = &variantRecord{
		id: v.ID, appID: base.AppID, baseID: base.ID, configName: v.ConfigName,
		parameters: params, revision: v.Revision,
		revisionIDs:         map[int]string{v.Revision: s.newID()},
		previousVariantName: v.PreviousVariantName, userID: v.UserID,
		order: len(s.variants),
	}
	return v.ID
}

// UpdateVariantParameters gives a variant new parameters as a new revision,
// as saving a configuration does on the service, and returns the revision.
func (s *Server) UpdateVariantParameters(variantID string, parameters map[string]any) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := seeded(s.variants, variantID, "UpdateVariantParameters: unknown variant")
	params, err := copyParameters(parameters)
	if err != nil {
		panic(fmt.Sprintf("agentatest: UpdateVariantParameters: %v", err))
	}
	v.parameters = params
	v.revision++
	v.revisionIDs[v.revision] = s.newID()
	return v.revision
}

// DeployToEnvironment deploys a variant to one of its app's environments,
// such as "production", replacing what was deployed there.
func (s *Server) DeployToEnvironment(variantID, environment string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := seeded(s.variants, variantID, "DeployToEnvironment: unknown variant")
	s.apps[v.appID].environments[environment] = variantID
}

// AddTestset adds a test set and returns its id.
func (s *Server) AddTestset(t Testset) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.AppID != "" {
		seeded(s.apps, t.AppID, "AddTestset: unknown app")
	}
	seedID(s, &t.ID, s.testsets, "AddTestset: test set")
	rows := make([]map[string]string, len(t.Rows))
	for i, row := range t.Rows {
		rows[i] = make(map[string]string, len(row))
		for k, v := range row {
			rows[i][k] = v
		}
	}
	t.Rows = rows
	s.testsets[t.ID] = &testsetRecord{Testset: t}
	return t.ID
}

// AddEvaluatorConfig adds an evaluator configuration, such as
// {EvaluatorKey: "auto_exact_match", SettingsValues:
// {"correct_answer_key": "correct_answer"}}, and returns its id. Zero
// times default to the Server's clock.
func (s *Server) AddEvaluatorConfig(c models.EvaluatorConfig) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seedID(s, &c.ID, s.evaluators, "AddEvaluatorConfig: evaluator config")
	settings, err := copyParameters(c.SettingsValues)
	if err != nil {
		panic(fmt.Sprintf("agentatest: AddEvaluatorConfig: settings: %v", err))
	}
	if c.Name == "" {
		c.Name = c.EvaluatorKey
	}
	now := s.clock()
	rec := &evaluatorRecord{id: c.ID, name: c.Name, key: c.EvaluatorKey, settings: settings,
		created: orNow(c.CreatedAt.Time, now), updated: orNow(c.UpdatedAt.Time, now), order: len(s.evaluators)}
	s.evaluators[c.ID] = rec
	return c.ID
}

// AddHumanEvaluation adds a human evaluation, listed by
// ListHumanEvaluations for its app, and returns its id. Zero times default
// to the Server's clock; an empty Status to EVALUATION_FINISHED. When the
// variants are seeded ones, empty VariantNames, VariantsRevisionIDs and
// Revisions are filled in from them, as the service lists the revision
// each variant had when the evaluation was created.
func (s *Server) AddHumanEvaluation(h models.HumanEvaluation) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.ID == "" {
		h.ID = s.newID()
	}
	s.useID(h.ID)
	for _, e := range s.humanEvals {
		if e.ID == h.ID {
			panic(fmt.Sprintf("agentatest: AddHumanEvaluation: %q already exists", h.ID))
		}
	}
	now := s.clock()
	h.CreatedAt.Time = orNow(h.CreatedAt.Time, now)
	h.UpdatedAt.Time = orNow(h.UpdatedAt.Time, h.CreatedAt.Time)
	if h.UserID == "" {
		h.UserID = s.user.ID
	}
	if h.UserUsername == "" {
		h.UserUsername = s.user.Username
	}
	if h.Status == "" {
		h.Status = models.EvaluationFinished
	}
	if h.EvaluationType == "" {
		h.EvaluationType = models.HumanEvaluationABTesting
	}
	h.VariantIDs = cloneStrings(h.VariantIDs)
	h.VariantNames = cloneStrings(h.VariantNames)
	h.VariantsRevisionIDs = cloneStrings(h.VariantsRevisionIDs)
	h.Revisions = cloneStrings(h.Revisions)
	s.fillHumanEvaluationVariants(&h)
	s.humanEvals = append(s.humanEvals, humanEvaluationRecord{HumanEvaluation: h})
	return h.ID
}

// fillHumanEvaluationVariants fills in the empty variant lists of a human
// evaluation whose variants are all seeded. Callers hold s.mu.
func (s *Server) fillHumanEvaluationVariants(h *models.HumanEvaluation) {
	var names, revisionIDs, revisions []string
	for _, id := range h.VariantIDs {
		v, ok := s.variants[id]
		if !ok {
			return
		}
		names = append(names, s.bases[v.baseID].Name+"."+v.configName)
		revisionIDs = append(revisionIDs, v.revisionIDs[v.revision])
		revisions = append(revisions, revisionString(v.revision))
	}
	if len(h.VariantNames) == 0 {
		h.VariantNames = cloneStrings(names)
	}
	if len(h.VariantsRevisionIDs) == 0 {
		h.VariantsRevisionIDs = cloneStrings(revisionIDs)
	}
	if len(h.Revisions) == 0 {
		h.Revisions = cloneStrings(revisions)
	}
}

// AddTrace stores a tree of spans and returns the root's id. Every span in
// the tree can then be fetched with GetSpan, with its descendants. Empty
// ids are generated; ParentSpanID and TraceID are filled in from the tree;
// zero times default to the Server's clock.
//
// The span operation exists on the cloud service only; a self-hosted server
// of mid-2024 answers its paths 404 {"detail":"Not Found"}, as for an
// unknown route. A Server without traces answers so, for testing code that
// must also work against a self-hosted server; once AddTrace has stored a
// trace it answers as the cloud does: the span, or 500 "Span <id> not
// found" for an id it does not hold.
func (s *Server) AddTrace(root models.Span) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	traceID := root.TraceID
	if traceID == "" {
		traceID = s.newID()
	}
	var add func(sp models.Span, parent string) string
	add = func(sp models.Span, parent string) string {
		seedID(s, &sp.ID, s.spans, "AddTrace: span")
		if parent != "" {
			sp.ParentSpanID = parent
		}
		if sp.TraceID == "" {
			sp.TraceID = traceID
		}
		sp.CreatedAt.Time = orNow(sp.CreatedAt.Time, s.clock())
		if sp.Status == "" {
			sp.Status = models.SpanStatusOK
		}
		if sp.SpanKind == "" {
			sp.SpanKind = models.SpanKindUnknown
		}
		children := sp.Children
		sp.Children = nil
		rec := &spanRecord{span: sp}
		s.spans[sp.ID] = rec
		for _, c := range children {
			rec.children = append(rec.children, add(c, sp.ID))
		}
		return sp.ID
	}
	return add(root, root.ParentSpanID)
}

// seedID gives a seeded object its id, the one asked or else a new one,
// and marks it used; an id already held is the test's mistake and panics,
// naming what (its Add method and kind).
func seedID[T any](s *Server, id *string, held map[string]T, what string) {
	if *id == "" {
		*id = s.newID()
	}
	s.useID(*id)
	if _, dup := held[*id]; dup {
		panic(fmt.Sprintf("agentatest: %s %q already exists", what, *id))
	}
}

// seeded returns the object of held that id names; an unknown id is the
// test's mistake and panics, naming what (its Add method and kind).
func seeded[T any](held map[string]T, id, what string) T {
	v, ok := held[id]
	if !ok {
		panic(fmt.Sprintf("agentatest: %s %q", what, id))
	}
	return v
}

// variantNamed finds a variant of an app by its full name. Callers hold s.mu.
func (s *Server) variantNamed(appID, name string) *variantRecord {
	for _, v := range s.variants {
		if v.appID == appID && s.bases[v.baseID].Name+"."+v.configName == name {
			return v
		}
	}
	return nil
}

// copyParameters deep-copies a JSON-like map through JSON, so that the
// caller's map stays theirs. Numbers become json.Number with the text JSON
// gives them, as the SDK decodes them: an integer past 2^53 or a long
// decimal stored by a fork comes back exactly as it was sent.
func copyParameters(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, decodeNumbers(data, &out)
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t
}

func cloneStrings(in []string) []string {
	if in == nil {
		return []string{}
	}
	return append([]string(nil), in...)
}
