package moves

import (
	"bytes"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/report/html"
	"github.com/corral-sched/corral/internal/report/svg"
)

// handMade is a report whose moves save 300 and 200 alone and only 250
// together: less than spot alone. "all" takes the 1-year floor; the
// Capacity Block's floor is an alternative to it.
func handMade() *Report {
	return &Report{Input: "hand-made", Policy: "corral", Nodes: 4, GPUModel: "H100", Offer: "test",
		Baseline: Move{Name: "baseline", CostUSD: 1000, ByCapacity: []cost.Line{{Key: "on-demand", CostUSD: 1000}}},
		Moves: []Move{{Name: "spot", SavingUSD: 300, SavingPct: 30, CostUSD: 690, ByCapacity: []cost.Line{{Key: "spot", CostUSD: 690}}},
			{Name: "floor-1y", SavingUSD: 200, SavingPct: 20, CostUSD: 800, ByCapacity: []cost.Line{{Key: "reserved-1y", CostUSD: 800}}},
			{Name: "floor-block", SavingUSD: 150, SavingPct: 15, CostUSD: 850, ByCapacity: []cost.Line{{Key: "reserved-block", CostUSD: 850}}}},
		AllButFloor: Move{Name: "all but floor", SavingUSD: 200},
		All:         Move{Name: "all", SavingUSD: 250, SavingPct: 25, CostUSD: 760},
		Floors:      []FloorPlan{{After: "baseline", Term: price.Reserved1y}, {After: "baseline", Term: price.ReservedBlock}, {After: "all but floor", Term: price.Reserved1y}},
		Best:        "spot"}
}

// The waterfall starts at the baseline's cost, steps down by each move's
// saving alone, steps back up by what the moves undo of each other
// together, and ends at the cost with all moves at the baseline's work.
func TestMovesWaterfall(t *testing.T) {
	rep := handMade()
	w := rep.waterfall()
	bars, err := svg.WaterfallBars(w.Steps)
	if err != nil {
		t.Fatal(err)
	}
	want := []svg.WaterfallBar{{Label: "baseline", From: 0, To: 1000, Total: true}, {Label: "spot", From: 1000, To: 700},
		{Label: "floor-1y", From: 700, To: 500}, {Label: "together", From: 500, To: 750}, {Label: "all moves", From: 0, To: 750, Total: true}}
	if len(bars) != len(want) {
		t.Fatalf("bars %v, want %v", bars, want)
	}
	for i := range want {
		if bars[i] != want[i] {
			t.Errorf("bar %d: %+v, want %+v", i, bars[i], want[i])
		}
	}
	caption := strings.Join(w.Caption, " ")
	if !strings.Contains(caption, "save $250 less than the sum of their savings alone") || !strings.Contains(caption, "Left out: floor-block") {
		t.Errorf("caption %q does not explain the step up and the floor left out", w.Caption)
	}
}

// The page says the answer first and speaks of moves, not policies.
func TestMovesPageSummaryAndCaptions(t *testing.T) {
	rep := handMade()
	r := rep.HTML()
	if len(r.Summary) < 2 || !strings.HasPrefix(r.Summary[0], "The baseline costs $1,000 over the arrival window. Alone, spot saves most: $300 (30.0%). All moves together save $250 (25.0%), for $750") ||
		!strings.Contains(r.Summary[1], "All moves together save less than spot alone") {
		t.Errorf("summary %q", r.Summary)
	}
	var b bytes.Buffer
	if err := html.Write(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "per policy") || strings.Contains(page, "coloured by policy") {
		t.Error("the moves page speaks of policies")
	}
	for _, want := range []string{`<div class="summary" id="report-summary">`, `<svg id="savings-chart"`, "coloured by replay", `<svg id="efficiency-per-useful"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
