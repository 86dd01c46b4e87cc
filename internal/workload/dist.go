package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// Weighted is a value with a relative weight; a list of them is a discrete
// distribution.
type Weighted[T any] struct {
	Value  T
	Weight float64
}

// checkWeights requires non-negative weights with a positive sum.
func checkWeights[T any](items []Weighted[T]) error {
	sum := 0.0
	for _, it := range items {
		if it.Weight < 0 || math.IsNaN(it.Weight) || math.IsInf(it.Weight, 0) {
			return fmt.Errorf("weight %v, want a finite number of at least 0", it.Weight)
		}
		sum += it.Weight
	}
	if sum <= 0 {
		return errors.New("no positive weight")
	}
	return nil
}

// probabilities normalises the weights of items to sum to 1.
func probabilities[T any](items []Weighted[T]) []float64 {
	sum := 0.0
	for _, it := range items {
		sum += it.Weight
	}
	p := make([]float64, len(items))
	for i, it := range items {
		p[i] = it.Weight / sum
	}
	return p
}

// chooser draws indices with probability proportional to their weight;
// zero-weight indices are never drawn.
type chooser struct{ cum []float64 }

func newChooser[T any](items []Weighted[T]) chooser {
	cum := make([]float64, len(items))
	sum := 0.0
	for i, it := range items {
		sum += it.Weight
		cum[i] = sum
	}
	return chooser{cum}
}

func (c chooser) pick(r *rand.Rand) int {
	x := r.Float64() * c.cum[len(c.cum)-1]
	return sort.Search(len(c.cum), func(i int) bool { return c.cum[i] > x })
}

// Lognormal is a duration distribution: Median times e^(Sigma·Z) with Z
// standard normal, clamped to [Min, Max] (Max 0: no upper bound) and
// rounded to the second, at least one second.
type Lognormal struct {
	Median   time.Duration
	Sigma    float64
	Min, Max time.Duration
}

func (l Lognormal) check() error {
	switch {
	case l.Median <= 0:
		return fmt.Errorf("median %v, want more than 0", l.Median)
	case l.Sigma < 0 || math.IsNaN(l.Sigma) || math.IsInf(l.Sigma, 0):
		return fmt.Errorf("sigma %v, want a finite number of at least 0", l.Sigma)
	case l.Min < 0 || l.Max < 0 || (l.Max > 0 && l.Max < l.Min):
		return fmt.Errorf("bounds [%v, %v], want 0 <= min <= max (max 0: none)", l.Min, l.Max)
	}
	return nil
}

func (l Lognormal) sample(r *rand.Rand) time.Duration {
	d := float64(l.Median) * math.Exp(l.Sigma*r.NormFloat64())
	d = max(d, float64(l.Min))
	if l.Max > 0 {
		d = min(d, float64(l.Max))
	}
	return seconds(d / float64(time.Second))
}

// Mean is the exact mean of the clamped distribution (before rounding):
// Min·P(X<Min) + Max·P(X>Max) + the partial mean of X over [Min, Max].
func (l Lognormal) Mean() time.Duration {
	m := float64(l.Median)
	lo, hi := float64(l.Min), math.Inf(1)
	if l.Max > 0 {
		hi = float64(l.Max)
	}
	if l.Sigma == 0 {
		return time.Duration(min(max(m, lo), hi))
	}
	s := l.Sigma
	z := func(x float64) float64 { return math.Log(x/m) / s } // -Inf at 0, +Inf at Inf
	a, b := z(lo), z(hi)
	partial := m * math.Exp(s*s/2) * (phi(b-s) - phi(a-s))
	mean := partial + lo*phi(a)
	if !math.IsInf(hi, 1) {
		mean += hi * (1 - phi(b))
	}
	return time.Duration(mean)
}

// phi is the standard normal distribution function.
func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// Span is a uniform duration distribution over [Min, Max].
type Span struct{ Min, Max time.Duration }

func (s Span) check() error {
	if s.Min < 0 || s.Max < s.Min {
		return fmt.Errorf("span [%v, %v], want 0 <= min <= max", s.Min, s.Max)
	}
	return nil
}

// sample draws from s and rounds down to a multiple of unit (at least
// unit when s.Min is), so that intervals read as whole minutes.
func (s Span) sample(r *rand.Rand, unit time.Duration) time.Duration {
	d := s.Min + time.Duration(r.Float64()*float64(s.Max-s.Min))
	d = d.Truncate(unit)
	if d < s.Min {
		d = s.Min
	}
	return d
}

// Noise turns a true duration into a user's estimate: the duration times a
// factor drawn uniformly from [Min, Max], rounded to the second. The zero
// Noise gives perfect estimates.
type Noise struct{ Min, Max float64 }

func (n Noise) check() error {
	if n == (Noise{}) {
		return nil
	}
	if !(n.Min > 0) || n.Max < n.Min || math.IsInf(n.Max, 0) {
		return fmt.Errorf("estimate factor [%v, %v], want 0 < min <= max", n.Min, n.Max)
	}
	return nil
}

// estimate applies n to d; it draws from r only when n is not zero.
func (n Noise) estimate(d time.Duration, r *rand.Rand) time.Duration {
	if n == (Noise{}) {
		return d
	}
	f := n.Min + r.Float64()*(n.Max-n.Min)
	return seconds(f * d.Seconds())
}

// seconds rounds a number of seconds to a whole, positive Duration.
func seconds(s float64) time.Duration {
	return max(time.Duration(math.Round(s)), 1) * time.Second
}

// exponential draws an exponential duration of the given mean, in seconds
// rounded to the second (may be 0).
func exponential(r *rand.Rand, mean time.Duration) time.Duration {
	return time.Duration(math.Round(r.ExpFloat64()*mean.Seconds())) * time.Second
}

// geometric draws a count of at least 1 with the given mean (1 when
// mean <= 1).
func geometric(r *rand.Rand, mean float64) int {
	if mean <= 1 {
		return 1
	}
	p := 1 / mean
	// Inverse transform: 1 + floor(ln U / ln(1-p)), U in (0, 1].
	u := 1 - r.Float64()
	return 1 + int(math.Floor(math.Log(u)/math.Log1p(-p)))
}
