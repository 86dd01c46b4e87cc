package plan

import (
	"math"
	"slices"
)

// Rates are prices per GPU-hour.
type Rates struct {
	Committed float64 // R: every hour of the term, per committed GPU
	OnDemand  float64 // O
	Spot      float64 // S
	SpotShare float64 // share of demand above the committed level run on spot, 0..1
}

// Overflow is P, the price of a GPU-hour above the committed level.
func (r Rates) Overflow() float64 {
	return r.SpotShare*r.Spot + (1-r.SpotShare)*r.OnDemand
}

// BreakEven is R/P: the share of hours a committed GPU must be busy to pay
// for itself. Above 1, committing never pays.
func (r Rates) BreakEven() float64 {
	return r.Committed / r.Overflow()
}

// Point is the cost of the demand at one committed level.
type Point struct {
	Committed int     `json:"committed_gpus"`
	CostUSD   float64 `json:"cost_usd"`
}

// Optimum is the cheapest committed level and the curve it was read from.
type Optimum struct {
	Level int     // committed GPUs
	Cost  float64 // USD over the demand's hours at Level
	Curve []Point // every level from 0 to the peak demand (rounded up)
}

// Cost is the cost of demand with c GPUs committed: c*R every hour plus the
// demand above c at the overflow rate. It sums hour by hour; Optimise uses
// a faster equivalent.
func Cost(demand []float64, c float64, r Rates) float64 {
	p := r.Overflow()
	total := 0.0
	for _, d := range demand {
		total += c*r.Committed + max(0, d-c)*p
	}
	return total
}

// Optimise returns the cost of every committed level from 0 to the peak and
// the cheapest (the lowest level on a tie).
func Optimise(demand []float64, r Rates) Optimum {
	sorted := slices.Clone(demand)
	slices.Sort(sorted)
	peak := 0
	if n := len(sorted); n > 0 {
		peak = int(math.Ceil(sorted[n-1]))
	}
	// suffix[i] is the sum of sorted[i:].
	suffix := make([]float64, len(sorted)+1)
	for i := len(sorted) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + sorted[i]
	}
	hours, p := float64(len(sorted)), r.Overflow()
	opt := Optimum{Level: 0, Cost: math.Inf(1)}
	above := 0 // first index with sorted[above] > c
	for c := 0; c <= peak; c++ {
		for above < len(sorted) && sorted[above] <= float64(c) {
			above++
		}
		overflow := suffix[above] - float64(c)*float64(len(sorted)-above)
		cost := float64(c)*r.Committed*hours + overflow*p
		opt.Curve = append(opt.Curve, Point{Committed: c, CostUSD: cost})
		if cost < opt.Cost-1e-9*math.Abs(cost) {
			opt.Level, opt.Cost = c, cost
		}
	}
	return opt
}

// QuantileLevel is the committed level given by the break-even rule: the
// number of GPUs that are busy in more than R/P of the hours. For whole-GPU
// demand it equals Optimise's level.
func QuantileLevel(demand []float64, r Rates) int {
	u := r.BreakEven()
	hours := float64(len(demand))
	level := 0
	for c := 1; ; c++ {
		busy := 0
		for _, d := range demand {
			if d >= float64(c) {
				busy++
			}
		}
		if busy == 0 || float64(busy)/hours <= u {
			return level
		}
		level = c
	}
}

// Quantile is the q-quantile of demand (nearest rank, 0 < q <= 1).
func Quantile(demand []float64, q float64) float64 {
	if len(demand) == 0 {
		return 0
	}
	s := slices.Clone(demand)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
