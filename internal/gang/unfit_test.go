package gang

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// countsFleet is seven 8-GPU nodes, each kept from a task by one thing:
// n0 is free, n1 cordoned, n2 a hot spare, n3 tainted "dra-only", n4
// tainted "spot", n5 of another model, n6 has 1 CPU core left.
func countsFleet(t *testing.T) *State {
	t.Helper()
	f := grid(t, nil, nil, 7, 8, "H100-80GB")
	f.Nodes[1].Health = fleet.Cordoned
	f.Nodes[2].Spare = true
	f.Nodes[3].Taints = []string{"dra-only"}
	f.Nodes[4].Taints = []string{"spot"}
	f.Nodes[5].GPUModel = "A100-80GB"
	f.Nodes[6].CPUMilli = 1000
	return newState(t, f)
}

// TestUnfitCountsNodesByReason checks Unfit's codes with counts: which
// nodes each reason kept from a task of the job, with the taint named,
// and the core's wording of them.
func TestUnfitCountsNodesByReason(t *testing.T) {
	task := job.Demand{GPUs: 8, CPUMilli: 4000, MemoryMiB: 1024, Models: []string{"H100-80GB"}}
	cases := []struct {
		name  string
		job   *job.Job
		want  []NodeCount
		lines []string
	}{
		{
			name: "two whole nodes: one free, six filtered",
			job:  &job.Job{Name: "two", Groups: []job.Group{{Name: "w", Count: 2, Task: task}}},
			want: []NodeCount{
				{Reason: ReasonModel, Nodes: 1},
				{Reason: ReasonTaint, Detail: "dra-only", Nodes: 1},
				{Reason: ReasonTaint, Detail: "spot", Nodes: 1},
				{Reason: ReasonSpare, Nodes: 1},
				{Reason: ReasonUnhealthy, Nodes: 1},
				{Reason: ReasonCPU, Nodes: 1},
			},
			lines: []string{
				"needs 16 GPUs (2 tasks of 8); the fleet has room for 8 GPUs (1 task of 8) now",
				"2 nodes: node has a taint the job does not tolerate",
				"1 node: GPU model not allowed",
				"1 node: node is a hot spare: kept for replacing failed nodes, lent only to short preemptible work",
				"1 node: node is unhealthy or cordoned",
				"1 node: not enough free CPU",
			},
		},
		{
			name: "spot tolerated: one more node holds a task",
			job:  &job.Job{Name: "three", Tolerations: []string{"spot"}, Groups: []job.Group{{Name: "w", Count: 3, Task: task}}},
			want: []NodeCount{
				{Reason: ReasonModel, Nodes: 1},
				{Reason: ReasonTaint, Detail: "dra-only", Nodes: 1},
				{Reason: ReasonSpare, Nodes: 1},
				{Reason: ReasonUnhealthy, Nodes: 1},
				{Reason: ReasonCPU, Nodes: 1},
			},
			lines: []string{
				"needs 24 GPUs (3 tasks of 8); the fleet has room for 16 GPUs (2 tasks of 8) now",
				"1 node: GPU model not allowed",
				"1 node: node has a taint the job does not tolerate",
				"1 node: node is a hot spare: kept for replacing failed nodes, lent only to short preemptible work",
				"1 node: node is unhealthy or cordoned",
				"1 node: not enough free CPU",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := countsFleet(t)
			_, u := s.Place(c.job)
			if u == nil {
				t.Fatal("placed, want unfit")
			}
			if got := u.Filtered(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("filtered\n got %v\nwant %v", got, c.want)
			}
			if len(u.Groups) != 1 || u.Groups[0].Evaluated != 7 {
				t.Errorf("groups %+v, want one that evaluated 7 nodes", u.Groups)
			}
			if got := u.Lines(); !reflect.DeepEqual(got, c.lines) {
				t.Errorf("lines\n got %q\nwant %q", got, c.lines)
			}
		})
	}
}

// TestUnfitFormatWordsCodesForAFace checks that a face's phrase words the
// codes, the taint's name among them, and that counts it words alike are
// added up.
func TestUnfitFormatWordsCodesForAFace(t *testing.T) {
	s := countsFleet(t)
	_, u := s.Place(&job.Job{Name: "three", Groups: []job.Group{{Name: "w", Count: 3, Task: job.Demand{GPUs: 8, CPUMilli: 4000}}}})
	if u == nil {
		t.Fatal("placed, want unfit")
	}
	phrase := func(c NodeCount) string {
		if c.Reason == ReasonTaint {
			return fmt.Sprintf("taint %s", c.Detail)
		}
		return "other"
	}
	got := u.Format(phrase)
	want := []string{
		"needs 24 GPUs (3 tasks of 8); the fleet has room for 16 GPUs (2 tasks of 8) now",
		"3 nodes: other", "1 node: taint dra-only", "1 node: taint spot",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("format\n got %q\nwant %q", got, want)
	}
}
