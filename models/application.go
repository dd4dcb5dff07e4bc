package models

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
)

// The application shapes of the 2026 API: an application has variants, a
// variant has numbered revisions, and a revision holds the configuration
// (data.parameters) and where the application is served (data.url).

// Flags are an object's named booleans, such as is_application or
// has_url. Members that are not booleans, which the service's schema does
// not rule out, are left out rather than refused.
type Flags map[string]bool

// UnmarshalJSON keeps the boolean members of a JSON object.
func (f *Flags) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	if m == nil {
		*f = nil
		return nil
	}
	*f = make(Flags, len(m))
	for k, v := range m {
		switch string(v) {
		case "true":
			(*f)[k] = true
		case "false":
			(*f)[k] = false
		}
	}
	return nil
}

// Reference names an object of the 2026 API by id, slug or version. A
// version ("1", "2", …) counts within one variant, so it names a revision
// only together with a variant or application reference.
type Reference struct {
	ID      string `json:"id,omitempty"`
	Slug    string `json:"slug,omitempty"`
	Version string `json:"version,omitempty"`
}

// ApplicationRevisionRetrieve says which application revision
// RetrieveApplicationRevision looks up: by revision id or slug; by variant
// (its latest revision, or the Version given in ApplicationRevisionRef);
// by application (its default variant's latest revision); or deployed to
// an environment, with the application or Key ("<app slug>.revision").
type ApplicationRevisionRetrieve struct {
	ApplicationRef         *Reference `json:"application_ref,omitempty"`
	ApplicationVariantRef  *Reference `json:"application_variant_ref,omitempty"`
	ApplicationRevisionRef *Reference `json:"application_revision_ref,omitempty"`
	EnvironmentRef         *Reference `json:"environment_ref,omitempty"`
	EnvironmentVariantRef  *Reference `json:"environment_variant_ref,omitempty"`
	EnvironmentRevisionRef *Reference `json:"environment_revision_ref,omitempty"`
	Key                    string     `json:"key,omitempty"`
}

// ApplicationRevision is one saved configuration of an application
// variant. The service also sends generic aliases of the ids and slugs
// (workflow_*, artifact_*, variant_*); they are not kept.
type ApplicationRevision struct {
	ID string `json:"id"`
	// Slug is 12 hex digits, or "<variant slug>_<hex>" for a fork's copy.
	Slug string `json:"slug,omitempty"`
	// Version counts the variant's revisions: "1", "2", …
	Version                string                   `json:"version,omitempty"`
	Name                   string                   `json:"name,omitempty"`
	Description            string                   `json:"description,omitempty"`
	Message                string                   `json:"message,omitempty"` // the commit message, when one was given
	Author                 string                   `json:"author,omitempty"`
	Date                   *Timestamp               `json:"date,omitempty"`
	ApplicationID          string                   `json:"application_id,omitempty"`
	ApplicationSlug        string                   `json:"application_slug,omitempty"`
	ApplicationVariantID   string                   `json:"application_variant_id,omitempty"`
	ApplicationVariantSlug string                   `json:"application_variant_slug,omitempty"`
	Flags                  Flags                    `json:"flags,omitempty"`
	Tags                   map[string]any           `json:"tags,omitempty"`
	Meta                   map[string]any           `json:"meta,omitempty"`
	Data                   *ApplicationRevisionData `json:"data,omitempty"` // absent on a revision committed without data
	CreatedAt              *Timestamp               `json:"created_at,omitempty"`
	UpdatedAt              *Timestamp               `json:"updated_at,omitempty"`
	CreatedByID            string                   `json:"created_by_id,omitempty"`
	UpdatedByID            string                   `json:"updated_by_id,omitempty"`
}

// ApplicationRevisionData is a revision's configuration: Parameters (the
// prompt, the model, …) and where the application is served.
type ApplicationRevisionData struct {
	URI string `json:"uri,omitempty"`
	URL string `json:"url,omitempty"`
	// Headers are sent to the application; they may hold credentials, so
	// printing the data (Format, LogValue) shows their names only.
	Headers    map[string]json.RawMessage `json:"headers,omitempty"`
	Runtime    string                     `json:"runtime,omitempty"`
	Script     json.RawMessage            `json:"script,omitempty"`
	Schemas    map[string]json.RawMessage `json:"schemas,omitempty"`
	Parameters map[string]any             `json:"parameters,omitempty"`
}

// Format prints the data with the header values redacted, whatever the verb.
func (d ApplicationRevisionData) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "{URI:%q URL:%q Headers:%s Runtime:%q Parameters:%v}", d.URI, d.URL, headerNames(d.Headers), d.Runtime, d.Parameters)
}

// LogValue logs the data with the header values redacted.
func (d ApplicationRevisionData) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("uri", d.URI), slog.String("url", d.URL),
		slog.String("headers", headerNames(d.Headers)),
		slog.Any("parameters", d.Parameters))
}

func headerNames(h map[string]json.RawMessage) string {
	if len(h) == 0 {
		return "map[]"
	}
	s := "map["
	first := true
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if !first {
			s += " "
		}
		first = false
		s += fmt.Sprintf("%q:%s", name, redacted)
	}
	return s + "]"
}

// ApplicationVariant is a named line of revisions of an application: the
// service's ApplicationVariant, without data (read its revisions for that).
type ApplicationVariant struct {
	ID              string         `json:"id"`
	Slug            string         `json:"slug,omitempty"`
	Name            string         `json:"name,omitempty"`
	Description     string         `json:"description,omitempty"`
	ApplicationID   string         `json:"application_id,omitempty"`
	ApplicationSlug string         `json:"application_slug,omitempty"`
	Flags           Flags          `json:"flags,omitempty"`
	Tags            map[string]any `json:"tags,omitempty"`
	Meta            map[string]any `json:"meta,omitempty"`
	CreatedAt       *Timestamp     `json:"created_at,omitempty"`
	UpdatedAt       *Timestamp     `json:"updated_at,omitempty"`
	CreatedByID     string         `json:"created_by_id,omitempty"`
	UpdatedByID     string         `json:"updated_by_id,omitempty"`
}

// ApplicationVariantFork is ForkApplicationVariant's request: a new variant
// whose history is the source variant's up to ApplicationRevisionRef (its
// latest revision when nil), keeping the source's version numbers. The new
// variant's Slug is required.
type ApplicationVariantFork struct {
	ApplicationVariantRef  Reference             `json:"application_variant_ref"`
	ApplicationRevisionRef *Reference            `json:"application_revision_ref,omitempty"`
	ApplicationVariant     NewApplicationVariant `json:"application_variant"`
}

// NewApplicationVariant names the variant a fork creates.
type NewApplicationVariant struct {
	Slug        string         `json:"slug"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Tags        map[string]any `json:"tags,omitempty"`
	Meta        map[string]any `json:"meta,omitempty"`
}

// ApplicationRevisionCommit is CommitApplicationRevision's request: a new
// revision of a variant, with either the whole Data or a Delta applied to
// the variant's latest revision.
type ApplicationRevisionCommit struct {
	ApplicationVariantID string                   `json:"application_variant_id"`
	Message              string                   `json:"message,omitempty"`
	Data                 *ApplicationRevisionData `json:"data,omitempty"`
	Delta                *RevisionDelta           `json:"delta,omitempty"`
	// BaseRevisionID, when set, makes the commit fail if the variant's
	// latest revision is another one (v0.113 answers that with a 500).
	BaseRevisionID string `json:"base_revision_id,omitempty"`
}

// MarshalJSON wraps the commit as the route wants it: {"application_revision":{…}}.
func (c ApplicationRevisionCommit) MarshalJSON() ([]byte, error) {
	type wire ApplicationRevisionCommit
	return json.Marshal(struct {
		ApplicationRevision wire `json:"application_revision"`
	}{wire(c)})
}

// RevisionDelta changes a revision's data: Set is deep-merged onto it
// (objects merge, scalars and lists replace), Remove deletes dotted paths
// such as "parameters.extra".
type RevisionDelta struct {
	Set    map[string]any `json:"set,omitempty"`
	Remove []string       `json:"remove,omitempty"`
}

// ApplicationRevisionDeploy is DeployApplicationRevision's request: put a
// revision in an environment, under the key "<app slug>.revision" unless
// Key says otherwise.
type ApplicationRevisionDeploy struct {
	ApplicationRevisionRef Reference `json:"application_revision_ref"`
	EnvironmentRef         Reference `json:"environment_ref"`
	Key                    string    `json:"key,omitempty"`
	Message                string    `json:"message,omitempty"`
}
