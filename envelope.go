package agenta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
)

// The 2026 API answers every call with an envelope, {"count":N,
// "<member>":…}: one object for a read or a create, a list for a query.
// "Nothing" is 200 {"count":0} without the member, never a 404. This file
// turns envelopes into values or the errors for them, on top of getOne.

// single is an envelope that holds at most one object. member reports the
// count sent, if any, and whether the object is present.
type single interface {
	member() (count *int, present bool)
}

// singleOf is the pointer to an envelope type A that is a single: the
// envelope's methods have pointer receivers.
type singleOf[A any] interface {
	*A
	single
}

// lookup runs a 2026 read and returns its envelope. An envelope without
// its member is a *NotFoundError naming what (which matches ErrNotFound)
// when its count is 0; with another count, or none, it is a *DecodeError.
func lookup[A any, P singleOf[A]](ctx context.Context, c *Client, r *request, what string) (*A, error) {
	return envelope[A, P](ctx, c, r, func(body []byte) error {
		return &NotFoundError{Operation: r.operation, Method: r.method, Path: c.basePath + r.path,
			What: c.text(what, maxMessage), Body: body}
	})
}

// created runs a 2026 create, fork or commit and returns its envelope. An
// envelope without its member and with count 0 is a *NotCreatedError
// (ErrNotCreated) saying what could not be created and the usual causes.
func created[A any, P singleOf[A]](ctx context.Context, c *Client, r *request, what, causes string) (*A, error) {
	return envelope[A, P](ctx, c, r, func(body []byte) error {
		return &NotCreatedError{Operation: r.operation, Method: r.method, Path: c.basePath + r.path,
			What: what, Causes: causes, Body: body}
	})
}

// envelope runs r and checks its envelope: the member present is the
// answer (a count beside it is not checked: the member is the evidence);
// absent with count 0, it is absent's error; absent otherwise, a
// *DecodeError.
func envelope[A any, P singleOf[A]](ctx context.Context, c *Client, r *request, absent func(body []byte) error) (*A, error) {
	a, err := getOne[A](ctx, c, r)
	if err != nil {
		return nil, err
	}
	count, present := P(a).member()
	switch {
	case present:
		return a, nil
	case count != nil && *count == 0:
		body, _ := json.Marshal(a)
		return nil, absent(body)
	case count == nil:
		return nil, c.envelopeError(r, a, errors.New(`the answer has neither "count" nor the object asked for`))
	}
	return nil, c.envelopeError(r, a, fmt.Errorf(`the answer says "count":%d but holds no object`, *count))
}

// envelopeError is the *DecodeError of a 2xx envelope that is JSON but not
// what the service sends. Its Body is the envelope as decoded, scrubbed of
// credentials and cut to 1 MiB.
func (c *Client) envelopeError(r *request, decoded any, err error) error {
	body, _ := json.Marshal(decoded)
	body = c.secrets.load().all.ScrubCut(body, maxErrorBody)
	return &DecodeError{StatusCode: 200, Method: r.method, Path: c.basePath + r.path, Body: body, Err: err,
		text: c.text(err.Error(), 2*maxMessage)}
}

// page is an envelope that holds a list: the count sent and the rows.
type page[T any] interface {
	rows() (count *int, rows []T)
}

// checkCount refuses a page whose count is absent or not its length: an
// answer cut short is an error, never a shorter list.
func (c *Client) checkCount(r *request, decoded any, count *int, n int) error {
	switch {
	case count == nil:
		return c.envelopeError(r, decoded, errors.New(`the answer has no "count"`))
	case *count != n:
		return c.envelopeError(r, decoded, fmt.Errorf(`the answer says "count":%d but holds %d rows`, *count, n))
	}
	return nil
}

// DefaultPageSize is how many rows each request of a 2026 query asks for
// when the query's PageSize is 0.
const DefaultPageSize = 500

// windowing is the 2026 queries' paging: rows with ids after Next, at most
// Limit, in id order.
type windowing struct {
	Next  string `json:"next,omitempty"`
	Limit int    `json:"limit"`
	Order string `json:"order"`
}

// pageSize checks a query's PageSize and returns the one to use.
func pageSize(name string, size int) (int, error) {
	switch {
	case size < 0:
		return 0, invalid(name, "must not be negative, got %d", size)
	case size == 0:
		return DefaultPageSize, nil
	}
	return size, nil
}

// idPages yields the rows of a scenarios, results or metrics query, page
// after page: each request asks for limit rows in ascending id order after
// the greatest id seen so far (the service's cursor, which its answers do
// not carry), and a page shorter than limit is the last. build makes the
// request for a cursor. Every row must have an id greater than those of the
// pages before it, so that the paging can never loop; each page's count
// must be its length. Memory holds one page.
func idPages[T, A any, P interface {
	*A
	page[T]
}](ctx context.Context, c *Client, limit int, build func(w windowing) *request, id func(*T) string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		cursor := ""
		for {
			r := build(windowing{Next: cursor, Limit: limit, Order: "ascending"})
			a, err := getOne[A](ctx, c, r)
			if err != nil {
				yield(zero, err)
				return
			}
			count, rows := P(a).rows()
			if err := c.checkCount(r, a, count, len(rows)); err != nil {
				yield(zero, err)
				return
			}
			next := cursor
			for i := range rows {
				rowID := id(&rows[i])
				if strings.ContainsAny(rowID, "ABCDEF") {
					rowID = strings.ToLower(rowID)
				}
				if rowID == "" || rowID <= cursor {
					yield(zero, c.envelopeError(r, a, fmt.Errorf(
						"row %d of the page after %q has the id %q, not one after it: the server does not page by id, and reading on could loop",
						i, cursor, c.text(rowID, maxMessage))))
					return
				}
				next = max(next, rowID)
			}
			for i := range rows {
				if !yield(rows[i], nil) {
					return
				}
			}
			if len(rows) < limit {
				return
			}
			cursor = next
		}
	}
}

// failed is a sequence that yields err alone.
func failed[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}
