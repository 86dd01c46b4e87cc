package gpu

import (
	"fmt"
	"math/bits"
	"slices"
)

// Change says how to host one task of a profile on a GPU. Exactly one of
// Use and Create is set (>= 0); Delete goes only with Create. Use indexes
// the Instances of the layout the change was planned on.
type Change struct {
	Use    int   // index in Instances of an existing idle instance of the profile to use, or -1
	Create int   // start slice of a new instance of the profile to create, or -1
	Delete []int // starts of idle instances to destroy first (dynamic reconfiguration), sorted
}

var noChange = Change{Use: -1, Create: -1}

// Plan returns how to host one task of profile p on this GPU; ok is false
// when that is impossible.
//
// Static (dynamic=false): only an existing idle instance of p may be used.
// Dynamic: prefer an existing idle instance of p; else create p in slices
// no instance occupies; else destroy the fewest idle instances (never a busy
// one) so that p fits, then create it.
//
// Among equal options Plan keeps the most room for future instances: it
// maximizes, for each profile from the largest down, the number of starts
// where a new instance could go now, then the same counting only busy
// instances (what later reconfiguration could reach); then it takes the
// lowest start, then the lexicographically first deletion list.
func (l Layout) Plan(p int, dynamic bool) (Change, bool) {
	if !l.hasProfile(p) {
		return noChange, false
	}
	if c, ok := l.planUse(p); ok {
		return c, true
	}
	if !dynamic {
		return noChange, false
	}
	idle := l.idleIndexes(func(Instance) bool { return true })
	for k := 0; k <= len(idle); k++ {
		if c, ok := l.planCreate(p, idle, k); ok {
			return c, true
		}
	}
	return noChange, false
}

// planUse picks the idle instance of p whose use keeps the most room.
func (l Layout) planUse(p int) (Change, bool) {
	var best candidate
	use := -1
	for i, in := range l.Instances {
		if in.Profile != p || in.Busy {
			continue
		}
		ins := slices.Clone(l.Instances)
		ins[i].Busy = true
		c := candidate{start: in.Start, room: usageOf(l.Model, ins).room(l.Model)}
		if use < 0 || c.beats(best) {
			best, use = c, i
		}
	}
	return Change{Use: use, Create: -1}, use >= 0
}

// planCreate picks the best way to create p after destroying exactly k of
// the idle instances at indexes idle.
func (l Layout) planCreate(p int, idle []int, k int) (Change, bool) {
	var best candidate
	found := false
	for set := range uint(1) << len(idle) {
		if bits.OnesCount(set) != k {
			continue
		}
		drop := subset(idle, set)
		for _, c := range l.creations(p, drop) {
			if !found || c.beats(best) {
				best, found = c, true
			}
		}
	}
	return Change{Use: -1, Create: best.start, Delete: best.del}, found
}

// creations lists the ways to create p once the instances at indexes drop
// are destroyed.
func (l Layout) creations(p int, drop []int) []candidate {
	u := usageOf(l.Model, without(l.Instances, drop))
	var del []int
	for _, i := range drop {
		del = append(del, l.Instances[i].Start)
	}
	var out []candidate
	for _, s := range l.Model.Profiles[p].Starts {
		if !u.fits(l.Model, p, s) {
			continue
		}
		after := u
		after.add(l.Model, Instance{Profile: p, Start: s, Busy: true})
		out = append(out, candidate{start: s, del: del, room: after.room(l.Model)})
	}
	return out
}

// candidate is one way to host a task, with the room it leaves.
type candidate struct {
	start int
	del   []int
	room  []int
}

func (c candidate) beats(o candidate) bool {
	if d := slices.Compare(c.room, o.room); d != 0 {
		return d > 0
	}
	if c.start != o.start {
		return c.start < o.start
	}
	return slices.Compare(c.del, o.del) < 0
}

// room scores what u leaves for future instances: for each profile, the
// largest first, how many starts could take a new instance now; then the
// same counting only busy instances.
func (u usage) room(m *Model) []int {
	now := usage{held: u.held, compute: u.compute}
	later := usage{held: u.busy, compute: u.busyCompute}
	r := make([]int, 0, 2*len(m.Profiles))
	for _, v := range []usage{now, later} {
		for q := len(m.Profiles) - 1; q >= 0; q-- {
			r = append(r, v.placements(m, q))
		}
	}
	return r
}

// placements counts the starts where one new instance of p would fit.
func (u usage) placements(m *Model, p int) int {
	n := 0
	for _, s := range m.Profiles[p].Starts {
		if u.fits(m, p, s) {
			n++
		}
	}
	return n
}

// mostNew counts the new instances of p that fit at once. All of p's
// instances span the same number of slices, so taking each start in
// ascending order whenever it fits is optimal (as in interval scheduling);
// fits also stops it when compute runs out.
func (u usage) mostNew(m *Model, p int) int {
	n := 0
	for _, s := range m.Profiles[p].Starts {
		if u.fits(m, p, s) {
			u.add(m, Instance{Profile: p, Start: s})
			n++
		}
	}
	return n
}

// Apply performs a change for a task of profile p and marks the used or
// created instance busy. It returns an error, leaving l as it was, if the
// change is invalid: it would use or destroy a busy instance, use one of
// another profile, or create an instance at an invalid start, overlapping
// another, or beyond the compute slices.
func (l *Layout) Apply(p int, c Change) error {
	next, err := l.applied(p, c)
	if err != nil {
		return fmt.Errorf("gpu: apply %+v for %s to %q: %w", c, l.profileName(p), l, err)
	}
	*l = next
	return nil
}

func (l Layout) applied(p int, c Change) (Layout, error) {
	switch {
	case !l.hasProfile(p):
		return Layout{}, fmt.Errorf("no profile %d", p)
	case c.Use >= 0 && (c.Create >= 0 || len(c.Delete) > 0):
		return Layout{}, fmt.Errorf("a change uses an instance or creates one, not both")
	case c.Use >= 0:
		return l.use(p, c.Use)
	case c.Create >= 0:
		return l.create(p, c.Create, c.Delete)
	}
	return Layout{}, fmt.Errorf("a change must use or create an instance")
}

func (l Layout) use(p, i int) (Layout, error) {
	if i >= len(l.Instances) {
		return Layout{}, fmt.Errorf("no instance %d", i)
	}
	in := l.Instances[i]
	name := l.profileName(in.Profile) + "@" + fmt.Sprint(in.Start)
	switch {
	case in.Profile != p:
		return Layout{}, fmt.Errorf("instance %s is not a %s", name, l.profileName(p))
	case in.Busy:
		return Layout{}, fmt.Errorf("instance %s is busy", name)
	}
	next := l.Clone()
	next.Instances[i].Busy = true
	return next, nil
}

func (l Layout) create(p, start int, del []int) (Layout, error) {
	next := l.Clone()
	for _, s := range del {
		i := next.find(s)
		switch {
		case i < 0:
			return Layout{}, fmt.Errorf("no instance to destroy at slice %d", s)
		case next.Instances[i].Busy:
			return Layout{}, fmt.Errorf("would destroy busy instance at slice %d", s)
		}
		next.Instances = slices.Delete(next.Instances, i, i+1)
	}
	next.insert(Instance{Profile: p, Start: start, Busy: true})
	if err := next.checkInstances(); err != nil {
		return Layout{}, err
	}
	return next, nil
}

// Capacity returns the most tasks of profile p that could be added to this
// layout at once. Static: the idle instances of p. Dynamic: also the most
// new instances of p that fit once idle instances are destroyed.
func (l Layout) Capacity(p int, dynamic bool) int {
	if !l.hasProfile(p) {
		return 0
	}
	idleP := l.idleIndexes(func(in Instance) bool { return in.Profile == p })
	if !dynamic {
		return len(idleP)
	}
	// Destroying an idle instance of another profile never costs a task, so
	// all are destroyed. An idle instance of p is worth one task; the subset
	// search tries giving some up for room (which never pays with the
	// catalog's aligned starts, but is exact in general and cheap).
	busy := l.busyIndexes()
	best := 0
	for set := range uint(1) << len(idleP) {
		kept := subset(idleP, set)
		ins := append(pick(l.Instances, busy), pick(l.Instances, kept)...)
		best = max(best, len(kept)+usageOf(l.Model, ins).mostNew(l.Model, p))
	}
	return best
}

// idleIndexes returns, ascending, the indexes of the idle instances that
// keep accepts.
func (l Layout) idleIndexes(keep func(Instance) bool) []int {
	var out []int
	for i, in := range l.Instances {
		if !in.Busy && keep(in) {
			out = append(out, i)
		}
	}
	return out
}

// busyIndexes returns, ascending, the indexes of the busy instances.
func (l Layout) busyIndexes() []int {
	var out []int
	for i, in := range l.Instances {
		if in.Busy {
			out = append(out, i)
		}
	}
	return out
}

// subset returns the elements of idx picked by the bits of set.
func subset(idx []int, set uint) []int {
	var out []int
	for b, i := range idx {
		if set&(1<<b) != 0 {
			out = append(out, i)
		}
	}
	return out
}

// pick returns the instances at the given indexes.
func pick(ins []Instance, idx []int) []Instance {
	out := make([]Instance, len(idx))
	for k, i := range idx {
		out[k] = ins[i]
	}
	return out
}

// without returns the instances not at the given (ascending) indexes.
func without(ins []Instance, idx []int) []Instance {
	out := make([]Instance, 0, len(ins))
	for i, in := range ins {
		if _, drop := slices.BinarySearch(idx, i); !drop {
			out = append(out, in)
		}
	}
	return out
}
