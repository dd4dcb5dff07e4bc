package agenta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/agenta-go/agenta/models"
)

// decodeObject reads an answer that is one JSON object. null is refused:
// decoding into **T tells it from {}.
//
// It reads the object into a buffer that grows to the limit on single
// answers at most (json.Decoder's own buffer would double past it), stops
// at the object's closing brace without waiting for the body to end, and
// decodes it with json.Unmarshal. Anything else (a scalar, an object
// encoding/json refuses) is decoded anew by a json.Decoder, whose errors
// the caller then gets.
func decodeObject[T any](st *call, resp *http.Response) (*T, error) {
	body := resp.Body
	a := &arrayReader{r: body, buf: make([]byte, 0, 1<<10), most: bufferBound(st.c.limits.Single)}
	if a.skipSpace() && a.buf[a.pos] == '{' {
		if end, found := a.valueEnd(); found {
			v := new(T)
			if json.Unmarshal(a.buf[a.pos:end], v) == nil {
				resp.Body = a.replay(end, body) // finish drains what follows
				return v, nil
			}
		}
	}
	var limit *LimitError
	if errors.As(a.err, &limit) {
		return nil, st.decodeErrorAt(resp, a.offset(a.pos), bytes.NewReader(a.buf[a.pos:]), limit)
	}
	resp.Body = a.replay(0, body)
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

// jsonList is the listDecoder for any element type: arrayList, each
// element decoded with json.Unmarshal.
func jsonList[T any](st *call, resp *http.Response, yield func(T, error) bool) bool {
	return arrayList(st, resp, yield, object[T])
}

// decoderList reads a list with a json.Decoder alone, one element at a
// time. It is arrayList's reference, and reads what arrayList does not: an
// answer that is not an array.
func decoderList[T any](st *call, resp *http.Response, yield func(T, error) bool) bool {
	var zero T
	dec := json.NewDecoder(resp.Body)
	st.element(0) // whitespace before the '[' counts as the first element's
	tok, err := dec.Token()
	if err != nil {
		yield(zero, st.decodeError(resp, dec, err))
		return false
	}
	if tok == nil { // null: no elements
		return true
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		// Name the kind of value only: a string may be huge, or hold a secret.
		yield(zero, st.decodeError(resp, dec, fmt.Errorf("expected a JSON array, got %s", jsonKind(tok))))
		return false
	}
	return decodeElements(st, 0, dec, false, yield, func(err error) {
		yield(zero, st.decodeError(resp, dec, err))
	}, nil)
}

// element starts the budget of the next list element, whose whitespace
// begins at offset in the body. It always reports true.
func (st *call) element(offset int64) bool {
	if st.body != nil {
		st.body.element(offset, "Element", st.c.limits.Element)
	}
	return true
}

// jsonKind names the kind of JSON value tok starts.
func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case json.Delim:
		return "an object"
	}
	return "null"
}

// decodeElements decodes with encoding/json the elements of an array whose
// '[' dec has read, and its closing ']', yielding each element. afterElement
// says whether dec has read an element already, so that a comma comes next.
// On a decoding error it calls fail with the error and returns false; it
// reports whether the array was read to its end. When grammar is not nil,
// it is set, before fail is called, to whether the error broke the array's
// grammar (a missing comma or ']') rather than an element. Each element,
// with the whitespace and comma before it, is bounded by
// ResponseLimits.Element; base is the body offset of dec's input.
func decodeElements[T any](st *call, base int64, dec *json.Decoder, afterElement bool, yield func(T, error) bool, fail func(error), grammar *bool) bool {
	var zero T
	// One holder for all elements: decoding into a fresh variable would
	// allocate one per element. It is zeroed first, so no element shares
	// memory with the one before.
	v := new(T)
	for st.element(base+dec.InputOffset()) && dec.More() {
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
// keeping what was left unread, credentials scrubbed before it is cut. A
// read that failed (the connection, the attempt's timeout, the caller's
// context) is classified by reason; the message is scrubbed after
// decoding, since a decoding error may quote the server (a timestamp).
func (st *call) decodeError(resp *http.Response, dec *json.Decoder, err error) error {
	return st.decodeErrorAt(resp, dec.InputOffset(), dec.Buffered(), err)
}

// decodeErrorAt builds the *DecodeError for decoding that stopped at offset
// in the body, buffered holding what was read past it.
func (st *call) decodeErrorAt(resp *http.Response, offset int64, buffered io.Reader, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	var timestamp *models.TimestampError
	if errors.As(err, &timestamp) {
		// It stays in the chain for errors.As, and quotes the server's
		// value: scrub and bound it like the message.
		timestamp.Value = st.text(timestamp.Value, maxMessage)
	}
	var limit *LimitError
	if !errors.As(err, &limit) && st.body != nil && st.body.err != nil && st.body.err != io.EOF {
		err = st.reason(err)
	}
	rest, _ := io.ReadAll(io.LimitReader(io.MultiReader(buffered, resp.Body), maxErrorBody+maxSecretLength))
	return &DecodeError{
		StatusCode: resp.StatusCode,
		Method:     st.r.method,
		Path:       st.path,
		Offset:     offset,
		Body:       st.scrubCut(rest, maxErrorBody),
		Err:        err,
		text:       st.text(err.Error(), maxMessage),
	}
}

// finish closes an answer's body. After a complete read, what is left (at
// most a little whitespace and the end of the framing) must be read for the
// connection to return to the pool, but the caller never waits on the
// network for it: a goroutine drains it, for at most drainWait before it
// closes the connection instead, and the caller waits for that goroutine
// for at most drainGrace, long enough for bytes already in flight on a
// healthy connection, so that the next call finds the connection idle.
func (st *call) finish(body io.ReadCloser, complete bool) {
	if !complete || st.body != nil && st.body.err != nil {
		// Incomplete: the connection is not reused. Or the end was read:
		// closing returns the connection to the pool.
		body.Close()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		stop := time.AfterFunc(drainWait, func() { body.Close() })
		lr := drainPool.Get().(*io.LimitedReader) // io.CopyN would allocate one
		lr.R, lr.N = body, 64<<10
		_, _ = io.Copy(io.Discard, lr)
		lr.R = nil
		drainPool.Put(lr)
		stop.Stop()
		body.Close()
	}()
	wait := time.NewTimer(drainGrace)
	select {
	case <-done:
	case <-wait.C:
	}
	wait.Stop()
}

var drainPool = sync.Pool{New: func() any { return new(io.LimitedReader) }}
