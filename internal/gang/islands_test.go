package gang

import (
	"fmt"
	"testing"

	"github.com/corral-sched/corral/internal/job"
)

// TestGPUsStayInsideIslands checks the GPU choice inside a node: a
// multi-GPU task takes one NVLink island when one holds it, and a 1-GPU
// task fills a partly used island before breaking a whole one.
func TestGPUsStayInsideIslands(t *testing.T) {
	f := grid(t, nil, nil, 1, 8, "A100-80GB")
	n := &f.Nodes[0]
	n.NVLink = [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}
	n.PCIe = [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}
	s := newState(t, f)
	for _, tc := range []struct {
		gpus int
		want string
	}{
		{1, "[0]"},   // every island is whole: the first
		{2, "[2 3]"}, // an island of two, in the PCIe switch already in use
		{1, "[1]"},   // completes island {0,1}
		{2, "[4 5]"}, // a whole island
		{4, "[]"},    // only {6,7} is free: does not fit
		{1, "[6]"},   // the last island
		{2, "[]"},    // no two free GPUs left
	} {
		name := fmt.Sprintf("j%d", len(s.jobs))
		p, u := s.Place(&job.Job{Name: name, Groups: []job.Group{{Name: "t", Count: 1, Task: job.Demand{GPUs: tc.gpus}}}})
		got := "[]"
		if u == nil {
			got = fmt.Sprint(p.Tasks[0].GPUs)
		}
		if got != tc.want {
			t.Fatalf("%d-GPU task got GPUs %s, want %s", tc.gpus, got, tc.want)
		}
	}
}
