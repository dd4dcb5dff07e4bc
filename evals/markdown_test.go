package evals

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

func TestWriteMarkdown(t *testing.T) {
	r := checkedReport(t)
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"### `capitals.precise` against `capitals.default`",
		"| Evaluator | capitals.default | capitals.precise | Change | Better / worse / same | Without value | p |",
		"| Exact match | 50.0% (21.5% – 78.5%) | 75.0% (40.9% – 92.9%) | +25.0 pts | 3 / 2 / 3 | 0 / 1 | 1 |",
		"| Edit distance (lower is better) |",
		"8 rows paired by their inputs and expected answers, 0 unpaired.",
		"| App errors | 0 | 1 |",
		"| `Exact match >= 0.8` | 0.75 | ❌ fail (1 of 8 rows without a value (1 errored), counted as fails) |",
		"| `app_errors <= 0` | 1 | ❌ fail |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(md, bad) {
			t.Errorf("the Markdown shows %s:\n%s", bad, md)
		}
	}
}

func TestWriteMarkdownSingleRunAndNoValues(t *testing.T) {
	rows := []models.EvaluationScenario{
		answered("France", "Paris", "Paris", 0, 1, textResult("critique", "fine"), numberResult("score", 1)),
		failedRow("Japan", "timeout", "critique", "score"),
	}
	ev := models.Evaluation{ID: "e1", VariantNames: []string{"a|b"}}
	r := NewReport(Run{}, Run{Evaluation: ev, Scenarios: rows})
	_ = r.Check(MinMean("critique", 0.5), MaxMeanCost(0.1))
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"### Evaluation of `a\\|b`",
		"| critique | n/a | n/a | 0 | 1 | 0 |",
		"| score | 1 | n/a | 1 | 1 | 0 |",
		"❌ fail: no bool or number values: 2 of 2 rows without a value (1 errored, 1 not a bool or number)",
		"❌ fail: 1 of 2 rows have no cost (1 app error); accept them with \"allowing 1 failed row\"",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "NaN") || strings.Contains(md, "Inf") {
		t.Errorf("the Markdown shows NaN or Inf:\n%s", md)
	}
}

// Issue 26 item 6: the Markdown report, a pull request's comment, shows
// the first rows the candidate did worse on, with what each side gave; a
// pair of listings in different orders shows none rather than wrong ones.
func TestMarkdownWorstRows(t *testing.T) {
	baseline, candidate := twentyRuns(func(i int, country string) models.EvaluationScenario {
		if i < 6 {
			return wrongRow(i)
		}
		return rightRow(i)
	})
	var b strings.Builder
	if err := NewReport(baseline, candidate).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.Contains(md, "#### Rows the candidate did worse on (the first 5)") {
		t.Fatalf("no worst rows:\n%s", md)
	}
	for _, want := range []string{"| 1 | country=C01 | Capital of C01 | Exact match | true | false | wrong |", "| 5 | country=C05 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the worst rows lack %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| 6 | country=C06 |") {
		t.Errorf("more than five worst rows:\n%s", md)
	}

	slices.Reverse(candidate.Scenarios)
	b.Reset()
	if err := NewReport(baseline, candidate).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "The two runs list their rows in different orders: no rows are shown here") {
		t.Errorf("rows listed in other orders were shown:\n%s", b.String())
	}

	same, _ := twentyRuns(func(i int, country string) models.EvaluationScenario { return rightRow(i) })
	b.Reset()
	if err := NewReport(same, same).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "did worse on") {
		t.Errorf("worst rows for a candidate no worse:\n%s", b.String())
	}
}
