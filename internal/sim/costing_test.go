package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/workload"
)

// The replay's hours become cost rows: per group, GPU-hours bought (one
// hour per sample), used, idle (free cards on empty nodes, held but
// unused) and fragmented (free cards on partly used nodes).
func TestUsageFromTheHourlySeries(t *testing.T) {
	f := smallFleet(2, 8)
	f.Nodes[1].Taints = []string{workload.SpotTaint}
	a := arrival("a", 0, 1, 4, 2*time.Hour, 2*time.Hour)
	b := arrival("b", 0, 1, 8, time.Hour, time.Hour)
	b.Job.Tolerations = []string{workload.SpotTaint}
	res := run(t, "corral", f, a, b) // 25 hourly samples: hours 0..24
	got := res.Usage("1y")
	want := []cost.Usage{
		// a (4 GPUs) for hours 0 and 1 on the on-demand node, half of it free beside a.
		{CapacityType: OnDemand, GPUModel: "H100", Tenant: "t", Class: "training", BoughtGPUH: 200, UsedGPUH: 8, IdleGPUH: 184, FragmentedGPUH: 8},
		// b fills the spot node for hour 0.
		{CapacityType: Spot, GPUModel: "H100", Tenant: "t", Class: "training", BoughtGPUH: 200, UsedGPUH: 8, IdleGPUH: 192},
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}
