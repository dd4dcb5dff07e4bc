package evals

import "math"

// ResolveGates checks gates before anything runs, against the evaluators
// the runs will have (EvaluatorOf each config the evaluation is created
// with): every gate's operator, limit, measure and unit, and every
// evaluator it names, by name, slug or id. It returns nil when all
// resolve, and otherwise a *GateError of the gates that do not, each
// Invalid (the error matches ErrInvalidGate), with the names that exist
// and a "did you mean" when a name is close.
//
// A typo found here costs nothing; found by Check, it costs the runs.
// Check still judges the runs whatever ResolveGates said. Pass evaluators
// as the service names them: a gate that names an evaluator by a name
// none of them has is invalid here, where Check, which knows only the
// evaluators the service named in its results, may read it as the
// candidate's lack of values.
func ResolveGates(evaluators []Evaluator, gates ...Gate) error {
	cat := newCatalog(evaluators)
	var failed []GateResult
	for _, g := range gates {
		if reason := resolveGate(g, cat); reason != "" {
			failed = append(failed, GateResult{Gate: g, Measured: math.NaN(), Limit: g.Limit, Reason: reason, Invalid: true})
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &GateError{Failed: failed, Total: len(gates)}
}

// resolveGate says why g cannot be measured on runs of the evaluators in
// cat, whatever their rows hold, or "" when it can.
func resolveGate(g Gate, cat catalog) string {
	if reason := g.malformed(); reason != "" {
		return reason
	}
	m := g.measure()
	if !evaluatorMeasures[m] {
		return ""
	}
	ev, ok := cat.find(g.Evaluator)
	if !ok {
		text, _ := unknownEvaluator(g.Evaluator, cat)
		return text
	}
	if m == MeasureMean && g.Percent && ev.countsEdits() {
		return editsNotARate(cat.label(ev.ID))
	}
	return ""
}
