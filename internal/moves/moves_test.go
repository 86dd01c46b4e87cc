package moves

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

var update = flag.Bool("update", false, "rewrite testdata/moves.golden")

// small is the generated four-tenant workload for 16 nodes over 7 days.
func small(t *testing.T, seed uint64) Options {
	t.Helper()
	spec, err := workload.DefaultFourTenants(96*time.Hour).ForLoad(8*8, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Generate(spec, seed)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := price.Default()
	if err != nil {
		t.Fatal(err)
	}
	now, _ := time.Parse(time.DateOnly, "2026-12-01")
	return Options{Workload: w, Label: "small four-tenant workload", Nodes: 16, Catalog: cat, Seed: seed, Now: now}
}

// The table of a small replay is the golden file, byte for byte, and the
// same inputs give the same report.
func TestGoldenReport(t *testing.T) {
	rep, err := Run(small(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	rep.Write(&got)
	path := filepath.Join("testdata", "moves.golden")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("report differs from %s (go test ./internal/moves -update to accept):\n%s", path, got.String())
	}
	again, err := Run(small(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	var second bytes.Buffer
	again.Write(&second)
	if !bytes.Equal(got.Bytes(), second.Bytes()) {
		t.Error("two runs with the same seed differ")
	}
	checkReport(t, rep)
}

// checkReport asserts what holds for any report: savings add up against
// the baseline, the best move is the one that saves most, the spot move
// bought spot and the floor move committed capacity priced at the term.
func checkReport(t *testing.T, rep *Report) {
	t.Helper()
	best := rep.Moves[0]
	for _, m := range rep.Moves {
		if want := rep.Baseline.CostUSD - m.CostUSD/m.WorkGPUH*rep.Baseline.WorkGPUH; math.Abs(want-m.SavingUSD) > 1e-6 {
			t.Errorf("%s: saving %g, want the baseline's work at this move's price: %g", m.Name, m.SavingUSD, want)
		}
		if m.SavingUSD > best.SavingUSD {
			best = m
		}
		if len(m.Prices) == 0 {
			t.Errorf("%s: no catalog lines", m.Name)
		}
	}
	if rep.Best != best.Name {
		t.Errorf("best %s, want %s", rep.Best, best.Name)
	}
	bought := func(m Move, capacity string) float64 {
		for _, l := range m.ByCapacity {
			if l.Key == capacity {
				return l.BoughtGPUH
			}
		}
		return 0
	}
	if spot := rep.move("spot"); bought(spot, "spot") <= 0 {
		t.Errorf("spot move bought no spot GPU-hours: %+v", spot.ByCapacity)
	}
	if fl := rep.move("floor-block"); fl.CommittedGPUs > 0 && bought(fl, "reserved-block") < float64(fl.CommittedGPUs) {
		t.Errorf("floor of %d GPUs bought %g committed GPU-hours", fl.CommittedGPUs, bought(fl, "reserved-block"))
	}
	if rep.SpotBand != "15-20%" || math.Abs(rep.SpotRatePerNodeHour-(-math.Log(0.8)/730)) > 1e-12 {
		t.Errorf("spot band %q rate %g: want the catalog's 15-20%% at its high end", rep.SpotBand, rep.SpotRatePerNodeHour)
	}
}

func TestDemands(t *testing.T) {
	tests := []struct {
		name  string
		s     setup
		class string
		in    job.Demand
		want  job.Demand
	}{
		{"baseline inference share", setup{}, workload.Inference, job.Demand{GPUMilli: 250}, job.Demand{GPUs: 1}},
		{"baseline inference mig", setup{}, workload.Inference, job.Demand{MIG: "2g.20gb"}, job.Demand{GPUs: 1}},
		{"mig inference share", setup{mig: true}, workload.Inference, job.Demand{GPUMilli: 250}, job.Demand{MIG: "2g.20gb"}},
		{"mig inference slice", setup{mig: true}, workload.Inference, job.Demand{MIG: "1g.10gb"}, job.Demand{MIG: "1g.10gb"}},
		{"mig leaves notebooks whole", setup{mig: true}, workload.Notebook, job.Demand{GPUMilli: 500}, job.Demand{GPUs: 1}},
		{"timeslice notebook half", setup{timeslice: true}, workload.Notebook, job.Demand{GPUMilli: 500}, job.Demand{Shares: 2}},
		{"timeslice notebook slice", setup{timeslice: true}, workload.Notebook, job.Demand{MIG: "1g.10gb"}, job.Demand{Shares: 1}},
		{"whole stays whole", setup{mig: true, timeslice: true}, workload.Training, job.Demand{GPUs: 8}, job.Demand{GPUs: 8}},
		// The slice is the model's own profile: an A100-40GB's 2g is 10gb.
		{"mig on A100-40GB", setup{mig: true, model: mustModel(t, "A100-40GB")}, workload.Inference, job.Demand{GPUMilli: 250}, job.Demand{MIG: "2g.10gb"}},
		{"mig on H200", setup{mig: true, model: mustModel(t, "H200")}, workload.Inference, job.Demand{GPUMilli: 100}, job.Demand{MIG: "1g.18gb"}},
		{"more than 4/7 is whole", setup{mig: true, model: mustModel(t, "A100-40GB")}, workload.Inference, job.Demand{GPUMilli: 600}, job.Demand{GPUs: 1}},
	}
	for _, tt := range tests {
		if got := tt.s.demand(tt.class, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func mustModel(t *testing.T, name string) *gpu.Model {
	t.Helper()
	m, err := gpu.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Each class tolerates its own pool's taint and no other, and the pools
// carry the taints and capacity types their moves say.
func TestPoolsAndTolerations(t *testing.T) {
	s := setup{timeslice: true, spot: true, floorNodes: map[string]int{roleServe: 1}}
	f, err := s.buildFleet(2, "")
	if err != nil {
		t.Fatal(err)
	}
	pools := map[string]fleet.Node{}
	for _, n := range f.Nodes {
		pools[n.Pool] = n
	}
	for pool, want := range map[string]struct {
		capacity string
		taints   int
		slices   int
	}{
		"dev": {fleet.CapacityOnDemand, 1, Slices}, "serve": {fleet.CapacityOnDemand, 1, 0},
		"serve-committed": {fleet.CapacityReserved, 1, 0}, "train": {fleet.CapacitySpot, 2, 0},
	} {
		n, ok := pools[pool]
		if !ok || n.CapacityType() != want.capacity || len(n.Taints) != want.taints || n.TimeSlices != want.slices {
			t.Errorf("pool %s: %+v, want %+v", pool, n, want)
		}
	}
	w := s.workload(workload.Workload{Arrivals: []workload.Arrival{
		{Class: workload.Training, Job: &job.Job{Name: "t", Tolerations: []string{"spot"}}},
		{Class: workload.Inference, Job: &job.Job{Name: "i"}},
		{Class: workload.Notebook, Job: &job.Job{Name: "n"}},
	}})
	for i, want := range [][]string{{roleTrain, "spot"}, {roleServe}, {roleDev}} {
		got := w.Arrivals[i].Job.Tolerations
		if len(got) != len(want) || got[0] != want[0] {
			t.Errorf("%s tolerates %v, want %v", w.Arrivals[i].Job.Name, got, want)
		}
		for _, n := range f.Nodes {
			if w.Arrivals[i].Job.Tolerates(n.Taints) != (n.Pool == want[0] || n.Pool == want[0]+"-committed") {
				t.Errorf("%s on %s (%v): tolerates %v", w.Arrivals[i].Job.Name, n.Name, n.Taints, w.Arrivals[i].Job.Tolerations)
			}
		}
	}
}

// Interruptions come at the rate of the band: over 2,000 spot nodes for 730
// hours at 20% a month, about a fifth of the nodes are interrupted (more
// than once at most rarely); each interruption has a repair after it.
func TestSpotFaultsAtTheBand(t *testing.T) {
	s := setup{spot: true}
	f, err := s.buildFleet(2000, "")
	if err != nil {
		t.Fatal(err)
	}
	faults := spotFaults(f, RatePerNodeHour(0.2), 6*time.Hour, 730*time.Hour, 1)
	hit := map[string]bool{}
	failures := 0
	for _, fl := range faults {
		if fl.Kind == workload.NodeFailure {
			failures++
			hit[fl.Node] = true
		}
	}
	share := float64(len(hit)) / 2000
	if share < 0.17 || share > 0.23 {
		t.Errorf("%.3f of spot nodes interrupted in a month, want about 0.20", share)
	}
	if again := spotFaults(f, RatePerNodeHour(0.2), 6*time.Hour, 730*time.Hour, 1); len(again) != len(faults) {
		t.Error("not deterministic")
	}
	if failures < len(hit) || len(faults) > 2*failures {
		t.Errorf("%d failures on %d nodes, %d faults", failures, len(hit), len(faults))
	}
}

// A commitment the catalog has no price for gives no floor and says why;
// the floor replay is then the baseline's.
func TestFloorWithoutAPriceSaysWhy(t *testing.T) {
	o := small(t, 1)
	o.Terms = []price.Capacity{price.Reserved3y}
	rep, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range rep.Warnings {
		found = found || strings.Contains(w, "no floor for pool all pools after baseline") && strings.Contains(w, "no reserved-3y price known")
	}
	if !found {
		t.Errorf("warnings %q do not say why there is no floor", rep.Warnings)
	}
	if fl := rep.move("floor-3y"); fl.CommittedGPUs != 0 || fl.CostUSD != rep.Baseline.CostUSD {
		t.Errorf("floor without a price: %d GPUs committed, cost %g against the baseline's %g", fl.CommittedGPUs, fl.CostUSD, rep.Baseline.CostUSD)
	}
}

// The floor of each kind: a discount (reserved-1y, priced by a prices
// file) is applied to the baseline's on-demand usage after the fact, so
// its replay is the baseline's and its cost is the baseline's less the
// covered GPU-hours at on demand plus the commitment; a Capacity Block is
// committed nodes replayed. For both, the planner's level is the
// brute-force optimum on the series it was planned on, and coverage and
// utilisation are between 0 and 1.
func TestFloorOfEachKind(t *testing.T) {
	o := small(t, 1)
	over, err := price.Parse([]byte("offers:\n  - provider: aws\n    instance: p5.48xlarge\n    region: us-east-1\n    prices:\n      reserved-1y: {usd_per_hour: 39.33, source: test rate, seen: 2026-11-20}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o.Catalog = price.Merge(o.Catalog, over)
	rep, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	d, b := rep.move("floor-1y"), rep.Baseline
	if d.WorkGPUH != b.WorkGPUH || d.MeanWaitH != b.MeanWaitH || d.BoughtGPUH != b.BoughtGPUH {
		t.Errorf("discount floor changed the replay: work %g wait %g bought %g, baseline %g %g %g", d.WorkGPUH, d.MeanWaitH, d.BoughtGPUH, b.WorkGPUH, b.MeanWaitH, b.BoughtGPUH)
	}
	f := rep.floorOf("floor-1y")
	if f == nil || f.Kind != "discount" || f.PlannerGPUs == 0 {
		t.Fatalf("discount floor %+v", f)
	}
	od, rate := 55.04/8, 39.33/8
	st := f.Billing
	if want := b.CostUSD - st.CoveredGPUH*od + float64(f.PlannerGPUs)*rate*float64(st.Hours); math.Abs(d.CostUSD-want) > 1e-6*want {
		t.Errorf("discount floor costs %g, want the baseline's %g less %g covered GPU-hours at on demand plus the commitment: %g", d.CostUSD, b.CostUSD, st.CoveredGPUH, want)
	}
	for _, l := range b.ByCapacity {
		if l.Key == "on-demand" && math.Abs(l.CostUSD-st.OnDemandUSD) > 1e-6*l.CostUSD {
			t.Errorf("the discount was applied to $%g of on-demand usage, the baseline bought $%g", st.OnDemandUSD, l.CostUSD)
		}
	}
	c := rep.floorOf("floor-block")
	if c == nil || c.Kind != "capacity" || rep.move("floor-block").CommittedGPUs != c.CommittedGPUs {
		t.Fatalf("capacity floor %+v", c)
	}
	for _, f := range rep.Floors {
		if f.Skipped != "" {
			t.Errorf("floor %s on %s skipped: %s", f.Term, f.After, f.Skipped)
		}
		if float64(f.PlannerGPUs) != f.BruteForceGPUs || math.Abs(f.PlannerUSD-f.BruteForceUSD) > 1e-9*f.PlannerUSD {
			t.Errorf("%s on %s's %s: planner %d GPUs $%g, brute force %g $%g", f.Term, f.After, f.Pool, f.PlannerGPUs, f.PlannerUSD, f.BruteForceGPUs, f.BruteForceUSD)
		}
		if u, v := f.Billing.Coverage, f.Billing.Utilisation; f.committed() > 0 && !(u > 0 && u <= 1 && v > 0 && v <= 1) {
			t.Errorf("%s on %s: coverage %g utilisation %g", f.Term, f.After, u, v)
		}
	}
}

// On a model without MIG and an offer without a spot price, the mig and
// spot moves are not replayed, and the text, JSON and page say why.
func TestSkippedMoves(t *testing.T) {
	cat, err := price.Default()
	if err != nil {
		t.Fatal(err)
	}
	w, label, err := Generated(8, 2, 0.8, 1)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{Workload: w, Label: label, Nodes: 8, Catalog: cat, GPUModel: "L4", Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	rep.Write(&text)
	page, _ := json.Marshal(rep.HTML().Intro)
	for _, m := range rep.Moves {
		if m.Name == "mig" {
			t.Errorf("mig replayed on an L4")
		}
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Move != "mig" || !strings.Contains(text.String(), "mig            skipped: L4 has no MIG") ||
		!strings.Contains(string(page), "The mig move is skipped: L4 has no MIG") || strings.Contains(rep.AllButFloor.What, "mig,") {
		t.Errorf("skipped %+v; all but floor %q; text:\n%s\npage intro %s", rep.Skipped, rep.AllButFloor.What, text.String(), page)
	}
	if _, err := Run(Options{Workload: w, Nodes: 8, Catalog: cat, GPUModel: "H100", Provider: "gcp"}); err == nil || !strings.Contains(err.Error(), "not sold as on-demand") {
		t.Errorf("gcp H100 (spot only) priced: %v", err)
	}
}
