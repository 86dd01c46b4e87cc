package sim

import (
	"sort"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/fleet"
)

// Usage is what the replay bought and what became of it, as rows for the
// cost model: one per pool, capacity type and GPU model, split over the
// tenants and classes of work in proportion to the GPU-hours each ran
// (waste is shared like use: a fully loaded showback). GPU-hours come from
// the hourly samples (Result.Hours), an hour per sample.
//
// Of a group's GPU-hours bought: fragmented are free cards on partly used
// nodes and the unused part of shared cards; idle are free cards on empty
// nodes and cards held but not used (gangs waiting for siblings, whole
// nodes); used is what ran, less the work lost to preemption and to
// interruptions, which are reported apart. reservedTerm names the
// commitment reserved nodes stand for ("1y" or "3y").
func (r *Result) Usage(reservedTerm string) []cost.Usage {
	type totals struct{ bought, used, alloc, occupied, frag float64 }
	keys := map[[3]string]*totals{}
	var order [][3]string
	for _, h := range r.Hours {
		for _, g := range h.Groups {
			k := [3]string{g.Pool, g.CapacityType, g.GPUModel}
			t := keys[k]
			if t == nil {
				t = &totals{}
				keys[k] = t
				order = append(order, k)
			}
			t.bought += float64(g.GPUs)
			t.used += g.Used
			t.alloc += g.Allocated
			t.occupied += float64(g.Occupied)
			t.frag += float64(g.Fragmented)
		}
	}
	shares := r.workShares()
	allBought := 0.0
	for _, t := range keys {
		allBought += t.bought
	}
	var out []cost.Usage
	for _, k := range order {
		t := keys[k]
		capacity := k[1]
		if capacity == fleet.CapacityReserved {
			capacity = "reserved-" + reservedTerm
		}
		idle := max(t.bought-t.occupied-t.frag, 0) + max(t.alloc-t.used, 0)
		frag := t.frag + max(t.occupied-t.alloc, 0)
		part := 0.0
		if allBought > 0 {
			part = t.bought / allBought
		}
		for _, s := range shares {
			pre, intr := s.preempted*part, s.interrupted*part
			out = append(out, cost.Usage{Pool: k[0], CapacityType: capacity, GPUModel: k[2], Tenant: s.tenant, Class: s.class,
				BoughtGPUH: t.bought * s.share, UsedGPUH: max(t.used*s.share-pre-intr, 0), IdleGPUH: idle * s.share,
				FragmentedGPUH: frag * s.share, PreemptedLostGPUH: pre, InterruptedLostGPUH: intr})
		}
	}
	return out
}

// workShare is one tenant and class's share of the GPU-hours run, and the
// work it lost.
type workShare struct {
	tenant, class          string
	share                  float64
	preempted, interrupted float64
}

// workShares splits the GPU-hours run by tenant and class, in name order;
// a replay in which nothing ran gives one unattributed share.
func (r *Result) workShares() []workShare {
	byKey := map[[2]string]*workShare{}
	total := 0.0
	for _, j := range r.Jobs {
		k := [2]string{j.Tenant, j.Class}
		s := byKey[k]
		if s == nil {
			s = &workShare{tenant: j.Tenant, class: j.Class}
			byKey[k] = s
		}
		s.share += j.GPUHours
		total += j.GPUHours
		if j.Interruptions > 0 {
			pre := j.LostGPUHours * float64(j.Preemptions) / float64(j.Interruptions)
			s.preempted += pre
			s.interrupted += j.LostGPUHours - pre
		}
	}
	if total == 0 {
		return []workShare{{share: 1}}
	}
	out := make([]workShare, 0, len(byKey))
	for _, s := range byKey {
		s.share /= total
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].tenant != out[j].tenant {
			return out[i].tenant < out[j].tenant
		}
		return out[i].class < out[j].class
	})
	return out
}
