package agenta

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"

	"github.com/agenta-go/agenta/models"
)

// The test-set and test-case reads of the 2026 API.

// RetrieveTestsetRevision finds a test-set revision: by revision id, by
// variant, or the latest revision of a test set by id or slug. The
// evaluation routes take the revision's ID. No match (the service answers
// so to an empty request too) is a *NotFoundError (ErrNotFound).
func (c *Client) RetrieveTestsetRevision(ctx context.Context, q models.TestsetRevisionRetrieve) (*models.TestsetRevision, error) {
	refs := []namedRef{
		{"TestsetRef", "testset_ref", q.TestsetRef}, {"TestsetVariantRef", "testset_variant_ref", q.TestsetVariantRef},
		{"TestsetRevisionRef", "testset_revision_ref", q.TestsetRevisionRef},
	}
	if err := checkRefs("TestsetRevisionRetrieve", refs, false); err != nil {
		return nil, err
	}
	a, err := lookup[testsetRevisionAnswer](ctx, c, &request{operation: "RetrieveTestsetRevision",
		method: http.MethodPost, path: "/testsets/revisions/retrieve", body: q, read: true},
		"test-set revision matching "+describe(q))
	if err != nil {
		return nil, err
	}
	return a.Revision, nil
}

// FetchTestcase reads one test case by id; an unknown id is a
// *NotFoundError (ErrNotFound).
func (c *Client) FetchTestcase(ctx context.Context, testcaseID string) (*models.Testcase, error) {
	id, err := segment("testcaseID", "testcase_id", testcaseID)
	if err != nil {
		return nil, err
	}
	a, err := lookup[testcaseAnswer](ctx, c, &request{operation: "FetchTestcase",
		method: http.MethodGet, path: "/testcases/" + id}, "test case "+testcaseID)
	if err != nil {
		return nil, err
	}
	return a.Testcase, nil
}

// QueryTestcases yields the test cases q selects, one page of q.PageSize at
// a time, following the cursor each answer carries. It stops at an answer
// without a cursor, an empty page or a short one, and ends with an error
// on a cursor seen before, so that it never loops; each page's count must
// be its length. Unknown ids are not yielded: compare with what was asked.
// A refused query arrives as the first and only (zero, err) pair.
func (c *Client) QueryTestcases(ctx context.Context, q models.TestcasesQuery) iter.Seq2[models.Testcase, error] {
	limit, err := pageSize("TestcasesQuery.PageSize", q.PageSize)
	if err == nil {
		err = checkTestcasesQuery(q)
	}
	if err != nil {
		return failed[models.Testcase](err)
	}
	return func(yield func(models.Testcase, error) bool) {
		var zero models.Testcase
		var cursor json.RawMessage = mustJSON(windowing{Limit: limit, Order: "ascending"})
		seen := map[string]bool{}
		for {
			r := &request{operation: "QueryTestcases", method: http.MethodPost, path: "/testcases/query",
				body: testcasesQueryBody{TestcasesQuery: q, Windowing: cursor}, read: true}
			a, err := getOne[testcasesPage](ctx, c, r)
			if err != nil {
				yield(zero, err)
				return
			}
			if err := c.checkCount(r, a, a.Count, len(a.Testcases)); err != nil {
				yield(zero, err)
				return
			}
			for _, tc := range a.Testcases {
				if !yield(tc, nil) {
					return
				}
			}
			next := string(a.Windowing)
			if len(a.Windowing) == 0 || next == "null" || len(a.Testcases) < limit {
				return
			}
			if seen[next] {
				yield(zero, c.envelopeError(r, a, fmt.Errorf("the answer's windowing %s was answered before: reading on would loop", c.text(next, maxMessage))))
				return
			}
			seen[next] = true
			cursor = a.Windowing
		}
	}
}

func checkTestcasesQuery(q models.TestcasesQuery) error {
	refs := []namedRef{
		{"TestsetRef", "testset_ref", q.TestsetRef}, {"TestsetVariantRef", "testset_variant_ref", q.TestsetVariantRef},
		{"TestsetRevisionRef", "testset_revision_ref", q.TestsetRevisionRef},
	}
	if len(q.TestcaseIDs) > 0 {
		if err := requiredList("TestcasesQuery.TestcaseIDs", "testcase_ids", q.TestcaseIDs); err != nil {
			return err
		}
	}
	if q.TestsetID != "" {
		if err := required("TestcasesQuery.TestsetID", "testset_id", q.TestsetID); err != nil {
			return err
		}
	}
	return checkRefs("TestcasesQuery", refs, len(q.TestcaseIDs) > 0 || q.TestsetID != "")
}

// mustJSON marshals a value that always marshals.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type testsetRevisionAnswer struct {
	Count    *int                    `json:"count,omitempty"`
	Revision *models.TestsetRevision `json:"testset_revision,omitempty"`
}

func (a *testsetRevisionAnswer) member() (*int, bool) { return a.Count, a.Revision != nil }

type testcaseAnswer struct {
	Count    *int             `json:"count,omitempty"`
	Testcase *models.Testcase `json:"testcase,omitempty"`
}

func (a *testcaseAnswer) member() (*int, bool) { return a.Count, a.Testcase != nil }

// testcasesQueryBody is what QueryTestcases sends: the query and the
// windowing, the first page's or the one the last answer carried, as it
// came.
type testcasesQueryBody struct {
	models.TestcasesQuery
	Windowing json.RawMessage `json:"windowing,omitempty"`
}

type testcasesPage struct {
	Count     *int              `json:"count,omitempty"`
	Testcases []models.Testcase `json:"testcases"`
	Windowing json.RawMessage   `json:"windowing,omitempty"`
}
