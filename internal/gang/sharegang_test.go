package gang

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/corral-sched/corral/internal/job"
)

// shareGang is tasks shared tasks of milli thousandths of a GPU each,
// placed in one decision.
func shareGang(name string, tasks, milli int) *job.Job {
	return &job.Job{Name: name, Groups: []job.Group{{Name: "w", Count: tasks, Task: job.Demand{GPUMilli: milli, CPUMilli: 100}}}}
}

// Gangs of shared-GPU tasks: all of their tasks are placed or none, a
// task that fits the room shared GPUs leave breaks no free GPU, and none
// puts more than a whole GPU's thousandths on one.
func TestGangOfSharedTasks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		before    []*job.Job // placed first
		gang      *job.Job
		fits      bool
		freshGPUs int // whole GPUs the gang breaks into
	}{
		{"fits in the room shared GPUs leave", []*job.Job{shareGang("a", 3, 500)}, shareGang("g", 1, 500), true, 0},
		{"all or nothing when the fleet is short", []*job.Job{gpuJob("big", 1, 8), gpuJob("big2", 1, 7)}, shareGang("g", 3, 600), false, 0},
		{"all of the fleet's thousandths", nil, shareGang("g", 32, 500), true, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := grid(t, []string{"rack"}, []int{2}, 1, 8, "H100-80GB")
			for i := range f.Nodes {
				f.Nodes[i].Fractional = true
			}
			s := newState(t, f)
			for _, j := range tc.before {
				if _, u := s.Place(j); u != nil {
					t.Fatalf("placing %s first: %v", j.Name, u)
				}
			}
			freeBefore := s.FreeGPUs(0) + s.FreeGPUs(1)
			p, u := s.Place(tc.gang)
			if (u == nil) != tc.fits {
				t.Fatalf("placed %v, unfit %v; want it to fit: %v", p, u, tc.fits)
			}
			if !tc.fits {
				if s.Job(tc.gang.Name) != nil || s.FreeGPUs(0)+s.FreeGPUs(1) != freeBefore {
					t.Fatalf("a gang that did not fit holds GPUs")
				}
				return
			}
			if len(p.Tasks) != tc.gang.Tasks() {
				t.Fatalf("%d of %d tasks placed", len(p.Tasks), tc.gang.Tasks())
			}
			if broke := freeBefore - s.FreeGPUs(0) - s.FreeGPUs(1); broke != tc.freshGPUs {
				t.Errorf("the gang took %d free GPUs, want %d", broke, tc.freshGPUs)
			}
			checkNoGPUOverfull(t, s)
		})
	}
}

// A gang's shares go where the same tasks placed one at a time go: the
// gang path and the single-task path pick GPUs by one rule.
func TestGangOfSharesLandsAsSingles(t *testing.T) {
	for _, tc := range []struct{ tasks, milli int }{{6, 300}, {5, 450}, {9, 120}, {4, 700}} {
		f := grid(t, []string{"rack"}, []int{2}, 1, 8, "H100-80GB")
		for i := range f.Nodes {
			f.Nodes[i].Fractional = true
		}
		gang, singles := newState(t, f), newState(t, f)
		p, u := gang.Place(shareGang("g", tc.tasks, tc.milli))
		if u != nil {
			t.Fatal(u)
		}
		for i, task := range p.Tasks {
			q, u := singles.Place(shareGang(fmt.Sprint("s", i), 1, tc.milli))
			if u != nil {
				t.Fatal(u)
			}
			got, want := fmt.Sprint(task.NodeName, task.GPUs), fmt.Sprint(q.Tasks[0].NodeName, q.Tasks[0].GPUs)
			if got != want {
				t.Errorf("%d x %d: gang task %d on %s, one at a time on %s", tc.tasks, tc.milli, i, got, want)
			}
		}
	}
}

// Random gangs of shared tasks placed and released never overfill a GPU,
// and a release gives back exactly what its placement took, under the
// packing policy and spreading (whose single shares take fastShare).
func TestGangsOfSharedTasksRandom(t *testing.T) {
	for _, spread := range []bool{false, true} {
		t.Run(fmt.Sprint("spread=", spread), func(t *testing.T) { randomShareGangs(t, spread) })
	}
}

func randomShareGangs(t *testing.T, spread bool) {
	f := grid(t, []string{"rack"}, []int{2}, 2, 4, "H100-80GB")
	for i := range f.Nodes {
		f.Nodes[i].Fractional = true
	}
	s, err := NewWithOptions(f, Options{Spread: spread})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var live []string
	for i := range 400 {
		if len(live) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(live))
			if err := s.Release(live[k]); err != nil {
				t.Fatal(err)
			}
			live = append(live[:k], live[k+1:]...)
			continue
		}
		name := fmt.Sprint("g", i)
		if _, u := s.Place(shareGang(name, 1+rng.IntN(6), 100*(1+rng.IntN(9)))); u == nil {
			live = append(live, name)
		}
		checkNoGPUOverfull(t, s)
	}
	for _, name := range live {
		if err := s.Release(name); err != nil {
			t.Fatal(err)
		}
	}
	for n := range s.nodes {
		if s.FreeGPUs(n) != len(s.nodes[n].whole) {
			t.Fatalf("node %d has %d free GPUs after every gang left, want all %d", n, s.FreeGPUs(n), len(s.nodes[n].whole))
		}
	}
}

func checkNoGPUOverfull(t *testing.T, s *State) {
	t.Helper()
	for n, ns := range s.nodes {
		for g, whole := range ns.whole {
			if left := s.left.GPULeft[n][g]; left < 0 || left > 1000 || (whole && left != 0) {
				t.Fatalf("node %d GPU %d has %d thousandths left (whole %v)", n, g, left, whole)
			}
		}
	}
}
