package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/browsertest"
	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/sim"
)

// corral sim --html writes a page that opens in a real browser without
// errors, has every chart (GPUs over time per policy, cost, waits,
// fragmentation), and shows in its tables the numbers of its JSON.
func TestSimHTMLReportOpensInABrowser(t *testing.T) {
	b := browsertest.New(t)
	page := filepath.Join(t.TempDir(), "sim.html")
	// The four policies it checks: with every policy, a run this short
	// has no wait at all under any, and the wait CDF's lines lie on one
	// another at the top of the plot, the last drawn (grey) over the rest.
	_, errOut, code := runCLI(t, "sim", "--nodes", "32", "--days", "3", "--policies", "corral,kube-default,kueue-like,slurm-like", "--html", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := b.Open(t, "file://"+page, "#data")
	if len(got.Problems) > 0 {
		t.Errorf("page reported problems:\n%s", strings.Join(got.Problems, "\n"))
	}
	// One pool: cost by pool would repeat the totals, and is left out.
	want := []string{"waits", "fragmentation", "cost-by-capacity", "efficiency-total", "efficiency-per-useful"}
	for _, policy := range []string{"corral", "kube-default", "kueue-like", "slurm-like"} {
		want = append(want, "timeline-"+policy)
	}
	for _, id := range want {
		if !slices.Contains(got.ChartIDs, id) {
			t.Errorf("chart %q missing (charts: %v)", id, got.ChartIDs)
		}
	}
	// 4 policies x 8 summary numbers, and each policy's bill.
	if got.Checked < 32 || len(got.Bad) > 0 {
		t.Errorf("%d table numbers checked; not matching the embedded JSON: %v", got.Checked, got.Bad)
	}
	if empty := got.Empty(0.001); len(empty) > 0 {
		t.Errorf("charts with nothing drawn in them: %v (share of the plot in colour: %v)", empty, got.Ink)
	}
}

// The report's GPU charts share one scale and draw the fleet's capacity;
// its cost bars are per policy, not one sum of the four.
func TestSimReportComparesPolicies(t *testing.T) {
	o := simOptions{workloadKind: "generated", nodes: 8, days: 2, load: 0.8, seedN: 1, policies: "corral,slurm-like", reservedTerm: "1y", backfill: sim.EasyBackfill, reservations: 8}
	f, w, label, err := simInput(o)
	if err != nil {
		t.Fatal(err)
	}
	policies := []sim.Policy{}
	for _, name := range []string{"corral", "slurm-like"} {
		p, _ := sim.NewPolicy(name)
		policies = append(policies, p)
	}
	results, err := replayPolicies(o, f, w, policies, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := planCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	out := &simOutputs{label: label, results: results, capacity: float64(f.GPUs())}
	if out.costs, err = costResults(results, cat, "1y", time.Now()); err != nil {
		t.Fatal(err)
	}
	r := simReport(out, cat)
	a, b := r.Timelines[0], r.Timelines[1]
	if a.YMax <= 0 || a.YMax != b.YMax || a.Capacity != 64 || b.Capacity != 64 || a.YMax < 64 {
		t.Errorf("timelines: y max %g and %g, capacity %g and %g; want one scale above the 64 GPUs drawn", a.YMax, b.YMax, a.Capacity, b.Capacity)
	}
	groups := map[string]bool{}
	for _, c := range r.Costs {
		groups[c.Group] = true
	}
	if len(groups) != 2 || !groups["corral"] || !groups["slurm-like"] {
		t.Errorf("cost items grouped by %v, want one group per policy", groups)
	}
	// Beside each total, the cost per useful GPU-hour and the work undone,
	// as the bill has them; the summary names the cheapest per useful hour.
	if len(r.Efficiency) != 2 {
		t.Fatalf("efficiency items %+v, want one per policy", r.Efficiency)
	}
	cheapest := r.Efficiency[0]
	for _, e := range r.Efficiency {
		c := out.costs[e.Name]
		if e.TotalUSD != c.Bill.Total.CostUSD || c.USDPerUsefulGPUH == nil || e.USDPerUsefulGPUH != *c.USDPerUsefulGPUH || e.UndoneGPUH != c.WorkUndoneGPUH {
			t.Errorf("efficiency %+v does not match the bill of %s", e, e.Name)
		}
		if e.USDPerUsefulGPUH < cheapest.USDPerUsefulGPUH {
			cheapest = e
		}
	}
	if want := fmt.Sprintf("Cheapest per useful GPU-hour: %s, $%.2f", cheapest.Name, cheapest.USDPerUsefulGPUH); len(r.Summary) < 2 || !strings.HasPrefix(r.Summary[1], want) {
		t.Errorf("summary %q, want it to start its second sentence with %q", r.Summary, want)
	}
}

// The cheapest total is not the answer when it leaves work undone: the
// summary says so, and names the cheapest per useful GPU-hour first.
func TestSimSummaryCheapestTotalLeavesWorkUndone(t *testing.T) {
	perUseful := func(v float64) *float64 { return &v }
	out := &simOutputs{results: []*sim.Result{{Policy: "corral", Summary: sim.Summary{MeanWaitH: 2}}, {Policy: "kueue-like", Summary: sim.Summary{MeanWaitH: 1, UndoneGPUH: 28119}}},
		costs: map[string]*simCost{
			"corral":     {Bill: &cost.Bill{Total: cost.Line{CostUSD: 100000}}, USDPerUsefulGPUH: perUseful(3.1)},
			"kueue-like": {Bill: &cost.Bill{Total: cost.Line{CostUSD: 80000}}, USDPerUsefulGPUH: perUseful(4.2), WorkUndoneGPUH: 28119}}}
	got := simSummary(out)
	want := []string{"Shortest mean wait: kueue-like, 1.00 hours, with 28,119 GPU-hours of work left undone.",
		"Cheapest per useful GPU-hour: corral, $3.10 ($100,000 in all, 0 GPU-hours undone).",
		"Cheapest in total: kueue-like, $80,000, but it leaves 28,119 GPU-hours of work undone: its total pays for less work."}
	if !slices.Equal(got, want) {
		t.Errorf("summary\n%q\nwant\n%q", got, want)
	}
}

// --tco prices the four platforms on the same workload; with autoscaling,
// what each buys follows how it packs.
func TestSimCommandTCO(t *testing.T) {
	jsonPath := filepath.Join(t.TempDir(), "sim.json")
	out, errOut, code := runCLI(t, "sim", "--nodes", "32", "--days", "3", "--autoscale", "0:", "--tco", "--json", jsonPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"monthly cost per platform", "managed training service", "self-run Kubernetes with corral", "HPC cluster"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TCO []struct {
			Platform       string  `json:"platform"`
			GPUHoursBought float64 `json:"gpu_hours_bought"`
			TotalUSD       float64 `json:"total_usd"`
		} `json:"tco"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.TCO) != 5 { // managed, kube-default, kube-packed, corral, slurm
		t.Fatalf("%d platforms, want 5", len(doc.TCO))
	}
	byName := map[string]float64{}
	for _, r := range doc.TCO {
		if r.TotalUSD <= 0 || r.GPUHoursBought <= 0 {
			t.Errorf("%s: %+v", r.Platform, r)
		}
		byName[r.Platform] = r.GPUHoursBought
	}
	if byName["corral"] >= byName["kube-default"] {
		t.Errorf("corral bought %.0f GPU-h, kube-default %.0f: packing should buy fewer", byName["corral"], byName["kube-default"])
	}
}

// The committed floor is sized on the hours while work arrives: 64 cards
// busy for the 100 hours of arrivals, then a long drain on one card. Over
// the whole replay the planner would commit to 1; over arrivals, 64.
func TestCommittedFloorOverTheArrivalWindow(t *testing.T) {
	res := &sim.Result{Summary: sim.Summary{HorizonH: 100}}
	for h := 0; h < 1000; h++ {
		occupied := 1
		if h < 100 {
			occupied = 64
		}
		res.Hours = append(res.Hours, sim.Hour{Hour: h, Groups: []sim.GroupHour{{GPUModel: "H100-80GB", GPUs: 64, Occupied: occupied}}})
	}
	cat, err := planCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	if got := committedFloor(res, cat, price.ReservedBlock); got != 64 {
		t.Errorf("floor %g GPUs, want 64 (the drain after arrivals left out)", got)
	}
	whole, err := plan.Build(cardDemand(res.Hours), cat, plan.Options{Term: price.ReservedBlock})
	if err != nil || whole.Models[0].Committed != 1 {
		t.Errorf("the planner over the whole replay: %v, %+v; want 1 GPU, as the floor drawn before", err, whole)
	}
}
