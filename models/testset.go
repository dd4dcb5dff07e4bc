package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
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
	data = bytes.Trim(data, " \t\r\n") // JSON's spaces, not Unicode's
	if bytes.Equal(data, []byte("null")) {
		*c = nil
		return nil
	}
	if len(data) == 0 || data[0] != '{' || !json.Valid(data) {
		return errors.New("models: columns must be a JSON object")
	}
	// Valid JSON: a plain scan finds the members. One copy holds every
	// value, as UnmarshalJSON must not keep data.
	data = bytes.Clone(data)
	out := Columns{}
	i := 1
	for {
		i = skipJSONSpace(data, i)
		if data[i] == '}' {
			break
		}
		end := jsonStringEnd(data, i)
		var name string
		// Escapes and invalid UTF-8 go through encoding/json, so a name
		// reads as it does there (a bad byte is U+FFFD).
		if bytes.IndexByte(data[i:end], '\\') >= 0 || !utf8.Valid(data[i:end]) {
			if err := json.Unmarshal(data[i:end], &name); err != nil {
				return err
			}
		} else {
			name = string(data[i+1 : end-1])
		}
		i = skipJSONSpace(data, end) + 1 // the colon
		i = skipJSONSpace(data, i)
		vEnd := jsonValueEnd(data, i)
		out = append(out, Column{Name: name, Value: json.RawMessage(data[i:vEnd:vEnd])})
		i = skipJSONSpace(data, vEnd)
		if data[i] == ',' {
			i++
		}
	}
	*c = out
	return nil
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonStringEnd returns the index after the string that starts at b[i].
func jsonStringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// jsonValueEnd returns the index after the valid JSON value at b[i].
func jsonValueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return jsonStringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = jsonStringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
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
