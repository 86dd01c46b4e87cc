package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// The hourly series follows placements hour by hour: what is asked, held
// and used per group, cards occupied and free cards stranded on partly
// used nodes.
func TestHourlySeries(t *testing.T) {
	f := smallFleet(2, 8)
	f.Nodes[1].Taints = []string{workload.SpotTaint}
	a := arrival("a", 0, 1, 4, 2*time.Hour, 2*time.Hour)
	b := arrival("b", 0, 1, 8, time.Hour, time.Hour)
	b.Job.Tolerations = []string{workload.SpotTaint}
	res := run(t, "corral", f, a, b)
	if got, want := len(res.Hours), 25; got != want { // hours 0..24 of the horizon
		t.Fatalf("%d hours sampled, want %d", got, want)
	}
	type row struct {
		demanded                     float64
		occupied, fragmented         [2]int // on-demand, spot
		allocatedOnDemand, usedTotal float64
	}
	want := []row{
		{12, [2]int{4, 8}, [2]int{4, 0}, 4, 12}, // a on the on-demand node, b fills the spot node
		{4, [2]int{4, 0}, [2]int{4, 0}, 4, 4},   // b finished at 1h
		{0, [2]int{0, 0}, [2]int{0, 0}, 0, 0},   // a finished at 2h
	}
	for h, w := range want {
		hr := res.Hours[h]
		if hr.Hour != h || len(hr.Groups) != 2 {
			t.Fatalf("hour %d: %+v", h, hr)
		}
		od, spot := hr.Groups[0], hr.Groups[1]
		if od.CapacityType != OnDemand || spot.CapacityType != Spot || od.GPUs != 8 || spot.GPUs != 8 {
			t.Fatalf("hour %d groups: %+v", h, hr.Groups)
		}
		got := row{hr.Demanded, [2]int{od.Occupied, spot.Occupied}, [2]int{od.Fragmented, spot.Fragmented},
			od.Allocated, od.Used + spot.Used}
		if got != w {
			t.Errorf("hour %d: got %+v, want %+v", h, got, w)
		}
	}
}

// Every hour's use fits inside what is held, and what is held inside the
// cards there, on a busy generated workload with faults.
func TestHourlySeriesStaysConsistent(t *testing.T) {
	f := smallFleet(16, 8)
	spec, err := workload.DefaultFourTenants(48*time.Hour).ForLoad(f.GPUs(), 0.9)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Generate(spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, policy := range PolicyNames() {
		p, _ := NewPolicy(policy)
		res, err := Run(f, w, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hours {
			for _, g := range h.Groups {
				if g.Used > g.Allocated+1e-6 || g.Allocated > float64(g.Occupied)+1e-6 || g.Occupied > g.GPUs || g.Fragmented+g.Occupied > g.GPUs {
					t.Fatalf("%s hour %d: inconsistent %+v", policy, h.Hour, g)
				}
			}
		}
		last := res.Hours[len(res.Hours)-1]
		if last.Groups[0].Occupied != 0 && res.Summary.NeverStarted == 0 && res.Summary.Finished == res.Summary.Jobs {
			t.Errorf("%s: %d cards occupied after every job finished", policy, last.Groups[0].Occupied)
		}
	}
}

// Progress is reported as jobs arrive, never backwards, ending at all of
// them.
func TestProgressReachesEveryJob(t *testing.T) {
	f := smallFleet(16, 8)
	spec, err := workload.DefaultFourTenants(48*time.Hour).ForLoad(f.GPUs(), 0.9)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Generate(spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	var seen [][2]int
	p, _ := NewPolicy("corral")
	if _, err := RunWith(f, w, p, Options{Progress: func(done, total int) { seen = append(seen, [2]int{done, total}) }}); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 || seen[len(seen)-1] != [2]int{len(w.Arrivals), len(w.Arrivals)} {
		t.Fatalf("progress %v, want it to end at %d of %d", seen, len(w.Arrivals), len(w.Arrivals))
	}
	for i := 1; i < len(seen); i++ {
		if seen[i][0] < seen[i-1][0] {
			t.Fatalf("progress went back: %v", seen)
		}
	}
}
