package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/commit"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/sim"
)

// simCost is one policy's bill, and the GPU-hours no catalog price covers.
// Beside the total: what a GPU-hour of work done and kept cost, and the
// work the policy left undone (jobs accepted that did not finish), so that
// totals for unequal work are not read as equal.
type simCost struct {
	Bill             *cost.Bill `json:"bill"`
	USDPerUsefulGPUH *float64   `json:"usd_per_useful_gpu_hour"` // nil when no work was done
	WorkUndoneGPUH   float64    `json:"work_undone_gpu_hours"`
	UnpricedGPUH     float64    `json:"unpriced_gpu_hours"`
	Unpriced         []string   `json:"unpriced,omitempty"` // what had no price, and why
	// PriceWarnings names the prices of the bill that are STALE or
	// EXPIRED on the day given, with their ages and sources.
	PriceWarnings []string `json:"price_warnings,omitempty"`
}

// costResults prices every policy's replay against the catalog. Rows
// without a known price (a GPU model or capacity type the catalog lacks)
// are left out of the bill and named.
func costResults(results []*sim.Result, cat *price.Catalog, term string, now time.Time) (map[string]*simCost, error) {
	out := map[string]*simCost{}
	for _, r := range results {
		c := &simCost{}
		var priced []cost.Usage
		missing := map[string]bool{}
		for _, u := range r.Usage(term, discountTerm(cat, term)) {
			if why := unpriced(cat, u); why != "" {
				c.UnpricedGPUH += u.BoughtGPUH
				missing[why] = true
				continue
			}
			priced = append(priced, u)
		}
		for why := range missing {
			c.Unpriced = append(c.Unpriced, why)
		}
		sort.Strings(c.Unpriced)
		bill, err := cost.Price(priced, cat, nil)
		if err != nil {
			return nil, fmt.Errorf("cost of %s: %w", r.Policy, err)
		}
		c.Bill, c.USDPerUsefulGPUH, c.WorkUndoneGPUH = bill, bill.Total.USDPerUsefulGPUH, r.Summary.UndoneGPUH
		c.PriceWarnings = price.StaleWarnings(bill.Prices, now)
		out[r.Policy] = c
	}
	return out, nil
}

// discountTerm reports, per GPU model, whether the catalog's commitment
// of term (reserved-1y, ...) for it is a priced discount, billed on
// matching usage in any node, rather than capacity. Reserved cards of a
// model without the price are left out of the bill as unpriced, and
// cover nothing.
func discountTerm(cat *price.Catalog, term string) func(string) bool {
	c := price.Capacity("reserved-" + term)
	known := map[string]bool{} // by model: asked once, read every group and hour
	return func(model string) bool {
		is, ok := known[model]
		if !ok {
			is = discountOffer(cat, model, c)
			known[model] = is
		}
		return is
	}
}

// discountOffer reports whether the catalog's offer for model prices c
// and bills it as a discount.
func discountOffer(cat *price.Catalog, model string, c price.Capacity) bool {
	offer, err := cat.Find(model, "")
	if err != nil {
		return false
	}
	if _, err := offer.PerGPUHour(c); err != nil {
		return false
	}
	kind, err := offer.CommitmentKind(c)
	return err == nil && kind == commit.Discount
}

// unpriced says why a usage row has no price, or "" when it has one.
func unpriced(cat *price.Catalog, u cost.Usage) string {
	offer, err := cat.Find(u.GPUModel, "")
	if err != nil {
		return fmt.Sprintf("%s: no offer in the catalog", u.GPUModel)
	}
	if _, err := offer.PerGPUHour(price.Capacity(u.CapacityType)); err != nil {
		return fmt.Sprintf("%s %s: no %s price for %s", u.GPUModel, u.CapacityType, u.CapacityType, offer.Name())
	}
	return ""
}

// writeSimCosts prints each policy's bill: the total, the cost of a
// useful GPU-hour and the work left undone beside it, and where the money
// went.
func writeSimCosts(w io.Writer, results []*sim.Result, costs map[string]*simCost) {
	fmt.Fprintln(w, "\ncost at catalog prices (internal/cost/price/catalog.yaml; --prices to override), billed for every hour")
	fmt.Fprintf(w, "from the start until the last job ends (hours): a longer window than the %.0f h of arrivals util and alloc above cover\n", horizonOf(results))
	fmt.Fprintf(w, "  %-15s %6s %12s %10s %10s %10s %10s %7s %9s %10s %9s\n", "policy", "hours", "total USD", "USD/useful", "undone", "bought", "used",
		"wasted", "idle", "fragmented", "lost")
	for _, r := range results {
		c := costs[r.Policy]
		t := c.Bill.Total
		wasted := 0.0
		if t.BoughtGPUH > 0 {
			wasted = 100 * t.WastedGPUH / t.BoughtGPUH
		}
		fmt.Fprintf(w, "  %-15s %6d %12.0f %10s %10.0f %10.0f %10.0f %6.1f%% %9.0f %10.0f %9.0f\n", r.Policy, len(r.Hours), t.CostUSD, perUseful(c.USDPerUsefulGPUH),
			c.WorkUndoneGPUH, t.BoughtGPUH, t.UsedGPUH, wasted, t.IdleGPUH, t.FragmentedGPUH, t.PreemptedLostGPUH+t.InterruptedLostGPUH)
	}
	var notes []string
	for _, r := range results {
		if c := costs[r.Policy]; c.UnpricedGPUH > 0 {
			notes = append(notes, fmt.Sprintf("%s: %.0f GPU-h unpriced (%s)", r.Policy, c.UnpricedGPUH, strings.Join(c.Unpriced, "; ")))
		}
	}
	if ws := costWarnings(results, costs); len(ws) > 0 {
		fmt.Fprintln(w, "  prices used that are stale or expired:")
		for _, s := range ws {
			fmt.Fprintln(w, "    WARNING "+s)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "  left out, no price known:")
		for _, n := range notes {
			fmt.Fprintln(w, "   ", n)
		}
	}
	writeDiscountCover(w, results, costs)
	fmt.Fprintln(w, "  USD/useful: per useful GPU-hour (work done and kept); undone: GPU-hours of work accepted and not done (totals")
	fmt.Fprintln(w, "  compare equal work only where undone is equal). used: GPU-hours of work over the hours billed; wasted: bought")
	fmt.Fprintln(w, "  but not used (1 - utilisation over the hours billed); idle: free cards on empty nodes and cards held while")
	fmt.Fprintln(w, "  idle; fragmented: free cards on partly used nodes and unused parts of shared cards; lost: work thrown away by")
	fmt.Fprintln(w, "  preemptions and interruptions.")
}

// horizonOf is the arrival window of the replays, in hours (the same
// workload for every policy).
func horizonOf(results []*sim.Result) float64 {
	if len(results) == 0 {
		return 0
	}
	return results[0].Summary.HorizonH
}

// costWarnings are the price warnings of every policy's bill, each once.
func costWarnings(results []*sim.Result, costs map[string]*simCost) []string {
	var out []string
	for _, r := range results {
		for _, s := range costs[r.Policy].PriceWarnings {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// writeDiscountCover says, where a discount commitment paid for on-demand
// cards while reserved nodes were away, how many GPU-hours and for whom.
func writeDiscountCover(w io.Writer, results []*sim.Result, costs map[string]*simCost) {
	var lines []string
	for _, r := range results {
		if covered := costs[r.Policy].Bill.Total.CoveredGPUH; covered > 0 {
			lines = append(lines, fmt.Sprintf("%s: %.0f on-demand GPU-h", r.Policy, covered))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "  the reserved commitment is a discount (Savings Plans, reserved instances, CUDs: billed on matching usage in")
	fmt.Fprintln(w, "  any node): while reserved nodes were away it paid, at its rate, for on-demand cards of their model:")
	for _, l := range lines {
		fmt.Fprintln(w, "   ", l)
	}
}
