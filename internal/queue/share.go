package queue

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// DefaultHalfLife is the fair-share decay half-life when NewBook is given 0
// (Slurm's default PriorityDecayHalfLife).
const DefaultHalfLife = 7 * 24 * time.Hour

// Fair share. Time is an input: a time.Duration since the start of the
// simulation, moved forward by Advance. A queue's decayed usage at time t is
//
//	U(t) = ∫ u(s) · 2^(-(t-s)/h) ds   over s ≤ t, in GPU-seconds,
//
// where u(s) is the queue's total usage at time s over all flavors in GPUs
// (milli-GPUs / 1000) and h the half-life. Usage is constant between
// events, so Advance integrates exactly: over a step of dt seconds with
// usage u,
//
//	U ← U · 2^(-dt/h) + u · (h / ln 2) · (1 - 2^(-dt/h)).
//
// Advancing in one step or in many gives the same result. A queue's share is
//
//	Share = U / (Weight · N),  N = the queue's ShareGPUs when set, else
//	                           its total nominal quota in GPUs, or 1 when
//	                           it has none,
//
// so a queue that used its whole nominal quota steadily for a long time has
// a share near h/ln 2 / Weight seconds, whatever its size. Lower shares are
// served first.

// Now is the Book's time: the last time passed to Advance.
func (b *Book) Now() time.Duration { return b.now }

// HalfLife is the fair-share decay half-life.
func (b *Book) HalfLife() time.Duration { return b.halfLife }

// Advance moves the Book's time to now, accumulating every queue's decayed
// usage over the interval with the usage it has. Call it before recording
// what happens at now. Time never goes back.
func (b *Book) Advance(now time.Duration) error {
	if now < b.now {
		return fmt.Errorf("advance fair-share time to %v: it is already %v", now, b.now)
	}
	dt, h := (now - b.now).Seconds(), b.halfLife.Seconds()
	keep := math.Exp2(-dt / h)
	grow := -math.Expm1(-dt/h*math.Ln2) * h / math.Ln2 // ∫0^dt 2^(-x/h) dx
	for _, n := range b.queues {
		n.decayed = n.decayed*keep + gpus(n.used)*grow
	}
	b.now = now
	return nil
}

// gpus is a's GPU flavors in GPUs (CPU and Memory are not counted).
func gpus(a Amounts) float64 {
	var total int64
	for f, v := range a {
		if f.IsGPU() {
			total += v
		}
	}
	return float64(total) / Milli
}

// DecayedUsage is queue's decayed usage U in GPU-seconds; 0 for an unknown
// queue.
func (b *Book) DecayedUsage(queue string) float64 {
	i, ok := b.index[queue]
	if !ok {
		return 0
	}
	return b.queues[i].decayed
}

// Share is queue's fair share, U / (Weight · N); 0 for an unknown queue.
func (b *Book) Share(queue string) float64 {
	i, ok := b.index[queue]
	if !ok {
		return 0
	}
	return b.share(i)
}

func (b *Book) share(i int) float64 {
	n := b.queues[i]
	nominal := gpus(n.spec.Nominal)
	if n.spec.ShareGPUs > 0 {
		nominal = n.spec.ShareGPUs
	}
	if nominal <= 0 {
		nominal = 1
	}
	return n.decayed / (n.spec.weight() * nominal)
}

// Order puts queues in fair-share order, lowest share first, ties by name.
// With hierarchical queues it is a fair tree: top-level queues are compared
// by their shares, and the queues below one of them come together, ordered
// the same way among siblings; a queue comes before the queues below it.
func (b *Book) Order(queues []string) ([]string, error) {
	idx := make([]int, len(queues))
	for k, q := range queues {
		i, ok := b.index[q]
		if !ok {
			return nil, fmt.Errorf("fair-share order: queue %q: %w", q, ErrUnknownQueue)
		}
		idx[k] = i
	}
	out := make([]string, len(queues))
	for k, i := range b.order(idx) {
		out[k] = b.queues[i].spec.Name
	}
	return out, nil
}

// order sorts queue indexes in fair-tree order (see Order).
func (b *Book) order(idx []int) []int {
	shares := make([]float64, len(b.queues))
	for i := range b.queues {
		shares[i] = b.share(i)
	}
	paths := make(map[int][]int, len(idx))
	for _, i := range idx {
		p := b.path(i)
		slices.Reverse(p)
		paths[i] = p
	}
	sibling := func(x, y int) int {
		return cmp.Or(cmp.Compare(shares[x], shares[y]), strings.Compare(b.queues[x].spec.Name, b.queues[y].spec.Name))
	}
	out := slices.Clone(idx)
	slices.SortStableFunc(out, func(x, y int) int {
		px, py := paths[x], paths[y]
		for k := range min(len(px), len(py)) {
			if px[k] != py[k] {
				return sibling(px[k], py[k])
			}
		}
		return cmp.Compare(len(px), len(py))
	})
	return out
}
