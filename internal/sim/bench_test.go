package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/workload"
)

// BenchmarkCorral replays a generated four-tenant workload on a synthetic
// fleet under corral and reports simulated events per second.
func BenchmarkCorral(b *testing.B) {
	f, err := fleet.Synthetic{Nodes: 2000, MIG: fleet.MIGDynamic}.Build()
	if err != nil {
		b.Fatal(err)
	}
	spec, err := workload.DefaultFourTenants(30*24*time.Hour).ForLoad(f.GPUs(), 0.85)
	if err != nil {
		b.Fatal(err)
	}
	spec.Sharing = workload.SharingMIG
	w, err := workload.Generate(spec, 1)
	if err != nil {
		b.Fatal(err)
	}
	events := 0
	for i := 0; i < b.N; i++ {
		r, err := Run(f, w, corralPolicy{})
		if err != nil {
			b.Fatal(err)
		}
		events += r.Summary.SimulatedEvent
	}
	b.ReportMetric(float64(len(w.Arrivals)), "jobs")
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
