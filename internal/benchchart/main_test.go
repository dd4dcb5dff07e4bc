package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

const sample = `goos: linux
pkg: github.com/agenta-go/agenta
BenchmarkGetVariant/impl=baseline-2   	   10000	     70000 ns/op	   9.00 MB/s	         1.000 conns	     69000 cpu-ns/op	   12000 B/op	     150 allocs/op
BenchmarkGetVariant/impl=baseline-2   	   10000	     72000 ns/op	   9.00 MB/s	         1.000 conns	     71000 cpu-ns/op	   12000 B/op	     150 allocs/op
BenchmarkGetVariant/impl=sdk-2        	   10000	     77000 ns/op	   9.00 MB/s	         1.000 conns	     69000 cpu-ns/op	   12600 B/op	     165 allocs/op
BenchmarkFetchScenarios/rows=100/impl=baseline-2 	 700	   1000000 ns/op	  50.0 MB/s	   1000000 cpu-ns/op	  400000 B/op	    3000 allocs/op
BenchmarkFetchScenarios/rows=100/impl=sdk-2      	 700	    500000 ns/op	 100.0 MB/s	    400000 cpu-ns/op	  200000 B/op	    2900 allocs/op
BenchmarkFetchScenarios/rows=1000/impl=baseline-2 	 70	  10000000 ns/op	  50.0 MB/s	  10000000 cpu-ns/op	 4000000 B/op	   30000 allocs/op
BenchmarkFetchScenarios/rows=1000/impl=sdk-2      	 70	   5000000 ns/op	 100.0 MB/s	   4000000 cpu-ns/op	 2000000 B/op	   29000 allocs/op
BenchmarkOnlySDK/impl=sdk-2 	 1	 1 ns/op
PASS
`

func TestTable(t *testing.T) {
	runs, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	writeTable(&out, runs)
	table := out.String()
	for _, want := range []string{
		// medians: baseline time (70000+72000)/2, so 77000/71000.
		"| GetVariant | 77.0 µs | 1.08× | 0.99× | 1.05× | 1.10× | 9 | 1 → 1 |",
		"| FetchScenarios/rows=100 | 500.0 µs | 0.50× | 0.40× | 0.50× | 0.97× | 100 |  |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks the row\n%s\ngot:\n%s", want, table)
		}
	}
	if strings.Index(table, "rows=100 ") > strings.Index(table, "rows=1000 ") {
		t.Errorf("rows=100 should come before rows=1000:\n%s", table)
	}
	if strings.Contains(table, "OnlySDK") {
		t.Errorf("a benchmark without a baseline has no ratio row:\n%s", table)
	}
}

func TestChartIsWellFormedSVG(t *testing.T) {
	runs, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeChart(&out, runs); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&out)
	polylines := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	if polylines != 4 {
		t.Errorf("got %d lines, want 4 (time and memory, baseline and SDK)", polylines)
	}
}

func TestChartNeedsRows(t *testing.T) {
	runs, _ := parse(strings.NewReader("BenchmarkGetVariant/impl=sdk-2 1 5 ns/op\n"))
	if err := writeChart(io.Discard, runs); err == nil {
		t.Error("a chart without FetchScenarios results should be refused")
	}
}
