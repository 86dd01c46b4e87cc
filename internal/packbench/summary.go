package packbench

import (
	"math"
	"slices"
	"strconv"

	"github.com/corral-sched/corral/internal/placement"
)

// Summary is what the benchmark reports of one run. Percentages are of the
// cluster's GPUs; x is the arrived GPU demand in % of them. When no pod
// fails, the first-failure figure is the one after the last pod.
type Summary struct {
	Trace            string  `json:"trace"`
	Policy           string  `json:"policy"`
	Seed             int64   `json:"seed"`
	UnallocatedAt100 float64 `json:"unallocated_pct_at_100"`
	UnallocatedAt130 float64 `json:"unallocated_pct_at_130"`
	UnallocatedFirst float64 `json:"unallocated_pct_at_first_failure"`
	FragRateAt100    float64 `json:"frag_pct_at_100"`
	Pods             int     `json:"pods"`
	FailedPods       int     `json:"failed_pods"`
	Seconds          float64 `json:"seconds"`

	// Curve is unallocated GPU % at arrived % = 0, 1, ..., MaxArrived.
	Curve []float64 `json:"-"`
}

// MaxArrived is the last arrived % a curve covers.
const MaxArrived = 130

// Summarise bins the trace's records by arrived % exactly as the authors'
// analysis scripts do: x = round(arrived / GPUs / 10) with round-half-even,
// each record's allocation ratio rounded to 2 decimals, the value at x the
// mean over records with that x (or over x-1..x+1 when none has it) rounded
// to 2 decimals, and unallocated % = 100 minus it.
func Summarise(t *Trace) Summary {
	s := Summary{Trace: t.Spec.Trace, Policy: t.Spec.Policy, Seed: t.Spec.Seed, Pods: len(t.Records)}
	alloc := make([]float64, MaxArrived+2)
	fragRate := make([]float64, MaxArrived+2)
	count := make([]int, MaxArrived+2)
	gpus := float64(t.Capacity / placement.MilliPerGPU)
	first := -1
	for i, r := range t.Records {
		a := roundHalfEven(float64(r.Used)/gpus/10, 2)
		if r.Failed {
			s.FailedPods++
			if first < 0 {
				first = i
				s.UnallocatedFirst = 100 - a
			}
		}
		x := int(roundHalfEven(float64(r.Arrived)/gpus/10, 0))
		if x < 0 || x > MaxArrived+1 {
			continue
		}
		alloc[x] += a
		if idle := float64(t.Capacity - r.Used); idle > 0 {
			fragRate[x] += 100 * r.Frag / idle
		}
		count[x]++
	}
	if first < 0 && len(t.Records) > 0 {
		s.UnallocatedFirst = orLast(math.NaN(), t)
	}
	s.Curve = make([]float64, MaxArrived+1)
	for x := range s.Curve {
		s.Curve[x] = 100 - roundHalfEven(binMean(alloc, count, x), 2)
	}
	s.UnallocatedAt100 = orLast(s.Curve[100], t)
	s.UnallocatedAt130 = orLast(s.Curve[MaxArrived], t)
	s.FragRateAt100 = binMean(fragRate, count, 100)
	return s
}

// roundHalfEven rounds v to the given decimals as Python's round does:
// correctly, from v's exact binary value, ties to even.
func roundHalfEven(v float64, decimals int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', decimals, 64), 64)
	return r
}

// binMean is the mean of bin x, or of bins x-1..x+1 when x is empty, as
// the authors' scripts have it. On a small cluster one pod may move the
// arrived % by more than a bin on each side; when records lie beyond
// x+1, the window widens (x-d..x+d) until it holds one. NaN when no
// record reaches past x+1 (the trace ended before x).
func binMean(sum []float64, count []int, x int) float64 {
	if count[x] > 0 {
		return sum[x] / float64(count[x])
	}
	beyond := slices.ContainsFunc(count[min(x+2, len(count)):], func(c int) bool { return c > 0 })
	for d := 1; d < len(sum); d++ {
		var s float64
		var n int
		for i := max(x-d, 0); i <= min(x+d, len(sum)-1); i++ {
			s += sum[i]
			n += count[i]
		}
		if n > 0 {
			return s / float64(n)
		}
		if !beyond {
			break
		}
	}
	return math.NaN()
}

// orLast is v, or the unallocated % after the last record when v is NaN
// (a trace that ends before reaching that arrived %).
func orLast(v float64, t *Trace) float64 {
	if !math.IsNaN(v) || len(t.Records) == 0 {
		return v
	}
	return 100 - 100*float64(t.Records[len(t.Records)-1].Used)/float64(t.Capacity)
}
