package agenta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
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
				resp.Body = a.replay(end, body) // end reads what follows
				st.valueEnd = a.offset(end)
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
	st.after(resp, dec, 0)
	return v, nil
}

// after makes resp.Body what follows the value dec has decoded, whose
// input starts at offset base of the body, for end to read.
func (st *call) after(resp *http.Response, dec *json.Decoder, base int64) {
	resp.Body = replayBody{io.MultiReader(dec.Buffered(), resp.Body), resp.Body}
	st.valueEnd = base + dec.InputOffset()
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
		st.after(resp, dec, 0)
		return true
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		// Name the kind of value only: a string may be huge, or hold a secret.
		yield(zero, st.decodeError(resp, dec, fmt.Errorf("expected a JSON array, got %s", jsonKind(tok))))
		return false
	}
	if !decodeElements(st, 0, dec, false, yield, func(err error) {
		yield(zero, st.decodeError(resp, dec, err))
	}, nil) {
		return false
	}
	st.after(resp, dec, 0)
	return true
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
	rest, _ := io.ReadAll(io.LimitReader(io.MultiReader(buffered, resp.Body), maxErrorBody+st.readPastCut()))
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

// end checks the end of an answer whose JSON value was read whole: only
// whitespace may follow it. More data ([…][], […]<html>, […]{"detail":…}),
// which a proxy or a broken server may add, is an error: the answer was
// not the value alone, and taking the value as the answer would hide that.
// The error is a *DecodeError with the position of the data and a scrubbed
// excerpt of it.
//
// What follows must be read anyway for the connection to return to the
// pool, but the caller never waits on the network for long: a goroutine
// reads it, for at most drainWait before it closes the connection
// instead, and the caller waits for its verdict for at most trailingWait,
// long enough for bytes in flight on a healthy connection; a server that
// holds back the end of a complete answer costs that wait, never more.
// end takes the body over: finish then leaves it to end.
func (st *call) end(resp *http.Response) error {
	body := resp.Body
	st.ended = true
	if st.body != nil && st.body.err != nil {
		// The body has ended: what follows the value is in memory.
		at, excerpt := firstData(body, nil)
		body.Close()
		return st.trailing(resp, at, excerpt)
	}
	type verdict struct {
		at      int64
		excerpt []byte
	}
	found := make(chan verdict, 1)
	var saw atomic.Bool // data came: the verdict is a short read away
	go func() {
		stop := time.AfterFunc(drainWait, func() { body.Close() })
		at, excerpt := firstData(body, func() {
			saw.Store(true)
			// The connection is not reused after data that should not
			// be there: close it if the excerpt is slow to come.
			time.AfterFunc(excerptWait, func() { body.Close() })
		})
		found <- verdict{at, excerpt}
		stop.Stop()
		body.Close()
	}()
	wait := time.NewTimer(trailingWait)
	defer wait.Stop()
	select {
	case v := <-found:
		return st.trailing(resp, v.at, v.excerpt)
	case <-wait.C:
		if saw.Load() {
			v := <-found
			return st.trailing(resp, v.at, v.excerpt)
		}
		return nil
	}
}

// firstData reads body past whitespace, up to 64 KiB of it, to its end or
// to the first byte that is not whitespace, and then on to the end or
// maxExcerpt bytes from that byte. It returns how many whitespace bytes
// came before that byte, and the bytes from it on (nil when none came).
// sawData, if not nil, is called when the byte comes.
func firstData(body io.Reader, sawData func()) (int64, []byte) {
	buf := drainPool.Get().(*[]byte)
	defer drainPool.Put(buf)
	var skipped int64
	var excerpt []byte
	for skipped < 64<<10 || excerpt != nil {
		n, err := body.Read(*buf)
		chunk := (*buf)[:n]
		if excerpt == nil {
			i := 0
			for i < len(chunk) && isSpace(chunk[i]) {
				i++
			}
			skipped += int64(i)
			if i < len(chunk) {
				excerpt = []byte{}
				if sawData != nil {
					sawData()
				}
			}
			chunk = chunk[i:]
		}
		if excerpt != nil {
			excerpt = append(excerpt, chunk[:min(len(chunk), maxExcerpt-len(excerpt))]...)
			if len(excerpt) == maxExcerpt {
				break
			}
		}
		if err != nil {
			break
		}
	}
	return skipped, excerpt
}

// maxExcerpt bounds the excerpt of trailing data an error keeps, and
// excerptWait how long it waits for it once the data started.
const (
	maxExcerpt  = 64
	excerptWait = 10 * time.Millisecond
)

// trailing returns the error for data found at offset at after the value,
// or nil when excerpt is nil.
func (st *call) trailing(resp *http.Response, at int64, excerpt []byte) error {
	if excerpt == nil {
		return nil
	}
	excerpt = st.scrub(excerpt)
	err := &trailingError{excerpt: st.text(string(excerpt), 40)}
	return &DecodeError{
		StatusCode: resp.StatusCode,
		Method:     st.r.method,
		Path:       st.path,
		Offset:     st.valueEnd + at,
		Body:       excerpt,
		Err:        err,
		text:       err.Error(),
	}
}

// finish closes an answer's body, unless end has taken it over.
func (st *call) finish(body io.ReadCloser) {
	if !st.ended {
		body.Close()
	}
}

var drainPool = sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}
