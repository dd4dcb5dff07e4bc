package evals

import (
	"math"
	"slices"
)

// exactValues is how many values a Distribution keeps for exact
// percentiles before it moves them into its histogram: 128 KiB.
const exactValues = 1 << 14

// The histogram's buckets grow by histogramGrowth, so any value of a bucket
// is within (γ−1)/(γ+1) ≈ 0.5% of the bucket's centre. Values below
// histogramMin count as 0 and values above histogramMax as histogramMax in
// the percentiles (Max stays exact): the buckets in between, about 6,250
// of them, take 49 KiB.
const (
	histogramGrowth = 1.01
	histogramMin    = 1e-12
	histogramMax    = 1e15
)

var (
	histogramLogGrowth = math.Log(histogramGrowth)
	histogramOffset    = int(math.Floor(math.Log(histogramMin) / histogramLogGrowth))
	histogramBuckets   = int(math.Ceil(math.Log(histogramMax)/histogramLogGrowth)) - histogramOffset + 1
)

// distributionAccumulator builds a Distribution in bounded memory.
type distributionAccumulator struct {
	count      int
	sum, carry float64 // Neumaier's compensated sum
	max        float64
	values     []float64 // every value, until there are exactValues of them
	zeros      int       // values under histogramMin, once in the histogram
	buckets    []int     // the histogram, nil while values are kept
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
		if len(d.values) < exactValues {
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
	return Distribution{
		Count: d.count,
		Sum:   sum,
		Mean:  sum / float64(d.count),
		P50:   d.quantile(0.5),
		P95:   d.quantile(0.95),
		Max:   d.max,
	}
}

// quantile returns the q quantile: exactly, by R's type 7 (the order
// statistic at h = (n−1)q, interpolated linearly), while the values are
// kept; from the histogram afterwards, as the centre of the bucket holding
// order statistic ⌊h⌋, at most Max.
func (d *distributionAccumulator) quantile(q float64) float64 {
	h := float64(d.count-1) * q
	if d.buckets == nil {
		slices.Sort(d.values)
		lo := int(math.Floor(h))
		if lo+1 >= len(d.values) {
			return d.values[len(d.values)-1]
		}
		return d.values[lo] + (h-float64(lo))*(d.values[lo+1]-d.values[lo])
	}
	rank := int(math.Floor(h))
	if rank < d.zeros {
		return 0
	}
	seen := d.zeros
	for i, n := range d.buckets {
		seen += n
		if seen > rank {
			upper := math.Exp(float64(i+histogramOffset) * histogramLogGrowth)
			return min(2*upper/(histogramGrowth+1), d.max)
		}
	}
	return d.max
}
