package cost

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/cost/price"
)

const testPrices = `
offers:
  - provider: test
    family: big
    instance: big.8
    region: lab
    gpu: H100-80GB
    gpus: 8
    prices:
      on-demand: {usd_per_hour: 64, source: test sheet, seen: 2026-11-01}
      spot: {usd_per_hour: 24, source: test sheet, seen: 2026-11-01}
      reserved-1y: {usd_per_hour: 40, source: test sheet, seen: 2026-11-01}
  - provider: test
    family: small
    instance: small.1
    region: lab
    gpu: L4
    gpus: 1
    prices:
      on-demand: {usd_per_hour: 1, source: test sheet, seen: 2026-11-01}
`

func testCatalog(t *testing.T) *price.Catalog {
	t.Helper()
	c, err := price.Parse([]byte(testPrices), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestBillHandComputed(t *testing.T) {
	// Per GPU-hour: H100 on-demand 8, spot 3, reserved-1y 5; L4 on-demand 1.
	usage := []Usage{
		{Pool: "inference", CapacityType: "reserved-1y", GPUModel: "H100", Tenant: "product", Class: "inference",
			BoughtGPUH: 100, UsedGPUH: 60, IdleGPUH: 30, FragmentedGPUH: 10},
		{Pool: "training", CapacityType: "spot", GPUModel: "H100", Tenant: "research", Class: "training",
			BoughtGPUH: 200, UsedGPUH: 150, InterruptedLostGPUH: 40, IdleGPUH: 10},
		{Pool: "training", CapacityType: "on-demand", GPUModel: "H100", Tenant: "research", Class: "training",
			BoughtGPUH: 50, UsedGPUH: 40, PreemptedLostGPUH: 5},
		{Pool: "dev", CapacityType: "on-demand", GPUModel: "L4", Tenant: "", Class: "notebook",
			BoughtGPUH: 10, UsedGPUH: 0, IdleGPUH: 10},
	}
	b, err := Price(usage, testCatalog(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	// 100*5 + 200*3 + 50*8 + 10*1 = 500 + 600 + 400 + 10 = 1510
	if !approx(b.Total.CostUSD, 1510) || !approx(b.Total.BoughtGPUH, 360) || !approx(b.Total.UsedGPUH, 250) {
		t.Fatalf("total %+v", b.Total)
	}
	// Wasted 110 = idle 50 + fragmented 10 + lost 45 + 5 unaccounted (50 on-demand: 40 used + 5 lost).
	if !approx(b.Total.WastedGPUH, 110) || !approx(b.Total.UnaccountedGPUH, 5) {
		t.Errorf("waste %+v", b.Total)
	}
	if got := *b.Total.USDPerUsefulGPUH; !approx(got, 1510.0/250) {
		t.Errorf("usd per useful GPU-hour %g, want %g", got, 1510.0/250)
	}
	wantPools := map[string]float64{"inference": 500, "training": 1000, "dev": 10}
	for _, l := range b.ByPool {
		if !approx(l.CostUSD, wantPools[l.Key]) {
			t.Errorf("pool %s: %g, want %g", l.Key, l.CostUSD, wantPools[l.Key])
		}
	}
	if b.ByPool[0].Key != "inference" || len(b.ByPool) != 3 {
		t.Errorf("pools not in order of first appearance: %+v", b.ByPool)
	}
	wantCap := map[string]float64{"reserved-1y": 500, "spot": 600, "on-demand": 410}
	for _, l := range b.ByCapacity {
		if !approx(l.CostUSD, wantCap[l.Key]) {
			t.Errorf("capacity %s: %g, want %g", l.Key, l.CostUSD, wantCap[l.Key])
		}
	}
	// Training on spot: 600 for 150 useful hours = 4/h; with on-demand: 1000/190.
	for _, l := range b.ByTenant {
		switch l.Key {
		case "research":
			if !approx(*l.USDPerUsefulGPUH, 1000.0/190) {
				t.Errorf("research per useful hour %g", *l.USDPerUsefulGPUH)
			}
		case Unattributed:
			if l.USDPerUsefulGPUH != nil || !approx(l.WastedUSD, 10) {
				t.Errorf("unattributed dev capacity: %+v", l)
			}
		}
	}
	if len(b.ByClass) != 3 || len(b.Prices) != 4 {
		t.Errorf("classes %d prices %d", len(b.ByClass), len(b.Prices))
	}
	for _, p := range b.Prices {
		if p.Source == "" {
			t.Errorf("price without source: %+v", p)
		}
	}
}

func TestBillErrors(t *testing.T) {
	cat := testCatalog(t)
	_, err := Price([]Usage{{Pool: "p", CapacityType: "reserved", GPUModel: "H100", BoughtGPUH: 1}}, cat, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown capacity type "reserved"`) {
		t.Errorf("got %v", err)
	}
	_, err = Price([]Usage{{Pool: "p", CapacityType: "spot", GPUModel: "L4", BoughtGPUH: 1}}, cat, nil)
	if !errors.Is(err, price.ErrUnknown) || !strings.Contains(err.Error(), "no spot price known for L4") {
		t.Errorf("got %v", err)
	}
	_, err = Price([]Usage{{Pool: "p", CapacityType: "spot", GPUModel: "H100", BoughtGPUH: 1}}, cat, map[string]string{"H100-80GB": "nope"})
	if !errors.Is(err, price.ErrUnknown) {
		t.Errorf("family that does not exist: %v", err)
	}
}

// Covered GPU-hours of a row are billed at the covering commitment's
// rate, the rest at the row's own; a cover with no price, or larger than
// the row, is refused.
func TestBillCoveredHours(t *testing.T) {
	cat := testCatalog(t)
	b, err := Price([]Usage{{Pool: "od", CapacityType: "on-demand", GPUModel: "H100", BoughtGPUH: 30, UsedGPUH: 30,
		CoveredGPUH: 10, CoveredBy: "reserved-1y"}}, cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 20*8.0 + 10*5.0; !approx(b.Total.CostUSD, want) || b.Total.CoveredGPUH != 10 {
		t.Errorf("cost %g, covered %g; want %g (20 h on demand, 10 h at the 1y rate) and 10", b.Total.CostUSD, b.Total.CoveredGPUH, want)
	}
	for _, u := range []Usage{
		{Pool: "od", CapacityType: "on-demand", GPUModel: "L4", BoughtGPUH: 3, CoveredGPUH: 1, CoveredBy: "reserved-1y"},
		{Pool: "od", CapacityType: "on-demand", GPUModel: "H100", BoughtGPUH: 3, CoveredGPUH: 4, CoveredBy: "reserved-1y"},
	} {
		if _, err := Price([]Usage{u}, cat, nil); err == nil {
			t.Errorf("%+v: priced; want refused", u)
		}
	}
}
