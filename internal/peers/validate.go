package peers

import (
	"math"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// Validation compares a model's replay of a workload with a real system's.
type Validation struct {
	Jobs          int // started in both, the jobs compared
	ModelStarted  int
	RealStarted   int
	Spearman      float64 // rank correlation of the jobs' start times
	ModelMeanWait time.Duration
	RealMeanWait  time.Duration
	ModelP99Wait  time.Duration
	RealP99Wait   time.Duration
	MeanErr       float64 // (model - real) / real of the mean wait; 0 when both are 0
	P99Err        float64 // the same of the p99 wait
}

// Compare measures how far model's outcomes are from real's on w: the
// jobs both started, their start order (Spearman's rank correlation, ties
// ranked on average) and the relative error of the mean and p99 wait.
func Compare(w workload.Workload, model, real map[string]workload.Outcome) Validation {
	var v Validation
	var ms, rs []float64
	var mw, rw []time.Duration
	for _, a := range w.Arrivals {
		m, r := model[a.Job.Name], real[a.Job.Name]
		if m.Started {
			v.ModelStarted++
		}
		if r.Started {
			v.RealStarted++
		}
		if !m.Started || !r.Started {
			continue
		}
		v.Jobs++
		ms, rs = append(ms, m.Start.Seconds()), append(rs, r.Start.Seconds())
		mw, rw = append(mw, m.Start-a.At), append(rw, r.Start-a.At)
	}
	v.Spearman = pearson(ranks(ms), ranks(rs))
	v.ModelMeanWait, v.RealMeanWait = mean(mw), mean(rw)
	v.ModelP99Wait, v.RealP99Wait = Quantile(mw, 0.99), Quantile(rw, 0.99)
	v.MeanErr = relErr(v.ModelMeanWait, v.RealMeanWait)
	v.P99Err = relErr(v.ModelP99Wait, v.RealP99Wait)
	return v
}

func relErr(model, real time.Duration) float64 {
	switch {
	case model == real:
		return 0
	case real == 0:
		return math.Inf(1)
	}
	return float64(model-real) / float64(real)
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

// Quantile is the q-quantile of d by nearest rank; 0 for none.
func Quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// ranks gives each value its rank (1-based), ties the mean of their ranks.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// pearson is the correlation of x and y; NaN when either is constant or
// there are fewer than two values.
func pearson(x, y []float64) float64 {
	n := float64(len(x))
	if len(x) < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}
