package sched

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Defrag lets the first unit that waits for room start by moving small
// checkpointing units out of its way when the free GPUs it needs are
// there, only scattered (Config.Defrag). The rule, once every unit was
// considered and nothing taken back from elastic units made room:
//   - the unit holds a reservation with a known time, the cycle stops no
//     running work, and the fleet has as many GPUs free as it asks for;
//   - a movable unit checkpoints, runs on one node, holds fewer GPUs than
//     the waiting unit asks for, has started, is not stopping, and was not
//     stopped Config.MaxPreemptions times before;
//   - nodes are taken in order of the GPUs that cannot move there (fewest
//     first), then of the work their movable units would lose, at most
//     MaxNodes of them, until the unit fits once their movable units are
//     gone;
//   - the GPU-hours the unit gains by starting now rather than at its
//     reservation must exceed what the moved units lose (stopCost, or
//     only the restart with Config.Grace), and the moves must stay within
//     Moves.
//
// The moved units are preempted for it (Preempt.Move); as many GPUs are
// free as it asks for, so they usually restart at once in the scattered
// room it did not need.
type Defrag struct {
	// Moves is how many units may be moved now: a face's bound per hour,
	// less those it moved in the last hour.
	Moves int
	// MaxNodes bounds the nodes emptied for one unit; 0: DefaultDefragNodes.
	MaxNodes int
}

// DefaultDefragNodes is the default bound on the nodes emptied for one
// unit.
const DefaultDefragNodes = 16

// DefragWait is, for a unit that waits for units moved out of its way,
// what it gains by starting now and what they lose, in GPU-hours.
type DefragWait struct {
	Moved      []string
	GainGPUH   float64
	LostGPUH   float64
	ReservedAt time.Time // when it would have started without the moves
}

// defragment moves small units out of the way of the i-th waiting unit
// when the rule above allows.
func (c *cycle) defragment(i int) {
	cfg := c.snap.Config.Defrag
	if cfg == nil || len(c.out.Preempts) > 0 {
		return
	}
	w := c.out.Waiting[i]
	u := c.pendingUnit(w.Unit)
	if u == nil {
		return
	}
	need := float64(c.snap.State.LeastMilli(u.Job)) / 1000
	if float64(c.snap.State.FreeMilli())/1000 < need-1e-9 {
		return // GPUs are short, not scattered
	}
	at := w.Estimate
	if !w.Held {
		r, _ := c.reservation(u)
		at = r.At
	}
	if at.IsZero() {
		return // no estimate of what waiting costs
	}
	gain := need * at.Sub(c.snap.Now).Hours()
	victims, lost := c.movablePlan(u, need, cmp.Or(cfg.MaxNodes, DefaultDefragNodes))
	switch {
	case victims == nil:
		return
	case lost >= gain:
		note := fmt.Sprintf("; moving %d small units would lose %.1f GPU-h to gain %.1f", len(victims), lost, gain)
		c.out.Waiting[i].Then += note
		c.out.Waiting[i].Reason += note
	case len(victims) <= cfg.Moves:
		c.dropWait(i)
		c.move(u, w, &DefragWait{Moved: victims, GainGPUH: gain, LostGPUH: lost, ReservedAt: at})
	}
}

// move stops the units m names to move them out of u's way; u, which
// waited as w, now waits for them.
func (c *cycle) move(u *Unit, w Wait, m *DefragWait) {
	for _, v := range m.Moved {
		c.stopping[v] = true
		c.out.Preempts = append(c.out.Preempts, Preempt{Victim: v, For: u.Job.Name, Move: true, Grace: c.snap.Config.Grace})
	}
	c.reserve(u, Reservation{Unit: u.Job.Name, At: c.snap.Now, Releasing: m.Moved})
	then := fmt.Sprintf("moving %d small units out of its way: it gains %.1f GPU-h, they lose %.1f", len(m.Moved), m.GainGPUH, m.LostGPUH)
	c.waitUnfit(u, CodePreempting, unfitWhy{unfit: w.Unfit, text: w.Cause}, then)
	c.out.Waiting[len(c.out.Waiting)-1].Defrag = m
}

// movablePlan picks the nodes whose movable units, once gone, let u fit
// (the rule above). It returns the units to move, by name, and the
// GPU-hours they lose; nil if no such set of at most maxNodes nodes
// exists.
func (c *cycle) movablePlan(u *Unit, need float64, maxNodes int) ([]string, float64) {
	type candidate struct {
		units []string
		stuck float64 // GPUs held by what cannot move
		lost  float64
	}
	owner := c.partOwners()
	st := c.snap.State
	var cands []candidate
	for _, node := range st.Fleet().Nodes {
		if !node.Schedulable() {
			continue
		}
		var cand candidate
		movable := true
		for _, part := range st.Affected(node.Name) {
			r := c.runningUnit(owner[part])
			if r == nil || !c.movable(r, need) {
				cand.stuck += float64(st.PlacedMilli(st.Job(part))) / 1000
				movable = false
				continue
			}
			cand.units = append(cand.units, r.Name)
			cand.lost += c.moveCost(*r)
		}
		if len(cand.units) > 0 || movable {
			cands = append(cands, cand)
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.stuck, b.stuck), cmp.Compare(a.lost, b.lost))
	})
	seen := map[string]bool{}
	var chosen []string
	lost := 0.0
	for _, cand := range cands[:min(len(cands), maxNodes)] {
		for _, name := range cand.units {
			if !seen[name] {
				seen[name] = true
				chosen = append(chosen, name)
				lost += c.moveCost(*c.runningUnit(name))
			}
		}
		if len(chosen) > 0 && c.fitsWithout(chosen, u) {
			slices.Sort(chosen)
			return chosen, lost
		}
	}
	return nil, 0
}

// movable reports whether r may be moved for a unit asking for need GPUs.
func (c *cycle) movable(r *Running, need float64) bool {
	most := c.snap.Config.maxPreemptions()
	if r.CheckpointEvery <= 0 || r.GPUs >= need || c.snap.Now.Before(r.Started) || c.stopping[r.Name] || most > 0 && r.Preemptions >= most {
		return false
	}
	node := -1
	for _, part := range c.parts([]string{r.Name}) {
		p := c.snap.State.Job(part)
		if p == nil {
			return false
		}
		for _, t := range p.Tasks {
			if node >= 0 && t.Node != node {
				return false
			}
			node = t.Node
		}
	}
	return true
}

// moveCost is what moving r loses: its restart, and without a grace
// period its work since its last checkpoint.
func (c *cycle) moveCost(r Running) float64 {
	if c.snap.Config.Grace > 0 {
		return r.GPUs * RestartCost.Hours()
	}
	return c.stopCost(r)
}

// partOwners maps every placed part of a running unit to the unit.
func (c *cycle) partOwners() map[string]string {
	owner := make(map[string]string, len(c.snap.Running))
	for _, r := range c.snap.Running {
		if len(r.Parts) == 0 {
			owner[r.Name] = r.Name
		}
		for _, p := range r.Parts {
			owner[p] = r.Name
		}
	}
	return owner
}
