package sim

import (
	"math"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/commit"
	"github.com/corral-sched/corral/internal/fleet"
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
	got := res.Usage("1y", nil)
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

// A reserved pool is paid whether its nodes run or not: scaled down to
// nothing, or failed, its cards still count as bought every hour, where
// an on-demand pool's absent nodes cost nothing.
func TestReservedPoolIsPaidWhenItsNodesAreAway(t *testing.T) {
	a := arrival("a", 0, 1, 8, time.Hour, time.Hour)
	for _, capacity := range []string{fleet.CapacityReserved, fleet.CapacityOnDemand} {
		f := smallFleet(4, 8)
		for i := range f.Nodes {
			f.Nodes[i].Pool, f.Nodes[i].Labels = "train", map[string]string{fleet.CapacityTypeLabel: capacity}
		}
		opt := Options{Autoscale: []Autoscale{{Pool: "train", Min: 0, Max: 4, ScaleDownAfter: 30 * time.Minute}}}
		p, _ := NewPolicy("corral")
		res, err := RunWith(f, workload.Workload{Arrivals: []workload.Arrival{a}, Horizon: 6 * time.Hour}, p, opt)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if capacity == fleet.CapacityReserved {
			want = 32
		}
		for _, h := range res.Hours {
			if h.Hour >= 2 && h.Groups[0].GPUs != want {
				t.Errorf("%s pool: %d GPUs paid at %dh with no node up, want %d", capacity, h.Groups[0].GPUs, h.Hour, want)
			}
		}
	}
}

// With a discount commitment (a Savings Plan, reserved instances), the
// reserved cards whose nodes are away cover the on-demand cards of their
// model bought in the same hour: billed at the commitment's rate, once.
// The rows' cost equals commit.Bill's on the same hours: the planner's and
// --moves' model of a discount.
func TestDiscountCommitmentCoversOnDemandWhileReservedNodesAreAway(t *testing.T) {
	group := func(pool, capacity string, gpus, away, occupied int) GroupHour {
		return GroupHour{Pool: pool, CapacityType: capacity, GPUModel: "H100", GPUs: gpus, Away: away, Occupied: occupied}
	}
	res := &Result{Hours: []Hour{
		{Hour: 0, Groups: []GroupHour{group("od", OnDemand, 8, 0, 8), group("res", fleet.CapacityReserved, 8, 8, 0)}},
		{Hour: 1, Groups: []GroupHour{group("od", OnDemand, 8, 0, 8), group("res", fleet.CapacityReserved, 8, 0, 8)}},
		{Hour: 2, Groups: []GroupHour{group("od", OnDemand, 16, 0, 16), group("res", fleet.CapacityReserved, 8, 8, 0)}},
	}}
	rates := map[string]float64{OnDemand: 6.88, "reserved-1y": 4.30}
	costOf := func(rows []cost.Usage) (usd, bought float64) {
		for _, u := range rows {
			usd += (u.BoughtGPUH-u.CoveredGPUH)*rates[u.CapacityType] + u.CoveredGPUH*rates[u.CoveredBy]
			bought += u.BoughtGPUH
		}
		return usd, bought
	}
	nodes, nodesBought := costOf(res.Usage("1y", nil))
	discount, discountBought := costOf(res.Usage("1y", func(string) bool { return true }))

	st, err := commit.Bill(commit.Commitment{Kind: commit.Discount, GPUs: 8, USDPerGPUHour: rates["reserved-1y"]},
		[]commit.Usage{{Model: "H100", GPUs: []float64{8, 16, 16}}}, // reserved cards up, and on-demand cards, each hour
		map[string]commit.Rate{"H100": {OnDemand: rates[OnDemand], Committed: rates["reserved-1y"]}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(discount-st.TotalUSD) > 1e-9 {
		t.Errorf("discount rows cost %.2f; commit.Bill says %.2f", discount, st.TotalUSD)
	}
	if want := 3*8*rates["reserved-1y"] + 32*rates[OnDemand]; math.Abs(nodes-want) > 1e-9 {
		t.Errorf("capacity rows cost %.2f; want %.2f: every reserved card and every on-demand card paid", nodes, want)
	}
	if nodesBought != 56 || discountBought != 40 {
		t.Errorf("bought %g GPU-hours as capacity and %g as a discount; want 56 and 40: 16 covered hours paid once", nodesBought, discountBought)
	}
}
