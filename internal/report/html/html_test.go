package html

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/cost/tco"
	"github.com/corral-sched/corral/internal/report/svg"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// testPrices is a small catalog with every figure the test plan needs.
const testPrices = `
offers:
  - provider: test
    family: t1
    instance: t1.8gpu
    region: lab
    gpu: H100-80GB
    gpus: 8
    prices:
      on-demand: {usd_per_hour: 48, source: test price sheet, seen: 2026-11-01}
      spot: {usd_per_hour: 16, source: test price sheet, seen: 2026-11-01}
      reserved-1y: {usd_per_hour: 30, source: test price sheet, seen: 2026-11-01}
  - provider: test
    family: t2
    instance: t2.1gpu
    region: lab
    gpu: L4
    gpus: 1
    prices:
      on-demand: {usd_per_hour: 0.8, source: test price sheet, seen: 2026-11-01}
      spot: {usd_per_hour: 0.4, source: test price sheet, seen: 2026-11-01}
      reserved-1y: {usd_per_hour: 0.5, source: test price sheet, seen: 2026-11-01}
`

const testDemand = `hour,gpu_model,gpus
0,H100,16
1,H100,12
2,H100,12
3,H100,8
4,H100,8
5,H100,4
0,L4,2
1,L4,3
2,L4,2
3,L4,2
4,L4,1
`

const testUnpacked = `hour,gpu_model,gpus
0,H100,20
1,H100,16
2,H100,16
3,H100,12
4,H100,12
5,H100,8
0,L4,4
1,L4,5
2,L4,4
3,L4,4
4,L4,3
5,L4,1
`

// smallReport is a plan report of a tiny demand with every other section
// filled in as the simulator would.
func smallReport(t *testing.T) Report {
	t.Helper()
	cat, err := price.Parse([]byte(testPrices), "test-prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := plan.ReadDemand(strings.NewReader(testDemand), "packed.csv")
	if err != nil {
		t.Fatal(err)
	}
	u, err := plan.ReadDemand(strings.NewReader(testUnpacked), "unpacked.csv")
	if err != nil {
		t.Fatal(err)
	}
	opts := plan.Options{Term: price.Reserved1y, SpotShare: 0.5}
	pp, err := plan.Build(d, cat, opts)
	if err != nil {
		t.Fatal(err)
	}
	up, err := plan.Build(u, cat, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := &plan.Output{Version: 1, Demand: "packed.csv", Plan: pp, UnpackedDemand: "unpacked.csv", Unpacked: up,
		Differences: plan.Compare(pp, up, d, plan.RatesOf(pp)).Differences, Unknown: cat.Unknown}
	r := PlanReport(out, d, u)
	r.Timelines[0].Series = append(r.Timelines[0].Series,
		Values{Name: "allocated", Values: []float64{16, 16, 12, 8, 8, 8}},
		Values{Name: "used", Values: []float64{14, 11, 10, 7, 6, 3}})
	r.Waits = []Waits{{Policy: "kube-default", Hours: []float64{0, 0, 0.5, 2, 6}}, {Policy: "corral", Hours: []float64{0, 0, 0, 0.25, 1}}}
	r.Fragmentation = []Line{{Name: "kube-default", X: []float64{0, 1, 2, 3}, Y: []float64{2, 6, 5, 4}},
		{Name: "corral", X: []float64{0, 1, 2, 3}, Y: []float64{1, 2, 1, 1}}}
	bill, err := cost.Price([]cost.Usage{
		{Pool: "inference", CapacityType: "reserved-1y", GPUModel: "L4", Tenant: "product", Class: "inference", BoughtGPUH: 720, UsedGPUH: 500, IdleGPUH: 150, FragmentedGPUH: 70},
		{Pool: "training", CapacityType: "spot", GPUModel: "H100", Tenant: "research", Class: "training", BoughtGPUH: 400, UsedGPUH: 330, InterruptedLostGPUH: 50, IdleGPUH: 20},
		{Pool: "training", CapacityType: "on-demand", GPUModel: "H100", Tenant: "research", Class: "training", BoughtGPUH: 100, UsedGPUH: 90, PreemptedLostGPUH: 10},
	}, cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := tco.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	// The report's four platforms of the golden file; which platforms
	// the defaults hold is internal/cost/tco's test.
	profiles = slices.DeleteFunc(profiles, func(p tco.Profile) bool { return p.Name == "kube-packed" })
	rows, err := tco.Compare(profiles, map[string]tco.Input{
		"managed-training": {GPUHoursBought: 1000, USDPerGPUHour: 4, UsefulGPUHours: 900, MeanWaitHours: 0.2, P99WaitHours: 1.5},
		"kube-default":     {GPUHoursBought: 1400, USDPerGPUHour: 4, UsefulGPUHours: 800, UndoneGPUHours: 100, MeanWaitHours: 1.1, P99WaitHours: 9},
		"kube-corral":      {GPUHoursBought: 1050, USDPerGPUHour: 4, UsefulGPUHours: 900, MeanWaitHours: 0.4, P99WaitHours: 3},
		"hpc-slurm":        {GPUHoursBought: 1300, USDPerGPUHour: 4, UsefulGPUHours: 900, MeanWaitHours: 2.5, P99WaitHours: 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Costs = append(r.Costs, CostsOf(bill)...)
	r.Tables = append(r.Tables, BillTable("bill-by-pool", "Bill by pool", "bill.by_pool", bill.ByPool),
		BillTable("bill-by-tenant", "Bill by tenant", "bill.by_tenant", bill.ByTenant), TCOTable("tco", rows))
	r.Efficiency = EfficiencyOfTCO(rows)
	r.Waterfall = &Waterfall{ID: "saving", Title: "Saving", YLabel: "USD", Steps: []svg.Step{{Label: "baseline", Value: 1000, Total: true},
		{Label: "spot", Value: -300}, {Label: "together", Value: 40}, {Label: "all", Total: true}}}
	r.Data = struct {
		*plan.Output
		Bill *cost.Bill `json:"bill"`
		TCO  []tco.Row  `json:"tco"`
	}{out, bill, rows}
	return r
}

func TestGoldenSmallReport(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, smallReport(t)); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "small.html")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("report differs from %s; run go test -update and review the diff", golden)
	}
	var again bytes.Buffer
	if err := Write(&again, smallReport(t)); err != nil || !bytes.Equal(again.Bytes(), b.Bytes()) {
		t.Error("two renderings of the same report differ")
	}
}

func TestReportIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, smallReport(t)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"http://", "https://", "<link", "@import", "src=", "<?xml"} {
		// Sources of prices are text in tables and data, never fetched:
		// strip those before looking for links.
		if bad == "https://" || bad == "http://" {
			if strings.Contains(strings.ReplaceAll(stripTextAndData(page), `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
				t.Errorf("page fetches %q", bad)
			}
			continue
		}
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, id := range chartIDs {
		if !strings.Contains(page, `<svg id="`+id+`"`) {
			t.Errorf("no chart with id %q", id)
		}
	}
	if strings.Count(page, `id="timeline-h100-80gb-plot"`) != 1 {
		t.Error("chart clip paths are not unique per chart")
	}
}

// chartIDs are the charts the small report must have.
var chartIDs = []string{"timeline-h100-80gb", "timeline-l4", "cost-by-pool", "cost-by-capacity", "waits", "fragmentation", "curve-h100-80gb", "curve-l4",
	"saving-chart", "efficiency-total", "efficiency-per-useful"}

// stripTextAndData drops the embedded JSON and table cells, where source
// URLs appear as text.
func stripTextAndData(page string) string {
	if i := strings.Index(page, `<script type="application/json"`); i >= 0 {
		page = page[:i]
	}
	var b strings.Builder
	for {
		i := strings.Index(page, "<td>")
		if i < 0 {
			b.WriteString(page)
			return b.String()
		}
		b.WriteString(page[:i])
		j := strings.Index(page[i:], "</td>")
		page = page[i+j:]
	}
}

func TestCDFSteps(t *testing.T) {
	x, y := cdf([]float64{2, 0, 0, 1})
	wantX := []float64{0, 1, 1, 2, 2}
	wantY := []float64{0.5, 0.5, 0.75, 0.75, 1}
	if len(x) != len(wantX) {
		t.Fatalf("x %v y %v", x, y)
	}
	for i := range x {
		if x[i] != wantX[i] || y[i] != wantY[i] {
			t.Fatalf("x %v y %v, want %v %v", x, y, wantX, wantY)
		}
	}
}

// Timelines set side by side share one scale, from 0 to above the
// highest value, floor or capacity of any of them.
func TestShareScale(t *testing.T) {
	ts := []Timeline{
		{Name: "a", Series: []Values{{Name: "used", Values: []float64{3, 40, math.NaN()}}}, Capacity: 64},
		{Name: "b", Series: []Values{{Name: "used", Values: []float64{1, 2, 3}}}, Committed: 2},
	}
	ShareScale(ts)
	if ts[0].YMax != 64*1.05 || ts[1].YMax != ts[0].YMax {
		t.Errorf("y max %g and %g, want both %g", ts[0].YMax, ts[1].YMax, 64*1.05)
	}
	c := timelineChart(ts[0])
	if c.YMin != 0 || c.YMax != ts[0].YMax || len(c.HLines) != 1 || c.HLines[0].Label != "fleet capacity: 64 GPUs" {
		t.Errorf("chart: y %g to %g, lines %+v", c.YMin, c.YMax, c.HLines)
	}
	// A queue's demand far above the fleet runs off the top, and is said.
	ts[1].Series[0].Values[2] = 1000
	ShareScale(ts)
	if ts[0].YMax != 128*1.05 {
		t.Errorf("y max %g, want twice the capacity and a little: %g", ts[0].YMax, 128*1.05)
	}
	if got := offTheTop(ts); got != "Above the top of the scale: b's used peaks at 1,000 GPUs." {
		t.Errorf("off the top: %q", got)
	}
}

// Costs of several groups (policies) get a bar each, coloured by group,
// instead of being added into one figure.
func TestCostBarsPerGroup(t *testing.T) {
	items := []CostItem{{Group: "corral", Pool: "p", Capacity: "on-demand", USD: 10}, {Group: "corral", Pool: "p", Capacity: "spot", USD: 1},
		{Group: "slurm-like", Pool: "p", Capacity: "on-demand", USD: 30}}
	got := sumBy(items, func(c CostItem) string { return c.Capacity })
	want := []bar{{"corral / on-demand", 10, 0, 0}, {"corral / spot", 1, 0, 0}, {"slurm-like / on-demand", 30, 1, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("bars %v, want %v", got, want)
	}
	ungrouped := sumBy([]CostItem{{Pool: "p", Capacity: "a", USD: 1}, {Pool: "q", Capacity: "a", USD: 2}, {Pool: "q", Capacity: "b", USD: 3}},
		func(c CostItem) string { return c.Capacity })
	if want := []bar{{"a", 3, 0, 0}, {"b", 3, 1, 0}}; !slices.Equal(ungrouped, want) {
		t.Errorf("ungrouped bars %v, want %v", ungrouped, want)
	}
}

// The wait CDF has a log time axis from a minute: waits of zero and of
// hundreds of hours both show, and the axis says what it plots.
func TestWaitsOnALogAxis(t *testing.T) {
	s, err := waits([]Waits{{Policy: "a", Hours: []float64{0, 0, 0.5, 700}}, {Policy: "b", Hours: []float64{0.02, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	chart := string(s.Charts[0])
	for _, want := range []string{"hours waited (log scale)", ">0.1</text>", ">100</text>"} {
		if !strings.Contains(chart, want) {
			t.Errorf("wait chart lacks %q", want)
		}
	}
	f, err := fragmentation([]Line{{Name: "a", X: []float64{0, 1}, Y: []float64{3, 5}}})
	if err != nil || !strings.Contains(string(f.Charts[0]), "free GPUs on partly used nodes") || strings.Contains(string(f.Charts[0]), "share") {
		t.Errorf("fragmentation chart does not say it counts GPUs (%v)", err)
	}
}

func TestGroup(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "999": "999", "1000": "1,000", "-1234567.50": "-1,234,567.50", "12.3": "12.3"} {
		if got := group(in); got != want {
			t.Errorf("group(%q) = %q, want %q", in, got, want)
		}
	}
}

// The plan's timeline starts its GPU axis at zero and shades, under the
// demand, the committed GPUs used and unused and what runs on demand.
func TestPlanTimelineFromZeroWithCommitmentShaded(t *testing.T) {
	r := smallReport(t)
	tl := r.Timelines[0]
	if tl.Committed <= 0 {
		t.Fatalf("no commitment in the test plan: %+v", tl)
	}
	c := timelineChart(tl)
	if c.YMin != 0 || c.YMax < tl.Committed {
		t.Errorf("GPU axis from %g to %g, want from 0 past the %g committed", c.YMin, c.YMax, tl.Committed)
	}
	got := commitmentAreas([]float64{2, 6, 4}, 4)
	want := []Area{{Name: "committed, used", Fill: fillCommittedUsed, Lo: []float64{0, 0, 0}, Hi: []float64{2, 4, 4}},
		{Name: "committed, unused", Fill: fillCommittedUnused, Lo: []float64{2, 4, 4}, Hi: []float64{4, 4, 4}},
		{Name: "on demand", Fill: fillOnDemand, Lo: []float64{4, 4, 4}, Hi: []float64{4, 6, 4}}}
	if len(got) != len(want) {
		t.Fatalf("areas %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Fill != want[i].Fill || !slices.Equal(got[i].Lo, want[i].Lo) || !slices.Equal(got[i].Hi, want[i].Hi) {
			t.Errorf("area %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if none := commitmentAreas([]float64{1, 3}, 0); len(none) != 1 || none[0].Name != "on demand" || !slices.Equal(none[0].Hi, []float64{1, 3}) {
		t.Errorf("with nothing committed: %+v, want all on demand", none)
	}
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`fill="` + fillCommittedUnused + `" fill-opacity="0.35"`, ">committed, unused</text>", "Shaded under the demand"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan page lacks %q", want)
		}
	}
}

// The plan's report opens with its answer: the level, what it costs and
// saves, and how busy the commitment is, per model.
func TestPlanSummaryFirst(t *testing.T) {
	r := smallReport(t)
	p := r.Data.(struct {
		*plan.Output
		Bill *cost.Bill `json:"bill"`
		TCO  []tco.Row  `json:"tco"`
	}).Plan
	if len(r.Summary) < len(p.Models) {
		t.Fatalf("summary %q, want a sentence per model", r.Summary)
	}
	m := p.Models[0]
	want := fmt.Sprintf("%s: commit %d GPUs", m.Model, m.Committed)
	if !strings.HasPrefix(r.Summary[0], want) || !strings.Contains(r.Summary[0], dollars(m.SavingUSD)) {
		t.Errorf("summary %q, want it to start %q and give the saving %s", r.Summary[0], want, dollars(m.SavingUSD))
	}
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if s, h := strings.Index(page, `id="report-summary"`), strings.Index(page, "<section"); s < 0 || s > h {
		t.Error("the summary is not above the sections")
	}
	// Its id is its own: the sim report has a table with the id "summary".
	if strings.Count(page, `id="report-summary"`) != 1 || strings.Contains(page, `<div class="summary" id="summary"`) {
		t.Error("the summary's id is not unique to it")
	}
}

// Beside each total, the cost per useful GPU-hour; a bar's label says
// the work its alternative left undone.
func TestEfficiencyShowsUndoneWork(t *testing.T) {
	s, err := efficiency([]Efficiency{{Name: "corral", TotalUSD: 100, USDPerUsefulGPUH: 3.1}, {Name: "kueue-like", TotalUSD: 80, USDPerUsefulGPUH: 4.25, UndoneGPUH: 28119}})
	if err != nil || len(s.Charts) != 2 {
		t.Fatalf("charts %d, %v", len(s.Charts), err)
	}
	per := string(s.Charts[1])
	for _, want := range []string{">kueue-like (28,119 GPU-h undone)</text>", ">$4.25</text>", ">corral</text>", ">$3.10</text>"} {
		if !strings.Contains(per, want) {
			t.Errorf("cost per useful GPU-hour chart lacks %q", want)
		}
	}
}
