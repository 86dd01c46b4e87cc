package gang

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/placement"
)

// TestPackMatchesCorralOnline pins the single-task path to corral's policy:
// on random flat fleets, a stream of single tasks placed through Place lands
// on the node and GPUs that placement's corral-online picks on its own
// cluster, pod by pod, and the state's store of what is left equals that cluster. Whole
// GPUs, shares, CPU-only tasks and model restrictions are all drawn.
func TestPackMatchesCorralOnline(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 7))
		f := packFleet(rng, 4+rng.IntN(20))
		s := newState(t, f)
		ref := placement.NewCluster(slices.Clone(s.left.Nodes))
		policy := placement.NewCorralOnline()
		var placed []string
		for step := range 300 {
			if len(placed) > 0 && rng.IntN(4) == 0 {
				k := rng.IntN(len(placed))
				if err := s.Release(placed[k]); err != nil {
					t.Fatal(err)
				}
				placed = slices.Delete(placed, k, k+1)
				releaseOn(ref, s.left) // the reference applies the release as the state did
				continue
			}
			pod := packPod(rng)
			name := fmt.Sprintf("p%d", step)
			want, fits := refPlace(ref, policy, &pod)
			checkRoomLeft(t, s, job.PodDemand(pod))
			p, ok := s.TryPlace(job.Single(name, job.PodDemand(pod)))
			if ok != fits {
				t.Fatalf("seed %d step %d: Place ok=%v, reference fits=%v for %+v", seed, step, ok, fits, pod)
			}
			if !ok {
				continue
			}
			placed = append(placed, name)
			got := p.Tasks[0]
			if got.Node != want.Node || (pod.IsShare() && !slices.Equal(got.GPUs, want.GPUs)) {
				t.Fatalf("seed %d step %d: %+v went to node %d GPUs %v, corral-online picks node %d GPUs %v",
					seed, step, pod, got.Node, got.GPUs, want.Node, want.GPUs)
			}
			if d := clusterDiff(ref, s.left); d != "" {
				t.Fatalf("seed %d step %d: store differs from the reference: %s", seed, step, d)
			}
		}
	}
}

// checkRoomLeft holds roomLeft, the question each open node is asked for
// a task placed alone, to capacity on every open node of s whose class
// the task may use.
func checkRoomLeft(t *testing.T, s *State, d job.Demand) {
	t.Helper()
	r, err := s.newRequest(0, d, false, nil)
	if err != nil {
		return // a demand no node can ever hold: Place says so before asking
	}
	for n := range s.nodes {
		if !s.nodes[n].sum.open || !r.classOK[s.nodes[n].class] {
			continue
		}
		if c, _ := s.capacity(n, r); s.roomLeft(n, r) != (c > 0) {
			t.Fatalf("node %d: roomLeft %v, capacity %d for %+v", n, s.roomLeft(n, r), c, d)
		}
	}
}

// refPlace places pod on the reference cluster with policy, all feasible
// nodes in fleet order.
func refPlace(c *placement.Cluster, policy *placement.Corral, pod *placement.Pod) (placement.Choice, bool) {
	policy.Observe(pod)
	var feasible []int
	for n := range c.Nodes {
		if c.Fits(n, pod) {
			feasible = append(feasible, n)
		}
	}
	if len(feasible) == 0 {
		return placement.Choice{}, false
	}
	ch := policy.Place(c, pod, feasible)
	c.Bind(*pod, ch)
	return ch, true
}

// releaseOn copies onto c the nodes where the store m has more room.
func releaseOn(c, m *placement.Cluster) {
	for n := range m.Nodes {
		if m.CPULeft[n] > c.CPULeft[n] {
			c.Set(n, m.CPULeft[n], m.MemLeft[n], m.GPULeft[n])
		}
	}
}

func clusterDiff(a, b *placement.Cluster) string {
	for n := range a.Nodes {
		if a.CPULeft[n] != b.CPULeft[n] || a.MemLeft[n] != b.MemLeft[n] || !slices.Equal(a.GPULeft[n], b.GPULeft[n]) {
			return fmt.Sprintf("node %d: cpu %d/%d mem %d/%d gpus %v/%v", n,
				a.CPULeft[n], b.CPULeft[n], a.MemLeft[n], b.MemLeft[n], a.GPULeft[n], b.GPULeft[n])
		}
	}
	if a.UsedGPUMilli() != b.UsedGPUMilli() || a.CPULeftMilli() != b.CPULeftMilli() {
		return fmt.Sprintf("totals: used %d/%d cpu %d/%d", a.UsedGPUMilli(), b.UsedGPUMilli(), a.CPULeftMilli(), b.CPULeftMilli())
	}
	return ""
}

// packFleet draws a flat fleet of time-sliced GPU nodes of two models and
// a few CPU-only nodes.
func packFleet(rng *rand.Rand, nodes int) *fleet.Fleet {
	f := &fleet.Fleet{}
	for i := range nodes {
		n := fleet.Node{Name: fmt.Sprintf("n%02d", i), CPUMilli: int64(8+rng.IntN(56)) * 1000, MemoryMiB: 1 << 18}
		switch rng.IntN(5) {
		case 0: // CPU only
		case 1, 2:
			n.GPUs, n.GPUModel, n.TimeSlices = []int{2, 4, 8}[rng.IntN(3)], "T4", 2
		default:
			n.GPUs, n.GPUModel, n.TimeSlices = 8, "V100-32GB", 2
		}
		f.Nodes = append(f.Nodes, n)
	}
	return f
}

func packPod(rng *rand.Rand) placement.Pod {
	pod := placement.Pod{CPUMilli: int64(1+rng.IntN(16)) * 1000, MemoryMiB: 1024}
	switch rng.IntN(6) {
	case 0: // CPU only
	case 1, 2:
		pod.NumGPU, pod.GPUMilli = 1, []int64{250, 500, 700}[rng.IntN(3)]
	default:
		pod.NumGPU, pod.GPUMilli = []int{1, 1, 2, 4, 8}[rng.IntN(5)], placement.MilliPerGPU
	}
	if pod.IsGPU() && rng.IntN(4) == 0 {
		pod.Models = []string{"T4"}
	}
	return pod
}

// TestSingleTasksSkipNodesTakenOut places a stream of single tasks while
// nodes fail, are cordoned and come back between placements: no task
// lands on a node that is out, the quick per-node question (roomLeft)
// agrees with capacity throughout, and a node back in takes tasks again.
func TestSingleTasksSkipNodesTakenOut(t *testing.T) {
	placedOnReturned := 0
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 11))
		f := packFleet(rng, 4+rng.IntN(12))
		s := newState(t, f)
		out, returned := map[string]bool{}, map[string]bool{}
		for step := range 400 {
			if step%15 == 0 {
				n := f.Nodes[rng.IntN(len(f.Nodes))].Name
				h := []fleet.Health{fleet.Unhealthy, fleet.Cordoned, fleet.Healthy}[rng.IntN(3)]
				if err := s.SetHealth(n, h); err != nil {
					t.Fatal(err)
				}
				returned[n] = returned[n] || out[n] && h == fleet.Healthy
				out[n] = h != fleet.Healthy
			}
			pod := packPod(rng)
			checkRoomLeft(t, s, job.PodDemand(pod))
			p, ok := s.TryPlace(job.Single(fmt.Sprintf("p%d", step), job.PodDemand(pod)))
			if !ok {
				continue
			}
			node := s.fleet.Nodes[p.Tasks[0].Node].Name
			if out[node] {
				t.Fatalf("seed %d step %d: %+v placed on %s, which is out", seed, step, pod, node)
			}
			if returned[node] {
				placedOnReturned++
			}
			if rng.IntN(3) == 0 {
				if err := s.Release(p.Job); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if placedOnReturned == 0 {
		t.Fatal("no task was placed on a node that had come back")
	}
}
