package sim

import (
	"sort"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/workload"
)

// Hour is the fleet at the start of one hour of a replay: what the work
// asked for, and per group of nodes what was there, held and used. The
// cost model prices these; the commitment planner reads Occupied as the
// demand for cards.
type Hour struct {
	Hour     int         `json:"hour"`
	Demanded float64     `json:"demanded_gpus"` // asked by every job arrived and not finished
	Groups   []GroupHour `json:"groups"`
}

// GroupHour is one pool, capacity type and GPU model in one hour.
// Occupied counts cards with anything on them (what must be paid for);
// Fragmented counts free cards on nodes that are partly occupied;
// Allocated and Used are GPU amounts (shares and MIG slices as fractions).
type GroupHour struct {
	Pool         string  `json:"pool"`
	CapacityType string  `json:"capacity_type"`
	GPUModel     string  `json:"gpu_model"`
	GPUs         int     `json:"gpus"`           // cards paid for: on nodes that take work, and every reserved card (a commitment is paid whether its node runs or not)
	Away         int     `json:"away,omitempty"` // of GPUs, reserved cards paid for whose node takes no work
	Occupied     int     `json:"occupied"`
	Fragmented   int     `json:"fragmented"`
	Allocated    float64 `json:"allocated"`
	Used         float64 `json:"used"`
}

// Capacity types of nodes (see fleet.Node.CapacityType).
const (
	OnDemand = fleet.CapacityOnDemand
	Spot     = fleet.CapacitySpot
)

// CapacityType is the capacity type of a node.
func CapacityType(n *fleet.Node) string { return n.CapacityType() }

// series samples the fleet at every hour boundary. Groups are fixed at
// the start; allocation and use per group are kept up to date as
// placements come and go.
type series struct {
	groups    []GroupHour // keys only
	groupOf   []int       // node index -> group
	allocated []float64   // per group, now
	used      []float64
	demanded  float64
	next      time.Duration // the next hour boundary to sample
	hours     []Hour
}

func newSeries(f *fleet.Fleet) series {
	s := series{groupOf: make([]int, len(f.Nodes))}
	index := map[[3]string]int{}
	keys := make([][3]string, len(f.Nodes))
	for i := range f.Nodes {
		n := &f.Nodes[i]
		keys[i] = [3]string{n.Pool, CapacityType(n), n.GPUModel}
		if _, ok := index[keys[i]]; !ok {
			index[keys[i]] = 0
		}
	}
	sorted := make([][3]string, 0, len(index))
	for k := range index {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		for x := range a {
			if a[x] != b[x] {
				return a[x] < b[x]
			}
		}
		return false
	})
	for i, k := range sorted {
		index[k] = i
		s.groups = append(s.groups, GroupHour{Pool: k[0], CapacityType: k[1], GPUModel: k[2]})
	}
	for i := range keys {
		s.groupOf[i] = index[keys[i]]
	}
	s.allocated = make([]float64, len(s.groups))
	s.used = make([]float64, len(s.groups))
	return s
}

// hold adds (sign 1) or removes (sign -1) a placement's GPUs to its groups.
func (s *series) hold(p *gang.Placement, sign float64) {
	if p == nil {
		return
	}
	for _, t := range p.Tasks {
		s.allocated[s.groupOf[t.Node]] += sign * taskPlacedGPUs(t)
	}
}

// use adds or removes a running job's use, spread over its placements'
// groups in proportion to what each holds.
func (s *series) use(parts []*gang.Placement, gpus, sign float64) {
	held := 0.0
	for _, p := range parts {
		held += placedGPUs(p)
	}
	if held <= 0 {
		return
	}
	for _, p := range parts {
		for _, t := range p.Tasks {
			s.used[s.groupOf[t.Node]] += sign * gpus * taskPlacedGPUs(t) / held
		}
	}
}

// sampleBefore records every hour boundary before at with the state as it
// is now: the state after every event up to the boundary, since nothing
// changes between events.
func (s *series) sampleBefore(at time.Duration, st *gang.State) {
	for s.next < at {
		s.hours = append(s.hours, s.sample(int(s.next/time.Hour), st))
		s.next += time.Hour
	}
}

func (s *series) sample(hour int, st *gang.State) Hour {
	h := Hour{Hour: hour, Demanded: round3(s.demanded), Groups: append([]GroupHour(nil), s.groups...)}
	nodes := st.Fleet().Nodes
	for i := range nodes {
		n := &nodes[i]
		g := &h.Groups[s.groupOf[i]]
		if !n.Schedulable() {
			if n.CapacityType() == fleet.CapacityReserved {
				g.GPUs += n.GPUs // a commitment is paid whether its node runs or not
				g.Away += n.GPUs
			}
			continue
		}
		free := st.FreeGPUs(i)
		g.GPUs += n.GPUs
		g.Occupied += n.GPUs - free
		if free < n.GPUs {
			g.Fragmented += free
		}
	}
	for i := range h.Groups {
		h.Groups[i].Allocated = round3(max(s.allocated[i], 0))
		h.Groups[i].Used = round3(max(s.used[i], 0))
	}
	return h
}

// round3 rounds to thousandths, so that sums of fractions print the same
// whatever order they were added in.
func round3(x float64) float64 {
	const k = 1000
	if x < 0 {
		return -float64(int64(-x*k+0.5)) / k
	}
	return float64(int64(x*k+0.5)) / k
}

// taskPlacedGPUs is the GPU amount one placed task holds.
func taskPlacedGPUs(t gang.Task) float64 {
	switch {
	case t.MIG != nil:
		return workload.MIGFraction(t.MIG.Profile)
	case t.Milli > 0:
		return float64(t.Milli) / 1000
	}
	return float64(len(t.GPUs))
}
