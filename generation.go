package agenta

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// zeroRunID is the run Generation asks for: no server has it.
const zeroRunID = "00000000-0000-0000-0000-000000000000"

// generationState is what a Client knows of its server's generation: the
// answer once known, or the probe in flight that concurrent callers share.
type generationState struct {
	mu    sync.Mutex
	known Generation
	probe *generationProbe
}

// generationProbe is one detection in flight; done closes when it ends.
type generationProbe struct {
	done   chan struct{}
	found  Generation
	err    error
	leader context.Context // the caller whose context the probe ran under
}

// Generation returns the API generation the server speaks, as set by
// WithGeneration or AGENTA_API_GENERATION, or else detected once per
// Client with one read that no server can answer with data:
//
//	GET {base}/evaluations/runs/00000000-0000-0000-0000-000000000000
//
// A 2026 server answers 200 {"count":0}; a 2024 server has no such route
// and answers FastAPI's 404 {"detail":"Not Found"} (so does a base URL
// without the service's prefix: its first operation then fails with
// ErrRouteNotFound). Any other answer, a 401 included, or no answer, is
// returned as an error and not remembered, so the next call probes again;
// concurrent first calls share one probe. The probe is an ordinary read:
// retried like any GET, bounded by ctx.
func (c *Client) Generation(ctx context.Context) (Generation, error) {
	if ctx == nil {
		return GenerationUnknown, invalid("ctx", "is nil")
	}
	if c == nil || c.retry == nil || c.generation == nil {
		return GenerationUnknown, invalid("Client", "is nil or not made by NewClient")
	}
	g := c.generation
	for {
		g.mu.Lock()
		if g.known != GenerationUnknown {
			known := g.known
			g.mu.Unlock()
			return known, nil
		}
		p := g.probe
		lead := p == nil
		if lead {
			p = &generationProbe{done: make(chan struct{}), leader: ctx}
			g.probe = p
		}
		g.mu.Unlock()

		if lead {
			p.found, p.err = c.probeGeneration(ctx)
			g.mu.Lock()
			if p.err == nil {
				g.known = p.found
			}
			g.probe = nil
			g.mu.Unlock()
			close(p.done)
			return p.found, p.err
		}
		select {
		case <-p.done:
		case <-ctx.Done():
			return GenerationUnknown, fmt.Errorf("agenta: detecting the server's API generation: %w", ctx.Err())
		}
		if p.err == nil {
			return p.found, nil
		}
		if p.leader.Err() == nil || ctx.Err() != nil {
			return GenerationUnknown, p.err
		}
		// The probe ended with its caller's context, not with an answer:
		// probe again under this caller's.
	}
}

// probeGeneration sends the detection read and classifies its answer.
func (c *Client) probeGeneration(ctx context.Context) (Generation, error) {
	a, err := getOne[generationAnswer](ctx, c, &request{operation: "Generation", method: http.MethodGet,
		path: "/evaluations/runs/" + zeroRunID})
	var apiErr *APIError
	switch {
	case err == nil && a.Count != nil:
		return Generation2026, nil
	case err == nil:
		err = errors.New(`a 2xx answer without "count", which neither generation sends`)
	case errors.As(err, &apiErr) && apiErr.routeNotFound():
		return Generation2024, nil
	}
	return GenerationUnknown, fmt.Errorf("agenta: detecting the server's API generation (GET %s/evaluations/runs/%s): %w; set it with WithGeneration or %s",
		c.basePath, zeroRunID, err, envGeneration)
}

type generationAnswer struct {
	Count *int `json:"count"`
}

// DetectGeneration finds out which API the server speaks, once per Client,
// as Generation does, and returns Generation's error. Its point is what
// follows: once a Client knows its server speaks the 2026 API, the 2024
// operations map onto it (see CreateEvaluation), so that code written for
// the 2024 API runs on either. evals.Evaluate calls it before it creates;
// call it (or Generation) before calling those methods yourself on a server
// that may be of either generation. Until the Client knows, they send the
// 2024 requests, as they always did.
func (c *Client) DetectGeneration(ctx context.Context) error {
	_, err := c.Generation(ctx)
	return err
}

// knownGeneration is the API the Client knows its server speaks: set by
// WithGeneration or AGENTA_API_GENERATION, or found by Generation;
// GenerationUnknown until then. It never asks the server.
func (c *Client) knownGeneration() Generation {
	if c == nil || c.generation == nil {
		return GenerationUnknown
	}
	g := c.generation
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.known
}
