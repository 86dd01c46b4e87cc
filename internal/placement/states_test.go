package placement

import (
	"math/rand"
	"testing"
)

// TestKeptAnswersAreTheNodesOwn fills clusters whose nodes repeat a few
// types, emptying a node now and then, and after every placement checks
// what corral's policy keeps against what it would find afresh for each
// feasible node: the score and GPU kept for the node's state against the
// node's own, and the host guard's kept answer (from an earlier set of
// short shapes, or another node's state) against endsShort's now.
func TestKeptAnswersAreTheNodesOwn(t *testing.T) {
	models := []string{"A", "B"}
	for trial := range 20 {
		rng := rand.New(rand.NewSource(int64(trial)))
		types := []Node{
			gpuNode("", 32000, 8, "A"), gpuNode("", 64000, 8, "A"),
			gpuNode("", 16000, 4, "B"), gpuNode("", 96000, 8, "B"),
		}
		var nodes []Node
		for range 8 + rng.Intn(24) {
			nodes = append(nodes, types[rng.Intn(len(types))])
		}
		pods := randomPods(rng, 300, models)
		for _, p := range []*Corral{NewCorral(pods), NewCorralOnline()} {
			c := NewCluster(nodes)
			states, checked := fillChecking(t, rng, c, p, pods)
			if states > len(nodes) {
				t.Fatalf("trial %d, %s: %d states kept for %d nodes", trial, p.Name(), states, len(nodes))
			}
			if checked == 0 {
				t.Fatalf("trial %d, %s: no kept answer was checked", trial, p.Name())
			}
		}
	}
}

// fillChecking places pods with p, emptying a random node every tenth pod,
// checks p's kept answers after each placement, and returns the most
// states p kept at once and how many kept answers it checked.
func fillChecking(t *testing.T, rng *rand.Rand, c *Cluster, p *Corral, pods []Pod) (states, checked int) {
	t.Helper()
	for i := range pods {
		pod := &pods[i]
		p.Observe(pod)
		if i%10 == 9 {
			n := rng.Intn(len(c.Nodes))
			full := make([]int64, c.Nodes[n].GPUs)
			for g := range full {
				full[g] = MilliPerGPU
			}
			c.Set(n, c.Nodes[n].CPUMilli, c.Nodes[n].MemoryMiB, full)
		}
		feasible := fitting(c, pod)
		if len(feasible) == 0 {
			continue
		}
		ch := p.Place(c, pod, feasible)
		checked += checkKept(t, c, p, pod, feasible)
		states = max(states, len(p.cache.ids))
		c.Bind(*pod, ch)
	}
	return states, checked
}

// checkKept compares p's kept answers for pod with fresh ones on every
// feasible node, and returns how many kept answers it compared.
func checkKept(t *testing.T, c *Cluster, p *Corral, pod *Pod, feasible []int) int {
	t.Helper()
	class, checked := p.cache.class(pod), 0
	scored := func(n int) cached {
		return p.cache.get(c, n, class, func() (float64, int) { return p.score(c, n, pod) })
	}
	for _, n := range feasible {
		score, gpu := p.score(c, n, pod)
		kept := p.cache.get(c, n, class, func() (float64, int) { return score, gpu })
		if kept.score != score || (pod.IsShare() && kept.gpu != gpu) {
			t.Fatalf("%s: node %d keeps score %v on GPU %d for %+v, its own is %v on GPU %d", p.Name(), n, kept.score, kept.gpu, *pod, score, gpu)
		}
		checked++
	}
	g := &p.guard
	if g.shortAt == nil {
		return checked
	}
	own := -1
	if s, ok := g.index[classKey{pod.CPUMilli, pod.GPUMilli, pod.NumGPU, pod.ModelSpec()}]; ok {
		own = s
	}
	for _, n := range feasible {
		gpu := -1
		if pod.IsShare() {
			gpu = scored(n).gpu
		}
		kept := g.endsShortCached(c, n, pod, class, own, gpu)
		if fresh, _ := g.endsShort(c, n, pod, own, gpu, g.short); kept != fresh {
			t.Fatalf("%s: node %d: the guard keeps %v for %+v, afresh %v", p.Name(), n, kept, *pod, fresh)
		}
		checked++
	}
	return checked
}
