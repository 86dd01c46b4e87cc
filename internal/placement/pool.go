package placement

import (
	"sort"
)

// poolSlack is how much free milli-GPU a model pool must keep per milli
// expected from the pods confined to it; with less, it is tight. 0.7 was
// worse on the fleet-like gpu_spec variants, 1.5 about the same
// (bench/fgd/RESULTS.md, section 7).
const poolSlack = 1.0

// poolGuard keeps a pool of GPU models for the pods that may use nothing
// else, when they would need all of it.
//
// A pool is the allowed-model set of a model-restricted shape seen (T4, or
// V100M16|V100M32). Its demand is the milli-GPU expected before the cluster
// is full from the shapes whose allowed models all lie in it; its supply
// is the milli-GPU left on its nodes. When the supply falls below
// poolSlack times the demand, the pool is tight, and a pod that may also
// use other models is kept off its nodes while any other feasible node
// would take it. Fragmentation and the host guard see pools only through
// the shapes' weights and the nodes' hosts: on a fleet whose small pool is
// named by a large share of the pods, they let pods that could go anywhere
// spend the GPUs the restricted pods have nowhere else to find.
//
// With no model-restricted shape seen there is no pool, and nothing
// changes.
type poolGuard struct {
	pools  []pool
	byNode [][]int // per node: the pools its model belongs to
	free   []int64 // per pool: milli-GPU left on its nodes
	idle   []int64 // per node: milli-GPU left when last counted
	gen    []uint32
	logPos int
	tight  []bool
	kept   []int
}

type pool struct {
	models []string
	demand float64 // milli-GPU per arrival of the shapes confined to it
}

// reset starts over from an estimate of every shape's share of arrivals.
func (g *poolGuard) reset(c *Cluster, all Mix) {
	total := 0.0
	seen := map[string]int{}
	g.pools = g.pools[:0]
	for _, t := range all {
		total += t.Weight
		if t.GPUMilli == 0 || len(t.Models) == 0 {
			continue
		}
		k := joinModels(sortedModels(t.Models))
		if _, ok := seen[k]; !ok {
			seen[k] = len(g.pools)
			g.pools = append(g.pools, pool{models: sortedModels(t.Models)})
		}
	}
	if len(g.pools) == 0 {
		return
	}
	for i := range g.pools {
		for _, t := range all {
			if t.GPUMilli > 0 && len(t.Models) > 0 && within(t.Models, g.pools[i].models) {
				g.pools[i].demand += t.Weight / total * float64(t.GPUMilli) * float64(t.NumGPU)
			}
		}
	}
	g.byNode = make([][]int, len(c.Nodes))
	for n, node := range c.Nodes {
		for i, p := range g.pools {
			if (Pod{Models: p.models}).Allows(node.Model) && node.GPUs > 0 {
				g.byNode[n] = append(g.byNode[n], i)
			}
		}
	}
	g.free = make([]int64, len(g.pools))
	g.idle = make([]int64, len(c.Nodes))
	g.gen = make([]uint32, len(c.Nodes))
	for n := range c.Nodes {
		g.idle[n] = c.IdleMilli(n)
		g.gen[n] = c.Generation(n) + 1
		for _, i := range g.byNode[n] {
			g.free[i] += g.idle[n]
		}
	}
	_, g.logPos, _ = c.ChangedSince(0) // the end of the log
	g.tight = make([]bool, len(g.pools))
}

// refresh recounts the free milli of the pools of the nodes that changed.
func (g *poolGuard) refresh(c *Cluster) {
	changed, next, ok := c.ChangedSince(g.logPos)
	g.logPos = next
	recount := func(n int) {
		gen := c.Generation(n) + 1
		if g.gen[n] == gen {
			return
		}
		g.gen[n] = gen
		idle := c.IdleMilli(n)
		for _, i := range g.byNode[n] {
			g.free[i] += idle - g.idle[n]
		}
		g.idle[n] = idle
	}
	if !ok {
		for n := range c.Nodes {
			recount(n)
		}
		return
	}
	for _, n := range changed {
		recount(n)
	}
}

// keep returns the feasible nodes outside the tight pools that pod is not
// confined to, or nil when there are none or no pool is tight for it.
// arrivals is the number of arrivals expected before the cluster is full.
func (g *poolGuard) keep(c *Cluster, pod *Pod, feasible []int, arrivals float64) []int {
	if len(g.pools) == 0 || !pod.IsGPU() {
		return nil
	}
	g.refresh(c)
	any := false
	for i, p := range g.pools {
		g.tight[i] = float64(g.free[i]) < poolSlack*arrivals*p.demand && !(len(pod.Models) > 0 && within(pod.Models, p.models))
		any = any || g.tight[i]
	}
	if !any {
		return nil
	}
	g.kept = g.kept[:0]
	for _, n := range feasible {
		ok := true
		for _, i := range g.byNode[n] {
			if g.tight[i] {
				ok = false
				break
			}
		}
		if ok {
			g.kept = append(g.kept, n)
		}
	}
	if len(g.kept) == 0 {
		return nil
	}
	return g.kept
}

// within reports whether every model of a is in b.
func within(a, b []string) bool {
	for _, m := range a {
		if !(Pod{Models: b}).Allows(m) {
			return false
		}
	}
	return true
}

func sortedModels(models []string) []string {
	s := append([]string(nil), models...)
	sort.Strings(s)
	return s
}
