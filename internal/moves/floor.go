package moves

import (
	"fmt"
	"slices"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/commit"
	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/sim"
)

// FloorPlan is the commitment the planner recommended for one pool (a
// capacity commitment) or for the on-demand usage of every pool (a
// discount), checked against a brute-force search of the same series, and
// what it came to.
type FloorPlan struct {
	After string         `json:"planned_on"` // the replay whose demand it was planned on
	Term  price.Capacity `json:"term"`
	Kind  commit.Kind    `json:"kind"`
	Pool  string         `json:"pool"`
	// Series is what the level was planned on: the on-demand GPUs billed
	// each hour (a discount) or the pool's cards occupied (capacity).
	Series      string  `json:"series"`
	PlannerGPUs int     `json:"planner_gpus"` // the planner's level
	BreakEven   float64 `json:"break_even_utilisation"`
	// BruteForceGPUs is the cheapest level found by billing every level
	// from 0 to the peak (commit.Best) on the same series, and
	// BruteForceUSD its cost there; the planner's level must equal it.
	BruteForceGPUs float64 `json:"brute_force_gpus"`
	BruteForceUSD  float64 `json:"brute_force_cost_usd"`
	PlannerUSD     float64 `json:"planner_cost_usd"`
	CommittedGPUs  int     `json:"committed_gpus"` // a capacity floor: whole nodes of it
	// Billing is the commitment's bill in the replay: applied to the
	// usage (a discount), or measured on its nodes (capacity).
	Billing commit.Statement `json:"billing"`
	Skipped string           `json:"skipped,omitempty"` // why nothing was committed
}

// floorName is the row of the floor move for a term: "floor-1y".
func floorName(term price.Capacity) string {
	return "floor-" + string(term)[len("reserved-"):]
}

// floorMove is the floor move for one term. A discount is applied to the
// usage of the replay it is planned on (no replay of its own: a discount
// changes the bill, not where work runs); a capacity commitment is nodes
// added to the fleet, replayed.
func (r *runner) floorMove(after Move, term price.Capacity, s setup, name, what string) (Move, error) {
	kind, err := r.offer.CommitmentKind(term)
	if err != nil {
		return Move{}, fmt.Errorf("move %s: %w", name, err)
	}
	if kind == commit.Discount {
		return r.discount(after, term, name, what), nil
	}
	first := len(r.rep.Floors)
	s.floorTerm, s.floorNodes = term, r.capacityFloor(after, term)
	m, err := r.replay(name, what, s)
	if err != nil {
		return Move{}, err
	}
	r.measure(m, first)
	return m, nil
}

// discount plans a discount commitment on the on-demand GPUs the replay
// after billed each hour, in every pool, and bills it on them.
func (r *runner) discount(after Move, term price.Capacity, name, what string) Move {
	fp := FloorPlan{After: after.Name, Term: term, Kind: commit.Discount, Pool: "all pools",
		Series: "on-demand GPUs billed each hour"}
	series := billedGPUs(after.demand)
	m := after
	m.Name, m.What = name, what
	m.ByCapacity = slices.Clone(after.ByCapacity)
	p, ok := r.plan(&fp, series)
	if ok {
		st := p.Billing
		fp.Billing = st
		m.CostUSD += st.TotalUSD - st.OnDemandUSD
		m.CommittedGPUs = fp.PlannerGPUs
		m.Prices = append(slices.Clone(after.Prices), p.Prices.Committed)
		for i, l := range m.ByCapacity {
			if l.Key == fleet.CapacityOnDemand {
				m.ByCapacity[i].CostUSD -= st.OnDemandUSD - st.OverflowUSD
			}
		}
		m.ByCapacity = append(m.ByCapacity, cost.Line{Key: string(term) + " (discount)", CostUSD: st.CommitmentUSD, UsedGPUH: st.CoveredGPUH})
	}
	if m.WorkGPUH > 0 {
		m.USDPerWorkGPUH = m.CostUSD / m.WorkGPUH
	}
	r.rep.Floors = append(r.rep.Floors, fp)
	return m
}

// capacityFloor plans a capacity commitment for each on-demand pool of a
// replay on its cards occupied hour by hour while work arrived, and
// returns the whole nodes of it per pool. Spot pools get none: their
// overflow is spot, not on demand.
func (r *runner) capacityFloor(after Move, term price.Capacity) map[string]int {
	out := map[string]int{}
	for _, pool := range onDemandPools(after.demand) {
		fp := FloorPlan{After: after.Name, Term: term, Kind: commit.Capacity, Pool: pool, Series: "cards occupied each hour"}
		if _, ok := r.plan(&fp, poolDemand(after.demand, pool)); ok {
			fp.CommittedGPUs = fp.PlannerGPUs / fleet.DefaultGPUsPerNode * fleet.DefaultGPUsPerNode
			out[pool] = fp.CommittedGPUs / fleet.DefaultGPUsPerNode
		}
		r.rep.Floors = append(r.rep.Floors, fp)
	}
	return out
}

// plan runs the planner on a series for fp's term, and the brute-force
// search beside it; false when nothing could be planned (fp.Skipped says
// why).
func (r *runner) plan(fp *FloorPlan, gpus []float64) (plan.ModelPlan, bool) {
	d := &plan.Demand{Hours: len(gpus), Series: []plan.Series{{Model: r.o.GPUModel, GPUs: gpus}}}
	p, err := plan.Build(d, r.o.Catalog, plan.Options{Term: fp.Term, Families: map[string]string{r.o.GPUModel: r.o.Family}})
	switch {
	case err != nil:
		fp.Skipped = err.Error()
		return plan.ModelPlan{}, false
	case len(p.Models) == 0:
		fp.Skipped = fmt.Sprintf("no model planned: %v", p.Skipped)
		return plan.ModelPlan{}, false
	}
	mp := p.Models[0]
	fp.PlannerGPUs, fp.BreakEven, fp.PlannerUSD = mp.Committed, mp.BreakEven, mp.CostUSD
	c := commit.Commitment{Kind: fp.Kind, USDPerGPUHour: mp.Prices.Committed.USDPerGPUHour}
	rates := map[string]commit.Rate{r.o.GPUModel: {OnDemand: mp.Prices.OnDemand.USDPerGPUHour}}
	best, _, err := commit.Best(c, []commit.Usage{{Model: r.o.GPUModel, GPUs: gpus}}, rates, slices.Max(append([]float64{0}, gpus...))+1, 1)
	if err == nil {
		fp.BruteForceGPUs, fp.BruteForceUSD = best.GPUs, best.Statement.TotalUSD
	}
	return mp, true
}

// measure bills the capacity floors planned from index first on their
// nodes in the replay m: cards occupied on the committed nodes, on-demand
// GPUs bought beside them in the same pool.
func (r *runner) measure(m Move, first int) {
	window := arrivalWindow(m.demand)
	for i := first; i < len(r.rep.Floors); i++ {
		fp := &r.rep.Floors[i]
		if fp.Skipped != "" || fp.CommittedGPUs == 0 {
			continue
		}
		var used, overflow []float64
		for _, h := range window {
			u, o := 0.0, 0.0
			for _, g := range h.Groups {
				switch {
				case g.Pool == fp.Pool+"-committed":
					u += float64(g.Occupied)
				case g.Pool == fp.Pool && g.CapacityType == fleet.CapacityOnDemand:
					o += float64(g.GPUs)
				}
			}
			used, overflow = append(used, u), append(overflow, o)
		}
		rate, od := r.rate(fp.Term), r.rate(price.OnDemand)
		fp.Billing = commit.Nodes(float64(fp.CommittedGPUs), rate, od, used, overflow)
	}
}

// rate is the offer's price per GPU-hour of c, 0 when unknown.
func (r *runner) rate(c price.Capacity) float64 {
	p, err := r.offer.PerGPUHour(c)
	if err != nil {
		return 0
	}
	return p.USDPerGPUHour
}

// billedGPUs is the on-demand GPUs there (and billed) at each hour
// boundary of the arrival window, over every pool.
func billedGPUs(res *sim.Result) []float64 {
	var gpus []float64
	for _, h := range arrivalWindow(res) {
		n := 0.0
		for _, g := range h.Groups {
			if g.CapacityType == fleet.CapacityOnDemand {
				n += float64(g.GPUs)
			}
		}
		gpus = append(gpus, n)
	}
	return gpus
}

// onDemandPools lists the on-demand pools of a replay in order of first
// appearance.
func onDemandPools(res *sim.Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range res.Hours {
		for _, g := range h.Groups {
			if g.CapacityType == fleet.CapacityOnDemand && g.Pool != roleUnused && !seen[g.Pool] {
				seen[g.Pool] = true
				out = append(out, g.Pool)
			}
		}
	}
	return out
}

// poolDemand is the cards of a pool occupied at each hour boundary of the
// arrival window (the drain after the last arrival left out), counting the
// pool's committed nodes with it.
func poolDemand(res *sim.Result, pool string) []float64 {
	var gpus []float64
	for _, h := range arrivalWindow(res) {
		busy := 0.0
		for _, g := range h.Groups {
			if g.Pool == pool || g.Pool == pool+"-committed" {
				busy += float64(g.Occupied)
			}
		}
		gpus = append(gpus, busy)
	}
	return gpus
}
