// Package costexample is the worked example of corral's cost tools: a
// 100-GPU team moving its inference to MIG slices, its training to spot and
// a reserved floor under its inference. The test generates the team's month,
// prices each move, and checks (or, with -update, rewrites) the committed
// files beside it. See README.md.
package costexample

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/report/html"
)

var update = flag.Bool("update", false, "rewrite the committed example files")

// Lost work on spot (assumptions, see README.md): an interrupted GPU loses
// half an hourly checkpoint interval plus a quarter hour to restart.
const lostHoursPerInterruption = 0.75

// move is one step of the example and what it costs.
type move struct {
	Step        string     `json:"step"`
	Change      string     `json:"change"`
	CostUSD     float64    `json:"monthly_cost_usd"`
	SavingUSD   float64    `json:"saving_vs_previous_usd"`
	CumulSaving float64    `json:"saving_vs_baseline_usd"`
	BoughtGPUH  float64    `json:"gpu_hours_bought"`
	UsefulGPUH  float64    `json:"useful_gpu_hours"`
	PerUseful   float64    `json:"usd_per_useful_gpu_hour"`
	Bill        *cost.Bill `json:"bill"`
}

// series are the example's hourly inputs.
type series struct {
	whole, packed, used, training []float64
}

func TestWorkedExample(t *testing.T) {
	h100, err := gpu.Lookup("H100-80GB")
	if err != nil {
		t.Fatal(err)
	}
	m := generate()
	var s series
	s.whole, s.training = wholeCards(m), m.training
	if s.packed, err = migPacked(m, h100); err != nil {
		t.Fatal(err)
	}
	if s.used, err = usedCards(m, h100); err != nil {
		t.Fatal(err)
	}
	checkShape(t, s)

	cat, err := price.Default()
	if err != nil {
		t.Fatal(err)
	}
	offer, err := cat.Find("H100-80GB", "")
	if err != nil {
		t.Fatal(err)
	}
	rates := ratesOf(t, offer)
	packedPlan := plan.Optimise(s.packed, rates)
	moves := pricedMoves(t, s, cat, offer, packedPlan.Level)

	// The reserved floor's inference bill equals the planner's cost.
	inf := 0.0
	for _, l := range moves[3].Bill.ByPool {
		if l.Key == "inference" {
			inf = l.CostUSD
		}
	}
	if math.Abs(inf-packedPlan.Cost) > 1e-6*packedPlan.Cost {
		t.Errorf("inference bill %g differs from the plan's cost %g", inf, packedPlan.Cost)
	}
	for i := 1; i < len(moves); i++ {
		if moves[i].SavingUSD <= 0 {
			t.Errorf("move %q saves nothing: %+v", moves[i].Step, moves[i])
		}
	}
	wholePlan := plan.Optimise(s.whole, rates)
	lockedIn := plan.Cost(s.packed, float64(wholePlan.Level), rates) - packedPlan.Cost
	if lockedIn <= 0 {
		t.Errorf("committing at the whole-card floor after packing costs nothing extra: %g", lockedIn)
	}
	writeOutputs(t, s, moves, packedPlan, wholePlan, lockedIn)
}

// checkShape keeps the generated team what the README says it is.
func checkShape(t *testing.T, s series) {
	t.Helper()
	peak := 0.0
	for h := range s.whole {
		peak = max(peak, s.whole[h]+s.training[h])
		if s.packed[h] > s.whole[h] || s.used[h] > s.packed[h] {
			t.Fatalf("hour %d: packed %g whole %g used %g", h, s.packed[h], s.whole[h], s.used[h])
		}
	}
	if peak < 90 || peak > 110 {
		t.Errorf("peak demand %g GPUs, want a team of about 100", peak)
	}
}

func ratesOf(t *testing.T, o *price.Offer) plan.Rates {
	t.Helper()
	var r plan.Rates
	for c, dst := range map[price.Capacity]*float64{price.OnDemand: &r.OnDemand, price.Spot: &r.Spot, price.ReservedBlock: &r.Committed} {
		p, err := o.PerGPUHour(c)
		if err != nil {
			t.Fatal(err)
		}
		*dst = p.USDPerGPUHour
	}
	return r
}

// pricedMoves bills the baseline and each move in turn.
func pricedMoves(t *testing.T, s series, cat *price.Catalog, offer *price.Offer, floor int) []move {
	t.Helper()
	monthlyInterruptions := offer.Interruption.PerMonth[1]
	steps := []struct {
		step, change string
		usage        []cost.Usage
	}{
		{"baseline", "inference on whole cards, training on shared on-demand capacity",
			append(inferenceUsage(s.whole, s.used, 0), trainingUsage(s.training, "on-demand", 0)...)},
		{"MIG-packed inference", "each replica on a MIG slice of its size, packed by corral's layout engine",
			append(inferenceUsage(s.packed, s.used, 0), trainingUsage(s.training, "on-demand", 0)...)},
		{"spot training", "training on spot, redoing the work interruptions lose",
			append(inferenceUsage(s.packed, s.used, 0), trainingUsage(s.training, "spot", monthlyInterruptions)...)},
		{"reserved floor", fmt.Sprintf("%d GPUs committed (Capacity Block price) under the packed inference, the rest on demand", floor),
			append(inferenceUsage(s.packed, s.used, floor), trainingUsage(s.training, "spot", monthlyInterruptions)...)},
	}
	var moves []move
	for i, st := range steps {
		b, err := cost.Price(st.usage, cat, nil)
		if err != nil {
			t.Fatal(err)
		}
		mv := move{Step: st.step, Change: st.change, CostUSD: b.Total.CostUSD, BoughtGPUH: b.Total.BoughtGPUH,
			UsefulGPUH: b.Total.UsedGPUH, PerUseful: *b.Total.USDPerUsefulGPUH, Bill: b}
		if i > 0 {
			mv.SavingUSD = moves[i-1].CostUSD - mv.CostUSD
			mv.CumulSaving = moves[0].CostUSD - mv.CostUSD
		}
		moves = append(moves, mv)
	}
	return moves
}

// inferenceUsage is the inference pool's month: cards bought each hour,
// of which used card-equivalents did work and the rest of each busy card is
// stranded in slices no replica fills. With a reserved floor, the first
// floor cards every hour are reserved and the rest on demand.
func inferenceUsage(cards, used []float64, floor int) []cost.Usage {
	res := cost.Usage{Pool: "inference", CapacityType: string(price.ReservedBlock), GPUModel: "H100-80GB", Tenant: "product", Class: "inference"}
	od := cost.Usage{Pool: "inference", CapacityType: string(price.OnDemand), GPUModel: "H100-80GB", Tenant: "product", Class: "inference"}
	for h, n := range cards {
		inRes := min(n, float64(floor))
		share := 0.0
		if n > 0 {
			share = inRes / n
		}
		res.BoughtGPUH += float64(floor)
		res.IdleGPUH += float64(floor) - inRes
		res.UsedGPUH += used[h] * share
		res.FragmentedGPUH += inRes - used[h]*share
		od.BoughtGPUH += n - inRes
		od.UsedGPUH += used[h] * (1 - share)
		od.FragmentedGPUH += (n - inRes) - used[h]*(1-share)
	}
	if floor == 0 {
		return []cost.Usage{od}
	}
	return []cost.Usage{res, od}
}

// trainingUsage is the training pool's month. On spot, interruptions
// (monthly per instance) lose lostHoursPerInterruption of work per GPU,
// which is bought again.
func trainingUsage(gpus []float64, capacity string, monthlyInterruptions float64) []cost.Usage {
	u := cost.Usage{Pool: "training", CapacityType: capacity, GPUModel: "H100-80GB", Tenant: "research", Class: "training"}
	for _, g := range gpus {
		u.UsedGPUH += g
	}
	u.InterruptedLostGPUH = u.UsedGPUH * monthlyInterruptions / hours * lostHoursPerInterruption
	u.BoughtGPUH = u.UsedGPUH + u.InterruptedLostGPUH
	return []cost.Usage{u}
}

func writeOutputs(t *testing.T, s series, moves []move, packed, unpacked plan.Optimum, lockedIn float64) {
	t.Helper()
	files := map[string][]byte{
		"inference-unpacked.csv": demandCSV(s.whole),
		"inference-packed.csv":   demandCSV(s.packed),
		"training.csv":           demandCSV(s.training),
		"moves.md":               movesTable(moves, packed.Level, unpacked.Level, lockedIn),
	}
	data, err := json.MarshalIndent(moves, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	files["moves.json"] = append(data, '\n')
	var page bytes.Buffer
	if err := html.Write(&page, report(s, moves, packed, unpacked, lockedIn)); err != nil {
		t.Fatal(err)
	}
	files["report.html"] = page.Bytes()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(files["moves.md"])), "\n") {
		if strings.HasPrefix(line, "|") && !strings.Contains(string(readme), line) {
			t.Errorf("README.md's table lacks the row %q", line)
		}
	}
	for name, want := range files {
		if *update {
			if err := os.WriteFile(name, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (go test ./examples/cost -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date: go test ./examples/cost -update", name)
		}
	}
}

func demandCSV(gpus []float64) []byte {
	var b strings.Builder
	b.WriteString("hour,gpu_model,gpus\n")
	for h, g := range gpus {
		b.WriteString(strconv.Itoa(h) + ",H100-80GB," + strconv.FormatFloat(g, 'f', -1, 64) + "\n")
	}
	return []byte(b.String())
}

func movesTable(moves []move, packedLevel, unpackedLevel int, lockedIn float64) []byte {
	var b strings.Builder
	b.WriteString("| step | change | monthly cost | saving vs previous | saving vs baseline | GPU-hours bought | USD per useful GPU-hour |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|\n")
	for _, m := range moves {
		fmt.Fprintf(&b, "| %s | %s | $%s | $%s | $%s | %s | %.2f |\n", m.Step, m.Change, usd(m.CostUSD), usd(m.SavingUSD),
			usd(m.CumulSaving), usd(m.BoughtGPUH), m.PerUseful)
	}
	fmt.Fprintf(&b, "\nBest reserved floor for the packed inference: %d GPUs; for the same inference on whole cards: %d GPUs.\n", packedLevel, unpackedLevel)
	fmt.Fprintf(&b, "Reserving the whole-card floor (%d GPUs) and then packing would cost $%s a month more than the packed floor: the waste a commitment made before packing locks in.\n", unpackedLevel, usd(lockedIn))
	return []byte(b.String())
}

func usd(v float64) string {
	return html.Num(v, 0, "").Text
}
