package sched

import (
	"cmp"
	"slices"
	"strings"
)

// mayPreempt reports whether preemption could make room for u: it is on,
// and some running unit of lower priority may be stopped.
func (c *cycle) mayPreempt(u *Unit) bool {
	return c.snap.Config.Preemption && len(c.candidates(u)) > 0
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
	slices.SortStableFunc(out, func(a, b Running) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), b.Started.Compare(a.Started), strings.Compare(a.Name, b.Name))
	})
	return out
}

// preempt chooses the fewest candidates, in victim order, whose end lets u
// fit, records them as preempted for u and u's reservation over them;
// false when preemption is off or cannot make room.
func (c *cycle) preempt(u *Unit) bool {
	if !c.snap.Config.Preemption {
		return false
	}
	cands := c.candidates(u)
	names := make([]string, len(cands))
	for i, r := range cands {
		names[i] = r.Name
	}
	fits := func(k int) bool { return c.snap.State.WhatIf(names[:k], u.Job) }
	if len(names) == 0 || !fits(len(names)) {
		return false
	}
	victims := names[:shortestPrefix(len(names), fits)]
	for _, v := range victims {
		c.stopping[v] = true
		c.out.Preempts = append(c.out.Preempts, Preempt{Victim: v, For: u.Job.Name})
	}
	c.reserve(u, Reservation{Unit: u.Job.Name, At: c.snap.Now, Releasing: victims})
	return true
}
