package moves

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// setup is which moves a replay switches on, and the committed nodes per
// pool the floor move adds.
type setup struct {
	mig, timeslice, split, spot bool
	floorNodes                  map[string]int // role -> committed nodes
	floorTerm                   price.Capacity // what the committed nodes are bought as
	model                       *gpu.Model     // the nodes' GPU, whose MIG profiles mig uses (nil: H100-80GB)
}

// Roles of pools: the taint that keeps other work off them. The shared
// pool has none.
const (
	roleShared = "shared"
	roleServe  = "serve" // inference (and notebooks without timeslice) after split or spot
	roleTrain  = "train" // training and fine-tuning after split or spot
	roleDev    = "dev"   // notebooks on time-sliced GPUs
	// roleUnused holds nodes no work tolerates and no autoscaler brings
	// up: they keep every setup's fleet the same size, and so its tenants'
	// quotas (shares of the fleet's GPUs), so that every move is asked the
	// same work.
	roleUnused = "unused"
	// poolSlots is the fleet of every setup, in pools: four roles and the
	// floor's committed nodes.
	poolSlots = 5
)

// Slices is how many time-sliced shares a GPU of the dev pool offers.
const Slices = 4

// roleOf is the pool a class of work runs in under s.
func (s setup) roleOf(class string) string {
	switch class {
	case workload.Training, workload.FineTuning:
		if s.split || s.spot {
			return roleTrain
		}
	case workload.Notebook:
		if s.timeslice {
			return roleDev
		}
	}
	// Tolerating a pool's taint allows work there, it does not keep it
	// there: once training has a pool of its own (split or spot), the rest
	// goes to a tainted pool of its own too, or training would spill into
	// it.
	if s.split || s.spot {
		return roleServe
	}
	return roleShared
}

// roles lists the pools s needs, in a fixed order.
func (s setup) roles() []string {
	var out []string
	for _, c := range []string{workload.Inference, workload.Training, workload.Notebook} {
		if r := s.roleOf(c); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// buildFleet makes one pool of nodes (8 GPUs of model each) per role, and
// the committed nodes of the floor in pools of their own ("<role>-committed",
// same taints and zone), named after their pool.
func (s setup) buildFleet(nodes int, model string) (*fleet.Fleet, error) {
	f := &fleet.Fleet{Levels: []string{"zone", "block", "rack"}}
	for _, role := range s.roles() {
		if err := s.addPool(f, role, role, nodes, model, fleet.CapacityOnDemand); err != nil {
			return nil, err
		}
		if n := min(s.floorNodes[role], nodes); n > 0 {
			if err := s.addPool(f, role, role+"-committed", n, model, fleet.CapacityReserved); err != nil {
				return nil, err
			}
		}
	}
	if pad := poolSlots*nodes - len(f.Nodes); pad > 0 {
		if err := s.addPool(f, roleUnused, roleUnused, pad, model, fleet.CapacityOnDemand); err != nil {
			return nil, err
		}
	}
	return f, f.Validate()
}

func (s setup) addPool(f *fleet.Fleet, role, pool string, nodes int, model, capacity string) error {
	mig := fleet.MIGNone
	if s.mig && role != roleTrain && role != roleDev {
		mig = fleet.MIGDynamic
	}
	g, err := fleet.Synthetic{Nodes: nodes, GPUModel: model, MIG: mig}.Build()
	if err != nil {
		return fmt.Errorf("pool %s: %w", pool, err)
	}
	if role == roleTrain && s.spot && capacity != fleet.CapacityReserved {
		capacity = fleet.CapacitySpot
	}
	for _, n := range g.Nodes {
		n.Name = pool + "-" + strconv.Itoa(len(f.Nodes))
		n.Pool = pool
		// Committed nodes share their role's zone and blocks, in racks of
		// their own, so that a gang may span them and the pool's nodes.
		n.Domains = []string{role, n.Domains[1], n.Domains[2]}
		if pool != role {
			n.Domains[2] = "committed-" + n.Domains[2]
		}
		n.Labels = map[string]string{fleet.CapacityTypeLabel: capacity}
		if role != roleShared {
			n.Taints = append(n.Taints, role)
		}
		if capacity == fleet.CapacitySpot {
			n.Taints = append(n.Taints, fleet.SpotTaint)
		}
		if role == roleDev {
			n.TimeSlices = Slices
		}
		f.Nodes = append(f.Nodes, n)
	}
	return nil
}

// workload is w with every job copied and changed as s says: its demands
// (whole GPUs, MIG slices or time-sliced shares) and the pool it may run
// in (tolerating that pool's taint and no other).
func (s setup) workload(w workload.Workload) workload.Workload {
	out := workload.Workload{Horizon: w.Horizon, Arrivals: make([]workload.Arrival, len(w.Arrivals))}
	for i, a := range w.Arrivals {
		j := *a.Job
		j.Groups = slices.Clone(j.Groups)
		for g := range j.Groups {
			j.Groups[g].Task = s.demand(a.Class, j.Groups[g].Task)
		}
		role := s.roleOf(a.Class)
		j.Tolerations = nil
		if role != roleShared {
			j.Tolerations = append(j.Tolerations, role)
		}
		if role == roleTrain && s.spot {
			j.Tolerations = append(j.Tolerations, workload.SpotTaint)
		}
		a.Job = &j
		out.Arrivals[i] = a
	}
	return out
}

// demand is what one task of a class asks for under s: whole GPUs unless
// the class's move turns a fraction of a GPU into a MIG slice (inference)
// or time-sliced shares (notebooks).
func (s setup) demand(class string, d job.Demand) job.Demand {
	if d.Kind() != job.MIG && d.Kind() != job.Shared {
		return d
	}
	f := workload.GPUFraction(d)
	g := job.Demand{GPUs: 1}
	switch {
	case class == workload.Notebook && s.timeslice:
		g = job.Demand{Shares: max(1, int(math.Ceil(f*Slices-1e-9)))}
	case class != workload.Notebook && s.mig:
		g = migFor(s.migModel(), f)
	}
	g.CPUMilli, g.MemoryMiB, g.Models = d.CPUMilli, d.MemoryMiB, d.Models
	return g
}

// migModel is the GPU whose MIG profiles the mig move uses.
func (s setup) migModel() *gpu.Model {
	if s.model != nil {
		return s.model
	}
	m, _ := gpu.Lookup(fleet.DefaultGPUModel) // in the catalog: cannot fail
	return m
}

// migFor is the smallest MIG profile of model (by compute slices, the
// first of its size) with at least fraction f of a GPU, or a whole GPU
// when only the whole-GPU profile would do.
func migFor(model *gpu.Model, f float64) job.Demand {
	for _, p := range model.Profiles {
		if p.Compute == model.ComputeSlices {
			break
		}
		if float64(p.Compute)/float64(model.ComputeSlices) >= f-1e-9 {
			return job.Demand{MIG: p.Name}
		}
	}
	return job.Demand{GPUs: 1}
}
