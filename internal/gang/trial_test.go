package gang

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// trialFleet is two racks of 8-GPU nodes, half of them time-sliced, so
// that whole GPUs, shares and gangs all land somewhere.
func trialFleet(t *testing.T) *fleet.Fleet {
	f := grid(t, []string{"rack"}, []int{2}, 6, 8, "H100")
	for i := range f.Nodes {
		if i%2 == 1 {
			f.Nodes[i].TimeSlices = 10
		}
	}
	return f
}

// randomJob is a whole-GPU task, a share, a CPU-only task or a gang of
// two to four whole-GPU tasks in one rack.
func randomJob(rng *rand.Rand, name string) *job.Job {
	switch rng.IntN(4) {
	case 0:
		return gpuJob(name, 1, 1+rng.IntN(4))
	case 1:
		return &job.Job{Name: name, Groups: []job.Group{{Name: "s", Count: 1, Task: job.Demand{GPUMilli: 100 * (1 + rng.IntN(9)), CPUMilli: 500}}}}
	case 2:
		return &job.Job{Name: name, Groups: []job.Group{{Name: "c", Count: 1, Task: job.Demand{CPUMilli: 2000, MemoryMiB: 4096}}}}
	}
	return gpuJob(name, 2+rng.IntN(3), 4, job.Constraint{Level: "rack", Required: true})
}

// play applies n random operations to s and returns what each did: places
// and adoptions, releases, what-ifs, a node's health and forgetting a job.
func play(t *testing.T, s *State, rng *rand.Rand, prefix string, n int) []string {
	t.Helper()
	var out []string
	for i := range n {
		name := fmt.Sprintf("%s%d", prefix, i)
		switch op := rng.IntN(10); {
		case op < 5:
			p, ok := s.TryPlace(randomJob(rng, name))
			if ok {
				out = append(out, fmt.Sprintf("place %s %v", name, p.Tasks))
			} else {
				out = append(out, "unplaced "+name)
			}
		case op < 7:
			names := s.jobNames()
			if len(names) == 0 {
				continue
			}
			victim := names[rng.IntN(len(names))]
			out = append(out, fmt.Sprintf("release %s %v", victim, s.Release(victim)))
		case op == 7:
			names := s.jobNames()
			if len(names) == 0 {
				continue
			}
			if p, ok := s.PlaceIf(names[:1], randomJob(rng, name)); ok {
				out = append(out, fmt.Sprintf("if %s %v", name, p.Tasks))
			}
		case op == 8:
			node := s.fleet.Nodes[rng.IntN(len(s.fleet.Nodes))].Name
			h := []fleet.Health{fleet.Healthy, fleet.Cordoned}[rng.IntN(2)]
			out = append(out, fmt.Sprintf("health %s %s %v", node, h, s.SetHealth(node, h)))
		default:
			node := s.fleet.Nodes[rng.IntN(len(s.fleet.Nodes))].Name
			if p, err := s.Adopt(gpuJob(name, 1, 1), node); err == nil {
				out = append(out, fmt.Sprintf("adopt %s %v", name, p.Tasks))
			}
		}
	}
	return out
}

// TestUndoLeavesTheStateAsBefore plays one history on two states, then a
// trial on one of them that is undone, then one more history on both:
// every decision after the undo is the same on both, and so is every part
// of the state a decision reads.
func TestUndoLeavesTheStateAsBefore(t *testing.T) {
	for seed := range uint64(20) {
		kept, tried := newState(t, trialFleet(t)), newState(t, trialFleet(t))
		play(t, kept, rand.New(rand.NewPCG(seed, 1)), "a", 60)
		play(t, tried, rand.New(rand.NewPCG(seed, 1)), "a", 60)
		before := tried.Version()
		if err := tried.Begin(); err != nil {
			t.Fatal(err)
		}
		play(t, tried, rand.New(rand.NewPCG(seed, 2)), "trial", 40)
		if err := tried.Undo(); err != nil {
			t.Fatal(err)
		}
		if tried.Version() <= before {
			t.Errorf("seed %d: version %d after the undo, %d before: a cache keyed by it would keep what the trial saw", seed, tried.Version(), before)
		}
		sameState(t, seed, kept, tried)
		if d := firstDiff(kept.nodes, tried.nodes); d != "" {
			t.Log(d)
		}
		after := rand.New(rand.NewPCG(seed, 3))
		want := play(t, kept, after, "b", 80)
		got := play(t, tried, rand.New(rand.NewPCG(seed, 3)), "b", 80)
		if !reflect.DeepEqual(got, want) {
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("seed %d: step %d after the undo: %s, never tried: %s", seed, i, got[i], want[i])
				}
			}
		}
	}
}

// sameState compares what decisions read: nodes, index, jobs, the share
// mix, arrival marks, what the packer learnt and the fleet's health.
func sameState(t *testing.T, seed uint64, want, got *State) {
	t.Helper()
	for _, c := range []struct {
		what      string
		want, got any
	}{
		{"nodes", want.nodes, got.nodes},
		{"index", want.index, got.index},
		{"jobs", want.jobs, got.jobs},
		{"share mix", want.shares, got.shares},
		{"arrivals", want.packer.observed, got.packer.observed},
		{"learnt", want.packer.learner.Save(), got.packer.learner.Save()},
		{"GPUs left", want.left.GPULeft, got.left.GPULeft},
		{"CPU left", want.left.CPULeft, got.left.CPULeft},
		{"memory left", want.left.MemLeft, got.left.MemLeft},
		{"fleet", want.fleet.Nodes, got.fleet.Nodes},
	} {
		if c.what == "learnt" {
			// the version moves on by design; compare what was learnt
			w, g := reflect.ValueOf(c.want).Field(0), reflect.ValueOf(c.got).Field(0)
			if fmt.Sprint(w.FieldByName("est").Elem()) != fmt.Sprint(g.FieldByName("est").Elem()) {
				t.Errorf("seed %d: the packer's learnt mix differs after the undo", seed)
			}
			continue
		}
		if !reflect.DeepEqual(c.want, c.got) {
			t.Errorf("seed %d: %s differ after the undo", seed, c.what)
		}
	}
}

func firstDiff(a, b []nodeState) string {
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprintf("node %d:\n%+v\n%+v", i, a[i], b[i])
		}
	}
	return ""
}

func TestTrialsDoNotNest(t *testing.T) {
	s := newState(t, trialFleet(t))
	if err := s.Undo(); !errors.Is(err, ErrTrial) {
		t.Errorf("Undo with no trial: %v, want ErrTrial", err)
	}
	if err := s.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := s.Begin(); !errors.Is(err, ErrTrial) {
		t.Errorf("Begin in a trial: %v, want ErrTrial", err)
	}
	if !s.InTrial() {
		t.Error("InTrial false in a trial")
	}
	if err := s.Undo(); err != nil || s.InTrial() {
		t.Errorf("Undo: %v, in trial %v", err, s.InTrial())
	}
}
