package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// Two half-used nodes leave 8 GPUs free but no whole node: an 8-GPU job
// waits for a small job to end, unless defragmentation moves one of the
// small checkpointing jobs next to the other, which pays off: the big job
// gains 19 hours of 8 GPUs, the moved job loses minutes of 4.
func TestDefragMovesASmallJobForAWholeNode(t *testing.T) {
	// s1 and short fill n0, s2 half of n1; short ends at 1h when big comes.
	s1 := checkpointing(arrival("s1", 0, 1, 4, 20*time.Hour, 20*time.Hour), 30*time.Minute)
	short := arrival("short", time.Second, 1, 4, time.Hour-time.Second, time.Hour)
	s2 := checkpointing(arrival("s2", 2*time.Second, 1, 4, 20*time.Hour, 20*time.Hour), 30*time.Minute)
	big := arrival("big", time.Hour, 1, 8, 2*time.Hour, 2*time.Hour)
	cases := []struct {
		name     string
		opt      Options
		bigStart time.Duration
		moves    int
	}{
		{"off by default", Options{}, 20 * time.Hour, 0},
		{"on", Options{Defrag: Defrag{Enabled: true}}, time.Hour, 1},
		{"on, with a grace period", Options{Defrag: Defrag{Enabled: true}, PreemptGrace: 2 * time.Minute}, time.Hour + 2*time.Minute, 1},
		{"on, one move per hour", Options{Defrag: Defrag{Enabled: true, MaxMovesPerHour: 1}, PreemptGrace: time.Minute}, time.Hour + time.Minute, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := NewPolicy("corral")
			w := workload.Workload{Arrivals: []workload.Arrival{s1, short, s2, big}, Horizon: 48 * time.Hour}
			res, err := RunWith(smallFleet(2, 8), w, p, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			b := record(t, res, "big")
			if b.Start != c.bigStart {
				t.Errorf("big starts at %v, want %v", b.Start, c.bigStart)
			}
			if res.Summary.Moves != c.moves {
				t.Errorf("%d moves, want %d", res.Summary.Moves, c.moves)
			}
			if c.moves > 0 {
				if res.Summary.DefragGainGPUH < 100 {
					t.Errorf("net gain %.1f GPU-h, want about 8 x 19 less minutes of 4 GPUs", res.Summary.DefragGainGPUH)
				}
				for _, name := range []string{"s1", "s2"} {
					if r := record(t, res, name); !r.Finished || r.End > 20*time.Hour+time.Hour {
						t.Errorf("%s: finished %v at %v; a moved job restarts at once elsewhere", name, r.Finished, r.End)
					}
				}
			}
		})
	}
}
