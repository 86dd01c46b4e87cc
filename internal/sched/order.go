package sched

import (
	"cmp"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/queue"
)

// order lists the pending units in the order the cycle considers them
// (step 1 of Cycle): claimed units (Unit.Claimed, or running units are
// stopping for them) first; then units by priority and arrival, all of
// them without Config.FairShare, else those with no queue, and then the
// queued ones by fair share.
func (c *cycle) order() []*Unit {
	var claimed, loose, queued []*Unit
	claims := map[string]bool{}
	for _, r := range c.snap.Running {
		if r.StoppingFor != "" {
			claims[r.StoppingFor] = true
		}
	}
	for i := range c.snap.Pending {
		u := &c.snap.Pending[i]
		switch {
		case u.Claimed || claims[u.Job.Name]:
			claimed = append(claimed, u)
		case c.snap.Book == nil || u.Queue == "" || !c.snap.Config.FairShare:
			loose = append(loose, u)
		default:
			queued = append(queued, u)
		}
	}
	slices.SortStableFunc(claimed, byPriority)
	slices.SortStableFunc(loose, byPriority)
	return append(append(claimed, loose...), c.fairOrder(queued)...)
}

// byPriority orders units by priority, higher first, then arrival, then
// name.
func byPriority(a, b *Unit) int {
	return cmp.Or(cmp.Compare(b.Job.Priority, a.Job.Priority), cmp.Compare(a.Arrival, b.Arrival), strings.Compare(a.Job.Name, b.Job.Name))
}

// fairOrder orders queued units with queue.Pending: queues by fair share,
// each queue's units in its order. A unit its Book does not know waits
// at the end, where admission will say why.
func (c *cycle) fairOrder(units []*Unit) []*Unit {
	if len(units) == 0 {
		return nil
	}
	p := queue.NewPending(c.snap.Book)
	byName := make(map[string]*Unit, len(units))
	var unknown []*Unit
	for _, u := range units {
		if err := p.Push(u.Queue, u.Job, u.Arrival); err != nil {
			unknown = append(unknown, u)
			continue
		}
		byName[u.Job.Name] = u
	}
	out := make([]*Unit, 0, len(units))
	for e := range p.All() {
		out = append(out, byName[e.Job.Name])
	}
	return append(out, unknown...)
}
