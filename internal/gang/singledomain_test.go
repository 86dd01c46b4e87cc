package gang

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/corral-sched/corral/internal/job"
)

// A level whose domains hold one node each (nodes without an NVLink
// clique, in a cluster where some have one) tells the packing policy
// nothing a node does not: single tasks land where they land with the
// nodes in one domain. Before, the most used one-node domain was the only
// candidate, and the policy's choice became "the fullest node".
func TestOneNodeDomainsLeaveSinglesToThePackingPolicy(t *testing.T) {
	oneEach := grid(t, []string{"clique"}, []int{8}, 1, 8, "H100-80GB")
	together := grid(t, []string{"clique"}, []int{1}, 8, 8, "H100-80GB")
	a, b := newState(t, oneEach), newState(t, together)
	rng := rand.New(rand.NewPCG(7, 7))
	shapes := []job.Demand{{GPUs: 1, CPUMilli: 8000}, {GPUs: 2, CPUMilli: 4000}, {GPUs: 4, CPUMilli: 30000}, {GPUs: 1, CPUMilli: 60000}}
	placed := 0
	for i := range 40 {
		j := &job.Job{Name: fmt.Sprint("j", i), Groups: []job.Group{{Name: "t", Count: 1, Task: shapes[rng.IntN(len(shapes))]}}}
		pa, ua := a.Place(j)
		pb, ub := b.Place(j)
		if (ua == nil) != (ub == nil) {
			t.Fatalf("job %d (%+v): one-node domains %v, one domain %v", i, j.Groups[0].Task, ua, ub)
		}
		if ua != nil {
			continue
		}
		placed++
		if pa.Tasks[0].Node != pb.Tasks[0].Node {
			t.Fatalf("job %d (%+v): node %d with one-node domains, %d with the nodes in one domain", i, j.Groups[0].Task, pa.Tasks[0].Node, pb.Tasks[0].Node)
		}
	}
	if placed < 20 {
		t.Fatalf("only %d of 40 placed", placed)
	}
}
