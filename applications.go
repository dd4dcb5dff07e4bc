package agenta

import (
	"context"
	"encoding/json"
	"github.com/agenta-go/agenta/internal/text"
	"net/http"

	"github.com/agenta-go/agenta/models"
)

// The application operations of the 2026 API (Agenta v0.103.4 on):
// variants and their numbered revisions, which replace the 2024 variants
// and bases.

// RetrieveApplicationRevision finds an application revision: by revision id
// or slug; by variant (its latest revision, or the version given in
// ApplicationRevisionRef); by application (its default variant's latest
// revision); or the one deployed to an environment, given with the
// application or a Key. No match is ErrNotFound: a *NotFoundError for the
// service's {"count":0}, an *APIError 404 for an environment that holds
// nothing for the application. Contradictory references, or a version
// without a variant or application, are a 400 (ErrBadRequest).
func (c *Client) RetrieveApplicationRevision(ctx context.Context, q models.ApplicationRevisionRetrieve) (*models.ApplicationRevision, error) {
	refs := []namedRef{
		{"ApplicationRef", "application_ref", q.ApplicationRef}, {"ApplicationVariantRef", "application_variant_ref", q.ApplicationVariantRef},
		{"ApplicationRevisionRef", "application_revision_ref", q.ApplicationRevisionRef}, {"EnvironmentRef", "environment_ref", q.EnvironmentRef},
		{"EnvironmentVariantRef", "environment_variant_ref", q.EnvironmentVariantRef}, {"EnvironmentRevisionRef", "environment_revision_ref", q.EnvironmentRevisionRef},
	}
	if err := checkRefs("ApplicationRevisionRetrieve", refs, q.Key != ""); err != nil {
		return nil, err
	}
	a, err := lookup[applicationRevisionAnswer](ctx, c, &request{operation: "RetrieveApplicationRevision",
		method: http.MethodPost, path: "/applications/revisions/retrieve", body: q, read: true},
		"application revision matching "+describe(q))
	if err != nil {
		return nil, err
	}
	return a.Revision, nil
}

// FetchApplicationRevision reads an application revision by id; an unknown
// id is a *NotFoundError (ErrNotFound).
func (c *Client) FetchApplicationRevision(ctx context.Context, applicationRevisionID string) (*models.ApplicationRevision, error) {
	id, err := segment("applicationRevisionID", "application_revision_id", applicationRevisionID)
	if err != nil {
		return nil, err
	}
	a, err := lookup[applicationRevisionAnswer](ctx, c, &request{operation: "FetchApplicationRevision",
		method: http.MethodGet, path: "/applications/revisions/" + id}, "application revision "+applicationRevisionID)
	if err != nil {
		return nil, err
	}
	return a.Revision, nil
}

// FetchApplicationVariant reads an application variant by id, without its
// revisions' data; an unknown id (a revision id too) is a *NotFoundError
// (ErrNotFound).
func (c *Client) FetchApplicationVariant(ctx context.Context, applicationVariantID string) (*models.ApplicationVariant, error) {
	id, err := segment("applicationVariantID", "application_variant_id", applicationVariantID)
	if err != nil {
		return nil, err
	}
	a, err := lookup[applicationVariantAnswer](ctx, c, &request{operation: "FetchApplicationVariant",
		method: http.MethodGet, path: "/applications/variants/" + id}, "application variant "+applicationVariantID)
	if err != nil {
		return nil, err
	}
	return a.Variant, nil
}

// ForkApplicationVariant creates a variant whose history is the source
// variant's, up to f.ApplicationRevisionRef or its latest revision, with
// the source's version numbers; commit to it to change its parameters. A
// taken or missing slug is answered {"count":0}, a *NotCreatedError
// (ErrNotCreated); an unknown source is a 400. Forking is not idempotent:
// it is retried only on 429 or when nothing was sent.
func (c *Client) ForkApplicationVariant(ctx context.Context, f models.ApplicationVariantFork) (*models.ApplicationVariant, error) {
	if err := checkRef("ApplicationVariantFork.ApplicationVariantRef", "application_variant_ref", &f.ApplicationVariantRef); err != nil {
		return nil, err
	}
	if f.ApplicationRevisionRef != nil {
		if err := checkRef("ApplicationVariantFork.ApplicationRevisionRef", "application_revision_ref", f.ApplicationRevisionRef); err != nil {
			return nil, err
		}
	}
	if err := required("ApplicationVariantFork.ApplicationVariant.Slug", "application_variant.slug", f.ApplicationVariant.Slug); err != nil {
		return nil, err
	}
	a, err := created[applicationVariantAnswer](ctx, c, &request{operation: "ForkApplicationVariant",
		method: http.MethodPost, path: "/applications/variants/fork", body: f},
		"the variant "+text.Clip(f.ApplicationVariant.Slug, maxMessage), "the slug is taken in this project")
	if err != nil {
		return nil, err
	}
	return a.Variant, nil
}

// CommitApplicationRevision adds a revision to a variant, with either the
// whole cm.Data or cm.Delta applied to the latest revision; the answer is
// the new revision, whose Version is the next number. A commit with
// neither is refused before sending: the service would accept it and wipe
// the revision's data. An unknown variant is answered {"count":0}, a
// *NotCreatedError (ErrNotCreated); a stale BaseRevisionID is a 500 on
// v0.113. Committing is not idempotent: it is retried only on 429 or when
// nothing was sent.
func (c *Client) CommitApplicationRevision(ctx context.Context, cm models.ApplicationRevisionCommit) (*models.ApplicationRevision, error) {
	if err := required("ApplicationRevisionCommit.ApplicationVariantID", "application_variant_id", cm.ApplicationVariantID); err != nil {
		return nil, err
	}
	switch {
	case cm.Data == nil && cm.Delta == nil:
		return nil, invalidField("ApplicationRevisionCommit.Data", "data",
			"Data or Delta is required: a commit with neither makes a revision without data, wiping its URL and parameters")
	case cm.Data != nil && cm.Delta != nil:
		return nil, invalidField("ApplicationRevisionCommit.Delta", "delta", "give Data (the whole configuration) or Delta (changes to the latest revision), not both")
	}
	a, err := created[applicationRevisionAnswer](ctx, c, &request{operation: "CommitApplicationRevision",
		method: http.MethodPost, path: "/applications/revisions/commit", body: cm},
		"the revision", "no variant "+text.Clip(cm.ApplicationVariantID, maxMessage)+" (a variant id, not an application or revision id)")
	if err != nil {
		return nil, err
	}
	return a.Revision, nil
}

// DeployApplicationRevision puts a revision in an environment, such as
// models.EnvironmentProduction, so that RetrieveApplicationRevision finds
// it there. The route is not in the published slice of the API; v0.113
// serves it. Deploying is not idempotent in the retry sense: it is retried
// only on 429 or when nothing was sent.
func (c *Client) DeployApplicationRevision(ctx context.Context, d models.ApplicationRevisionDeploy) (*models.ApplicationRevision, error) {
	if err := checkRef("ApplicationRevisionDeploy.ApplicationRevisionRef", "application_revision_ref", &d.ApplicationRevisionRef); err != nil {
		return nil, err
	}
	if err := checkRef("ApplicationRevisionDeploy.EnvironmentRef", "environment_ref", &d.EnvironmentRef); err != nil {
		return nil, err
	}
	a, err := created[applicationRevisionAnswer](ctx, c, &request{operation: "DeployApplicationRevision",
		method: http.MethodPost, path: "/applications/revisions/deploy", body: d},
		"the deployment", "no such revision or environment")
	if err != nil {
		return nil, err
	}
	return a.Revision, nil
}

type applicationRevisionAnswer struct {
	Count    *int                        `json:"count,omitempty"`
	Revision *models.ApplicationRevision `json:"application_revision,omitempty"`
}

func (a *applicationRevisionAnswer) member() (*int, bool) { return a.Count, a.Revision != nil }

type applicationVariantAnswer struct {
	Count   *int                       `json:"count,omitempty"`
	Variant *models.ApplicationVariant `json:"application_variant,omitempty"`
}

func (a *applicationVariantAnswer) member() (*int, bool) { return a.Count, a.Variant != nil }

// namedRef is a reference of a retrieve request with its Go and wire names.
type namedRef struct {
	name, field string
	ref         *models.Reference
}

// checkRefs refuses a retrieve request that names nothing, or a reference
// that is empty or holds a blank or control character; keyed says a Key
// names the object instead.
func checkRefs(request string, refs []namedRef, keyed bool) error {
	given := keyed
	for _, r := range refs {
		if r.ref == nil {
			continue
		}
		if err := checkRef(request+"."+r.name, r.field, r.ref); err != nil {
			return err
		}
		given = true
	}
	if !given {
		return invalid(request, "names nothing: set one of its references")
	}
	return nil
}

// checkRef refuses a reference without id, slug or version, or one whose
// values are blank or hold a control character.
func checkRef(name, field string, ref *models.Reference) error {
	if *ref == (models.Reference{}) {
		return invalidField(name, field, "is empty: set its ID, Slug or Version")
	}
	for _, v := range []struct{ name, field, value string }{
		{"ID", "id", ref.ID}, {"Slug", "slug", ref.Slug}, {"Version", "version", ref.Version},
	} {
		if v.value != "" {
			if err := required(name+"."+v.name, field+"."+v.field, v.value); err != nil {
				return err
			}
		}
	}
	return nil
}

// describe renders a request for an error message: its JSON, bounded.
func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return text.Clip(string(b), maxMessage)
}
