package placement

import (
	"testing"
)

// scarceWorkload is 98 one-GPU pods and two 8-GPU pods that need 120 CPUs,
// which only a G3 node has. The big pods are rarer than the 5% that the
// typical mix leaves out, so fragmentation alone does not see them.
func scarceWorkload() []Pod {
	var pods []Pod
	for range 98 {
		pods = append(pods, *whole(4000, 1))
	}
	return append(pods, *whole(120000, 8), *whole(120000, 8))
}

// scarceCluster is one G3 node (128 CPUs) first in line and nine G2 nodes
// (96 CPUs), eight GPUs each.
func scarceCluster() *Cluster {
	nodes := []Node{gpuNode("g3", 128000, 8, "G3")}
	for range 9 {
		nodes = append(nodes, gpuNode("g2", 96000, 8, "G2"))
	}
	return NewCluster(nodes)
}

func TestGuardNestsDemand(t *testing.T) {
	pods := []Pod{*whole(4000, 1), *whole(4000, 1), *whole(88000, 8), *whole(120000, 8)}
	c := NewCluster([]Node{gpuNode("g3", 128000, 8, "G3"), gpuNode("g2", 96000, 8, "G2"), gpuNode("t4", 104000, 2, "T4")})
	var g hostGuard
	g.reset(c, groupPods(pods))
	small := g.index[classKey{4000, 1000, 1, ""}]
	mid := g.index[classKey{88000, 1000, 8, ""}]
	big := g.index[classKey{120000, 1000, 8, ""}]
	cases := []struct {
		name   string
		shape  int
		demand float64
	}{
		{"one GPU: every shape uses only node types it can use", small, 1},
		{"88 CPUs: itself and the 120-CPU pods", mid, 0.5},
		{"120 CPUs: only itself", big, 0.25},
	}
	for _, tc := range cases {
		if got := g.demand[tc.shape]; got != tc.demand {
			t.Errorf("%s: demand %v, want %v", tc.name, got, tc.demand)
		}
	}
	if g.within[big].has(mid) || !g.within[mid].has(big) {
		t.Errorf("nesting: 120-CPU pods compete for 88-CPU hosts, not the other way round")
	}
}

func TestCorralKeepsScarceHosts(t *testing.T) {
	policy := NewCorral(scarceWorkload())
	if len(policy.mix) != 1 {
		t.Fatalf("the typical mix should leave out the 8-GPU pods, got %d shapes", len(policy.mix))
	}
	c := scarceCluster()
	small := whole(4000, 1)
	if ch := policy.Place(c, small, allNodes(c)); ch.Node == 0 {
		t.Fatalf("a one-GPU pod took the only node a 120-CPU pod fits")
	}
	// With nowhere else to go, it may.
	if ch := policy.Place(c, small, []int{0}); ch.Node != 0 {
		t.Fatalf("a one-GPU pod with one feasible node went to %d", ch.Node)
	}
	// The pod the host is kept for takes it.
	if ch := policy.Place(c, whole(120000, 8), []int{0}); ch.Node != 0 {
		t.Fatalf("the 120-CPU pod went to %d", ch.Node)
	}
}

func TestGuardFollowsTheCluster(t *testing.T) {
	c := scarceCluster()
	var g hostGuard
	g.reset(c, groupPods(scarceWorkload()))
	big := g.index[classKey{120000, 1000, 8, ""}]
	small := whole(4000, 1)
	g.refresh(c)
	if g.hosts[big] != 1 {
		t.Fatalf("hosts of the 120-CPU shape: %d, want 1", g.hosts[big])
	}
	if _, any := g.shortFor(c, small); !any || !g.short.has(big) {
		t.Fatalf("with 80 GPUs free and one host, the 120-CPU shape should be short")
	}
	c.Bind(*small, Choice{Node: 0, GPUs: []int{0}})
	g.refresh(c)
	if g.hosts[big] != 0 {
		t.Fatalf("after a one-GPU pod on the G3 node, hosts of the 120-CPU shape: %d, want 0", g.hosts[big])
	}
	// Nearly full: the one host left is more than the arrivals expect.
	full := scarceCluster()
	for n := 1; n < len(full.Nodes); n++ {
		full.Bind(*whole(4000, 8), Choice{Node: n, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
	}
	g.reset(full, groupPods(scarceWorkload()))
	g.refresh(full)
	if _, any := g.shortFor(full, small); any {
		t.Fatalf("with 8 GPUs free, no shape should be short")
	}
}

// TestGuardLeavesCommonShapesAlone: on a small mixed fleet, shapes that
// every node type takes are competed for by nearly every arrival, so they
// are never short; guarding them kept one-GPU pods off the small nodes and
// onto the one node a rare 8-GPU pod needs. The rare shape is still
// guarded when its hosts run low.
func TestGuardLeavesCommonShapesAlone(t *testing.T) {
	var pods []Pod
	for range 60 {
		pods = append(pods, *whole(4000, 1))
	}
	for range 30 {
		pods = append(pods, *whole(8000, 2))
	}
	pods = append(pods, *whole(88000, 8))
	c := NewCluster([]Node{gpuNode("g2", 96000, 8, "G2"), gpuNode("t4a", 104000, 2, "T4"),
		gpuNode("t4b", 104000, 2, "T4"), gpuNode("t4c", 104000, 2, "T4")})
	var g hostGuard
	g.reset(c, groupPods(pods))
	g.refresh(c)
	one, two := g.index[classKey{4000, 1000, 1, ""}], g.index[classKey{8000, 1000, 2, ""}]
	big := g.index[classKey{88000, 1000, 8, ""}]
	if g.demand[one] < 0.99 || g.demand[two] < 0.99 {
		t.Fatalf("every arrival competes with the 1- and 2-GPU shapes: demand %.2f and %.2f", g.demand[one], g.demand[two])
	}
	small := whole(4000, 1)
	if _, any := g.shortFor(c, small); any || g.short.has(two) {
		t.Fatalf("4 hosts against about 13 expected copies, but every arrival competes: no shape should be short (2-GPU short: %v)", g.short.has(two))
	}
	if kept := g.keep(c, small, 0, allNodes(c), func(int) int { return -1 }); kept != nil {
		t.Fatalf("a one-GPU pod was kept to nodes %v; nothing is short", kept)
	}
	// The rare shape: its one host with many arrivals still to come.
	g.demand[big] = 0.5
	if _, any := g.shortFor(c, small); !any || !g.short.has(big) {
		t.Fatalf("the 8-GPU shape, with one host and half the arrivals competing for it, should be short")
	}
	if kept := g.keep(c, small, 0, allNodes(c), func(int) int { return -1 }); len(kept) != 3 || kept[0] == 0 {
		t.Fatalf("a one-GPU pod was kept to %v, want the three small nodes", kept)
	}
}
