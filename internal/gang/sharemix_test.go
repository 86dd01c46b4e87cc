package gang

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

func TestShareMixFrag(t *testing.T) {
	var m shareMix
	if got := m.frag(300, 500); got != 300 {
		t.Errorf("empty mix, room 300 for a 500 task: frag %v, want 300", got)
	}
	m.add(500, 1)
	m.add(250, 3)
	for _, tc := range []struct {
		room int
		want float64
	}{{1000, 0}, {500, 0}, {300, 75}, {200, 200}, {0, 0}} {
		if got := m.frag(tc.room, 0); got != tc.want {
			t.Errorf("frag(%d) = %v, want %v", tc.room, got, tc.want)
		}
	}
	m.add(500, -1)
	if got := m.frag(300, 0); got != 0 {
		t.Errorf("after removing the 500s, frag(300) = %v, want 0", got)
	}
}

// fillShared offers shared tasks drawn from sizes, 1.3 times the fleet's
// GPU capacity in all (a task that fits nowhere is skipped, as in the FGD
// benchmark), and returns the share of GPU capacity allocated.
func fillShared(t *testing.T, seed uint64, bestFit bool, sizes []int) float64 {
	t.Helper()
	f := grid(t, []string{"rack"}, []int{4}, 5, 8, "L40S")
	for i := range f.Nodes {
		f.Nodes[i].TimeSlices = 10
	}
	s := newState(t, f)
	s.shareBestFit = bestFit
	rng := rand.New(rand.NewPCG(seed, 7))
	used, offered := 0, 0
	for i := 0; offered < f.GPUs()*1300; i++ {
		m := sizes[rng.IntN(len(sizes))]
		d := job.Demand{GPUMilli: m, CPUMilli: 100}
		if m >= 1000 {
			d = job.Demand{GPUs: m / 1000, CPUMilli: 100}
		}
		offered += m
		j := &job.Job{Name: fmt.Sprint(i), Groups: []job.Group{{Name: "t", Count: 1, Task: d}}}
		if _, u := s.Place(j); u == nil {
			used += m
		}
	}
	return float64(used) / float64(f.GPUs()*1000)
}

// TestFragAwareSharingPacksMore compares fragmentation-aware sharing with
// plain best fit on streams of shared tasks, filled until the first task
// that fits nowhere.
func TestFragAwareSharingPacksMore(t *testing.T) {
	mixes := [][]int{{200, 300, 500, 700}, {250, 500, 750}, {100, 400, 600}, {300, 450, 600, 900},
		{250, 500, 1000, 2000}, {300, 600, 1000, 4000}, {150, 350, 700, 1000, 1000, 8000}}
	var frag, best float64
	for _, sizes := range mixes {
		for seed := uint64(1); seed <= 10; seed++ {
			frag += fillShared(t, seed, false, sizes)
			best += fillShared(t, seed, true, sizes)
		}
	}
	n := float64(len(mixes) * 10)
	t.Logf("allocated after offering 130%% of capacity: fragmentation-aware %.2f%%, best fit %.2f%%", 100*frag/n, 100*best/n)
	if frag < best {
		t.Errorf("fragmentation-aware sharing allocated %.2f%%, less than best fit's %.2f%%", 100*frag/n, 100*best/n)
	}
	_ = fleet.MIGNone
}
