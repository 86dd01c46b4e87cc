package sched

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// free decides a unit the face's rules allow on no node now
// (Unit.Freeing): it waits for work already stopping for it, or stops the
// running units of the cheapest way to free a node, or waits for room.
//
// The cheapest way for each pod is kube-scheduler's choice of a node to
// preempt on:
// the lowest highest priority among its victims, then the fewest victims,
// then the least work lost, then the node's name. Every victim must be
// one the cycle may stop for u (lower priority, preemptible, not stopped
// too often already); the stops count against the cycle's budget.
func (c *cycle) free(u *Unit) {
	switch {
	case !c.snap.Config.Preemption || u.NeverPreempts:
		c.wait(u, CodeCapacity, u.Blocked)
		return
	case u.Claimed && len(c.stoppingUnits()) > 0:
		// Its victims are still stopping: do not stop more for it.
		c.waitUnfit(u, CodePreempting, unfitWhy{text: u.Blocked}, "waiting for the work stopped for it")
		return
	}
	best, ok := c.cheapestFreeing(u)
	switch {
	case !ok:
		c.wait(u, CodeCapacity, u.Blocked)
	case !c.withinBudget(len(best.Victims)):
		c.waitUnfit(u, CodeCapacity, unfitWhy{text: u.Blocked}, "stopping the work that keeps it off "+best.Node+" would exceed this cycle's preemption budget")
	default:
		c.stopFor(u, best.Victims)
		c.waitUnfit(u, CodePreempting, unfitWhy{text: u.Blocked}, fmt.Sprintf("preempting lower-priority %s on %s to make room", strings.Join(best.Victims, ", "), best.Node))
	}
}

// cheapestFreeing chooses, for each of u's pods in Unit.Freeing in turn,
// the way whose victims u may stop that costs least on a node no earlier
// pod took (its pods may keep each other off a node, as two pods of one
// host port do), and returns the nodes and the union of the victims;
// false when some pod has no such way.
func (c *cycle) cheapestFreeing(u *Unit) (Freeing, bool) {
	var nodes, victims []string
	for _, ways := range u.Freeing {
		best, ok := c.cheapestWay(u, ways, nodes)
		if !ok {
			return Freeing{}, false
		}
		nodes = append(nodes, best.Node)
		for _, v := range best.Victims {
			if !slices.Contains(victims, v) {
				victims = append(victims, v)
			}
		}
	}
	if len(nodes) == 0 {
		return Freeing{}, false
	}
	slices.Sort(victims)
	return Freeing{Node: strings.Join(nodes, ", "), Victims: victims}, true
}

// cheapestWay is the way of ways on a node outside taken whose victims u
// may stop that costs least; false when there is none.
func (c *cycle) cheapestWay(u *Unit, ways []Freeing, taken []string) (Freeing, bool) {
	type option struct {
		f       Freeing
		highest int
		cost    float64
	}
	var opts []option
	for _, f := range ways {
		o, ok := option{f: f, highest: math.MinInt}, len(f.Victims) > 0 && !slices.Contains(taken, f.Node)
		for _, name := range f.Victims {
			r := c.runningUnit(name)
			if r == nil || !c.victim(*r) || !c.outranks(u, *r) {
				ok = false
				break
			}
			o.highest, o.cost = max(o.highest, r.Priority), o.cost+c.stopCost(*r)
		}
		if ok {
			opts = append(opts, o)
		}
	}
	if len(opts) == 0 {
		return Freeing{}, false
	}
	best := slices.MinFunc(opts, func(a, b option) int {
		return cmp.Or(cmp.Compare(a.highest, b.highest), cmp.Compare(len(a.f.Victims), len(b.f.Victims)),
			cmp.Compare(a.cost, b.cost), strings.Compare(a.f.Node, b.f.Node))
	})
	return best.f, true
}
