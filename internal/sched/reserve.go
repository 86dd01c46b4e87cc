package sched

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/queue"
)

// waitForRoom records that u waits for the fleet: the first units that do
// so (Config.Reservations) hold a reservation, and a unit that would not
// fit even with every running unit gone is told so.
func (c *cycle) waitForRoom(u *Unit, why unfitWhy) {
	if c.reserved >= cmp.Or(c.snap.Config.Reservations, 1) {
		if whole := wholeGPUs(u); whole > c.snap.State.Fleet().GPUs() {
			c.waitUnfit(u, CodeNeverFits, why, fmt.Sprintf("it asks for %d whole GPUs, more than the fleet's %d", whole, c.snap.State.Fleet().GPUs()))
			return
		}
		c.waitUnfit(u, CodeCapacity, why, "")
		c.estimate(u)
		return
	}
	r, ok := c.reservation(u)
	if !ok {
		c.waitUnfit(u, CodeNeverFits, why, "it would not fit even if all running work ended")
		return
	}
	c.reserved++
	c.reserve(u, r)
	c.waitUnfit(u, CodeCapacity, why, describe(r))
}

// estimate gives u, which waits for room without a reservation, an
// estimated start while Config.Estimates allows one more: when enough of
// the running units, by estimated end, will have ended for it to fit, if
// nothing ahead of it takes that room (Wait.Held is false). It holds
// nothing and changes no decision.
func (c *cycle) estimate(u *Unit) {
	if c.estimated >= c.snap.Config.Estimates {
		return
	}
	c.estimated++
	if r, ok := c.reservation(u); ok {
		c.out.Waiting[len(c.out.Waiting)-1].Estimate = r.At
	}
}

// wholeGPUs counts the whole GPUs u asks for: a unit that asks for more
// than the fleet has never fits, whoever holds the reservations.
func wholeGPUs(u *Unit) int {
	n := 0
	for _, g := range u.Job.Groups {
		n += g.Count * g.Task.GPUs
	}
	return n
}

// reserve records that u holds reservation r.
func (c *cycle) reserve(u *Unit, r Reservation) *head {
	h := &head{unit: u, resv: r}
	c.heads = append(c.heads, h)
	c.out.Reservations = append(c.out.Reservations, r)
	return h
}

// reserveQuota gives u, which its queue cannot admit now, a reservation
// of quota and room when it is among the first units that wait
// (Config.Reservations) and the quota it waits for is its queue's own:
// its queue would hold it within its nominal quota were it not lent out,
// or its queue has no cohort to borrow from (its quota is then all it can
// ever have). The reservation is the running units, by estimated end,
// whose end lets its queue admit it and the fleet hold it; later units
// then start only if they take neither the quota nor the room it waits
// for (or end before it starts), so a large unit is not starved by small
// ones. Only a reservation whose time is known is held: quota held for
// as long as work without an estimated end runs would idle its queue. A unit that would have to borrow holds nothing: on the
// simulator's generated workloads, reserving for those too made waits
// longer. It says what it reserved, or nothing.
func (c *cycle) reserveQuota(u *Unit) string {
	if c.reserved >= cmp.Or(c.snap.Config.Reservations, 1) || c.quotaTried[u.Queue] || !c.withinNominal(u) && len(c.snap.Book.Peers(u.Queue)) > 0 {
		return ""
	}
	running := c.byEnd()
	if len(running) == 0 || running[0].End.IsZero() {
		c.quotaTried[u.Queue] = true // no running unit has an estimated end: the time is unknown
		return ""
	}
	names := c.byEndNames()
	fits := func(k int) bool { return c.admitsWithout(names[:k], u, nil) && c.fitsWithout(names[:k], u) }
	k, ok := firstFitFrom(c.gpuBound(names, u), u.ReserveHint, len(names), fits)
	if !ok {
		c.quotaTried[u.Queue] = true // a failed search is not repeated for its queue this cycle
		return ""
	}
	r := Reservation{Unit: u.Job.Name, At: c.endOf(running[k-1]), Releasing: names[:k:k]}
	if r.At.IsZero() {
		c.quotaTried[u.Queue] = true
		return "" // quota held for a time nobody knows would idle its queue
	}
	c.reserved++
	r.Quota = true
	c.reserve(u, r).quota = true
	return "; " + describe(r)
}

// admitsWithout reports whether u's queue could admit it once the named
// running units gave back their charges, with extra (a unit about to
// start; nil: none) admitted too. The Book is left as it was.
func (c *cycle) admitsWithout(names []string, u, extra *Unit) bool {
	book := c.snap.Book
	var undo []func()
	defer func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}()
	for _, name := range names {
		r := c.runningUnit(name)
		if r == nil || r.Queue == "" || r.Need.IsZero() || book.Release(r.Queue, r.Need) != nil {
			continue
		}
		undo = append(undo, func() { mustAdmit(book, r.Queue, r.Need) })
	}
	if extra != nil && extra.Queue != "" {
		if _, err := book.Admit(extra.Queue, extra.Need); err != nil {
			return false
		}
		undo = append(undo, func() { _ = book.Release(extra.Queue, extra.Need) })
	}
	return book.CanAdmit(u.Queue, u.Need) == nil
}

func mustAdmit(book *queue.Book, q string, need queue.Amounts) {
	if _, err := book.Admit(q, need); err != nil {
		panic(fmt.Sprintf("sched: restoring %s's charge %v after a what-if: %v", q, need, err)) // a programmer error
	}
}

func describe(r Reservation) string {
	when := "an unknown time"
	if !r.At.IsZero() {
		when = r.At.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("reserved to start at %s, when %s end", when, strings.Join(r.Releasing, ", "))
}

// reservation finds the shortest run of running units, in order of
// estimated end, whose end lets u fit; At is the last one's end (zero
// when that is unknown). false when even all of them are not enough.
func (c *cycle) reservation(u *Unit) (Reservation, bool) {
	running := c.byEnd()
	names := c.byEndNames()
	if k, ok := c.kept(u, names); ok {
		return Reservation{Unit: u.Job.Name, At: c.endOf(running[k-1]), Releasing: names[:k:k]}, true
	}
	k, ok := firstFitFrom(c.gpuBound(names, u), u.ReserveHint, len(names), func(k int) bool { return c.fitsWithout(names[:k], u) })
	if !ok {
		return Reservation{}, false
	}
	return Reservation{Unit: u.Job.Name, At: c.endOf(running[k-1]), Releasing: names[:k:k]}, true
}

// firstFit is the least k in from..n with fits(k), false when not even
// fits(n): it gallops up from from, then bisects, so that the usual answer
// costs a few what-ifs and never one that releases every running unit
// when fewer are enough.
func firstFit(from, n int, fits func(int) bool) (int, bool) {
	if n == 0 {
		return 0, false
	}
	lo, hi := min(max(from, 1), n), min(max(from, 1), n)
	for !fits(hi) {
		if hi == n {
			return 0, false
		}
		lo, hi = hi+1, min(2*hi, n)
	}
	return bisect(lo, hi, fits), true
}

// bisect is the least k in lo..hi with fits(k), given fits(hi) and that
// nothing below lo fits.
func bisect(lo, hi int, fits func(int) bool) int {
	for lo < hi {
		mid := (lo + hi) / 2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// kept reports how many running units u's kept reservation releases,
// when it still holds: nothing has started or stopped in this cycle
// before u, and the units it names are still the first by estimated end.
func (c *cycle) kept(u *Unit, names []string) (int, bool) {
	r := u.Kept
	if r == nil || r.Quota || len(c.out.Starts) > 0 || len(c.out.Preempts) > 0 || len(r.Releasing) == 0 || len(r.Releasing) > len(names) {
		return 0, false
	}
	for i, n := range r.Releasing {
		if names[i] != n {
			return 0, false
		}
	}
	return len(r.Releasing), true
}

// firstFitFrom is firstFit from bound, starting at hint when it lies in
// bound..n: two what-ifs confirm an unchanged answer (fits at hint, not
// at hint-1).
func firstFitFrom(bound, hint, n int, fits func(int) bool) (int, bool) {
	bound = min(max(bound, 1), max(n, 1))
	if hint <= bound || hint > n {
		return firstFit(bound, n, fits)
	}
	if !fits(hint) {
		return firstFit(hint+1, n, fits)
	}
	if !fits(hint - 1) {
		return hint, true
	}
	return bisect(bound, hint-1, fits), true // fits(hint-1); nothing below bound fits
}

// gpuBound is the fewest of the running units by estimated end (names,
// byEndNames), in order, whose end could free as many GPUs as u asks for
// whole, counting the GPUs free now and every GPU the units' tasks touch:
// no shorter prefix lets u fit.
func (c *cycle) gpuBound(names []string, u *Unit) int {
	st := c.snap.State
	need := wholeGPUs(u) - st.FreeWholeGPUs()
	parts, ends := c.byEndParts() // names are byEndNames: each one's parts are there
	for i := range names {
		if need <= 0 {
			return max(i, 1)
		}
		for _, part := range parts[ends[i]:ends[i+1]] {
			if p := st.Job(part); p != nil {
				for _, t := range p.Tasks {
					need -= len(t.GPUs)
				}
			}
		}
	}
	return len(names)
}

// shortestPrefix is the least k in 1..n with fits(k), given fits(n): it
// gallops up from 1, then bisects.
func shortestPrefix(n int, fits func(int) bool) int {
	lo, hi := 1, 1
	for hi < n && !fits(hi) {
		lo, hi = hi+1, min(2*hi, n)
	}
	return bisect(lo, hi, fits)
}

// endOf is when r is expected to end: its estimate, or now for a unit
// past it; zero when unknown.
func (c *cycle) endOf(r Running) time.Time {
	if r.End.IsZero() || r.End.After(c.snap.Now) {
		return r.End
	}
	return c.snap.Now
}

// byEnd lists the running units by estimated end, unknown ends last,
// then by start and name.
func (c *cycle) byEnd() []Running {
	if c.sortedByEnd != nil || len(c.snap.Running) == 0 {
		return c.sortedByEnd // the running units do not change within a cycle
	}
	if sortedByEnd(c.snap.Running) {
		c.sortedByEnd = c.snap.Running // a face that keeps them in this order (the simulator) saves the sort
		return c.sortedByEnd
	}
	out := slices.Clone(c.snap.Running)
	c.sortedByEnd = out
	slices.SortStableFunc(out, byEstimatedEnd)
	return out
}

// byEndNames are the names of byEnd's units, in its order, once a cycle.
func (c *cycle) byEndNames() []string {
	if c.sortedNames == nil {
		running := c.byEnd()
		c.sortedNames = make([]string, len(running))
		for i, r := range running {
			c.sortedNames[i] = r.Name
		}
	}
	return c.sortedNames
}

// sortedByEnd reports whether running is in byEstimatedEnd's order,
// comparing in place: a cycle asks once, over every running unit.
func sortedByEnd(running []Running) bool {
	for i := 1; i < len(running); i++ {
		if endOrder(&running[i-1], &running[i]) > 0 {
			return false
		}
	}
	return true
}

// byEstimatedEnd orders running units by estimated end (unknown ends
// last), then start, then name.
func byEstimatedEnd(a, b Running) int { return endOrder(&a, &b) }

func endOrder(a, b *Running) int {
	if a.End.IsZero() != b.End.IsZero() {
		if a.End.IsZero() {
			return 1
		}
		return -1
	}
	return cmp.Or(a.End.Compare(b.End), a.Started.Compare(b.Started), strings.Compare(a.Name, b.Name))
}

// delayed returns the first reservation that u, just placed, would delay:
// it is not estimated to end before the reservation's start, and the
// reserved unit no longer fits once the reservation's units end.
func (c *cycle) delayed(u *Unit) *head {
	for _, h := range c.heads {
		if rt := u.Job.Runtime; rt > 0 && !h.resv.At.IsZero() && !c.snap.Now.Add(rt).After(h.resv.At) {
			continue
		}
		if !c.fitsWithout(h.resv.Releasing, h.unit) || h.quota && !c.admitsWithout(h.resv.Releasing, h.unit, u) {
			return h
		}
	}
	return nil
}

// placeAround places u off the nodes the reserved units would take (as a
// reservation of nodes holds them), and keeps the placement only when it
// delays no reservation; nil when there is none such.
func (c *cycle) placeAround(u *Unit) *gang.Placement {
	restore := c.cordon(c.heldNodes())
	p, ok := c.snap.State.TryPlace(u.Job) // why it does not fit is not told
	restore()
	if !ok {
		return nil
	}
	if c.delayed(u) != nil {
		c.undo(u.Job.Name)
		return nil
	}
	return p
}

// heldNodes are the nodes the reserved units would be placed on once
// their reservations' units end, by name.
func (c *cycle) heldNodes() []string {
	var out []string
	for _, h := range c.heads {
		if h.nodes == nil {
			h.nodes = []string{}
			if p, ok := c.snap.State.PlaceIf(c.partsOf(h.resv.Releasing), h.unit.Job); ok {
				for _, t := range p.Tasks {
					h.nodes = append(h.nodes, t.NodeName)
				}
			}
		}
		out = append(out, h.nodes...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// cordon takes the named nodes out of placement until restore is called.
func (c *cycle) cordon(nodes []string) (restore func()) {
	st := c.snap.State
	was := make([]fleet.Health, len(nodes))
	for i, name := range nodes {
		n, err := st.NodeIndex(name)
		if err != nil {
			panic(fmt.Sprintf("sched: node %s of a placement: %v", name, err)) // a programmer error
		}
		was[i] = st.Fleet().Nodes[n].Health
		setHealth(st, name, fleet.Cordoned)
	}
	return func() {
		for i, name := range nodes {
			setHealth(st, name, cmp.Or(was[i], fleet.Healthy))
		}
	}
}

func setHealth(st *gang.State, node string, h fleet.Health) {
	if err := st.SetHealth(node, h); err != nil {
		panic(fmt.Sprintf("sched: %v", err)) // the node is the state's own
	}
}
