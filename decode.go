package agenta

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// decodeObject reads an answer that is one JSON object. null is refused:
// decoding into **T tells it from {}.
func decodeObject[T any](st *call, resp *http.Response) (*T, error) {
	dec := json.NewDecoder(resp.Body)
	var v *T
	if err := dec.Decode(&v); err != nil {
		return nil, st.decodeError(resp, dec, err)
	}
	if v == nil {
		return nil, st.decodeError(resp, dec, errors.New("the answer is null"))
	}
	return v, nil
}

// A listDecoder reads a 2xx answer that holds a JSON array (or null, for no
// elements) and yields each element, or at most one error, until yield
// returns false. It reports whether it read the answer to its end; it may
// replace resp.Body, which the engine then drains and closes. The caller of
// the engine chooses it: jsonList for any type, scenarioList for the one
// answer that can be large.
type listDecoder[T any] func(st *call, resp *http.Response, yield func(T, error) bool) (complete bool)

// jsonList is the listDecoder for any element type: encoding/json, one
// element at a time.
func jsonList[T any](st *call, resp *http.Response, yield func(T, error) bool) bool {
	var zero T
	dec := json.NewDecoder(resp.Body)
	tok, err := dec.Token()
	if err != nil {
		yield(zero, st.decodeError(resp, dec, err))
		return false
	}
	if tok == nil { // null: no elements
		return true
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		yield(zero, st.decodeError(resp, dec, fmt.Errorf("expected a JSON array, got %v", tok)))
		return false
	}
	return decodeElements(dec, false, yield, func(err error) {
		yield(zero, st.decodeError(resp, dec, err))
	}, nil)
}

// decodeElements decodes with encoding/json the elements of an array whose
// '[' dec has read, and its closing ']', yielding each element. afterElement
// says whether dec has read an element already, so that a comma comes next.
// On a decoding error it calls fail with the error and returns false; it
// reports whether the array was read to its end. When grammar is not nil,
// it is set, before fail is called, to whether the error broke the array's
// grammar (a missing comma or ']') rather than an element.
func decodeElements[T any](dec *json.Decoder, afterElement bool, yield func(T, error) bool, fail func(error), grammar *bool) bool {
	var zero T
	// One holder for all elements: decoding into a fresh variable would
	// allocate one per element. It is zeroed first, so no element shares
	// memory with the one before.
	v := new(T)
	for dec.More() {
		if grammar != nil {
			// Decode reads the comma between elements itself and fails
			// there when the next byte is not one.
			*grammar = afterElement && !commaNext(dec)
		}
		*v = zero
		if err := dec.Decode(v); err != nil {
			fail(err)
			return false
		}
		afterElement = true
		if !yield(*v, nil) {
			return false
		}
	}
	if _, err := dec.Token(); err != nil {
		if grammar != nil {
			*grammar = true
		}
		fail(err)
		return false
	}
	return true
}

// commaNext reports whether the first byte dec has buffered, after
// whitespace, is a comma.
func commaNext(dec *json.Decoder) bool {
	var b [1]byte
	for r := dec.Buffered(); ; {
		if n, _ := r.Read(b[:]); n == 0 {
			return false
		}
		if !isSpace(b[0]) {
			return b[0] == ','
		}
	}
}

// decodeError builds the *DecodeError for an answer dec could not decode,
// keeping what was left unread, credentials scrubbed.
func (st *call) decodeError(resp *http.Response, dec *json.Decoder, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	rest, _ := io.ReadAll(io.LimitReader(io.MultiReader(dec.Buffered(), resp.Body), maxErrorBody))
	return &DecodeError{
		StatusCode: resp.StatusCode,
		Method:     st.r.method,
		Path:       st.path,
		Offset:     dec.InputOffset(),
		Body:       st.scrub(rest),
		Err:        err,
	}
}

// finish closes a response body. After a complete read it drains what is
// left (at most a little whitespace) so the connection returns to the pool.
func finish(body io.ReadCloser, complete bool) {
	if complete {
		lr := drainPool.Get().(*io.LimitedReader) // io.CopyN would allocate one
		lr.R, lr.N = body, 64<<10
		_, _ = io.Copy(io.Discard, lr)
		lr.R = nil
		drainPool.Put(lr)
	}
	body.Close()
}

var drainPool = sync.Pool{New: func() any { return new(io.LimitedReader) }}
