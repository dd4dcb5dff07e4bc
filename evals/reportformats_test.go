package evals

import (
	"bytes"
	"testing"
)

// Each format writes what its own writer writes, and says rightly whether
// it holds the rows: a program that keeps them only for those would
// otherwise write a report without them.
func TestReportFormats(t *testing.T) {
	r := checkedReport(t)
	want := map[string]struct {
		rows  bool
		write func(*Report, *bytes.Buffer) error
	}{
		"junit":    {true, func(r *Report, b *bytes.Buffer) error { return r.WriteJUnit(b) }},
		"csv":      {true, func(r *Report, b *bytes.Buffer) error { return r.WriteCSV(b) }},
		"json":     {true, func(r *Report, b *bytes.Buffer) error { return r.WriteJSONLines(b) }},
		"markdown": {false, func(r *Report, b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
	}
	formats := ReportFormats()
	if len(formats) != len(want) {
		t.Fatalf("%d formats, want %d", len(formats), len(want))
	}
	for _, f := range formats {
		w, ok := want[f.Name]
		if !ok {
			t.Errorf("format %q: want one of junit, csv, json, markdown", f.Name)
			continue
		}
		delete(want, f.Name) // a name twice is then refused
		if f.Rows != w.rows || f.Usage == "" {
			t.Errorf("%s: Rows %v, Usage %q; want Rows %v and a usage", f.Name, f.Rows, f.Usage, w.rows)
		}
		var got, direct bytes.Buffer
		if err := f.Write(r, &got); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if err := w.write(r, &direct); err != nil {
			t.Fatal(err)
		}
		if got.Len() == 0 || !bytes.Equal(got.Bytes(), direct.Bytes()) {
			t.Errorf("%s: Write wrote %d bytes, its writer %d; want the same, not empty", f.Name, got.Len(), direct.Len())
		}
	}
}
