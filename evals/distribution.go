package evals

import (
	"math"
	"math/rand/v2"
	"slices"
)

// exactValues is how many values an Accumulator keeps per distribution
// for exact percentiles before it moves them into its histogram: 1 MiB
// each for cost and latency. Summarize keeps every value.
const exactValues = 1 << 17

// The histogram's buckets grow by histogramGrowth, so any value of a bucket
// is within (γ−1)/(γ+1) ≈ 0.5% of the bucket's centre. Values below
// histogramMin count as 0 and values above histogramMax as histogramMax in
// the percentiles (Max stays exact): the buckets in between, about 6,250
// of them, take 49 KiB.
const (
	histogramGrowth = 1.01
	// histogramError bounds the relative error of a percentile from the
	// histogram: (γ−1)/(γ+1).
	histogramError = (histogramGrowth - 1) / (histogramGrowth + 1)
	histogramMin   = 1e-12
	histogramMax   = 1e15
)

var (
	histogramLogGrowth = math.Log(histogramGrowth)
	histogramOffset    = int(math.Floor(math.Log(histogramMin) / histogramLogGrowth))
	histogramBuckets   = int(math.Ceil(math.Log(histogramMax)/histogramLogGrowth)) - histogramOffset + 1
)

// distributionAccumulator builds a Distribution in bounded memory, or,
// when unbounded is set, keeping every value.
type distributionAccumulator struct {
	count      int
	sum, carry float64 // Neumaier's compensated sum
	max        float64
	values     []float64 // every value, until there are exactValues of them
	zeros      int       // values under histogramMin, once in the histogram
	buckets    []int     // the histogram, nil while values are kept
	unbounded  bool      // keep every value: percentiles stay exact
}

func (d *distributionAccumulator) add(x float64) {
	if math.IsNaN(x) {
		return
	}
	if d.count == 0 || x > d.max {
		d.max = x
	}
	d.count++
	d.sum, d.carry = compensatedAdd(d.sum, d.carry, x)
	if d.buckets == nil {
		d.values = append(d.values, x)
		if d.unbounded || len(d.values) < exactValues {
			return
		}
		d.buckets = make([]int, histogramBuckets)
		for _, v := range d.values {
			d.bucket(v)
		}
		d.values = nil
		return
	}
	d.bucket(x)
}

func (d *distributionAccumulator) bucket(x float64) {
	if x < histogramMin {
		d.zeros++
		return
	}
	x = min(x, histogramMax)
	i := int(math.Ceil(math.Log(x)/histogramLogGrowth)) - histogramOffset
	d.buckets[min(max(i, 0), len(d.buckets)-1)]++
}

func (d *distributionAccumulator) distribution() Distribution {
	if d.count == 0 {
		return Distribution{}
	}
	sum := d.sum + d.carry
	if math.IsNaN(sum) {
		// An overflow: the sum is ±Inf, its compensation ∓Inf.
		sum = d.sum
	}
	return Distribution{
		Count: d.count,
		Sum:   sum,
		Mean:  sum / float64(d.count),
		P50:   d.quantile(50),
		P95:   d.quantile(95),
		Max:   d.max,
		// The percentiles are estimates once the values are in the
		// histogram.
		Approximate: d.buckets != nil,
	}
}

// quantile returns the percent/100 quantile by R's type 7: the order
// statistics x₍ₖ₎ and x₍ₖ₊₁₎ around h = (n−1)q, k = ⌊h⌋ (counting from
// 0), interpolated linearly, x₍ₖ₎ + (h−k)(x₍ₖ₊₁₎ − x₍ₖ₎). k and h − k
// are computed in integers: (n−1)·0.95 in floating point falls short of
// an integer part's worth of precision (19,999 · 0.95 = 18,999.0499999…),
// which put the P95 of 19,000 ones and 1,000 thousands at 50.9499999993
// instead of 50.95, under a limit of "< 50.95". It is exact while
// the values are kept. From the histogram, each of the two order
// statistics is the centre of its bucket (at most Max), within
// (γ−1)/(γ+1) ≈ 0.5% of its true value, and so is their interpolation,
// a weighted mean of two values that are each that close: every
// percentile of non-negative values stays within 0.5% of the exact one.
//
// Reference: R. J. Hyndman and Y. Fan, "Sample quantiles in statistical
// packages", The American Statistician 50 (1996) 361–365, definition 7.
func (d *distributionAccumulator) quantile(percent int) float64 {
	lo := (d.count - 1) * percent / 100
	frac := float64((d.count-1)*percent%100) / 100
	var x, y float64
	if d.buckets == nil {
		x = d.kth(lo)
		y = x
		if lo+1 < len(d.values) {
			// After selecting rank lo, every value above it is at or
			// above it: rank lo+1 is the least of them.
			y = slices.Min(d.values[lo+1:])
		}
	} else {
		x = d.orderStatistic(lo)
		y = d.orderStatistic(min(lo+1, d.count-1))
	}
	if frac == 0 || x == y {
		return x
	}
	return x + frac*(y-x)
}

// kth returns the value of rank k (from 0) among the kept values, by
// quickselect with random pivots (expected linear time, whatever order a
// server sends values in), leaving the values partitioned around it.
// Sorting them all cost a tenth of the time of streaming the rows.
func (d *distributionAccumulator) kth(k int) float64 {
	v := d.values
	lo, hi := 0, len(v)-1
	for hi > lo {
		if hi-lo < 16 {
			slices.Sort(v[lo : hi+1])
			break
		}
		pivot := v[lo+rand.IntN(hi-lo+1)]
		// Three-way partition: < pivot, == pivot, > pivot.
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case v[i] < pivot:
				v[lt], v[i] = v[i], v[lt]
				lt++
				i++
			case v[i] > pivot:
				v[i], v[gt] = v[gt], v[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return pivot
		}
	}
	return v[k]
}

// orderStatistic returns the value of rank k (from 0) as the histogram
// holds it: the centre of its bucket, at most Max.
func (d *distributionAccumulator) orderStatistic(k int) float64 {
	if k < d.zeros {
		return 0
	}
	seen := d.zeros
	for i, n := range d.buckets {
		seen += n
		if seen > k {
			upper := math.Exp(float64(i+histogramOffset) * histogramLogGrowth)
			return min(2*upper/(histogramGrowth+1), d.max)
		}
	}
	return d.max
}
