package gang

import (
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
)

// Adopt records running work where it runs: on a cordoned, tainted node,
// whatever the packing policy would choose, and refuses what the node
// cannot hold without changing anything.
func TestAdoptRecordsWhereWorkRuns(t *testing.T) {
	f, err := fleet.Synthetic{Nodes: 3, GPUsPerNode: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	f.Nodes[2].Taints = []string{"spot"}
	s := newState(t, f)
	last := f.Nodes[2].Name
	if err := s.SetHealth(last, fleet.Cordoned); err != nil {
		t.Fatal(err)
	}
	p, err := s.Adopt(gpuJob("running", 2, 3), last)
	if err != nil {
		t.Fatal(err)
	}
	if nodes := nodesOf(p); len(nodes) != 1 || nodes[0] != last || s.FreeGPUs(2) != 2 {
		t.Fatalf("adopted on %v with %d GPUs left there, want %s with 2", nodes, s.FreeGPUs(2), last)
	}
	if _, err := s.Adopt(gpuJob("too-big", 1, 4), last); err == nil || !strings.Contains(err.Error(), "holds 0 of its 1") {
		t.Fatalf("adopting 4 GPUs on a node with 2 left: %v", err)
	}
	if s.FreeGPUs(2) != 2 || s.Job("too-big") != nil {
		t.Fatal("a refused adoption changed the state")
	}
}
