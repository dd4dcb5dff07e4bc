package evals

import (
	"context"
	"slices"

	"github.com/agenta-go/agenta/models"
)

// preflighter is a Service that checks an evaluation before creating it,
// such as *agenta.Client (see its Preflight): a wrong id or a test set
// without a column the app or an evaluator reads then ends Evaluate
// before anything is created, with the Service's error.
type preflighter interface {
	Preflight(ctx context.Context, req models.PreflightRequest) (*models.PreflightReport, error)
}

// preflight runs svc's preflight, where it has one, and resolves gates
// against the evaluators it read; without a preflight, only what needs no
// evaluator (operator, limit, measure, unit) is checked.
func preflight[W any](ctx context.Context, svc Service[W], req models.NewEvaluation, gates []Gate) error {
	p, ok := any(svc).(preflighter)
	if !ok {
		return ResolveGates(nil, wellFormedOnly(gates)...)
	}
	report, err := p.Preflight(ctx, req.PreflightRequest())
	if err != nil {
		return err
	}
	return ResolveGatesFor(report, req.EvaluatorConfigIDs, gates...)
}

// ResolveGatesFor is ResolveGates against the evaluators a preflight read
// (models.PreflightReport.Evaluators) for the evaluator config ids
// requested. When it could not read them all (the server does not serve
// the read: the report notes it), the evaluators the gates name are not
// checked, only what needs none.
func ResolveGatesFor(report *models.PreflightReport, evaluatorIDs []string, gates ...Gate) error {
	if report == nil || len(report.Evaluators) < len(slices.Compact(slices.Sorted(slices.Values(evaluatorIDs)))) {
		return ResolveGates(nil, wellFormedOnly(gates)...)
	}
	evaluators := make([]Evaluator, len(report.Evaluators))
	for i, config := range report.Evaluators {
		evaluators[i] = EvaluatorOf(config)
	}
	return ResolveGates(evaluators, gates...)
}

// wellFormedOnly drops the well-formed gates that name an evaluator, which
// nothing can check without the evaluators: ResolveGates checks the rest.
func wellFormedOnly(gates []Gate) []Gate {
	out := make([]Gate, 0, len(gates))
	for _, g := range gates {
		if evaluatorMeasures[g.measure()] && g.malformed() == "" {
			continue
		}
		out = append(out, g)
	}
	return out
}
