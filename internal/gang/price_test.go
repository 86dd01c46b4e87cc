package gang

import (
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// A placement's price an hour weighs each node's price per GPU-hour by
// the part of a GPU each task holds; the highest price a job may pay is
// over the nodes of the models it allows (aliases resolved).
func TestPrices(t *testing.T) {
	f, err := fleet.Load("../../examples/fleets/two-models.yaml") // H100 nodes at $3, H200 at $4
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	on := func(name, model string, gpus int) *job.Job {
		return &job.Job{Name: name, Groups: []job.Group{{Name: "w", Count: 1,
			Task: job.Demand{GPUs: gpus, CPUMilli: 1000, MemoryMiB: 1024, Models: []string{model}}}}}
	}
	for _, tc := range []struct {
		job   *job.Job
		price float64
	}{
		{on("two-h200", "H200", 2), 8},
		{on("h100", "H100-80GB", 1), 3},
	} {
		if _, u := s.Place(tc.job); u != nil {
			t.Fatalf("%s: %v", tc.job.Name, u)
		}
		if p, ok := s.PlacedPrice(tc.job.Name); p != tc.price || !ok {
			t.Errorf("%s costs $%v an hour (priced %v), want $%v", tc.job.Name, p, ok, tc.price)
		}
	}
	if p, ok := s.PlacedPrice("nothing"); p != 0 || ok {
		t.Errorf("a job not placed costs $%v (priced %v)", p, ok)
	}
	any := &job.Job{Name: "any", Groups: []job.Group{{Name: "w", Count: 1, Task: job.Demand{GPUs: 1}}}}
	for _, tc := range []struct {
		job   *job.Job
		price float64
	}{{on("h100", "H100", 1), 3}, {on("h200", "H200-141GB", 1), 4}, {any, 4}} {
		if p, ok := s.HighestPrice(tc.job); p != tc.price || !ok {
			t.Errorf("%s: highest price $%v (priced %v), want $%v", tc.job.Name, p, ok, tc.price)
		}
	}
	f.Nodes[0].PricePerGPUHour = 0
	if _, ok := s.HighestPrice(any); ok {
		t.Errorf("a job that may land on a node without a price is priced")
	}
}
