package agenta

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

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
