package sched

import (
	"fmt"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/queue"
)

// reclaim takes back quota that u's queue lent: u does not fit its queue's
// quota now, yet would stay within the queue's own nominal quota, because
// cohort peers borrow it. The youngest running units of borrowing peers
// are stopped until what they free covers the shortfall (less what
// stopping units of the cohort free already). false when there is nothing
// to reclaim or it would not be enough.
func (c *cycle) reclaim(u *Unit) ([]string, bool) {
	book := c.snap.Book
	if !c.snap.Config.Preemption || u.NeverPreempts || book == nil || u.Queue == "" {
		return nil, false
	}
	spec, ok := book.Spec(u.Queue)
	if !ok || spec.Cohort == "" || !book.Usage(u.Queue).Add(u.Need).Fits(spec.Nominal) {
		return nil, false // only what is its own is reclaimed
	}
	short := c.shortfall(u)
	peers := c.borrowingPeers(u.Queue)
	for _, r := range c.snap.Running {
		if c.stopping[r.Name] && peers[r.Queue] {
			short = short.Sub(r.Need)
		}
	}
	var victims []string
	for _, r := range c.borrowers(peers) {
		if covered(short) {
			break
		}
		victims = append(victims, r.Name)
		short = short.Sub(r.Need)
	}
	if !covered(short) || len(victims) == 0 {
		return nil, false
	}
	c.stopFor(u, victims)
	for i := len(c.out.Preempts) - len(victims); i < len(c.out.Preempts); i++ {
		c.out.Preempts[i].Reclaim = true
	}
	return victims, true
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
// stopped, the most recently started first.
func (c *cycle) borrowers(queues map[string]bool) []Running {
	var out []Running
	for _, r := range c.snap.Running {
		if queues[r.Queue] && r.Preemptible && !c.stopping[r.Name] {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Running) int {
		if d := b.Started.Compare(a.Started); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
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
			left = left.Sub(c.running[name].Need)
		}
		return covered(left) && c.fitsWithout(cands[:k], u)
	}
	if len(cands) == 0 || !enough(len(cands)) {
		return nil, false
	}
	victims := cands[:shortestPrefix(len(cands), enough)]
	c.stopFor(u, victims)
	return victims, true
}
