package sched

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/queue"
)

// reclaim takes back quota that u's queue lent: u would stay within its
// queue's own nominal quota, yet does not fit its queue's quota or the
// fleet now, because cohort peers borrow. Once u has waited
// Config.ReclaimPatience, running units of borrowing peers are stopped,
// those that lose the least work first, until what they free covers the
// quota shortfall (less what stopping units of the cohort free already)
// and u fits the fleet; of those, none without which the rest still do
// is stopped (minimiseReclaim). Before its patience is out it may, with
// Config.Preemption, stop borrowers of lower priority only. false when there is nothing to reclaim, it would
// not be enough, or it would exceed the preemption budget.
func (c *cycle) reclaim(u *Unit) ([]string, bool) {
	if !c.mayReclaim(u) {
		return nil, false
	}
	short := c.shortfall(u)
	peers := c.borrowingPeers(u.Queue)
	for _, r := range c.snap.Running {
		if c.stopping[r.Name] && peers[r.Queue] {
			short = short.Sub(r.Need)
		}
	}
	borrowers := c.borrowers(peers)
	if c.impatient(u) { // with priority preemption, it may stop lower priorities at once
		borrowers = slices.DeleteFunc(borrowers, func(r Running) bool { return !c.outranks(u, r) })
	}
	victims, ok := c.fewestBorrowers(u, borrowers, short)
	if !ok || !c.withinBudget(len(victims)) {
		return nil, false
	}
	c.stopFor(u, victims)
	for i := len(c.out.Preempts) - len(victims); i < len(c.out.Preempts); i++ {
		p := &c.out.Preempts[i]
		p.Reclaim = true
		p.NoBorrowUntil = c.snap.Config.noBorrowUntil(c.snap.Now, c.runningUnit(p.Victim).Preemptions)
	}
	return victims, true
}

// fewestBorrowers is the shortest run of borrowers, in their order, whose
// stop covers short and lets u fit, less those it does not need; false
// when all of them do not.
func (c *cycle) fewestBorrowers(u *Unit, borrowers []Running, short queue.Amounts) ([]string, bool) {
	short0 := short.Clone()
	names := make([]string, len(borrowers))
	first := 0 // the fewest that cover short
	for i, r := range borrowers {
		names[i] = r.Name
		if !covered(short) {
			short = short.Sub(r.Need)
			first = i + 1
		}
	}
	if len(names) == 0 || !covered(short) || !c.fitsWithout(names, u) {
		return nil, false
	}
	first = max(first, 1)
	k := first - 1 + shortestPrefix(len(names)-first+1, func(i int) bool { return c.fitsWithout(names[:first-1+i], u) })
	return c.minimiseReclaim(u, borrowers[:k], short0), true
}

// minimiseReclaim drops from victims, the last chosen first, every one
// without which the rest still cover short and let u fit: the cheap
// borrowers taken before the one that made the cover need not stop too.
func (c *cycle) minimiseReclaim(u *Unit, victims []Running, short queue.Amounts) []string {
	kept := slices.Clone(victims)
	names := func(rs []Running) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.Name
		}
		return out
	}
	for i := len(kept) - 2; i >= 0; i-- {
		without := slices.Delete(slices.Clone(kept), i, i+1)
		left := short.Clone()
		for _, r := range without {
			left = left.Sub(r.Need)
		}
		if covered(left) && c.fitsWithout(names(without), u) {
			kept = without
		}
	}
	return names(kept)
}

// mayReclaim reports whether u may take back lent quota now: it is the
// first unit of the cycle that may (a cycle reclaims for one unit only, so
// that what one reclaim frees is seen before more is stopped: on the
// simulator's generated workloads this stops fewer jobs than reclaiming
// for every unit, with shorter waits than the simulator's earlier
// cycle), preemption or reclaim is on, u may preempt, its queue is in a
// cohort, u stays within the queue's own nominal quota, and it has waited
// long enough.
func (c *cycle) mayReclaim(u *Unit) bool {
	if c.reclaimAsked {
		return false // one reclaim a cycle: the next sees what this one freed
	}
	book := c.snap.Book
	if !(c.snap.Config.Preemption || c.snap.Config.Reclaim) || u.NeverPreempts || book == nil || u.Queue == "" {
		return false
	}
	if c.impatient(u) && !c.snap.Config.Preemption {
		return false // room often appears by itself: wait a while first
	}
	spec, ok := book.Spec(u.Queue)
	if !ok || spec.Cohort == "" || !c.withinNominal(u) { // only what is its own is reclaimed
		return false
	}
	// A unit that may not reclaim (over its quota, not in a cohort) does
	// not use up the cycle's one reclaim.
	c.reclaimAsked = true
	return true
}

// impatient reports whether u has waited less than Config.ReclaimPatience:
// it may then reclaim only from lower priorities, and only with
// Config.Preemption.
func (c *cycle) impatient(u *Unit) bool {
	p := c.snap.Config.ReclaimPatience
	return p > 0 && !u.Since.IsZero() && c.snap.Now.Sub(u.Since) < p
}

// withinNominal reports whether u's queue stays within its own nominal
// quota with u.
func (c *cycle) withinNominal(u *Unit) bool {
	spec, ok := c.snap.Book.Spec(u.Queue)
	return ok && c.snap.Book.Usage(u.Queue).Add(u.Need).Fits(spec.Nominal)
}

// shortfall is, per flavor of u's need, how much more its queue would
// need to admit it.
func (c *cycle) shortfall(u *Unit) queue.Amounts {
	short := queue.Amounts{}
	for _, f := range u.Need.Flavors() {
		if s := u.Need[f] - c.snap.Book.Headroom(u.Queue, f); s > 0 {
			short[f] = s
		}
	}
	return short
}

func covered(short queue.Amounts) bool {
	for _, v := range short {
		if v > 0 {
			return false
		}
	}
	return true
}

// borrowingPeers are the queues of q's cohort, other than q, that borrow.
func (c *cycle) borrowingPeers(q string) map[string]bool {
	out := map[string]bool{}
	for _, p := range c.snap.Book.Peers(q) {
		if !c.snap.Book.Borrowed(p).IsZero() {
			out[p] = true
		}
	}
	return out
}

// borrowers are the running units of the given queues that may be
// stopped, those that lose the least work first (then the lowest
// priority, then the most recently started, then by name).
func (c *cycle) borrowers(queues map[string]bool) []Running {
	var out []Running
	for _, r := range c.snap.Running {
		if queues[r.Queue] && c.victim(r) {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Running) int {
		return cmp.Or(cmp.Compare(c.stopCost(a), c.stopCost(b)), cmp.Compare(a.Priority, b.Priority), c.cheaper(a, b))
	})
	return out
}

// reclaimWait says who borrows the quota u's queue lent and when the core
// may take it back, or is nil when u asks beyond its queue's own quota or
// no peer borrows.
func (c *cycle) reclaimWait(u *Unit) *ReclaimWait {
	spec, ok := c.snap.Book.Spec(u.Queue)
	if !ok || spec.Cohort == "" || !c.withinNominal(u) {
		return nil
	}
	peers := c.borrowingPeers(u.Queue)
	if len(peers) == 0 {
		return nil
	}
	w := &ReclaimWait{Cohort: spec.Cohort, Borrowers: slices.Sorted(maps.Keys(peers))}
	if c.impatient(u) {
		w.At = u.Since.Add(c.snap.Config.ReclaimPatience)
	}
	return w
}

// reclaimNote says what a reclaim does, for the unit's reason.
func reclaimNote(q string, victims []string) string {
	return fmt.Sprintf("reclaiming the quota queue %s lent to its cohort: stopping %s", q, strings.Join(victims, ", "))
}

// preemptInQueue makes room within u's own queue: when the queue's quota
// cannot admit u, running units of the same queue with lower priority are
// stopped, youngest first, until what they free lets the quota admit u
// and the fleet hold it (Kueue's preemption within a ClusterQueue). false
// when that is not enough.
func (c *cycle) preemptInQueue(u *Unit) ([]string, bool) {
	if !c.snap.Config.Preemption || u.NeverPreempts || c.snap.Book == nil || u.Queue == "" {
		return nil, false
	}
	var cands []string
	short := c.shortfall(u)
	for _, r := range c.candidates(u) {
		if r.Queue == u.Queue {
			cands = append(cands, r.Name)
		}
	}
	enough := func(k int) bool {
		left := short.Clone()
		for _, name := range cands[:k] {
			left = left.Sub(c.runningUnit(name).Need)
		}
		return covered(left) && c.fitsWithout(cands[:k], u)
	}
	if len(cands) == 0 || !enough(len(cands)) {
		return nil, false
	}
	victims := cands[:shortestPrefix(len(cands), enough)]
	if !c.withinBudget(len(victims)) {
		return nil, false
	}
	c.stopFor(u, victims)
	return victims, true
}
