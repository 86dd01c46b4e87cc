package moves

import (
	"fmt"

	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/sim"
)

// FloorPlan is the commitment the planner recommended for one pool.
type FloorPlan struct {
	After         string  `json:"planned_on"` // the replay whose demand it was planned on
	Pool          string  `json:"pool"`
	PlannerGPUs   int     `json:"planner_gpus"`   // the planner's level
	CommittedGPUs int     `json:"committed_gpus"` // whole nodes of it
	BreakEven     float64 `json:"break_even_utilisation"`
	Skipped       string  `json:"skipped,omitempty"` // why nothing was committed
}

// floor plans a commitment for each on-demand pool of a replay on its cards
// occupied hour by hour while work arrived, and returns the whole nodes of
// it per pool. Spot pools get none: their overflow is spot, not on demand.
func (r *runner) floor(m Move) map[string]int {
	out := map[string]int{}
	for _, pool := range onDemandPools(m.demand) {
		fp := FloorPlan{After: m.Name, Pool: pool}
		d := poolDemand(m.demand, pool)
		p, err := plan.Build(d, r.o.Catalog, plan.Options{Term: r.o.Term, Families: map[string]string{r.o.GPUModel: r.o.Family}})
		switch {
		case err != nil:
			fp.Skipped = err.Error()
		case len(p.Models) == 0:
			fp.Skipped = fmt.Sprintf("no model planned: %v", p.Skipped)
		default:
			fp.PlannerGPUs, fp.BreakEven = p.Models[0].Committed, p.Models[0].BreakEven
			fp.CommittedGPUs = fp.PlannerGPUs / fleet.DefaultGPUsPerNode * fleet.DefaultGPUsPerNode
			out[pool] = fp.CommittedGPUs / fleet.DefaultGPUsPerNode
		}
		r.rep.Floors = append(r.rep.Floors, fp)
	}
	return out
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
func poolDemand(res *sim.Result, pool string) *plan.Demand {
	var gpus []float64
	model := ""
	for _, h := range res.Hours {
		if float64(h.Hour) >= res.Summary.HorizonH {
			break
		}
		busy := 0.0
		for _, g := range h.Groups {
			if g.Pool == pool || g.Pool == pool+"-committed" {
				busy += float64(g.Occupied)
				model = g.GPUModel
			}
		}
		gpus = append(gpus, busy)
	}
	if model == "" {
		model = fleet.DefaultGPUModel
	}
	return &plan.Demand{Hours: len(gpus), Series: []plan.Series{{Model: model, GPUs: gpus}}}
}
