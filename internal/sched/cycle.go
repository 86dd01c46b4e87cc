package sched

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// cycle is the working state of one Cycle call.
type cycle struct {
	snap      *Snapshot
	out       Decisions
	heads     []*head             // units holding reservations, in order
	reserved  int                 // heads that wait for room (not for victims)
	estimated int                 // waiting units given an estimate without a reservation
	failed    map[string]bool     // shapes that found no room this cycle
	stopping  map[string]bool     // running units stopping or chosen to stop
	running   map[string]*Running // by name, built by runningUnit
	// victimsOf lists, per unit, the running units stopping for it, by name.
	victimsOf map[string][]string
	// quotaHeld names, per queue, the unit whose quota is being freed: no
	// other unit of the queue is admitted this cycle.
	quotaHeld map[string]string
	attempts  int
	// reclaimAsked: a unit asked to reclaim lent quota this cycle.
	reclaimAsked bool
	// quotaTried: queues for whose units a quota reservation was sought in
	// vain this cycle; their other units do not search again.
	quotaTried  map[string]bool
	sortedByEnd []Running // the running units by estimated end, once sorted
	sortedNames []string  // their names
	endParts    []string  // their placed jobs, flattened (byEndParts)
	endEnds     []int     // where each unit's end in endParts
	// budgets is what each account used and committed, summed on first
	// use and grown by the units started; budgetNeed what a unit that
	// passed the budget check would commit, by name.
	budgets    map[string]budgetUse
	budgetNeed map[string]float64
	// prices is the highest price per GPU-hour a unit may pay, by the
	// models it allows (dollar budgets), found once per cycle.
	prices map[string]unitPrice
	models []string // the fleet's GPU models (modelcap.go)
	// elastic: some running unit may grow or give back (elastic.go).
	elastic bool
}

// head is a waiting unit with a reservation.
type head struct {
	unit  *Unit
	resv  Reservation
	nodes []string // where it would be placed once resv's units end; nil: not computed yet
	quota bool     // it waits for quota too: later units may not take what it needs
}

// Cycle decides what starts now, what is preempted for whom, and why the
// rest waits:
//  1. order the pending units: those that running units are already
//     stopping for first (the room they free is theirs), then units with
//     no queue by priority and arrival, then queued units in the Book's
//     fair-share order of queues, each queue's units in its own order;
//  2. a unit that would overrun its account's budget (budget.go), or
//     whose queue has no quota left, waits, without costing an attempt,
//     so one queue's backlog never hides another queue's work;
//  3. a unit that fits is placed; it starts unless that would delay a unit
//     holding a reservation (backfill keeps every reservation);
//  4. a unit that does not fit may preempt lower-priority work, and the
//     first units that do not fit hold reservations: the running units
//     whose end lets them fit, by estimated end.
//
// The snapshot's State and Book end up holding exactly the started units.
func Cycle(snap *Snapshot) Decisions {
	c := &cycle{snap: snap, failed: map[string]bool{}, stopping: map[string]bool{}, quotaHeld: map[string]string{}, quotaTried: map[string]bool{}}
	c.victimsOf = map[string][]string{}
	c.budgets, c.budgetNeed = map[string]budgetUse{}, map[string]float64{}
	for i := range snap.Running {
		r := &snap.Running[i]
		if r.StoppingFor != "" {
			c.stopping[r.Name] = true
			c.victimsOf[r.StoppingFor] = append(c.victimsOf[r.StoppingFor], r.Name)
		}
		c.elastic = c.elastic || r.Grow != nil || len(r.Grown) > 0
	}
	for _, v := range c.victimsOf {
		slices.Sort(v)
	}
	for _, u := range c.order() {
		c.consider(u)
	}
	c.makeRoomForFirst()
	c.grow()
	return c.out
}

// consider decides one unit.
func (c *cycle) consider(u *Unit) {
	name := u.Job.Name
	switch {
	case u.Blocked != "" && len(u.Freeing) == 0:
		c.wait(u, CodeBlocked, u.Blocked)
		return
	case c.overBudget(u), c.overQuota(u), c.overModelCaps(u):
		return
	case u.Blocked != "":
		c.free(u)
		return
	}
	victims := c.stoppingFor(name)
	key := shapeKey(u)
	if len(victims) == 0 && c.failed[key] && !c.mayPreempt(u) {
		c.wait(u, CodeCapacity, "waiting for room: a unit of the same shape found none this cycle")
		return
	}
	if c.attempts >= c.attemptLimit() {
		c.wait(u, CodeNotConsidered, "not considered this cycle: its attempts ran out; the next cycle will")
		return
	}
	c.attempts++
	p, why := c.place(u)
	if p != nil {
		c.placed(u, p)
		return
	}
	c.failed[key] = true
	c.unfit(u, victims, why)
}

// unfitWhy is why a unit did not fit: the core's codes with counts (nil
// under Config.Terse) and its words.
type unfitWhy struct {
	unfit *gang.Unfit
	text  string
}

// place places u on the fleet, or says why it does not fit (tersely under
// Config.Terse).
func (c *cycle) place(u *Unit) (*gang.Placement, unfitWhy) {
	if c.snap.Config.Terse {
		if p, ok := c.snap.State.TryPlace(u.Job); ok {
			return p, unfitWhy{}
		}
		return nil, unfitWhy{text: "not enough room on the fleet now"}
	}
	p, unfit := c.snap.State.Place(u.Job)
	if unfit != nil {
		return nil, unfitWhy{unfit: unfit, text: unfit.String()}
	}
	return p, unfitWhy{}
}

// overQuota reports, and records, that u's queue cannot admit it now.
func (c *cycle) overQuota(u *Unit) bool {
	if c.snap.Book == nil || u.Queue == "" {
		return false
	}
	if holder := c.quotaHeld[u.Queue]; holder != "" {
		c.wait(u, CodeQuota, fmt.Sprintf("queue %s: its quota is held for %s, for which running work is stopping", u.Queue, holder))
		return true
	}
	if c.snap.Now.Before(u.NoBorrowUntil) && !c.withinNominal(u) {
		c.wait(u, CodeQuota, fmt.Sprintf("queue %s: it may not borrow until %s, after it was preempted to give quota back, and its own quota is used",
			u.Queue, u.NoBorrowUntil.UTC().Format(time.RFC3339)))
		return true
	}
	err := c.snap.Book.CanAdmit(u.Queue, u.Need)
	if err == nil {
		return false
	}
	cause, then := fmt.Sprintf("queue %s: %v", u.Queue, err), ""
	switch victims := c.stoppingFor(u.Job.Name); {
	case len(victims) > 0 || u.Claimed:
		c.reserve(u, Reservation{Unit: u.Job.Name, Releasing: victims})
		c.quotaHeld[u.Queue] = u.Job.Name
		then = "; waiting for the work stopped for it"
	default:
		then = c.makeQuotaRoom(u)
		if c.quotaHeld[u.Queue] == "" {
			then += c.reserveQuota(u)
		}
	}
	c.wait(u, CodeQuota, cause+then)
	w := &c.out.Waiting[len(c.out.Waiting)-1]
	w.Cause, w.Then = cause, strings.TrimPrefix(then, "; ")
	errors.As(err, &w.Quota)
	w.Reclaim = c.reclaimWait(u)
	return true
}

// makeQuotaRoom stops work to free quota for u — lent quota first, then
// its own queue's lower-priority work — and holds its queue's quota for
// it; it says what it did, or nothing.
func (c *cycle) makeQuotaRoom(u *Unit) string {
	if victims, ok := c.reclaim(u); ok {
		c.quotaHeld[u.Queue] = u.Job.Name
		return "; " + reclaimNote(u.Queue, victims)
	}
	if victims, ok := c.preemptInQueue(u); ok {
		c.quotaHeld[u.Queue] = u.Job.Name
		return "; preempting its queue's lower-priority " + strings.Join(victims, ", ")
	}
	return ""
}

// placed starts u, just placed as p, unless it would delay a reservation;
// then it is lifted again and waits.
func (c *cycle) placed(u *Unit, p *gang.Placement) {
	if h := c.delayed(u); h != nil {
		c.undo(u.Job.Name)
		if p = c.placeAround(u); p == nil {
			c.wait(u, CodeReserved, fmt.Sprintf("fits, but starting it would delay %s, which holds a reservation", h.unit.Job.Name))
			return
		}
	}
	if err := c.startPlaced(u, p); err != nil {
		c.wait(u, CodeQuota, fmt.Sprintf("queue %s: %v", u.Queue, err))
		errors.As(err, &c.out.Waiting[len(c.out.Waiting)-1].Quota)
	}
}

// startPlaced starts u, placed as p, charging its queue; when the queue
// refuses, p is lifted again and the refusal returned.
func (c *cycle) startPlaced(u *Unit, p *gang.Placement) error {
	start := Start{Unit: u, Placement: p, Backfill: len(c.heads) > 0}
	if c.snap.Book != nil && u.Queue != "" {
		need := u.Need
		if c.snap.Config.Charge != nil {
			need = c.snap.Config.Charge(p)
		}
		adm, err := c.snap.Book.Admit(u.Queue, need)
		if err != nil {
			c.undo(u.Job.Name)
			return err
		}
		start.Admission = adm
	}
	c.budgetStarted(u)
	c.out.Starts = append(c.out.Starts, start)
	return nil
}

// unfit handles a unit that does not fit now: it waits for the victims
// already stopping for it, or for other stopping units whose end is
// enough, or preempts, or holds a reservation.
func (c *cycle) unfit(u *Unit, victims []string, why unfitWhy) {
	stopping := c.stoppingUnits()
	switch {
	case len(victims) > 0:
		c.reserve(u, Reservation{Unit: u.Job.Name, Releasing: victims})
		c.waitUnfit(u, CodePreempting, why, "waiting for "+strings.Join(victims, ", ")+" to stop")
	case len(stopping) > 0 && c.fitsWithout(stopping, u):
		c.reserve(u, Reservation{Unit: u.Job.Name, Releasing: stopping})
		c.waitUnfit(u, CodePreempting, why, fmt.Sprintf("waiting for %d stopping units to free their room", len(stopping)))
	case c.reclaimRoom(u, why):
	case c.preempt(u):
		c.waitUnfit(u, CodePreempting, why, "preempting lower-priority work to make room")
	default:
		c.waitForRoom(u, why)
	}
}

// reclaimRoom stops borrowers of u's lent quota when that makes room in
// the fleet for u, and says so; false when it does not.
func (c *cycle) reclaimRoom(u *Unit, why unfitWhy) bool {
	victims, ok := c.reclaim(u)
	if ok {
		c.waitUnfit(u, CodePreempting, why, reclaimNote(u.Queue, victims))
	}
	return ok
}

// waitUnfit records that u, which did not fit for why, waits; then says
// what the cycle does about it (empty: nothing).
func (c *cycle) waitUnfit(u *Unit, code Code, why unfitWhy, then string) {
	reason := why.text
	if then != "" {
		reason += "; " + then
	}
	c.wait(u, code, reason)
	w := &c.out.Waiting[len(c.out.Waiting)-1]
	w.Unfit, w.Cause, w.Then = why.unfit, why.text, then
}

// wait records why u did not start.
func (c *cycle) wait(u *Unit, code Code, reason string) {
	w := Wait{Unit: u.Job.Name, Code: code, Reason: reason}
	for _, h := range c.heads {
		if h.unit == u {
			w.Estimate, w.Held = h.resv.At, true
		}
	}
	c.out.Waiting = append(c.out.Waiting, w)
}

func (c *cycle) undo(name string) {
	if err := c.snap.State.Release(name); err != nil {
		panic(fmt.Sprintf("sched: release %s just placed: %v", name, err)) // a programmer error
	}
}

func (c *cycle) attemptLimit() int { return cmp.Or(c.snap.Config.Attempts, DefaultAttempts) }

// stoppingFor lists the running units stopping for the named unit, by name.
func (c *cycle) stoppingFor(name string) []string { return c.victimsOf[name] }

// fitsWithout reports whether u would fit if the named running units
// ended.
func (c *cycle) fitsWithout(names []string, u *Unit) bool {
	return c.snap.State.WhatIf(c.partsOf(names), u.Job)
}

// partsOf is parts(names), not built again when names is a prefix of the
// running units by estimated end (byEndNames, as every reservation's
// units are): their parts are listed once a cycle.
func (c *cycle) partsOf(names []string) []string {
	if k := len(names); k > 0 && len(c.sortedNames) >= k && &names[0] == &c.sortedNames[0] {
		parts, ends := c.byEndParts()
		return parts[:ends[k]:ends[k]]
	}
	return c.parts(names)
}

// byEndParts lists the placed jobs of the running units by estimated end,
// once a cycle: the first k units' are parts[:ends[k]].
func (c *cycle) byEndParts() (parts []string, ends []int) {
	if c.endEnds == nil {
		running := c.byEnd()
		c.endEnds = make([]int, len(running)+1)
		for i, r := range running {
			if len(r.Parts) > 0 {
				c.endParts = append(c.endParts, r.Parts...)
			} else {
				c.endParts = append(c.endParts, r.Name)
			}
			c.endEnds[i+1] = len(c.endParts)
		}
	}
	return c.endParts, c.endEnds
}

// parts lists the placed jobs of the named running units.
func (c *cycle) parts(names []string) []string {
	var out []string
	for _, n := range names {
		if r := c.runningUnit(n); r != nil && len(r.Parts) > 0 {
			out = append(out, r.Parts...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

// runningUnit is the named running unit, nil if none runs by that name;
// the index is built on first use, so a cycle that only places pays
// nothing for it.
func (c *cycle) runningUnit(name string) *Running {
	if c.running == nil {
		c.running = make(map[string]*Running, len(c.snap.Running))
		for i := range c.snap.Running {
			c.running[c.snap.Running[i].Name] = &c.snap.Running[i]
		}
	}
	return c.running[name]
}

// stoppingUnits lists the running units that are stopping, by name.
func (c *cycle) stoppingUnits() []string {
	var out []string
	for _, r := range c.snap.Running {
		if c.stopping[r.Name] {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out
}

// shapeKey is what placement depends on: units of one key fit alike.
// The common unit (one group, no topology, tolerations or model list) has
// its key written field by field, which a cycle over thousands of waiting
// units pays for each; others are printed whole. The two forms cannot
// meet: a printed key starts with "[".
func shapeKey(u *Unit) string {
	j := u.Job
	if key, ok := simpleShapeKey(j); ok {
		return key
	}
	key := fmt.Sprint(j.Groups, j.Topology, j.MinMember, j.Elastic, j.Tolerations, j.Preemptible)
	if j.ByGPUMemory != nil {
		key += " " + j.ByGPUMemory.String()
	}
	return key
}

// simpleShapeKey is the key of a job of one group without topology,
// tolerations, allowed models or a GPU memory ask: every field of its
// group and demand and the job's MinMember, Elastic and Preemptible
// (TestSimpleShapeKeyHasEveryField keeps the list whole).
func simpleShapeKey(j *job.Job) (string, bool) {
	if len(j.Groups) != 1 || len(j.Topology) > 0 || len(j.Tolerations) > 0 || j.ByGPUMemory != nil {
		return "", false
	}
	g := &j.Groups[0]
	d := &g.Task
	if len(g.Tolerations) > 0 || len(d.Models) > 0 {
		return "", false
	}
	b := make([]byte, 0, 96)
	b = append(b, 1)
	for _, text := range []string{g.Name, d.MIG} { // each after its length: no name reads as another
		b = strconv.AppendInt(b, int64(len(text)), 10)
		b = append(b, ':')
		b = append(b, text...)
	}
	for _, v := range []int64{int64(g.Count), int64(d.GPUs), int64(d.Shares), d.GPUMemoryMiB, int64(d.GPUMilli), d.CPUMilli, d.MemoryMiB, int64(j.MinMember)} {
		b = append(b, '|')
		b = strconv.AppendInt(b, v, 10)
	}
	for _, f := range []bool{d.WholeNode, j.Elastic, j.Preemptible} {
		b = append(b, '|')
		b = strconv.AppendBool(b, f)
	}
	return string(b), true
}
