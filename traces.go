package agenta

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/agenta-go/agenta/models"
)

// The trace reads of the 2026 API, where a run's outputs live: each
// invocation and annotation cell names the trace of its call.

// TracesPerRequest is how many traces FetchTraces asks for in one request:
// a URL of about 4 kB.
const TracesPerRequest = 100

// FetchTrace reads a trace by id, dashed (as results name it) or 32 hex
// digits; an unknown trace is a *NotFoundError (ErrNotFound), which is
// also what a trace not yet ingested looks like. A malformed id is a 400.
func (c *Client) FetchTrace(ctx context.Context, traceID string) (*models.Trace, error) {
	id, err := segment("traceID", "trace_id", traceID)
	if err != nil {
		return nil, err
	}
	a, err := lookup[traceAnswer](ctx, c, &request{operation: "FetchTrace",
		method: http.MethodGet, path: "/traces/" + id}, "trace "+traceID)
	if err != nil {
		return nil, err
	}
	return a.Trace, nil
}

// FetchTraces yields the traces of traceIDs, dashed or hex, reading
// TracesPerRequest of them per request (GET /traces/?trace_ids=…, which
// v0.113 serves beside the published slice), so that a run of 10,000 rows
// costs a hundred requests, not 10,000. Traces the service does not have
// (unknown, or not ingested yet) are not yielded: compare the TraceIDs
// yielded with those asked. A trace that was not asked for, or a count
// that is not the page's length, ends the sequence with a *DecodeError.
func (c *Client) FetchTraces(ctx context.Context, traceIDs []string) iter.Seq2[models.Trace, error] {
	if err := requiredList("traceIDs", "trace_ids", traceIDs); err != nil {
		return failed[models.Trace](err)
	}
	for i, id := range traceIDs {
		if strings.Contains(id, ",") {
			return failed[models.Trace](invalidField(fmt.Sprintf("traceIDs[%d]", i), "trace_ids", "contains a comma, which separates ids"))
		}
	}
	return func(yield func(models.Trace, error) bool) {
		var zero models.Trace
		asked := make(map[string]bool, TracesPerRequest)
		for start := 0; start < len(traceIDs); start += TracesPerRequest {
			batch := traceIDs[start:min(start+TracesPerRequest, len(traceIDs))]
			clear(asked)
			for _, id := range batch {
				asked[models.NormalizeTraceID(id)] = true
			}
			r := &request{operation: "FetchTraces", method: http.MethodGet, path: "/traces/",
				query: tracesQuery{TraceIDs: strings.Join(batch, ",")}}
			a, err := getOne[tracesPage](ctx, c, r)
			if err != nil {
				yield(zero, err)
				return
			}
			if err := c.checkCount(r, a, a.Count, len(a.Traces)); err != nil {
				yield(zero, err)
				return
			}
			for _, t := range a.Traces {
				if !asked[models.NormalizeTraceID(t.TraceID)] {
					yield(zero, c.envelopeError(r, a, fmt.Errorf("the answer holds trace %q, which was not asked for", c.text(t.TraceID, maxMessage))))
					return
				}
			}
			for _, t := range a.Traces {
				if !yield(t, nil) {
					return
				}
			}
		}
	}
}

// FetchSpan reads one span of a trace, with its children; an unknown trace
// or span is a *NotFoundError (ErrNotFound). The span id is 16 hex digits.
func (c *Client) FetchSpan(ctx context.Context, traceID, spanID string) (*models.TraceSpan, error) {
	trace, err := segment("traceID", "trace_id", traceID)
	if err != nil {
		return nil, err
	}
	span, err := segment("spanID", "span_id", spanID)
	if err != nil {
		return nil, err
	}
	a, err := lookup[spanAnswer](ctx, c, &request{operation: "FetchSpan",
		method: http.MethodGet, path: "/spans/" + trace + "/" + span}, "span "+spanID+" in trace "+traceID)
	if err != nil {
		return nil, err
	}
	return a.Span, nil
}

type tracesQuery struct {
	TraceIDs string `url:"trace_ids"`
}

type traceAnswer struct {
	Count *int          `json:"count,omitempty"`
	Trace *models.Trace `json:"trace,omitempty"`
}

func (a *traceAnswer) member() (*int, bool) { return a.Count, a.Trace != nil }

type spanAnswer struct {
	Count *int              `json:"count,omitempty"`
	Span  *models.TraceSpan `json:"span,omitempty"`
}

func (a *spanAnswer) member() (*int, bool) { return a.Count, a.Span != nil }

type tracesPage struct {
	Count  *int           `json:"count,omitempty"`
	Traces []models.Trace `json:"traces"`
}
