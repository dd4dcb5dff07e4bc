package models

import (
	"bytes"
	"encoding/json"
	"errors"
)

// TestcaseDedupKey is the column the service adds to every row created
// through POST /simple/testsets/: a content hash that keeps identical rows
// apart. It is neither an input nor an expected answer.
const TestcaseDedupKey = "testcase_dedup_id"

// TestsetRevisionRetrieve says which test-set revision
// RetrieveTestsetRevision looks up: by revision id, by variant, or the
// latest revision of a test set (by id or slug).
type TestsetRevisionRetrieve struct {
	TestsetRef         *Reference `json:"testset_ref,omitempty"`
	TestsetVariantRef  *Reference `json:"testset_variant_ref,omitempty"`
	TestsetRevisionRef *Reference `json:"testset_revision_ref,omitempty"`
	// IncludeTestcaseIDs and IncludeTestcases ask for data.testcase_ids and
	// data.testcases; the service sends both unless told false.
	IncludeTestcaseIDs *bool `json:"include_testcase_ids,omitempty"`
	IncludeTestcases   *bool `json:"include_testcases,omitempty"`
}

// TestsetRevision is one saved version of a test set: its rows' ids in
// order and, unless left out, the rows themselves.
type TestsetRevision struct {
	ID               string               `json:"id"`
	Slug             string               `json:"slug,omitempty"`
	Version          string               `json:"version,omitempty"`
	Name             string               `json:"name,omitempty"`
	Description      string               `json:"description,omitempty"`
	Message          string               `json:"message,omitempty"`
	Author           string               `json:"author,omitempty"`
	Date             *Timestamp           `json:"date,omitempty"`
	TestsetID        string               `json:"testset_id,omitempty"`
	TestsetSlug      string               `json:"testset_slug,omitempty"`
	TestsetVariantID string               `json:"testset_variant_id,omitempty"`
	Flags            Flags                `json:"flags,omitempty"`
	Tags             map[string]any       `json:"tags,omitempty"`
	Meta             map[string]any       `json:"meta,omitempty"`
	Data             *TestsetRevisionData `json:"data,omitempty"`
	CreatedAt        *Timestamp           `json:"created_at,omitempty"`
	UpdatedAt        *Timestamp           `json:"updated_at,omitempty"`
	CreatedByID      string               `json:"created_by_id,omitempty"`
	UpdatedByID      string               `json:"updated_by_id,omitempty"`
}

// TestsetRevisionData holds a revision's rows.
type TestsetRevisionData struct {
	// TestcaseIDs are the rows' ids in test-set order.
	TestcaseIDs []string   `json:"testcase_ids,omitempty"`
	Testcases   []Testcase `json:"testcases,omitempty"`
}

// Testcase is one test-set row. Its id is a hash of the test set and the
// row's content, not a time-ordered id: an unchanged row keeps it across
// revisions.
type Testcase struct {
	ID        string `json:"id"`
	TestsetID string `json:"testset_id,omitempty"`
	// SetID is the service's generic alias of TestsetID, sent by the
	// testcase routes.
	SetID string `json:"set_id,omitempty"`
	// Data is the row: its inputs and expected answers, and the
	// TestcaseDedupKey column, in the test set's column order.
	Data        Columns        `json:"data"`
	Flags       map[string]any `json:"flags,omitempty"`
	Tags        map[string]any `json:"tags,omitempty"`
	Meta        map[string]any `json:"meta,omitempty"`
	CreatedAt   *Timestamp     `json:"created_at,omitempty"`
	UpdatedAt   *Timestamp     `json:"updated_at,omitempty"`
	CreatedByID string         `json:"created_by_id,omitempty"`
	UpdatedByID string         `json:"updated_by_id,omitempty"`
}

// Columns is a JSON object whose members keep the order the server sent
// them in: a test-set row's columns. Values stay raw JSON.
type Columns []Column

// Column is one member of Columns.
type Column struct {
	Name  string
	Value json.RawMessage
}

// Get returns the raw value of the column named name.
func (c Columns) Get(name string) (json.RawMessage, bool) {
	for _, col := range c {
		if col.Name == name {
			return col.Value, true
		}
	}
	return nil, false
}

// Text returns the column named name as text: a JSON string without its
// quotes and escapes, any other value in its compact form, "" for null.
func (c Columns) Text(name string) (string, bool) {
	v, ok := c.Get(name)
	if !ok {
		return "", false
	}
	return rawText(v), true
}

// UnmarshalJSON reads a JSON object, keeping its members in order. null is
// no columns.
func (c *Columns) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte("null")) {
		*c = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("models: columns must be a JSON object")
	}
	out := Columns{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		out = append(out, Column{Name: name, Value: v})
	}
	*c = out
	return nil
}

// MarshalJSON writes the columns as a JSON object, in order.
func (c Columns) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, col := range c {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(col.Name)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		value := col.Value
		if len(bytes.TrimSpace(value)) == 0 {
			value = json.RawMessage("null")
		}
		if err := json.Compact(&b, value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// TestcasesQuery selects test cases for QueryTestcases: by id, by test set,
// or the rows of a test-set revision, in its order. At least one filter is
// required.
type TestcasesQuery struct {
	TestcaseIDs        []string   `json:"testcase_ids,omitempty"`
	TestsetID          string     `json:"testset_id,omitempty"`
	TestsetRef         *Reference `json:"testset_ref,omitempty"`
	TestsetVariantRef  *Reference `json:"testset_variant_ref,omitempty"`
	TestsetRevisionRef *Reference `json:"testset_revision_ref,omitempty"`
	// PageSize is how many rows each request asks for; 0 means 500.
	PageSize int `json:"-"`
}
