package evals

import (
	"math"
	"strconv"
	"strings"

	"github.com/agenta-go/agenta/internal/text"
)

// notAvailable stands for a number that does not exist, such as the mean of
// no values: no NaN or Inf ever reaches a report.
const notAvailable = "n/a"

// formatNumber renders a number for people: four significant digits, or
// n/a.
func formatNumber(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return notAvailable
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// formatPercent renders a proportion as a percentage with one decimal.
func formatPercent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return notAvailable
	}
	return strconv.FormatFloat(100*x, 'f', 1, 64) + "%"
}

// formatP renders a p-value: three significant digits, "< 0.0001" below.
func formatP(p float64) string {
	switch {
	case math.IsNaN(p) || math.IsInf(p, 0):
		return notAvailable
	case p < 1e-4:
		return "< 0.0001"
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}

// bound cuts s to at most n runes, marking the cut with "…", so that a
// string built from server data stays bounded (text.Clip).
func bound(s string, n int) string { return text.Clip(s, n) }

// oneLine replaces line breaks and tabs with spaces, and escapes any other
// control character or bidirectional override visibly (text.Escape).
func oneLine(s string) string {
	return text.Escape(strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\r', '\t':
			return ' '
		}
		return r
	}, s))
}
