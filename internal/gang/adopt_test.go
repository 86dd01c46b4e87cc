package gang

import (
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
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

func milliJob(name string, milli int) *job.Job {
	return &job.Job{Name: name, Groups: []job.Group{{Name: "pod", Count: 1, Task: job.Demand{GPUMilli: milli}}}}
}

// AdoptShareOn records a share on the GPU it runs on (a DRA driver's
// choice, not the packing policy's), refuses one that GPU has no room
// for, and takes fractions on a node whose GPUs are Fractional, where
// time-sliced shares do not fit.
func TestAdoptShareOnTheGPUItRunsOn(t *testing.T) {
	f, err := fleet.Synthetic{Nodes: 1, GPUsPerNode: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	f.Nodes[0].Fractional = true
	s := newState(t, f)
	node := f.Nodes[0].Name
	for i, want := range []struct {
		name       string
		milli, gpu int
		err        string
	}{
		{"a", 600, 3, ""},
		{"b", 300, 3, ""},
		{"c", 200, 3, "has not the room"},
		{"d", 200, 2, ""},
		{"e", 100, 9, "has not the room"},
	} {
		p, err := s.AdoptShareOn(milliJob(want.name, want.milli), node, want.gpu)
		switch {
		case want.err != "" && (err == nil || !strings.Contains(err.Error(), want.err)):
			t.Fatalf("%d: adopting %s: %v, want %q", i, want.name, err, want.err)
		case want.err == "" && err != nil:
			t.Fatalf("%d: adopting %s: %v", i, want.name, err)
		case want.err == "" && (len(p.Tasks) != 1 || p.Tasks[0].GPUs[0] != want.gpu || p.Tasks[0].Milli != want.milli):
			t.Fatalf("%d: %s adopted as %+v, want %d milli on GPU %d", i, want.name, p.Tasks, want.milli, want.gpu)
		}
	}
	if got := s.FreeGPUs(0); got != 2 {
		t.Fatalf("%d whole GPUs free after shares on GPUs 2 and 3, want 2", got)
	}
	shares := &job.Job{Name: "slices", Groups: []job.Group{{Name: "pod", Count: 1, Task: job.Demand{Shares: 1}}}}
	if _, ok := s.TryPlace(shares); ok {
		t.Fatal("time-sliced shares placed on GPUs shared only by fractions")
	}
	if _, ok := s.TryPlace(milliJob("fits", 100)); !ok {
		t.Fatal("a fraction did not fit a fractional node with room")
	}
}

// A node marked fractional whose GPUs are in MIG mode (a label set by
// mistake, or a fleet file that says both) shares none of them by
// fractions: fleet.Node.Fractional is for non-MIG GPUs, as time-slicing
// is, and a MIG GPU's room is its layout's, not a fraction.
func TestNoFractionsOfMIGGPUs(t *testing.T) {
	f := grid(t, []string{"rack"}, []int{1}, 1, 2, "A100-80GB")
	f.Nodes[0].MIG = fleet.MIGDynamic
	f.Nodes[0].Fractional = true
	s := newState(t, f)
	_, u := s.Place(milliJob("share", 300))
	if u == nil {
		t.Fatal("a 300-milli share was placed on a MIG GPU")
	}
	if !strings.Contains(u.Error(), ReasonNoSharing.String()) {
		t.Errorf("why: %v, want %q", u, ReasonNoSharing.String())
	}
	if _, u := s.Place(gpuJob("whole", 1, 2)); u != nil {
		t.Fatalf("the node's two GPUs, idle, should still be given whole: %v", u)
	}
}
