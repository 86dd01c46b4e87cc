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
// commitment reserved nodes stand for ("block", "1y" or "3y").
//
// When discount reports that this commitment is, for a GPU model, a
// discount (Savings Plans, reserved instances, CUDs: billed on matching
// usage in any node, not on nodes of its own), the reserved cards of the
// model whose node takes no work in an hour cover the on-demand cards of
// the model bought that hour: those are billed at the commitment's rate
// (cost.Usage.CoveredGPUH), and the reserved row buys that much less, so
// nothing is paid or counted idle twice. discount nil: every commitment
// is capacity (nodes that must be filled).
func (r *Result) Usage(reservedTerm string, discount func(gpuModel string) bool) []cost.Usage {
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
	moved := r.discountCover(discount)
	for k, t := range keys {
		if k[1] == fleet.CapacityReserved {
			t.bought -= moved[k] // lent: paid once, as the on-demand row's covered hours
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
			u := cost.Usage{Pool: k[0], CapacityType: capacity, GPUModel: k[2], Tenant: s.tenant, Class: s.class,
				BoughtGPUH: t.bought * s.share, UsedGPUH: max(t.used*s.share-pre-intr, 0), IdleGPUH: idle * s.share,
				FragmentedGPUH: frag * s.share, PreemptedLostGPUH: pre, InterruptedLostGPUH: intr}
			if k[1] == fleet.CapacityOnDemand && moved[k] > 0 {
				u.CoveredGPUH, u.CoveredBy = moved[k]*s.share, "reserved-"+reservedTerm
			}
			out = append(out, u)
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

// discountCover is, per group, the GPU-hours a discount commitment
// moved, hour by hour: for an on-demand group, its cards covered by the
// reserved cards of its model whose node took no work that hour; for a
// reserved group, its away cards that covered them. Groups are served
// in the series' order.
func (r *Result) discountCover(discount func(string) bool) map[[3]string]float64 {
	out := map[[3]string]float64{}
	if discount == nil {
		return out
	}
	for _, h := range r.Hours {
		away := map[string]int{}
		for _, g := range h.Groups {
			if g.CapacityType == fleet.CapacityReserved && discount(g.GPUModel) {
				away[g.GPUModel] += g.Away
			}
		}
		lent := map[string]int{}
		for _, g := range h.Groups {
			if g.CapacityType != fleet.CapacityOnDemand {
				continue
			}
			c := min(g.GPUs, away[g.GPUModel]-lent[g.GPUModel])
			lent[g.GPUModel] += c
			out[[3]string{g.Pool, g.CapacityType, g.GPUModel}] += float64(c)
		}
		for _, g := range h.Groups {
			if g.CapacityType == fleet.CapacityReserved && discount(g.GPUModel) {
				c := min(g.Away, lent[g.GPUModel])
				lent[g.GPUModel] -= c
				out[[3]string{g.Pool, g.CapacityType, g.GPUModel}] += float64(c)
			}
		}
	}
	return out
}
