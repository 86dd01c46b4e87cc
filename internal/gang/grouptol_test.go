package gang

import (
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// A group's own tolerations open nodes to its tasks only: of a job's two
// one-GPU tasks, the one whose group tolerates "a" may land on the node
// tainted "a", the other may not, so the job spans both nodes; without the
// group's toleration neither task may, and the job does not fit.
func TestGroupTolerationsAreTheGroupsOwn(t *testing.T) {
	f, err := fleet.Synthetic{Nodes: 2, GPUsPerNode: 1}.Build()
	if err != nil {
		t.Fatal(err)
	}
	f.Nodes[0].Taints = []string{"a"}
	s := newState(t, f)
	j := &job.Job{Name: "pair", Groups: []job.Group{
		{Name: "first", Count: 1, Task: job.Demand{GPUs: 1}, Tolerations: []string{"a"}},
		{Name: "second", Count: 1, Task: job.Demand{GPUs: 1}},
	}}
	p, unfit := s.Place(j)
	if unfit != nil {
		t.Fatalf("unfit: %v", unfit.Lines())
	}
	byGroup := map[int]string{}
	for _, task := range p.Tasks {
		byGroup[task.Group] = task.NodeName
	}
	if byGroup[0] != f.Nodes[0].Name || byGroup[1] != f.Nodes[1].Name {
		t.Fatalf("tasks by group %v: want the tolerating group on %s", byGroup, f.Nodes[0].Name)
	}
	if err := s.Release("pair"); err != nil {
		t.Fatal(err)
	}
	j.Groups[0].Tolerations = nil
	if p, unfit := s.Place(j); unfit == nil {
		t.Fatalf("placed %+v with neither group tolerating the tainted node's taint", p.Tasks)
	}
}

// A strict gang of two groups that does not fit is not placed: on one GPU,
// a job of two one-GPU tasks in two groups used to come back with one task
// placed and no reason given.
func TestTwoGroupGangNeverPlacedInPart(t *testing.T) {
	f, err := fleet.Synthetic{Nodes: 1, GPUsPerNode: 1}.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := newState(t, f)
	j := &job.Job{Name: "pair", Groups: []job.Group{
		{Name: "first", Count: 1, Task: job.Demand{GPUs: 1}},
		{Name: "second", Count: 1, Task: job.Demand{GPUs: 1}},
	}}
	if p, unfit := s.Place(j); unfit == nil {
		t.Fatalf("placed %+v: 2 tasks on 1 GPU", p.Tasks)
	}
	if s.FreeGPUs(0) != 1 {
		t.Fatalf("%d GPUs free after a refused placement, want 1", s.FreeGPUs(0))
	}
}

// What work holds of the GPUs: a whole GPU 1000, two of four time slices
// 500 (surely, and once placed), a 1g.10gb MIG instance 142 (1 of 7
// compute slices).
func TestMilliHeld(t *testing.T) {
	f, err := fleet.Synthetic{Nodes: 1, GPUsPerNode: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	f.Nodes[0].TimeSlices = 4
	s := newState(t, f)
	shares := &job.Job{Name: "shares", Groups: []job.Group{{Name: "t", Count: 1, Task: job.Demand{Shares: 2}}}}
	mig := &job.Job{Name: "mig", Groups: []job.Group{{Name: "t", Count: 1, Task: job.Demand{MIG: "1g.10gb"}}}}
	whole := &job.Job{Name: "whole", Groups: []job.Group{{Name: "t", Count: 1, Task: job.Demand{GPUs: 1}}}}
	for _, tc := range []struct {
		j    *job.Job
		want int64
	}{{shares, 500}, {mig, 142}, {whole, 1000}} {
		if got := s.LeastMilli(tc.j); got != tc.want {
			t.Errorf("%s: LeastMilli %d, want %d", tc.j.Name, got, tc.want)
		}
	}
	for _, j := range []*job.Job{shares, whole} {
		p, unfit := s.Place(j)
		if unfit != nil {
			t.Fatalf("%s: %v", j.Name, unfit.Lines())
		}
		if got, want := s.PlacedMilli(p), s.LeastMilli(j); got != want {
			t.Errorf("%s: PlacedMilli %d, want %d", j.Name, got, want)
		}
	}
	if got := InstanceMilli("A100-80GB", "1g.10gb"); got != 142 {
		t.Errorf("1g.10gb on an A100: %d, want 142", got)
	}
}
