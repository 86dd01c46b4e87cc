package sched

import (
	"cmp"
	"slices"
	"strings"
	"time"
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
// victims are taken: lowest priority first, then those that lose the least
// work, then the most recently started, then by name.
func (c *cycle) candidates(u *Unit) []Running {
	var out []Running
	for _, r := range c.snap.Running {
		if c.victim(r) && c.outranks(u, r) {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Running) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), c.cheaper(a, b))
	})
	return out[:min(len(out), maxCandidates)]
}

// outranks reports whether u's priority lets it stop r: r's is lower,
// and, with Config.PriorityWithinQueue, r is of u's own queue.
func (c *cycle) outranks(u *Unit, r Running) bool {
	return r.Priority < u.Job.Priority && (!c.snap.Config.PriorityWithinQueue || r.Queue == u.Queue)
}

// victim reports whether r may be stopped: it is preemptible, not already
// stopping, and was not stopped Config.MaxPreemptions times before.
func (c *cycle) victim(r Running) bool {
	most := c.snap.Config.maxPreemptions()
	return r.Preemptible && !c.stopping[r.Name] && (most == 0 || r.Preemptions < most)
}

// cheaper orders running units for stopping: the fewest GPU-hours lost
// first (stopCost), then the most recently started, then by name.
func (c *cycle) cheaper(a, b Running) int {
	return cmp.Or(cmp.Compare(c.stopCost(a), c.stopCost(b)), b.Started.Compare(a.Started), strings.Compare(a.Name, b.Name))
}

// RestartCost is what stopping a unit costs beyond its lost work: loading
// the model and the checkpoint again. It keeps the cycle from stopping a
// large gang that has just checkpointed to make room for one small task.
const RestartCost = 5 * time.Minute

// stopCost is the GPU-hours r loses if stopped now: its work since its
// last checkpoint (Running.LastCheckpoint when known, else the last
// periodic one; all of it, when it does not checkpoint), and a restart.
func (c *cycle) stopCost(r Running) float64 {
	elapsed := max(c.snap.Now.Sub(r.Started), 0)
	switch every := r.CheckpointEvery; {
	case r.LastCheckpoint.After(r.Started):
		elapsed = max(c.snap.Now.Sub(r.LastCheckpoint), 0)
	case every > 0:
		elapsed -= elapsed / every * every
	}
	return r.GPUs * (elapsed + RestartCost).Hours()
}

// withinBudget reports whether n more stops stay within the cycle's
// preemption budget.
func (c *cycle) withinBudget(n int) bool {
	b := c.snap.Config.PreemptionBudget
	return b <= 0 || len(c.out.Preempts)+n <= b
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
	victims := c.minimise(u, names[:k])
	if !c.withinBudget(len(victims)) {
		return false
	}
	c.stopFor(u, victims)
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
		c.out.Preempts = append(c.out.Preempts, Preempt{Victim: v, For: u.Job.Name, Grace: c.snap.Config.Grace})
	}
	c.reserve(u, Reservation{Unit: u.Job.Name, At: c.snap.Now, Releasing: victims})
}
