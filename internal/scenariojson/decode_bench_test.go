package scenariojson

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// benchRows reads testdata/rows.jsonl: 100 realistic scenarios, one a line,
// made by the agenta package's benchmark fixture (appendScenario).
func benchRows(tb testing.TB) [][]byte {
	data, err := os.ReadFile("testdata/rows.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(data), []byte("\n"))
}

// TestDecodeRows checks that the benchmark's rows take the fast path and
// decode as encoding/json decodes them.
func TestDecodeRows(t *testing.T) {
	for i, r := range benchRows(t) {
		var got, want models.EvaluationScenario
		if n, status := Decode(r, &got); status != OK || n != len(r) {
			t.Fatalf("row %d: Decode took %d of %d bytes, status %d", i, n, len(r), status)
		}
		if err := json.Unmarshal(r, &want); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("row %d:\n got %#v\nwant %#v", i, got, want)
		}
	}
}

// BenchmarkDecode decodes the rows without I/O, so that the decoder's own
// cost shows without the noise of the HTTP benchmarks, next to
// encoding/json's.
func BenchmarkDecode(b *testing.B) {
	rows := benchRows(b)
	size := 0
	for _, r := range rows {
		size += len(r)
	}
	impls := []struct {
		name   string
		decode func([]byte, *models.EvaluationScenario) bool
	}{
		{"scenariojson", func(r []byte, s *models.EvaluationScenario) bool {
			n, status := Decode(r, s)
			return status == OK && n == len(r)
		}},
		{"encoding-json", func(r []byte, s *models.EvaluationScenario) bool {
			return json.Unmarshal(r, s) == nil
		}},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var s models.EvaluationScenario // one, as impl.decode lets it escape
			for b.Loop() {
				for _, r := range rows {
					s = models.EvaluationScenario{}
					if !impl.decode(r, &s) {
						b.Fatalf("%s failed on %.80q", impl.name, r)
					}
				}
			}
		})
	}
}
