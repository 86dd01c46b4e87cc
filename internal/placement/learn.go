package placement

import (
	"maps"
	"math"
	"slices"
	"sort"
)

// Learner estimates the workload mix from arriving pods for corral's
// policy when the mix is not known in advance: a pod's weight halves every
// onlineHalfLife arrivals, and the estimate is renewed after onlineRefresh
// arrivals or a tenth of all arrivals so far, whichever is more. Whoever
// sees arrivals (a benchmark, the simulator, a face) calls Observe once per
// arrival; any number of Corral policies built on it follow its renewals.
type Learner struct {
	est     *mixLearner
	renewed int // arrivals seen at the last renewal
	version int // bumped at every renewal
	mix     Mix
	all     Mix
}

// NewLearner returns a learner that has seen nothing.
func NewLearner() *Learner {
	return &Learner{est: newMixLearner(onlineHalfLife, 95)}
}

// Observe learns from one arriving pod, placed or not.
func (l *Learner) Observe(pod *Pod) {
	l.est.observe(pod)
	if seen := l.est.seen; seen == 1 || seen-l.renewed >= max(onlineRefresh, seen/10) {
		l.renewed = seen
		l.mix = l.est.mix()
		l.all = l.est.all()
		l.version++
	}
}

// Seen is the number of arrivals observed.
func (l *Learner) Seen() int { return l.est.seen }

// mixLearner estimates the workload mix from the pods seen so far, giving
// recent pods more weight: each pod's weight halves every halfLife arrivals.
type mixLearner struct {
	halfLife float64
	percent  int
	seen     int
	index    map[classKey]int
	groups   []learned
}

type learned struct {
	t      Typical
	weight float64 // decayed count, in units of the latest arrival's weight
}

func newMixLearner(halfLife float64, percent int) *mixLearner {
	return &mixLearner{halfLife: halfLife, percent: percent, index: map[classKey]int{}}
}

// observe adds one arriving pod.
func (l *mixLearner) observe(p *Pod) {
	decay := math.Exp2(-1 / l.halfLife)
	for i := range l.groups {
		l.groups[i].weight *= decay
	}
	k := classKey{p.CPUMilli, p.GPUMilli, p.NumGPU, p.ModelSpec()}
	i, ok := l.index[k]
	if !ok {
		i = len(l.groups)
		l.index[k] = i
		l.groups = append(l.groups, learned{t: Typical{CPUMilli: p.CPUMilli, GPUMilli: p.GPUMilli, NumGPU: p.NumGPU, Models: p.Models}})
	}
	l.groups[i].weight++
	l.seen++
}

// mix is the current estimate: the most popular shapes covering percent of
// the decayed weight, renormalised.
func (l *mixLearner) mix() Mix {
	all := l.all()
	total := 0.0
	for _, t := range all {
		total += t.Weight
	}
	sort.SliceStable(all, func(i, j int) bool { return moreTypical(all[i], all[j]) })
	var mix Mix
	cum := 0.0
	for _, t := range all {
		if cum >= float64(l.percent)*total/100 {
			break
		}
		cum += t.Weight
		mix = append(mix, t)
	}
	for i := range mix {
		mix[i].Weight /= cum
	}
	return mix
}

// all is every shape seen with its decayed weight.
func (l *mixLearner) all() Mix {
	all := make(Mix, len(l.groups))
	for i, g := range l.groups {
		all[i] = g.t
		all[i].Weight = g.weight
	}
	return all
}

// Saved is a copy of what a learner has learned, for Restore.
type Saved struct{ l Learner }

// Save copies what the learner has learned so far.
func (l *Learner) Save() Saved {
	est := *l.est
	est.index = maps.Clone(l.est.index)
	est.groups = slices.Clone(l.est.groups)
	c := *l
	c.est = &est
	return Saved{l: c}
}

// Restore makes the learner what it was when saved was taken. A policy
// that followed a renewal made since sees a new renewal, so it never keeps
// a mix the learner no longer holds.
func (l *Learner) Restore(saved Saved) {
	version := l.version
	*l = saved.l
	est := *saved.l.est
	est.index = maps.Clone(saved.l.est.index)
	est.groups = slices.Clone(saved.l.est.groups)
	l.est = &est
	if version != saved.l.version {
		l.version = version + 1
	}
}
