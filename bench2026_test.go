package agenta

// Reading a whole 2026 run: StreamRunRows (results, test cases and traces,
// joined into rows) against the floor, the same requests and join written
// by hand with net/http and encoding/json (baseline26), in one process
// against one loopback server; and the heap while it reads.

import (
	"context"
	"encoding/json"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkReadRun2026 reads runs of 1,000 and 10,000 rows (one
// application, one evaluator: 3 cells and 2 traces a row, about 7 kB of
// JSON a row).
func BenchmarkReadRun2026(b *testing.B) {
	for _, rows := range []int{1_000, 10_000} {
		f := newRun26Fixture(rows, false)
		b.Run("rows="+strconv.Itoa(rows), func(b *testing.B) {
			benchImpls(b, func(b *testing.B, sdk bool) {
				srv := newRun26Server(b, f)
				ctx := context.Background()
				var read func() (int, error)
				if sdk {
					c := newTestClient(b, srv.URL+"/api")
					read = func() (int, error) {
						n := 0
						for row, err := range c.StreamRunRows(ctx, run26ID, nil) {
							if err != nil {
								return n, err
							}
							if row.Scenario.OutputText() != "" && len(row.Scenario.Results) == 1 {
								n++
							}
						}
						return n, nil
					}
				} else {
					bl := newBaseline26(srv)
					b.Cleanup(bl.hc.CloseIdleConnections)
					read = func() (int, error) {
						n := 0
						err := bl.readRun(ctx, run26ID, func(output, verdict json.RawMessage) {
							if len(output) > 0 && len(verdict) > 0 {
								n++
							}
						})
						return n, err
					}
				}
				f.bytes.Store(0)
				f.requests.Store(0)
				b.ReportAllocs()
				defer cpuMetric(b)()
				for b.Loop() {
					n, err := read()
					if err != nil {
						b.Fatal(err)
					}
					if n != rows {
						b.Fatalf("read %d complete rows, want %d", n, rows)
					}
				}
				b.ReportMetric(float64(f.bytes.Load())/float64(b.N), "body-B/op")
				b.ReportMetric(float64(f.requests.Load())/float64(b.N), "requests/op")
			})
		})
	}
}

// TestRunRowsPeakHeap reads a 10,000-row run (about 67 MB of JSON) with
// StreamRunRows, and a 2,000-row one, from a server that encodes each row
// when asked (so that it holds nothing), while a goroutine samples the
// heap every millisecond: memory holds one page of 500 scenarios with their
// cells, test cases and traces, so the peak must not grow with the run.
// GC at 100%, no memory limit, as TestStreamingPeakHeap; HeapInuse, which
// counts the garbage the GC has not collected yet, is the measure.
func TestRunRowsPeakHeap(t *testing.T) {
	sizes := []int{2_000, 10_000}
	if testing.Short() || raceEnabled {
		sizes = []int{1_000, 2_000}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	peaks := make([]uint64, len(sizes))
	for i, rows := range sizes {
		f := newRun26Fixture(rows, true)
		srv := newRun26Server(t, f)
		c := newTestClient(t, srv.URL+"/api")
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		start, startTotal := ms.HeapInuse, ms.TotalAlloc
		var peak atomic.Uint64
		done := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			var m runtime.MemStats
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					runtime.ReadMemStats(&m)
					if m.HeapInuse > peak.Load() {
						peak.Store(m.HeapInuse)
					}
				}
			}
		}()
		n := 0
		for row, err := range c.StreamRunRows(context.Background(), run26ID, nil) {
			require.NoError(t, err, "row %d", n)
			require.NotEmpty(t, row.Scenario.OutputText())
			n++
		}
		close(done)
		<-sampled
		require.Equal(t, rows, n)
		runtime.ReadMemStats(&ms)
		grew := peak.Load() - min(peak.Load(), start)
		peaks[i] = grew
		t.Logf("%d rows, %.1f MB of JSON in %d requests: peak HeapInuse %.1f MB above the %.1f MB at start, %.0f MB allocated in all, %d GCs",
			rows, float64(f.bytes.Load())/1e6, f.requests.Load(), float64(grew)/(1<<20), float64(start)/(1<<20),
			float64(ms.TotalAlloc-startTotal)/1e6, ms.NumGC)
		c.CloseIdleConnections()
		srv.Close()
	}
	const limit = 32 << 20
	for i, p := range peaks {
		assert.Less(t, p, uint64(limit), "%d rows: the heap grew by %.1f MB, want under 32 MB", sizes[i], float64(p)/(1<<20))
	}
	// Flat: five times the rows, not five times the heap (a wide margin:
	// GC timing moves a peak by a page or so).
	assert.Less(t, peaks[1], 2*peaks[0]+(4<<20), "the peak grew with the run: %v", peaks)
}
