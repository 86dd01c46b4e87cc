package sched

import (
	"cmp"
	"slices"
	"strings"
)

// maxCandidates bounds the running units a preemption looks at, lowest
// priority first, so that a cycle over a large cluster stays bounded.
const maxCandidates = 256

// mayPreempt reports whether preemption could make room for u: it is on,
// u may preempt, and some running unit of lower priority may be stopped.
func (c *cycle) mayPreempt(u *Unit) bool {
	return c.snap.Config.Preemption && !u.NeverPreempts && len(c.candidates(u)) > 0
}

// candidates are the running units that may be stopped for u, in the order
// victims are taken: lowest priority first, then the most recently started,
// then by name.
func (c *cycle) candidates(u *Unit) []Running {
	var out []Running
	for _, r := range c.snap.Running {
		if r.Preemptible && r.Priority < u.Job.Priority && !c.stopping[r.Name] {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, youngestFirst)
	return out[:min(len(out), maxCandidates)]
}

// youngestFirst orders running units for stopping: lowest priority, then
// the most recently started, then by name.
func youngestFirst(a, b Running) int {
	return cmp.Or(cmp.Compare(a.Priority, b.Priority), b.Started.Compare(a.Started), strings.Compare(a.Name, b.Name))
}

// preempt chooses victims among the candidates whose end lets u fit: the
// shortest run in victim order, then without any victim that turns out not
// to be needed. It records them as preempted for u and u's reservation
// over them; false when u may not preempt or preemption cannot make room.
func (c *cycle) preempt(u *Unit) bool {
	if !c.snap.Config.Preemption || u.NeverPreempts {
		return false
	}
	cands := c.candidates(u)
	names := make([]string, len(cands))
	for i, r := range cands {
		names[i] = r.Name
	}
	if len(names) == 0 || !c.fitsWithout(names, u) {
		return false
	}
	k := shortestPrefix(len(names), func(k int) bool { return c.fitsWithout(names[:k], u) })
	c.stopFor(u, c.minimise(u, names[:k]))
	return true
}

// minimise drops, last chosen first, every victim without which u still
// fits.
func (c *cycle) minimise(u *Unit, victims []string) []string {
	kept := slices.Clone(victims)
	for i := len(kept) - 2; i >= 0; i-- {
		without := slices.Delete(slices.Clone(kept), i, i+1)
		if c.fitsWithout(without, u) {
			kept = without
		}
	}
	return kept
}

// stopFor records victims as preempted for u, and u's reservation over
// them.
func (c *cycle) stopFor(u *Unit, victims []string) {
	for _, v := range victims {
		c.stopping[v] = true
		c.out.Preempts = append(c.out.Preempts, Preempt{Victim: v, For: u.Job.Name})
	}
	c.reserve(u, Reservation{Unit: u.Job.Name, At: c.snap.Now, Releasing: victims})
}
