package gang

import (
	"fmt"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
)

// request is one task group's demand resolved against the fleet's node
// classes.
type request struct {
	group   int
	d       job.Demand
	kind    job.Kind
	allowed map[*gpu.Model]bool // nil: any model
	classOK []bool              // class may host the task
	profile []int               // class -> MIG profile index, -1 if none
	milli   []int               // class -> thousandths of a GPU for a shared task
	spares  bool                // may use hot spare nodes
	// tolerations are the job's: a node class with other taints is out.
	tolerations []string
	// plainOK is classOK without MIG classes, for whole-GPU tasks that
	// may use both; nil otherwise.
	plainOK []bool
}

func (r *request) classTolerated(c class) bool { return tolerates(r.tolerations, c.taints) }

func (s *State) newRequest(group int, d job.Demand, spares bool, tolerations []string) (*request, error) {
	r := &request{group: group, d: d, kind: d.Kind(), spares: spares, tolerations: tolerations}
	allowed, err := allowedModels(d.Models)
	if err != nil {
		return nil, err
	}
	r.allowed = allowed
	r.classOK = make([]bool, len(s.classes))
	r.profile = make([]int, len(s.classes))
	r.milli = make([]int, len(s.classes))
	for i, c := range s.classes {
		r.profile[i] = -1
		r.classOK[i] = r.fitsClass(c, allowed) && tolerates(tolerations, c.taints)
		if r.classOK[i] && r.kind == job.MIG {
			r.profile[i], _ = c.model.ProfileIndex(d.MIG)
		}
		if r.classOK[i] && r.kind == job.Shared {
			r.milli[i] = shareMilli(c, d)
			r.classOK[i] = r.milli[i] > 0 && r.milli[i] <= 1000
		}
	}
	if r.kind == job.Whole {
		r.plainOK = s.withoutMIG(r.classOK)
	}
	return r, nil
}

// withoutMIG returns classOK less the MIG classes, or nil when that
// removes none or leaves none.
func (s *State) withoutMIG(classOK []bool) []bool {
	plain := make([]bool, len(classOK))
	kept, dropped := false, false
	for c, ok := range classOK {
		plain[c] = ok && s.classes[c].mig == fleet.MIGNone
		kept = kept || plain[c]
		dropped = dropped || (ok && !plain[c])
	}
	if !kept || !dropped {
		return nil
	}
	return plain
}

// tolerates reports whether tolerations cover a class's joined taints.
func tolerates(tolerations []string, taints string) bool {
	if taints == "" {
		return true
	}
	for _, t := range strings.Split(taints, ",") {
		if !slices.Contains(tolerations, t) {
			return false
		}
	}
	return true
}

// untolerated is the first of taints (joined by ",") that tolerations
// lack; empty when none.
func untolerated(tolerations []string, taints string) string {
	if taints == "" {
		return ""
	}
	for _, t := range strings.Split(taints, ",") {
		if !slices.Contains(tolerations, t) {
			return t
		}
	}
	return ""
}

// filterOf is why node n holds no task of r, with the taint it does not
// tolerate when that is why.
func (s *State) filterOf(n int, r *request, why Reason) filter {
	f := filter{reason: why}
	if why == ReasonTaint {
		f.detail = untolerated(r.tolerations, s.classes[s.nodes[n].class].taints)
	}
	return f
}

// allowedModels resolves a demand's model names through the catalog.
func allowedModels(names []string) (map[*gpu.Model]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	set := map[*gpu.Model]bool{}
	for _, name := range names {
		m, err := gpu.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("allowed models: %w", err)
		}
		set[m] = true
	}
	return set, nil
}

func (r *request) fitsClass(c class, allowed map[*gpu.Model]bool) bool {
	if r.kind == job.CPUOnly {
		return true
	}
	if c.model == nil || (allowed != nil && !allowed[c.model]) {
		return false
	}
	switch r.kind {
	case job.Whole:
		return c.mig != fleet.MIGStatic
	case job.MIG:
		if c.mig == fleet.MIGNone {
			return false
		}
		_, err := c.model.ProfileIndex(r.d.MIG)
		return err == nil
	case job.Shared: // shares of non-MIG GPUs only (fleet.Node.Fractional, TimeSlices)
		return c.shared && c.mig == fleet.MIGNone && (r.d.Shares == 0 || c.slices > 1) // shares need time slices
	}
	return false
}

// shareMilli converts a shared demand into thousandths of one GPU of
// class c: time-slices by the node's slice count (rounded down, so that N
// shares fill a GPU), memory by the card's memory (rounded up).
func shareMilli(c class, d job.Demand) int {
	switch {
	case d.GPUMilli > 0:
		return d.GPUMilli
	case d.Shares > 0:
		return d.Shares * 1000 / max(c.slices, 1)
	case d.GPUMemoryMiB > 0:
		return int((d.GPUMemoryMiB*1000 + c.model.MemoryMiB - 1) / c.model.MemoryMiB)
	}
	return 0
}

// capacity is how many tasks of r fit on node n now, and when none fit,
// the reason.
func (s *State) capacity(n int, r *request) (int, Reason) {
	node := &s.fleet.Nodes[n]
	switch {
	case !node.Schedulable():
		return 0, ReasonUnhealthy
	case node.Spare && !r.spares:
		return 0, ReasonSpare
	case !r.classOK[s.nodes[n].class]:
		return 0, s.classReason(n, r)
	}
	limit, why := s.gpuCapacity(n, r), ReasonGPUsBusy
	cpu, mem := s.left.CPULeft[n], s.left.MemLeft[n]
	if c := r.d.CPUMilli; c > 0 && cpu/c < int64(limit) {
		limit, why = int(cpu/c), ReasonCPU
	}
	if m := r.d.MemoryMiB; m > 0 && mem/m < int64(limit) {
		limit, why = int(mem/m), ReasonMemory
	}
	if limit > 0 {
		why = ReasonNone
	}
	return limit, why
}

const unlimited = 1 << 30

// roomLeft reports whether node n, open (healthy, not a spare) and of a
// class r may use, can take one task of r, as capacity(n, r) > 0 does,
// without counting how many: the question every such node is asked for
// every task placed alone, so it reads the node's own state only.
func (s *State) roomLeft(n int, r *request) bool {
	ns := &s.nodes[n]
	switch {
	case r.d.CPUMilli > 0 && s.left.CPULeft[n] < r.d.CPUMilli, r.d.MemoryMiB > 0 && s.left.MemLeft[n] < r.d.MemoryMiB:
		return false
	case r.kind == job.Shared && s.classes[ns.class].mig == fleet.MIGNone:
		// the summary of an open node: a free GPU, or the most room on a
		// partly shared one
		return ns.sum.free > 0 || ns.sum.partial >= r.milli[ns.class]
	}
	return s.gpuCapacity(n, r) > 0
}

func (s *State) gpuCapacity(n int, r *request) int {
	ns := &s.nodes[n]
	c := s.classes[ns.class]
	total := 0
	switch r.kind {
	case job.CPUOnly:
		return unlimited
	case job.Whole:
		free := ns.sum.free // the index summary is current for open nodes
		if !ns.sum.open {
			free = s.FreeGPUs(n)
		}
		if r.d.WholeNode {
			return b2i(free == len(ns.whole) && free >= r.d.GPUs)
		}
		return free / r.d.GPUs
	case job.MIG:
		p, dynamic := r.profile[ns.class], c.mig == fleet.MIGDynamic
		// On an open node the index says whether any GPU already in MIG
		// use can host p; if none can, only free GPUs need a look.
		skipUsed := ns.sum.open && ns.sum.migOpen&(1<<p) == 0
		for g := range ns.layouts {
			if ns.whole[g] || (skipUsed && !s.freeWhole(n, g)) {
				continue
			}
			total += ns.layouts[g].Capacity(p, dynamic)
		}
	case job.Shared:
		m := r.milli[ns.class]
		for g, whole := range ns.whole {
			if !whole {
				total += int(s.left.GPULeft[n][g]) / m
			}
		}
	}
	return total
}

// classReason says why node n's class cannot host r at all.
func (s *State) classReason(n int, r *request) Reason {
	c := s.classes[s.nodes[n].class]
	switch {
	case !r.classTolerated(c):
		return ReasonTaint
	case c.model == nil:
		return ReasonNoGPU
	case r.allowed != nil && !r.allowed[c.model]:
		return ReasonModel
	case r.kind == job.Whole:
		return ReasonStaticMIG
	case r.kind == job.MIG && c.mig == fleet.MIGNone:
		return ReasonNoMIG
	case r.kind == job.MIG:
		return ReasonProfile
	case r.kind == job.Shared && (!c.shared || c.mig != fleet.MIGNone):
		return ReasonNoSharing
	case r.kind == job.Shared:
		return ReasonNoTimeSlices
	}
	return ReasonModel
}
