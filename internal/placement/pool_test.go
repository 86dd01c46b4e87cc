package placement

import (
	"testing"
)

// poolWorkload is half T4-only one-GPU pods, the rest one-GPU pods that
// may go anywhere and 8-GPU pods that need a whole G2 node.
func poolWorkload() []Pod {
	var pods []Pod
	for range 50 {
		pods = append(pods, *whole(4000, 1, "T4"))
	}
	for range 40 {
		pods = append(pods, *whole(4000, 1))
	}
	for range 10 {
		pods = append(pods, *whole(88000, 8))
	}
	return pods
}

// poolCluster is two T4 nodes of two GPUs, first in line, and two G2
// nodes of eight.
func poolCluster() *Cluster {
	return NewCluster([]Node{
		gpuNode("t4a", 104000, 2, "T4"), gpuNode("t4b", 104000, 2, "T4"),
		gpuNode("g2a", 96000, 8, "G2"), gpuNode("g2b", 96000, 8, "G2"),
	})
}

func TestCorralKeepsATightPool(t *testing.T) {
	for _, online := range []bool{false, true} {
		var policy *Corral
		if online {
			policy = NewCorralOnline()
			for _, p := range poolWorkload() {
				policy.Observe(&p)
			}
		} else {
			policy = NewCorral(poolWorkload())
		}
		c := poolCluster()
		// The host guard alone would send it to a T4 node: either G2 node
		// would end a host of the 8-GPU pods.
		if ch := policy.Place(c, whole(4000, 1), allNodes(c)); c.Nodes[ch.Node].Model != "G2" {
			t.Errorf("online %v: a pod that may go anywhere took a GPU of the tight T4 pool", online)
		}
		if ch := policy.Place(c, whole(4000, 1, "T4"), []int{0, 1}); c.Nodes[ch.Node].Model != "T4" {
			t.Errorf("online %v: a T4 pod went to %s", online, c.Nodes[ch.Node].Name)
		}
		// With nowhere else to go, it may.
		if ch := policy.Place(c, whole(4000, 1), []int{1}); ch.Node != 1 {
			t.Errorf("online %v: a pod with one feasible node went to %d", online, ch.Node)
		}
	}
}

func TestPoolTightness(t *testing.T) {
	c := poolCluster()
	var g poolGuard
	g.reset(c, groupPods(poolWorkload()))
	if len(g.pools) != 1 || g.pools[0].models[0] != "T4" {
		t.Fatalf("pools %v, want one, T4", g.pools)
	}
	// Half the arrivals ask for a T4 GPU, 4 of 20 GPUs are T4.
	if got := g.keep(c, whole(4000, 1), allNodes(c), 20); len(got) != 2 || got[0] != 2 {
		t.Fatalf("kept %v, want the G2 nodes", got)
	}
	if got := g.keep(c, whole(4000, 1, "T4"), allNodes(c), 20); got != nil {
		t.Fatalf("a T4 pod is kept off nothing, got %v", got)
	}
	// Two arrivals left: one T4 GPU expected, four free.
	if got := g.keep(c, whole(4000, 1), allNodes(c), 2); got != nil {
		t.Fatalf("with the pool ample, kept %v, want nil", got)
	}
	c.Bind(*whole(4000, 2), Choice{Node: 0, GPUs: []int{0, 1}})
	c.Bind(*whole(4000, 1), Choice{Node: 1, GPUs: []int{0}})
	if got := g.keep(c, whole(4000, 1), allNodes(c), 3); len(got) != 2 {
		t.Fatalf("one T4 GPU left for 1.5 expected: kept %v, want the G2 nodes", got)
	}
	var none poolGuard
	none.reset(c, groupPods(scarceWorkload()))
	if len(none.pools) != 0 || none.keep(c, whole(4000, 1), allNodes(c), 20) != nil {
		t.Fatalf("without restricted shapes there is no pool")
	}
}
