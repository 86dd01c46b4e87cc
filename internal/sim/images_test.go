package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// Nodes pull what they lack before a job's tasks start, and keep it: a
// job whose image a node holds starts there at once, even where the
// first node in tree order is as free; one whose image no node holds
// waits for the pull; a gang waits for its slowest node.
func TestImagePullsDelayStartsAndNodesKeepImages(t *testing.T) {
	const x, y = "registry.local/t/x:v1", "registry.local/t/y:v1"
	f := smallFleet(3, 8)
	f.Nodes[2].Images = map[string]int64{x: 600e6}
	withImage := func(a workload.Arrival, image string) workload.Arrival {
		a.Job.Images = []string{image}
		return a
	}
	arrivals := []workload.Arrival{
		withImage(arrival("a", 0, 1, 8, time.Hour, time.Hour), x),           // n2 holds x: no pull
		withImage(arrival("b", 0, 1, 8, time.Hour, time.Hour), y),           // pulls y on n0: 60 s
		withImage(arrival("c", 3*time.Hour, 1, 8, time.Hour, time.Hour), x), // to n2, not the first free n0
		withImage(arrival("g", 6*time.Hour, 2, 8, time.Hour, time.Hour), y), // n0 holds y, n1 pulls it
	}
	p, _ := NewPolicy("corral")
	opt := Options{ImagePull: &ImagePull{BytesPerSecond: 10e6, Sizes: map[string]int64{x: 600e6, y: 600e6}}}
	res, err := RunWith(f, workload.Workload{Arrivals: arrivals, Horizon: 24 * time.Hour}, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	delay := map[string]time.Duration{}
	for _, r := range res.Jobs {
		delay[r.Name] = r.Start - r.Arrive
	}
	want := map[string]time.Duration{"a": 0, "b": time.Minute, "c": 0, "g": time.Minute}
	for name, d := range want {
		if delay[name] != d {
			t.Errorf("job %s started %v after it arrived; want %v", name, delay[name], d)
		}
	}
	got := res.Summary.ImagePulls
	if got == nil || got.Starts != 4 || got.Pulled != 2 || got.NodePulls != 2 || got.GangPulled != 1 || got.MaxDelayMin != 1 {
		t.Fatalf("pulls %+v; want 4 starts, 2 pulled (b, g), 2 node pulls, 1 gang, 1 minute at most", got)
	}
	if want := (8*60 + 16*60) / 3600.0; got.GPUHours != want {
		t.Errorf("%g GPU-hours held while pulling; want %g (b's 8 GPUs and g's 16 for a minute)", got.GPUHours, want)
	}
	if len(f.Nodes[0].Images) != 0 {
		t.Errorf("the caller's fleet gained images %v: a replay must pull into its own copy", f.Nodes[0].Images)
	}
}
