// Command benchchart turns the output of the SDK's benchmarks into the
// numbers of BENCHMARKS.md: a Markdown table of SDK-to-baseline ratios on
// standard output and, with -svg, a chart of decode time and memory against
// rows. It reads `go test -bench` output on standard input and uses the
// standard library only.
//
// Each benchmark has the sub-benchmarks impl=baseline and impl=sdk; with
// -count N, the median of the N runs is used.
//
//	go test -run '^$' -bench . -count 6 > bench.txt
//	go run ./internal/benchchart -svg docs/bench-rows.svg < bench.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func main() {
	svgPath := flag.String("svg", "", "write the rows chart (FetchScenarios) to this SVG file")
	flag.Parse()
	runs, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchchart:", err)
		os.Exit(1)
	}
	if len(runs) == 0 {
		fmt.Fprintln(os.Stderr, "benchchart: no benchmark lines on standard input")
		os.Exit(1)
	}
	writeTable(os.Stdout, runs)
	if *svgPath != "" {
		f, err := os.Create(*svgPath)
		if err == nil {
			err = writeChart(f, runs)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchchart:", err)
			os.Exit(1)
		}
	}
}

// results maps a benchmark name (without the -GOMAXPROCS suffix) to each
// unit's values, one per run.
type results map[string]map[string][]float64

var (
	procsSuffix = regexp.MustCompile(`-\d+$`)
	num         = regexp.MustCompile(`\d+`)
)

func parse(r io.Reader) (results, error) {
	out := results{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue // not a result line
		}
		name := procsSuffix.ReplaceAllString(strings.TrimPrefix(fields[0], "Benchmark"), "")
		if out[name] == nil {
			out[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: value %q: %v", name, fields[i], err)
			}
			out[name][fields[i+1]] = append(out[name][fields[i+1]], v)
		}
	}
	return out, sc.Err()
}

// median returns the median of a benchmark's values in unit, or NaN.
func (r results) median(name, unit string) float64 {
	vs := slices.Clone(r[name][unit])
	if len(vs) == 0 {
		return math.NaN()
	}
	sort.Float64s(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// pairs lists the benchmarks that have both impl=baseline and impl=sdk, by
// the name without the impl part, in a stable order.
func (r results) pairs() []string {
	var names []string
	for name := range r {
		if base, ok := strings.CutSuffix(name, "/impl=sdk"); ok {
			if _, ok := r[base+"/impl=baseline"]; ok {
				names = append(names, base)
			}
		}
	}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	return names
}

// naturalLess orders names with numbers by value: rows=100 before rows=1000.
func naturalLess(a, b string) bool {
	ka := num.ReplaceAllStringFunc(a, func(s string) string { return fmt.Sprintf("%012s", s) })
	kb := num.ReplaceAllStringFunc(b, func(s string) string { return fmt.Sprintf("%012s", s) })
	return ka < kb
}

func writeTable(w io.Writer, r results) {
	units := []string{"ns/op", "cpu-ns/op", "B/op", "allocs/op"}
	fmt.Fprintln(w, "| Benchmark | SDK time/op | time | CPU time | bytes | allocs | MB/s (SDK) | conns (base → SDK) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, name := range r.pairs() {
		sdk, base := name+"/impl=sdk", name+"/impl=baseline"
		row := []string{name, duration(r.median(sdk, "ns/op"))}
		for _, u := range units {
			row = append(row, ratio(r.median(sdk, u), r.median(base, u)))
		}
		row = append(row, number(r.median(sdk, "MB/s")))
		conns := ""
		if b, s := r.median(base, "conns"), r.median(sdk, "conns"); !math.IsNaN(s) {
			conns = number(b) + " → " + number(s)
		}
		row = append(row, conns)
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ratios are SDK ÷ baseline, medians of the runs; below 1.00 the SDK is cheaper.")
}

func ratio(sdk, base float64) string {
	if math.IsNaN(sdk) || math.IsNaN(base) || base == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", sdk/base)
}

func number(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 100 || v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

func duration(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "–"
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// series is one line of the chart: a value per row count.
type series struct {
	label, color string
	dash         bool
	points       [][2]float64 // rows, value
}

var rowsName = regexp.MustCompile(`^FetchScenarios/rows=(\d+)/impl=(sdk|baseline)$`)

// rowsSeries collects FetchScenarios' unit values by implementation.
func (r results) rowsSeries(unit string, scale float64) (base, sdk [][2]float64) {
	for name := range r {
		m := rowsName.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		rows, _ := strconv.ParseFloat(m[1], 64)
		v := r.median(name, unit)
		if math.IsNaN(v) {
			continue
		}
		p := [2]float64{rows, v * scale}
		if m[2] == "sdk" {
			sdk = append(sdk, p)
		} else {
			base = append(base, p)
		}
	}
	byRows := func(a, b [2]float64) int { return int(a[0] - b[0]) }
	slices.SortFunc(base, byRows)
	slices.SortFunc(sdk, byRows)
	return base, sdk
}

func writeChart(w io.Writer, r results) error {
	// CPU time when the benchmarks report it: on a shared machine it is far
	// steadier than wall time.
	timeUnit, timeTitle := "cpu-ns/op", "CPU time per call (ms)"
	if b, _ := r.rowsSeries(timeUnit, 1); len(b) == 0 {
		timeUnit, timeTitle = "ns/op", "time per call (ms)"
	}
	baseT, sdkT := r.rowsSeries(timeUnit, 1e-6)
	baseM, sdkM := r.rowsSeries("B/op", 1.0/(1<<20))
	if len(sdkT) == 0 {
		return fmt.Errorf("no FetchScenarios/rows=N results for the chart")
	}
	const width, height = 960, 420
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	b.WriteString(`<text x="480" y="22" text-anchor="middle" font-size="15" font-weight="bold">FetchEvaluationScenarios: SDK vs net/http + encoding/json (log–log)</text>` + "\n")
	panel(&b, 60, 50, 380, 300, timeTitle, []series{
		{label: "baseline", color: "#888888", dash: true, points: baseT},
		{label: "SDK", color: "#1f6feb", points: sdkT},
	})
	panel(&b, 540, 50, 380, 300, "memory allocated per call (MiB)", []series{
		{label: "baseline", color: "#888888", dash: true, points: baseM},
		{label: "SDK", color: "#d9480f", points: sdkM},
	})
	b.WriteString(`<text x="480" y="408" text-anchor="middle" fill="#555">rows per evaluation (about 1 kB of JSON each); generated by internal/benchchart from go test -bench output</text>` + "\n")
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// panel draws one log–log plot at (x, y) of size w×h.
func panel(b *strings.Builder, x, y, w, h float64, title string, lines []series) {
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range lines {
		for _, p := range s.points {
			minX, maxX = math.Min(minX, p[0]), math.Max(maxX, p[0])
			minY, maxY = math.Min(minY, p[1]), math.Max(maxY, p[1])
		}
	}
	if math.IsInf(minX, 1) || minY <= 0 {
		return
	}
	lx0, lx1 := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	ly0, ly1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	px := func(v float64) float64 { return x + (math.Log10(v)-lx0)/(lx1-lx0)*w }
	py := func(v float64) float64 { return y + h - (math.Log10(v)-ly0)/(ly1-ly0)*h }

	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x+w/2, y-8, title)
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#333"/>`+"\n", x, y, w, h)
	for e := lx0; e <= lx1; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", px(v), y, px(v), y+h)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(v), y+h+16, tick(v))
	}
	for e := ly0; e <= ly1; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, py(v), x+w, py(v))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x-6, py(v)+4, tick(v))
	}
	for i, s := range lines {
		var pts []string
		for _, p := range s.points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p[0]), py(p[1])))
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5"%s/>`+"\n", strings.Join(pts, " "), s.color, dash)
		for _, p := range s.points {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s: %g rows, %.3g</title></circle>`+"\n",
				px(p[0]), py(p[1]), s.color, s.label, p[0], p[1])
		}
		ly := y + 18 + float64(i)*18
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"%s/>`+"\n", x+12, ly-4, x+40, ly-4, s.color, dash)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x+46, ly, s.label)
	}
}

func tick(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
