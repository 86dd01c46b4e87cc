package commit

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

// Each case's figures are worked by hand in its comment.
func TestBill(t *testing.T) {
	h100 := map[string]Rate{"H100": {OnDemand: 4}}
	two := map[string]Rate{"H100": {OnDemand: 8, Committed: 5}, "A100": {OnDemand: 4, Committed: 2}}
	tests := []struct {
		name  string
		c     Commitment
		usage []Usage
		rates map[string]Rate
		want  Statement
	}{{
		// 2 GPUs at $2: covered 0+1+2+2, 1 GPU-hour over at $4, 2+1 GPU-hours unused.
		name: "gpus", c: Commitment{Kind: Discount, GPUs: 2, USDPerGPUHour: 2},
		usage: []Usage{{"H100", []float64{0, 1, 3, 2}}}, rates: h100,
		want: Statement{Kind: Discount, Hours: 4, UsageGPUH: 6, CoveredGPUH: 5, OverflowGPUH: 1, CommittedGPUH: 8, UnusedGPUH: 3,
			CommitmentUSD: 16, UnusedUSD: 6, OverflowUSD: 4, TotalUSD: 20, OnDemandUSD: 24, SavingUSD: 4, Coverage: 5.0 / 6, Utilisation: 5.0 / 8},
	}, {
		// out of scope: A100 is left out; H100 as above over 2 hours.
		name: "scope", c: Commitment{Kind: Discount, Models: []string{"h100"}, GPUs: 1, USDPerGPUHour: 2},
		usage: []Usage{{"A100", []float64{5, 5}}, {"H100", []float64{2}}}, rates: map[string]Rate{"H100": {OnDemand: 4}},
		want: Statement{Kind: Discount, Hours: 2, UsageGPUH: 2, CoveredGPUH: 1, OverflowGPUH: 1, CommittedGPUH: 2, UnusedGPUH: 1,
			CommitmentUSD: 4, UnusedUSD: 2, OverflowUSD: 4, TotalUSD: 8, OnDemandUSD: 8, SavingUSD: 0, Coverage: 0.5, Utilisation: 0.5},
	}, {
		// $10/h: hour 0 covers 2 A100 ($4, 50% off first), then 1.2 H100
		// ($6), 0.8 H100 over at $8; hour 1 covers 1 A100 ($2), $8 unused.
		// Covered at on-demand: 8 + 9.6 + 4 of 28.
		name: "spend", c: Commitment{Kind: Discount, USDPerHour: 10},
		usage: []Usage{{"H100", []float64{2, 0}}, {"A100", []float64{2, 1}}}, rates: two,
		want: Statement{Kind: Discount, Hours: 2, UsageGPUH: 5, CoveredGPUH: 4.2, OverflowGPUH: 0.8,
			CommitmentUSD: 20, UnusedUSD: 8, OverflowUSD: 6.4, TotalUSD: 26.4, OnDemandUSD: 28, SavingUSD: 1.6, Coverage: 21.6 / 28, Utilisation: 0.6},
	}, {
		name: "nothing committed", c: Commitment{Kind: Discount},
		usage: []Usage{{"H100", []float64{1, 2}}}, rates: h100,
		want: Statement{Kind: Discount, Hours: 2, UsageGPUH: 3, OverflowGPUH: 3, OverflowUSD: 12, TotalUSD: 12, OnDemandUSD: 12},
	}}
	for _, tt := range tests {
		got, err := Bill(tt.c, tt.usage, tt.rates)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !sameStatement(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func sameStatement(a, b Statement) bool {
	fa := []float64{a.UsageGPUH, a.CoveredGPUH, a.OverflowGPUH, a.CommittedGPUH, a.UnusedGPUH, a.CommitmentUSD, a.UnusedUSD,
		a.OverflowUSD, a.TotalUSD, a.OnDemandUSD, a.SavingUSD, a.Coverage, a.Utilisation}
	fb := []float64{b.UsageGPUH, b.CoveredGPUH, b.OverflowGPUH, b.CommittedGPUH, b.UnusedGPUH, b.CommitmentUSD, b.UnusedUSD,
		b.OverflowUSD, b.TotalUSD, b.OnDemandUSD, b.SavingUSD, b.Coverage, b.Utilisation}
	return a.Kind == b.Kind && a.Hours == b.Hours && slices.EqualFunc(fa, fb, near)
}

func TestBillRefuses(t *testing.T) {
	u := []Usage{{"H100", []float64{1}}}
	r := map[string]Rate{"H100": {OnDemand: 4}}
	tests := []struct {
		name string
		c    Commitment
		u    []Usage
		want string
	}{
		{"unknown kind", Commitment{Kind: "reserved", GPUs: 1, USDPerGPUHour: 1}, u, `commitment kind "reserved": want discount`},
		{"both amounts", Commitment{Kind: Discount, GPUs: 1, USDPerGPUHour: 1, USDPerHour: 3}, u, "not both"},
		{"no rate", Commitment{Kind: Discount, GPUs: 1}, u, "needs its rate"},
		{"spend without committed rate", Commitment{Kind: Discount, USDPerHour: 3}, u, "no on-demand and committed rate for H100"},
		{"model without rate", Commitment{Kind: Discount, GPUs: 1, USDPerGPUHour: 1}, []Usage{{"L4", []float64{1}}}, "rate for L4"},
		{"negative usage", Commitment{Kind: Discount, GPUs: 1, USDPerGPUHour: 1}, []Usage{{"H100", []float64{-1}}}, "hour 0 is -1"},
		{"infinite amount", Commitment{Kind: Discount, GPUs: math.Inf(1), USDPerGPUHour: 1}, u, "finite"},
	}
	for _, tt := range tests {
		if _, err := Bill(tt.c, tt.u, r); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestParseKind(t *testing.T) {
	for _, s := range []string{"discount", " Capacity "} {
		if _, err := ParseKind(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseKind("savings-plan"); err == nil {
		t.Error("savings-plan accepted as a kind")
	}
}

// bruteBill bills hour by hour in GPU-hour units (or smaller pieces): each
// unit of usage, dearest saving first, takes from what is left of the
// commitment. It shares no code with Bill.
func bruteBill(c Commitment, usage []Usage, rates map[string]Rate) (total, covered float64) {
	const piece = 0.125
	hours := 0
	for _, u := range usage {
		hours = max(hours, len(u.GPUs))
	}
	total = (c.GPUs*c.USDPerGPUHour + c.USDPerHour) * float64(hours)
	for h := 0; h < hours; h++ {
		type unit struct{ od, committed, saving float64 }
		var units []unit
		for _, u := range usage {
			if h >= len(u.GPUs) {
				continue
			}
			r := rates[u.Model]
			for g := 0.0; g < u.GPUs[h]-1e-12; g += piece {
				units = append(units, unit{r.OnDemand * piece, r.Committed * piece, 1 - r.Committed/r.OnDemand})
			}
		}
		if c.USDPerHour > 0 {
			slices.SortStableFunc(units, func(a, b unit) int { return -cmpF(a.saving, b.saving) })
		} else {
			slices.SortStableFunc(units, func(a, b unit) int { return -cmpF(a.od, b.od) })
		}
		gpus, usd := c.GPUs, c.USDPerHour
		for _, x := range units {
			switch {
			case c.USDPerHour > 0 && usd > 0:
				f := min(1, usd/x.committed)
				usd -= f * x.committed
				covered += f * piece
				total += (1 - f) * x.od
			case c.USDPerHour == 0 && gpus >= piece-1e-12:
				gpus -= piece
				covered += piece
			default:
				total += x.od
			}
		}
	}
	return total, covered
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// On random usage in eighths of a GPU, Bill agrees with the unit-by-unit
// brute force for GPU and spend commitments.
func TestBillAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rates := map[string]Rate{"H100": {OnDemand: 8, Committed: 5}, "A100": {OnDemand: 4, Committed: 2}, "L4": {OnDemand: 1, Committed: 0.75}}
	for trial := 0; trial < 200; trial++ {
		var usage []Usage
		for _, m := range []string{"H100", "A100", "L4"} {
			gpus := make([]float64, 1+rng.IntN(6))
			for h := range gpus {
				gpus[h] = float64(rng.IntN(33)) / 8
			}
			usage = append(usage, Usage{m, gpus})
		}
		cs := []Commitment{
			{Kind: Discount, GPUs: float64(rng.IntN(6)), USDPerGPUHour: 3},
			{Kind: Discount, USDPerHour: rng.Float64() * 40},
		}
		for _, c := range cs {
			s, err := Bill(c, usage, rates)
			if err != nil {
				t.Fatal(err)
			}
			total, covered := bruteBill(c, usage, rates)
			if !near(s.TotalUSD, total) || !near(s.CoveredGPUH, covered) {
				t.Fatalf("trial %d %+v: Bill total %g covered %g, brute force %g covered %g", trial, c, s.TotalUSD, s.CoveredGPUH, total, covered)
			}
		}
	}
}

// Best's level is the break-even rule's: the number of GPUs busy in more
// than rate/on-demand of the hours.
func TestBestIsTheBreakEvenLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 100; trial++ {
		gpus := make([]float64, 24+rng.IntN(48))
		for h := range gpus {
			gpus[h] = float64(rng.IntN(20))
		}
		rate := 1 + rng.Float64()*6
		c := Commitment{Kind: Discount, USDPerGPUHour: rate}
		best, all, err := Best(c, []Usage{{"H100", gpus}}, map[string]Rate{"H100": {OnDemand: 8}}, slices.Max(gpus), 1)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for level := 1; ; level++ {
			busy := 0
			for _, g := range gpus {
				if g >= float64(level) {
					busy++
				}
			}
			if busy == 0 || float64(busy)/float64(len(gpus)) <= rate/8 {
				break
			}
			want = level
		}
		if int(best.GPUs) != want || len(all) != int(slices.Max(gpus))+1 {
			t.Fatalf("trial %d: best %g of %d levels, break-even rule %d", trial, best.GPUs, len(all), want)
		}
	}
}

// A capacity commitment is billed from what ran on its nodes: 8 GPUs at
// $5, 8 then 4 occupied, 6 GPUs on demand at $8 in the second hour.
func TestNodes(t *testing.T) {
	got := Nodes(8, 5, 8, []float64{8, 4}, []float64{0, 6})
	want := Statement{Kind: Capacity, Hours: 2, UsageGPUH: 18, CoveredGPUH: 12, OverflowGPUH: 6, CommittedGPUH: 16, UnusedGPUH: 4,
		CommitmentUSD: 80, UnusedUSD: 20, OverflowUSD: 48, TotalUSD: 128, OnDemandUSD: 144, SavingUSD: 16, Coverage: 12.0 / 18, Utilisation: 0.75}
	if !sameStatement(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
