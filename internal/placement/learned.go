package placement

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Learned is what a Learner has learned, in a form a face persists (as
// JSON) and gives back to a learner after a restart or a change of leader,
// so that the new process places pods on the mix the old one had learned,
// and goes on learning as it would have, rather than on a mix learned
// again from the pods it finds running.
type Learned struct {
	Seen    int `json:"seen"`    // arrivals observed
	Renewed int `json:"renewed"` // arrivals seen at the last renewal of the mix
	// Shapes is every shape seen, in order of first arrival, with its
	// decayed weight: the count of its arrivals, each halved every
	// half-life of later arrivals.
	Shapes []Shape `json:"shapes"`
	// Mix and All are the mix the last renewal took (weights summing to
	// 1) and every shape's weight then: what the policy places by until
	// the next renewal.
	Mix []Shape `json:"mix"`
	All []Shape `json:"all"`
}

// Shape is one shape of pod with a weight.
type Shape struct {
	CPUMilli int64    `json:"cpuMilli"`
	GPUMilli int64    `json:"gpuMilli"` // per GPU
	NumGPU   int      `json:"numGPU"`
	Models   []string `json:"models,omitempty"`
	Weight   float64  `json:"weight"`
}

// Learned returns what l has learned.
func (l *Learner) Learned() Learned {
	out := Learned{Seen: l.est.seen, Renewed: l.renewed, Shapes: make([]Shape, len(l.est.groups)), Mix: shapesOf(l.mix), All: shapesOf(l.all)}
	for i, g := range l.est.groups {
		out.Shapes[i] = shapeOf(g.t)
		out.Shapes[i].Weight = g.weight
	}
	return out
}

// Learn makes l what from says a learner had learned, replacing what it
// holds: it then places by the same mix, and renews, decays and weighs
// as the learner that wrote from would have. Policies following l see a
// renewal. It refuses what no learner writes (negative or non-finite
// weights, a shape twice, counts out of order), changing nothing.
func (l *Learner) Learn(from Learned) error {
	if err := from.check(); err != nil {
		return err
	}
	est := newMixLearner(l.est.halfLife, l.est.percent)
	est.seen = from.Seen
	for i, s := range from.Shapes {
		est.index[s.key()] = i
		est.groups = append(est.groups, learned{t: s.typical(), weight: s.Weight})
	}
	l.est, l.renewed = est, from.Renewed
	l.mix, l.all = mixOf(from.Mix), mixOf(from.All)
	l.version++
	return nil
}

func (from Learned) check() error {
	if from.Seen < 0 || from.Renewed < 0 || from.Renewed > from.Seen {
		return fmt.Errorf("placement: learned mix: %d arrivals seen, renewed at %d", from.Seen, from.Renewed)
	}
	if from.Seen == 0 && len(from.Shapes) > 0 {
		return errors.New("placement: learned mix: shapes without arrivals")
	}
	seen := map[classKey]bool{}
	for _, s := range from.Shapes {
		if seen[s.key()] {
			return fmt.Errorf("placement: learned mix: shape %+v twice", s)
		}
		seen[s.key()] = true
	}
	for _, shapes := range [][]Shape{from.Shapes, from.Mix, from.All} {
		for _, s := range shapes {
			if s.Weight < 0 || math.IsNaN(s.Weight) || math.IsInf(s.Weight, 0) || s.CPUMilli < 0 || s.GPUMilli < 0 || s.NumGPU < 0 {
				return fmt.Errorf("placement: learned mix: shape %+v", s)
			}
		}
	}
	return nil
}

func (s Shape) key() classKey {
	return classKey{s.CPUMilli, s.GPUMilli, s.NumGPU, strings.Join(s.Models, "|")}
}

func (s Shape) typical() Typical {
	return Typical{CPUMilli: s.CPUMilli, GPUMilli: s.GPUMilli, NumGPU: s.NumGPU, Models: s.Models, Weight: s.Weight}
}

func shapeOf(t Typical) Shape {
	return Shape{CPUMilli: t.CPUMilli, GPUMilli: t.GPUMilli, NumGPU: t.NumGPU, Models: t.Models, Weight: t.Weight}
}

func shapesOf(m Mix) []Shape {
	if m == nil {
		return nil
	}
	out := make([]Shape, len(m))
	for i, t := range m {
		out[i] = shapeOf(t)
	}
	return out
}

func mixOf(shapes []Shape) Mix {
	if shapes == nil {
		return nil
	}
	out := make(Mix, len(shapes))
	for i, s := range shapes {
		out[i] = s.typical()
	}
	return out
}
