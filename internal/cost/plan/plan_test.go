package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/cost/commit"
	"github.com/corral-sched/corral/internal/cost/price"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

func TestOptimiseHandComputed(t *testing.T) {
	tests := []struct {
		name      string
		demand    []float64
		r         Rates
		wantLevel int
		wantCost  float64
		wantCurve []float64
	}{
		{
			// P = 2, R/P = 0.5.
			// c=0: 10 GPU-h over * 2 = 20
			// c=1: 1*1*4 = 4 + (3+3+1+0)*2 = 14 -> 18
			// c=2: 8 + (2+2)*2 = 8 -> 16
			// c=3: 12 + (1+1)*2 = 4 -> 16
			// c=4: 16 + 0 -> 16; ties go to the lowest level, 2: the third
			// GPU is busy exactly half the hours, which does not beat 0.5.
			name: "tie goes to the lowest level", demand: []float64{4, 4, 2, 0},
			r: Rates{Committed: 1, OnDemand: 2}, wantLevel: 2, wantCost: 16,
			wantCurve: []float64{20, 18, 16, 16, 16},
		},
		{
			// R/P = 0.6: GPU 1 is busy 4/5 = 0.8 of hours (commit), GPU 2 1/5 (don't).
			// c=0: 6; c=1: 0.6*5 = 3 + 2 = 5; c=2: 6 + 1 = 7; c=3: 9.
			name: "commit what is busy more than R/P", demand: []float64{3, 1, 1, 1, 0},
			r: Rates{Committed: 0.6, OnDemand: 1}, wantLevel: 1, wantCost: 5,
			wantCurve: []float64{6, 5, 7, 9},
		},
		{
			// Half the overflow on spot: P = 0.5*3 + 0.5*1 = 2, R/P = 0.5.
			// c=0: 4*2 = 8; c=1: 4 + 2*2 = 8; c=2: 8 + 0 = 8: all tie, level 0.
			name: "spot share lowers the overflow price", demand: []float64{2, 2, 0, 0},
			r: Rates{Committed: 1, OnDemand: 3, Spot: 1, SpotShare: 0.5}, wantLevel: 0, wantCost: 8,
			wantCurve: []float64{8, 8, 8},
		},
		{
			// c=0: 2*2 = 4; c=1: 1*2 = 2 + 0.5*2 = 3; c=2: 4.
			name: "fractional demand", demand: []float64{0.5, 1.5},
			r: Rates{Committed: 1, OnDemand: 2}, wantLevel: 1, wantCost: 3,
			wantCurve: []float64{4, 3, 4},
		},
		{
			name: "committing never pays when R >= P", demand: []float64{5, 5, 5},
			r: Rates{Committed: 2, OnDemand: 2}, wantLevel: 0, wantCost: 30,
			wantCurve: []float64{30, 30, 30, 30, 30, 30},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Optimise(tt.demand, tt.r)
			if got.Level != tt.wantLevel || !near(got.Cost, tt.wantCost) {
				t.Errorf("level %d cost %g, want %d %g", got.Level, got.Cost, tt.wantLevel, tt.wantCost)
			}
			if len(got.Curve) != len(tt.wantCurve) {
				t.Fatalf("curve %v, want %v", got.Curve, tt.wantCurve)
			}
			for i, p := range got.Curve {
				if p.Committed != i || !near(p.CostUSD, tt.wantCurve[i]) {
					t.Errorf("curve[%d] = %+v, want %g", i, p, tt.wantCurve[i])
				}
			}
		})
	}
}

// TestOptimiseMatchesBruteForce checks on random series that the planner's
// level costs the minimum over every possible level, summed hour by hour,
// and that for whole-GPU demand the break-even quantile rule gives the same
// level.
func TestOptimiseMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 500; trial++ {
		hours := 1 + rng.IntN(60)
		peak := 1 + rng.IntN(12)
		whole := trial%2 == 0
		demand := make([]float64, hours)
		for h := range demand {
			if whole {
				demand[h] = float64(rng.IntN(peak + 1))
			} else {
				demand[h] = rng.Float64() * float64(peak)
			}
		}
		od := 0.5 + rng.Float64()*4
		r := Rates{Committed: od * (0.2 + rng.Float64()*0.9), OnDemand: od, Spot: od * rng.Float64(), SpotShare: rng.Float64() * float64(trial%3) / 2}
		got := Optimise(demand, r)
		best := math.Inf(1)
		for c := 0; c <= int(math.Ceil(float64(peak)))+1; c++ {
			best = min(best, Cost(demand, float64(c), r))
		}
		if !near(got.Cost, best) {
			t.Fatalf("trial %d: planner cost %g at level %d, brute-force minimum %g (demand %v, rates %+v)", trial, got.Cost, got.Level, best, demand, r)
		}
		if !near(Cost(demand, float64(got.Level), r), got.Cost) {
			t.Fatalf("trial %d: curve cost %g differs from the hour-by-hour cost %g", trial, got.Cost, Cost(demand, float64(got.Level), r))
		}
		if whole {
			if q := QuantileLevel(demand, r); q != got.Level {
				t.Fatalf("trial %d: quantile rule gives %d, optimum %d (demand %v, R/P %g)", trial, q, got.Level, demand, r.BreakEven())
			}
			// ... which is the (1 - R/P) quantile of the demand.
			if q := 1 - r.BreakEven(); q > 0 && Quantile(demand, q) != float64(got.Level) {
				t.Fatalf("trial %d: %g-quantile of demand %g, optimum %d (demand %v)", trial, q, Quantile(demand, q), got.Level, demand)
			}
		}
	}
}

func TestReadDemand(t *testing.T) {
	d, err := ReadDemand(strings.NewReader("hour,gpu_model,gpus\n0,H100,8\n2,H100,4\n1,L4,1.5\n"), "d.csv")
	if err != nil {
		t.Fatal(err)
	}
	if d.Hours != 3 || len(d.Series) != 2 {
		t.Fatalf("got %+v", d)
	}
	h := d.Model("H100-80GB")
	if h == nil || h.GPUs[0] != 8 || h.GPUs[1] != 0 || h.GPUs[2] != 4 {
		t.Fatalf("H100 series %+v: missing hours must be zero", h)
	}
	if l := d.Model("L4"); l == nil || l.GPUs[1] != 1.5 || l.GPUs[2] != 0 {
		t.Fatalf("L4 series %+v", l)
	}
}

// A header names the columns: they are read by name, in any order.
func TestReadDemandColumnsByHeaderName(t *testing.T) {
	d, err := ReadDemand(strings.NewReader("gpus, hour ,GPU_MODEL\n8,0,H100\n4,2,H100\n"), "d.csv")
	if err != nil {
		t.Fatal(err)
	}
	h := d.Model("H100-80GB")
	if d.Hours != 3 || h == nil || h.GPUs[0] != 8 || h.GPUs[2] != 4 {
		t.Fatalf("got %+v", d)
	}
}

func TestReadDemandErrors(t *testing.T) {
	tests := []struct{ name, csv, want string }{
		{"bad hour", "hour,gpu_model,gpus\n0,H100,1\nx,H100,1\n", "d.csv:3: hour"},
		{"negative hour", "-1,H100,1\n", "d.csv:1: hour"},
		{"bad model", "0,H999,1\n", "d.csv:1: gpu: unknown GPU model"},
		{"negative gpus", "0,H100,-2\n", "d.csv:1: gpus"},
		{"fields", "0,H100\n", "d.csv:1: want 3 fields"},
		{"duplicate", "0,H100,1\n1,L4,1\n0,H100-80GB,2\n", "d.csv:3: hour 0 of H100-80GB given twice (first at line 1)"},
		{"empty", "hour,gpu_model,gpus\n", "no demand rows"},
		{"too many gpus", "hour,gpu_model,gpus\n0,H100,1e8\n", "d.csv:2: gpus \"1e8\": want a number from 0 to 1000000"},
		{"gpus overflow", "0,H100,1e300\n", "d.csv:1: gpus \"1e300\""},
		{"gpus not a number", "0,H100,NaN\n", "d.csv:1: gpus"},
		{"gpus infinite", "0,H100,+Inf\n", "d.csv:1: gpus"},
		{"header without gpus", "hour,gpu_model,gpu\n0,H100,1\n", "d.csv:1: header \"hour,gpu_model,gpu\": no column \"gpus\""},
		{"short header", "hour,gpus\n0,1\n", "d.csv:1: header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadDemand(strings.NewReader(tt.csv), "d.csv")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// testCatalog is the default catalog with a 1-year price for g5 and the
// a3 offer preferred for H100.
func testCatalog(t *testing.T) *price.Catalog {
	t.Helper()
	base, err := price.Default()
	if err != nil {
		t.Fatal(err)
	}
	over, err := price.Parse([]byte(`
offers:
  - provider: aws
    instance: g5.xlarge
    region: us-east-1
    prices:
      reserved-1y: {usd_per_hour: 0.6036, source: test quote, seen: 2026-11-01}
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return price.Merge(base, over)
}

func TestBuildUsesCatalogPricesAndSkipsUnknown(t *testing.T) {
	// A10G: 2 GPUs always, a third 1 hour in 4. R = 0.6036, O = 1.006: R/P = 0.6.
	d, err := ReadDemand(strings.NewReader("0,A10G,3\n1,A10G,2\n2,A10G,2\n3,A10G,2\n0,T4,1\n"), "d.csv")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(d, testCatalog(t), Options{Term: price.Reserved1y})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Models) != 1 || p.Models[0].Model != "A10G" {
		t.Fatalf("models %+v", p.Models)
	}
	m := p.Models[0]
	if m.Committed != 2 || !near(m.BreakEven, 0.6) || !near(m.Quantile, 0.4) {
		t.Errorf("level %d break-even %g quantile %g, want 2, 0.6, 0.4", m.Committed, m.BreakEven, m.Quantile)
	}
	// 2 committed * 4 h * 0.6036 + 1 GPU-h * 1.006
	if want := 2*4*0.6036 + 1.006; !near(m.CostUSD, want) {
		t.Errorf("cost %g, want %g", m.CostUSD, want)
	}
	if m.Prices.Committed.Source != "test quote" || m.Prices.OnDemand.Source == "" {
		t.Errorf("prices lack their sources: %+v", m.Prices)
	}
	if len(p.Skipped) != 1 || p.Skipped[0].Model != "T4" || !strings.Contains(p.Skipped[0].Reason, "reserved-1y") {
		t.Errorf("skipped %+v, want T4 for lack of a reserved-1y price", p.Skipped)
	}
	// +10%: 3.3, 2.2, 2.2, 2.2: a third GPU would be busy 1 + 3*0.2 = 1.6 of
	// 4 hours, 0.4 < 0.6: level 2 is still best and keeping it costs nothing extra.
	if s := m.Sensitivity[0]; s.Growth != 0.1 || s.BestLevel != 2 || !near(s.RegretUSD+1, 1) {
		t.Errorf("sensitivity +10%%: %+v", s)
	}
}

// With a spot share, "all on demand" is every GPU-hour at the on-demand
// price; the cost without a commitment, the spot share kept, is apart.
func TestAllOnDemandLeavesSpotOut(t *testing.T) {
	d, err := ReadDemand(strings.NewReader("0,A10G,3\n1,A10G,2\n2,A10G,2\n3,A10G,2\n"), "d.csv")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(d, testCatalog(t), Options{Term: price.Reserved1y, SpotShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Models[0]
	od, spot := m.Prices.OnDemand.USDPerGPUHour, m.Prices.Spot.USDPerGPUHour
	if want := 9 * od; !near(m.AllOnDemandUSD, want) {
		t.Errorf("all on demand %g, want 9 GPU-h x %g = %g", m.AllOnDemandUSD, od, want)
	}
	if want := 9 * (od + spot) / 2; !near(m.NoCommitmentUSD, want) {
		t.Errorf("no commitment %g, want %g", m.NoCommitmentUSD, want)
	}
	if !near(m.SavingUSD, m.AllOnDemandUSD-m.CostUSD) {
		t.Errorf("saving %g, want all on demand - cost = %g", m.SavingUSD, m.AllOnDemandUSD-m.CostUSD)
	}
}

// A demand built in code is checked like one read from a file: a huge or
// infinite hour is an error, not a curve that exhausts memory or +Inf.
func TestBuildRefusesDemandOutOfBounds(t *testing.T) {
	for _, v := range []float64{1e8, 1e300, math.Inf(1), math.NaN(), -1} {
		d := &Demand{Hours: 2, Series: []Series{{Model: "A10G", GPUs: []float64{1, v}}}}
		_, err := Build(d, testCatalog(t), Options{Term: price.Reserved1y})
		if err == nil || !strings.Contains(err.Error(), "demand for A10G in hour 1") {
			t.Errorf("%g: got %v", v, err)
		}
	}
}

func TestSensitivityHandComputed(t *testing.T) {
	// R/P = 0.5; 10 GPUs busy 3 of 4 hours: commit 10, cost 10*0.5*4 = 20.
	demand := []float64{10, 10, 10, 0}
	r := Rates{Committed: 0.5, OnDemand: 1}
	up := sensitivity(demand, r, 10, 0.1)
	// 11,11,11,0: best 11 -> 22; keeping 10: 20 + 3 GPU-h on demand = 23.
	if up.BestLevel != 11 || !near(up.BestCostUSD, 22) || !near(up.KeptCostUSD, 23) || !near(up.RegretUSD, 1) {
		t.Errorf("+10%%: %+v", up)
	}
	down := sensitivity(demand, r, 10, -0.1)
	// 9,9,9,0: best 9 -> 18; keeping 10: 20 with nothing on demand.
	if down.BestLevel != 9 || !near(down.BestCostUSD, 18) || !near(down.KeptCostUSD, 20) || !near(down.RegretUSD, 2) {
		t.Errorf("-10%%: %+v", down)
	}
}

func TestBuildErrors(t *testing.T) {
	d, _ := ReadDemand(strings.NewReader("0,T4,1\n"), "d.csv")
	if _, err := Build(d, testCatalog(t), Options{Term: "reserved-9y"}); err == nil {
		t.Error("bad term accepted")
	}
	_, err := Build(d, testCatalog(t), Options{Term: price.Reserved3y})
	if err == nil || !strings.Contains(err.Error(), "no reserved-3y price known for T4") {
		t.Errorf("got %v", err)
	}
}

func TestCompareLocksInWaste(t *testing.T) {
	cat := testCatalog(t)
	packed, _ := ReadDemand(strings.NewReader("0,A10G,2\n1,A10G,2\n2,A10G,2\n3,A10G,2\n"), "p.csv")
	unpacked, _ := ReadDemand(strings.NewReader("0,A10G,5\n1,A10G,5\n2,A10G,5\n3,A10G,5\n"), "u.csv")
	pp, err := Build(packed, cat, Options{Term: price.Reserved1y})
	if err != nil {
		t.Fatal(err)
	}
	up, err := Build(unpacked, cat, Options{Term: price.Reserved1y})
	if err != nil {
		t.Fatal(err)
	}
	c := Compare(pp, up, packed, RatesOf(pp))
	if len(c.Differences) != 1 {
		t.Fatalf("%+v", c)
	}
	df := c.Differences[0]
	// Packed: 2 * 4 * 0.6036; unpacked: 5 * 4 * 0.6036; locked-in waste: 3 idle committed GPUs * 4 h.
	if df.PackedLevel != 2 || df.UnpackedLevel != 5 || !near(df.SavingUSD, 3*4*0.6036) || !near(df.LockedInWasteUSD, 3*4*0.6036) {
		t.Errorf("%+v", df)
	}
}

func BenchmarkOptimiseYear(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	demand := make([]float64, 8760)
	for h := range demand {
		demand[h] = float64(200 + rng.IntN(300))
	}
	r := Rates{Committed: 4, OnDemand: 6.88}
	b.ResetTimer()
	for b.Loop() {
		Optimise(demand, r)
	}
	b.ReportMetric(float64(len(demand))*float64(b.N)/b.Elapsed().Seconds(), "hours/s")
}

// bruteForce prices demand with c GPUs committed hour by hour, written
// apart from Rates: each hour pays c committed GPUs, and the demand above
// c is split into a spot part and an on-demand part.
func bruteForce(demand []float64, c int, committed, onDemand, spot, share float64) (total, committedUSD, spotUSD, onDemandUSD float64) {
	for _, d := range demand {
		committedUSD += float64(c) * committed
		over := d - float64(c)
		if over < 0 {
			over = 0
		}
		spotUSD += over * share * spot
		onDemandUSD += over * (1 - share) * onDemand
	}
	return committedUSD + spotUSD + onDemandUSD, committedUSD, spotUSD, onDemandUSD
}

// The plan Build makes from the catalog, checked against an independent
// brute force on three hourly series of 300 to 500 hours (whole GPUs, and
// fractional), without and with a spot share: the same level (the lowest
// of the cheapest), every point of the cost curve within 3e-11, and the
// cost split the same way between committed, spot and on-demand hours.
func TestBuildMatchesBruteForceWithSpotShare(t *testing.T) {
	cat := testCatalog(t)
	rng := rand.New(rand.NewPCG(2026, 17))
	series := []struct {
		name  string
		hours int
		gen   func(h int) float64
	}{
		{"whole, daily", 300, func(h int) float64 { return math.Round(20 + 12*math.Sin(float64(h)/24*2*math.Pi) + 4*rng.Float64()) }},
		{"fractional", 400, func(h int) float64 { return 6 + 10*rng.Float64() }},
		{"bursty", 500, func(h int) float64 {
			if rng.IntN(10) == 0 {
				return float64(30 + rng.IntN(20))
			}
			return float64(rng.IntN(8))
		}},
	}
	for _, s := range series {
		var b strings.Builder
		demand := make([]float64, s.hours)
		for h := range demand {
			demand[h] = s.gen(h)
			fmt.Fprintf(&b, "%d,A10G,%g\n", h, demand[h])
		}
		d, err := ReadDemand(strings.NewReader(b.String()), "d.csv")
		if err != nil {
			t.Fatal(err)
		}
		for _, share := range []float64{0, 0.3, 1} {
			p, err := Build(d, cat, Options{Term: price.Reserved1y, SpotShare: share})
			if err != nil {
				t.Fatal(err)
			}
			m := p.Models[0]
			R, O := m.Prices.Committed.USDPerGPUHour, m.Prices.OnDemand.USDPerGPUHour
			S := 0.0
			if m.Prices.Spot != nil {
				S = m.Prices.Spot.USDPerGPUHour
			}
			best, bestCost := 0, math.Inf(1)
			for c := 0; c < len(m.Curve); c++ {
				want, _, _, _ := bruteForce(demand, c, R, O, S, share)
				if got := m.Curve[c].CostUSD; math.Abs(got-want) > 3e-11*want {
					t.Errorf("%s, spot %g: level %d costs %.12g, brute force %.12g", s.name, share, c, got, want)
				}
				if want < bestCost*(1-1e-12) {
					best, bestCost = c, want
				}
			}
			if m.Committed != best || math.Abs(m.CostUSD-bestCost) > 3e-11*bestCost {
				t.Errorf("%s, spot %g: level %d cost %.12g, brute force %d %.12g", s.name, share, m.Committed, m.CostUSD, best, bestCost)
			}
			_, cu, su, ou := bruteForce(demand, best, R, O, S, share)
			for _, x := range [][2]float64{{m.CommittedCostUSD, cu}, {m.SpotCostUSD, su}, {m.OnDemandCostUSD, ou}} {
				if math.Abs(x[0]-x[1]) > 3e-11*max(1, x[1]) {
					t.Errorf("%s, spot %g: split committed/spot/on-demand %.6f/%.6f/%.6f, brute force %.6f/%.6f/%.6f",
						s.name, share, m.CommittedCostUSD, m.SpotCostUSD, m.OnDemandCostUSD, cu, su, ou)
					break
				}
			}
			none, _, _, _ := bruteForce(demand, 0, R, O, S, share)
			all, _, _, _ := bruteForce(demand, 0, R, O, S, 0)
			if math.Abs(m.NoCommitmentUSD-none) > 3e-11*none || math.Abs(m.AllOnDemandUSD-all) > 3e-11*all {
				t.Errorf("%s, spot %g: no commitment %g (want %g), all on demand %g (want %g)", s.name, share, m.NoCommitmentUSD, none, m.AllOnDemandUSD, all)
			}
		}
	}
}

// The default catalog's only Capacity Block rate is past the last day its
// page said it holds: a block plan refuses it and says how to go on, and
// with AllowExpired buys on it and says EXPIRED in its warnings.
func TestBuildNeverBuysOnAnExpiredPriceByDefault(t *testing.T) {
	cat, err := price.Default()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := ReadDemand(strings.NewReader("0,H100,16\n1,H100,8\n"), "d.csv")
	now, _ := time.Parse(time.DateOnly, "2026-12-01")
	_, err = Build(d, cat, Options{Term: price.ReservedBlock, Now: now})
	if err == nil || !strings.Contains(err.Error(), "no current reserved-block price for H100-80GB, only expired ones") ||
		!strings.Contains(err.Error(), "--allow-expired") || !strings.Contains(err.Error(), "valid until 2024-12-31") {
		t.Fatalf("got %v", err)
	}
	p, err := Build(d, cat, Options{Term: price.ReservedBlock, Now: now, AllowExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	states := map[price.State]int{}
	for _, w := range p.Warnings {
		states[w.State]++
	}
	if states[price.Expired] != 1 || p.Models[0].Prices.Committed.Instance != "p5.48xlarge" {
		t.Errorf("warnings %+v", p.Warnings)
	}
	// The day before it expired the same plan has nothing to say about it.
	old, _ := time.Parse(time.DateOnly, "2024-12-31")
	if p, err := Build(d, cat, Options{Term: price.ReservedBlock, Now: old}); err != nil || len(p.Warnings) != 0 {
		t.Errorf("on 2024-12-31: %v, warnings %+v", err, p.Warnings)
	}
}

// With no family asked for, the plan takes the first offer whose prices
// are current, passing over one whose commitment price expired.
func TestBuildTakesTheFirstCurrentOffer(t *testing.T) {
	over, err := price.Parse([]byte(`
offers:
  - provider: aws
    instance: p5.48xlarge
    region: us-east-1
    prices:
      reserved-1y: {usd_per_hour: 30, source: old quote, seen: 2026-01-01, valid_until: 2026-06-30}
  - provider: azure
    instance: Standard_ND96isr_H100_v5
    region: eastus
    prices:
      reserved-1y: {usd_per_hour: 60, source: new quote, seen: 2026-11-01}
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base, _ := price.Default()
	cat := price.Merge(base, over)
	d, _ := ReadDemand(strings.NewReader("0,H100,8\n1,H100,8\n"), "d.csv")
	now, _ := time.Parse(time.DateOnly, "2026-12-01")
	p, err := Build(d, cat, Options{Term: price.Reserved1y, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Models[0].Prices.Committed; got.Source != "new quote" || got.Instance != "Standard_ND96isr_H100_v5" {
		t.Errorf("committed price %+v, want the current azure quote", got)
	}
}

// A million-GPU demand is planned on its whole curve but keeps a bounded
// one for its outputs, with the chosen level and the peak in it.
func TestCurveKeptForOutputsIsBounded(t *testing.T) {
	d := &Demand{Hours: 3, Series: []Series{{Model: "A10G", GPUs: []float64{MaxGPUs, 123457, 5}}}}
	p, err := Build(d, testCatalog(t), Options{Term: price.Reserved1y})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Models[0]
	if len(m.Curve) > MaxCurvePoints+2 {
		t.Fatalf("curve of %d points, want at most %d", len(m.Curve), MaxCurvePoints+2)
	}
	if !slices.ContainsFunc(m.Curve, func(pt Point) bool { return pt.Committed == m.Committed }) ||
		m.Curve[0].Committed != 0 || m.Curve[len(m.Curve)-1].Committed != MaxGPUs {
		t.Errorf("chosen %d; curve from %d to %d", m.Committed, m.Curve[0].Committed, m.Curve[len(m.Curve)-1].Committed)
	}
	if m.Committed != 123457 {
		t.Errorf("committed %d, want 123457 (busy 2 of 3 hours, break-even 0.6)", m.Committed)
	}
}

// Whole instances beyond what is held, hand-computed: demand 6, 6, 6, 2
// GPUs, R = 0.6, O = 1; level c costs 2.4c plus the demand above c:
// c=0: 20, 2: 16.8, 4: 15.6, 6: 14.4 (the fractional optimum), 7: 16.8,
// 8: 19.2, 10: 24.
func TestPurchaseInWholeInstancesBeyondHeld(t *testing.T) {
	demand := []float64{6, 6, 6, 2}
	r := Rates{Committed: 0.6, OnDemand: 1}
	curve := Optimise(demand, r).Curve
	ps := Prices{Committed: price.Price{Instance: "x.4gpu"}, GPUsPerInstance: 4}
	tests := []struct {
		name                      string
		held, instances, gpus, at int
		cost                      float64
		note                      string
	}{
		{"nothing held: one instance of 4 (15.6) beats two (19.2)", 0, 1, 4, 4, 15.6, ""},
		{"2 held: one more instance reaches the optimum", 2, 1, 4, 6, 14.4, ""},
		{"7 held, above the optimum: buy nothing", 7, 0, 0, 7, 16.8, "above the best level (6)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := purchase(curve, r, len(demand), ps, tt.held, price.Reserved1y)
			if p.Instances != tt.instances || p.GPUs != tt.gpus || p.CommittedGPUs != tt.at || !near(p.CostUSD, tt.cost) || !strings.Contains(p.Note, tt.note) {
				t.Fatalf("%+v", p)
			}
			if want := float64(tt.gpus) * 0.6; !near(p.CommitUSDPerHour, want) || !near(p.TermObligationUSD, want*8760) {
				t.Errorf("commitment $%g/h, obligation $%g; want $%g/h over 8760 h", p.CommitUSDPerHour, p.TermObligationUSD, want)
			}
			if !near(p.TermCostUSD, tt.cost*8760/4) || !strings.HasPrefix(p.Extrapolation, "4 hours of demand extrapolated to 1 year (the sample taken 2190.0 times)") {
				t.Errorf("term cost %g, %q", p.TermCostUSD, p.Extrapolation)
			}
		})
	}
	if e := extrapolation(28*24, price.Reserved3y); !strings.HasPrefix(e, "28 days of demand extrapolated to 3 years") {
		t.Errorf("%q", e)
	}
	if e := extrapolation(28*24, price.ReservedBlock); !strings.Contains(e, "nothing extrapolated") {
		t.Errorf("%q", e)
	}
}

// The planner's level is the brute-force optimum of the commitment billed
// hour by hour (internal/cost/commit) on the same series, for a discount
// (reserved-1y) and a capacity (reserved-block) commitment, and its
// coverage and utilisation are that bill's.
func TestPlanIsTheCommitmentBillsBruteForceOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 1))
	cat := testCatalog(t)
	now, _ := time.Parse(time.DateOnly, "2026-12-01")
	for _, tt := range []struct {
		model string
		term  price.Capacity
		kind  commit.Kind
		opts  Options
	}{
		{"A10G", price.Reserved1y, commit.Discount, Options{}},
		{"H100-80GB", price.ReservedBlock, commit.Capacity, Options{AllowExpired: true, Now: now}},
	} {
		for trial := 0; trial < 20; trial++ {
			var b strings.Builder
			demand := make([]float64, 48+rng.IntN(200))
			for h := range demand {
				demand[h] = math.Round(4*(10+8*math.Sin(float64(h)/24*2*math.Pi)+6*rng.Float64())) / 4
				fmt.Fprintf(&b, "%d,%s,%g\n", h, tt.model, demand[h])
			}
			d, err := ReadDemand(strings.NewReader(b.String()), "d.csv")
			if err != nil {
				t.Fatal(err)
			}
			o := tt.opts
			o.Term = tt.term
			p, err := Build(d, cat, o)
			if err != nil {
				t.Fatal(err)
			}
			m := p.Models[0]
			c := commit.Commitment{Kind: m.Kind, USDPerGPUHour: m.Prices.Committed.USDPerGPUHour}
			rates := map[string]commit.Rate{m.Model: {OnDemand: m.Prices.OnDemand.USDPerGPUHour}}
			best, _, err := commit.Best(c, []commit.Usage{{Model: m.Model, GPUs: demand}}, rates, slices.Max(demand)+1, 1)
			if err != nil {
				t.Fatal(err)
			}
			st := best.Statement
			if m.Kind != tt.kind || float64(m.Committed) != best.GPUs || !near(m.CostUSD, st.TotalUSD) ||
				!near(m.Billing.Coverage, st.Coverage) || !near(m.Billing.Utilisation, st.Utilisation) || !near(m.Billing.TotalUSD, st.TotalUSD) {
				t.Fatalf("%s trial %d: plan %s level %d cost %g coverage %g utilisation %g; brute force %s %g cost %g coverage %g utilisation %g",
					tt.term, trial, m.Kind, m.Committed, m.CostUSD, m.Billing.Coverage, m.Billing.Utilisation, tt.kind, best.GPUs, st.TotalUSD, st.Coverage, st.Utilisation)
			}
		}
	}
}
