package sched

import (
	"slices"
	"sort"
	"strings"
)

// Elastic units (job.Job.Elastic) start with as few tasks as their
// MinMember allows and run at any size up to their full one. The cycle
// resizes them by one rule, in every face that sets Running.Grow:
//   - grow: when no unit waits, each running elastic unit below its full
//     size (Running.Grow), in name order, adds as many of the tasks it
//     runs without as fit now (Decisions.Grows);
//   - give back: what they grew by is surplus lent while nothing waited,
//     so the first unit that waits for room takes it back when that lets
//     it start now: the grown parts, newest first per unit and units in
//     name order, the fewest that make room (Decisions.GiveBacks), unless
//     the cycle stopped running work, whose end it waits for instead
//     (makeRoomForFirst).
//
// Growth is tried again only when something changed since the last try
// (Snapshot.GrowKept).

// makeRoomForFirst lets the first unit that waits for room start now,
// once every unit has been considered: on what elastic units grew by, or
// else by moving small units out of its way (defrag.go). Neither is tried
// while the cycle stops running work: the room it frees comes first.
func (c *cycle) makeRoomForFirst() {
	if len(c.out.Preempts) > 0 {
		return
	}
	i := slices.IndexFunc(c.out.Waiting, func(w Wait) bool { return w.Code == CodeCapacity })
	if i >= 0 && !c.takeBack(i) {
		c.defragment(i)
	}
}

// takeBack lets the i-th waiting unit start on what elastic units grew by;
// it reports whether it started.
func (c *cycle) takeBack(i int) bool {
	if !c.elastic {
		return false
	}
	parts, owner := c.grownParts()
	if len(parts) == 0 {
		return false
	}
	u := c.pendingUnit(c.out.Waiting[i].Unit)
	st := c.snap.State
	if u == nil || !st.WhatIf(parts, u.Job) {
		return false
	}
	k := sort.Search(len(parts), func(k int) bool { return st.WhatIf(parts[:k+1], u.Job) }) + 1
	for _, part := range parts[:k] {
		p := st.Job(part)
		c.undo(part)
		c.out.GiveBacks = append(c.out.GiveBacks, GiveBack{Unit: owner[part], Part: part, For: u.Job.Name, Placement: p})
	}
	if !c.admissibleNow(u) {
		return false // the room is given back all the same, as the cycle found it
	}
	p, ok := st.TryPlace(u.Job)
	if !ok || c.startPlaced(u, p) != nil {
		return false
	}
	c.dropWait(i)
	return true
}

// grownParts lists the parts running elastic units grew by, newest first
// per unit and units in name order, and the unit each belongs to.
func (c *cycle) grownParts() ([]string, map[string]string) {
	var grown []*Running
	for i := range c.snap.Running {
		if r := &c.snap.Running[i]; len(r.Grown) > 0 {
			grown = append(grown, r)
		}
	}
	slices.SortFunc(grown, func(a, b *Running) int { return strings.Compare(a.Name, b.Name) })
	var parts []string
	owner := map[string]string{}
	for _, r := range grown {
		for i := len(r.Grown) - 1; i >= 0; i-- {
			parts = append(parts, r.Grown[i])
			owner[r.Grown[i]] = r.Name
		}
	}
	return parts, owner
}

// grow adds tasks to running elastic units below their full size, in name
// order, as far as the fleet allows; only when no unit waits.
func (c *cycle) grow() {
	if !c.elastic || len(c.out.Waiting) > 0 || len(c.out.GiveBacks) > 0 || c.snap.GrowKept && len(c.out.Starts) == 0 {
		return // a unit waits, or nothing changed since the last try
	}
	var growable []*Running
	for i := range c.snap.Running {
		if r := &c.snap.Running[i]; r.Grow != nil {
			growable = append(growable, r)
		}
	}
	slices.SortFunc(growable, func(a, b *Running) int { return strings.Compare(a.Name, b.Name) })
	for _, r := range growable {
		if p, ok := c.snap.State.TryPlace(r.Grow); ok {
			c.out.Grows = append(c.out.Grows, Grow{Unit: r.Name, Placement: p})
		}
	}
}

// admissibleNow reports whether u's queue admits it now: within its own
// quota while it may not borrow, and within what the Book allows.
func (c *cycle) admissibleNow(u *Unit) bool {
	if c.snap.Book == nil || u.Queue == "" {
		return true
	}
	if c.snap.Now.Before(u.NoBorrowUntil) && !c.withinNominal(u) {
		return false
	}
	return c.snap.Book.CanAdmit(u.Queue, u.Need) == nil
}

// dropWait takes the i-th wait out of the decisions, with the reservation
// its unit held: the unit starts after all.
func (c *cycle) dropWait(i int) {
	name := c.out.Waiting[i].Unit
	c.out.Waiting = slices.Delete(c.out.Waiting, i, i+1)
	c.out.Reservations = slices.DeleteFunc(c.out.Reservations, func(r Reservation) bool { return r.Unit == name })
	c.heads = slices.DeleteFunc(c.heads, func(h *head) bool { return h.unit.Job.Name == name })
}

// pendingUnit is the named pending unit, nil if none.
func (c *cycle) pendingUnit(name string) *Unit {
	for i := range c.snap.Pending {
		if c.snap.Pending[i].Job.Name == name {
			return &c.snap.Pending[i]
		}
	}
	return nil
}
