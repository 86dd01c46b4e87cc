package packbench

import "math"

// Summary is what the benchmark reports of one run.
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

// Summarise bins the trace's records by arrived % (x = round(100 x arrived /
// capacity)); the value at x is the mean over records with that x, or over
// x-1..x+1 when none has it.
func Summarise(t *Trace) Summary {
	s := Summary{Trace: t.Spec.Trace, Policy: t.Spec.Policy, Seed: t.Spec.Seed, Pods: len(t.Records)}
	unalloc := make([]float64, MaxArrived+2)
	fragRate := make([]float64, MaxArrived+2)
	count := make([]int, MaxArrived+2)
	first := -1
	cap := float64(t.Capacity)
	for i, r := range t.Records {
		u := 100 - 100*float64(r.Used)/cap
		if r.Failed {
			s.FailedPods++
			if first < 0 {
				first = i
				s.UnallocatedFirst = u
			}
		}
		x := int(math.Round(float64(r.Arrived) * 100 / cap))
		if x < 0 || x > MaxArrived+1 {
			continue
		}
		unalloc[x] += u
		if idle := cap - float64(r.Used); idle > 0 {
			fragRate[x] += 100 * r.Frag / idle
		}
		count[x]++
	}
	if first < 0 && len(t.Records) > 0 {
		s.UnallocatedFirst = 100 - 100*float64(t.Records[len(t.Records)-1].Used)/cap
	}
	s.Curve = make([]float64, MaxArrived+1)
	for x := range s.Curve {
		s.Curve[x] = binMean(unalloc, count, x)
	}
	s.UnallocatedAt100 = orLast(s.Curve[100], t)
	s.UnallocatedAt130 = orLast(s.Curve[MaxArrived], t)
	s.FragRateAt100 = binMean(fragRate, count, 100)
	return s
}

// binMean is the mean of bin x, or of bins x-1..x+1 when x is empty.
func binMean(sum []float64, count []int, x int) float64 {
	if count[x] > 0 {
		return sum[x] / float64(count[x])
	}
	var s float64
	var n int
	for i := max(x-1, 0); i <= min(x+1, len(sum)-1); i++ {
		s += sum[i]
		n += count[i]
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// orLast is v, or the unallocated % after the last record when v is NaN
// (a trace that ends before reaching that arrived %).
func orLast(v float64, t *Trace) float64 {
	if !math.IsNaN(v) || len(t.Records) == 0 {
		return v
	}
	return 100 - 100*float64(t.Records[len(t.Records)-1].Used)/float64(t.Capacity)
}
