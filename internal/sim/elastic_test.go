package sim

import (
	"math"
	"testing"
	"time"
)

// An elastic service starts with the one task that fits, grows to its
// full size when room appears, gives the grown tasks back when a job
// needs the room (all three, grown together; it takes back the one left
// at once), and grows again when that job is done.
func TestElasticJobGrowsAndShrinks(t *testing.T) {
	blocker := arrival("blocker", 0, 3, 8, 2*time.Hour, 2*time.Hour)
	svc := arrival("svc", time.Second, 4, 8, 10*time.Hour-time.Second, 10*time.Hour)
	svc.Job.MinMember, svc.Job.Elastic = 1, true
	x := arrival("x", 5*time.Hour, 2, 8, time.Hour, time.Hour)
	res := runWith(t, 4, Options{Explain: "svc"}, blocker, svc, x)
	if r := record(t, res, "x"); r.Start != 5*time.Hour {
		t.Errorf("x starts at %v, want 5h: the service gives back its grown tasks", r.Start)
	}
	s := record(t, res, "svc")
	// 8 GPUs 0-2h, 32 GPUs 2-5h, 16 GPUs 5-6h, 32 GPUs 6-10h.
	want := 8*(2-1.0/3600) + 32*3 + 16*1 + 32*4
	if !s.Finished || math.Abs(s.GPUHours-want) > 1e-6 {
		t.Errorf("svc ran %.4f GPU-h (finished %v), want %.4f\n%v", s.GPUHours, s.Finished, want, res.Explain)
	}
	for _, h := range res.Hours {
		g := h.Groups[0]
		if g.Used > g.Allocated+1e-9 || g.Allocated > float64(g.Occupied)+1e-9 {
			t.Fatalf("hour %d: %+v", h.Hour, g)
		}
		wantUsed := map[int]float64{1: 8 + 24, 3: 32, 5: 16 + 16, 7: 32}[h.Hour]
		if wantUsed > 0 && g.Used != wantUsed {
			t.Errorf("hour %d: %.0f GPUs used, want %.0f", h.Hour, g.Used, wantUsed)
		}
	}
}
