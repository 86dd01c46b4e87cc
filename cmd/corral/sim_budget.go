package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/sim"
)

// writeBudgets prints, for the policy that holds work to budgets
// (corral), each budgeted tenant's periods: its budget, what it used, the
// jobs the budget held, and the GPU-hours it moved into a later period.
func writeBudgets(w io.Writer, results []*sim.Result) {
	for _, r := range results {
		if r.Policy != "corral" || len(r.Budgets) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nbudgets (corral holds a job at admission while it would overrun its tenant's budget; nothing running is stopped):\n")
		unit := budgetUnit(r.Budgets)
		fmt.Fprintf(w, "  %-12s %9s %9s %12s %10s %9s %13s\n", "tenant", "from (h)", "to (h)", "budget "+unit, "used "+unit, "held jobs", "carried "+unit)
		held, tooBig := 0, 0
		carried := map[bool]float64{}
		for _, p := range r.Budgets {
			fmt.Fprintf(w, "  %-12s %9.0f %9.0f %12s %10s %9d %13s\n", p.Tenant, p.Start.Hours(), p.End.Hours(),
				budgetFigure(p.USD, p.BudgetGPUH), budgetFigure(p.USD, p.UsedGPUH), p.Held, budgetFigure(p.USD, p.CarriedGPUH))
			held, tooBig, carried[p.USD] = held+p.Held, tooBig+p.TooBig, carried[p.USD]+p.CarriedGPUH
		}
		fmt.Fprintf(w, "  %d jobs held by a budget, %d of them needing more than a whole period's budget (they never start under it);\n", held, tooBig)
		var moved []string
		if v, ok := carried[false]; ok {
			moved = append(moved, fmt.Sprintf("%.1f GPU-hours", v))
		}
		if v, ok := carried[true]; ok {
			moved = append(moved, fmt.Sprintf("$%.2f", v))
		}
		fmt.Fprintf(w, "  %s of held work ran in a period after the one the budget first held it in\n", strings.Join(moved, " and "))
	}
}

// budgetUnit is the unit of the budget table's figures: GPU-h, USD, or
// "" when budgets of both kinds are in it (each figure then says its own).
func budgetUnit(periods []sim.BudgetPeriod) string {
	usd, gpuh := false, false
	for _, p := range periods {
		usd, gpuh = usd || p.USD, gpuh || !p.USD
	}
	switch {
	case usd && gpuh:
		return "(GPU-h/$)"
	case usd:
		return "USD"
	}
	return "GPU-h"
}

// budgetFigure writes a budget table figure: GPU-hours, or dollars.
func budgetFigure(usd bool, v float64) string {
	if usd {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// priceNodesForBudgets gives each GPU node without a price
// (fleet.Node.PricePerGPUHour) its catalog price per GPU-hour on its
// capacity type, when a --budget is in dollars: what the budget charges
// for a GPU-hour there. A node the catalog cannot price is an error
// naming it, since the budget could not charge the work on it.
func priceNodesForBudgets(o simOptions, f *fleet.Fleet, cat *price.Catalog) error {
	dollars := false
	for _, b := range o.budgets {
		dollars = dollars || b.USD
	}
	if !dollars {
		return nil
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.GPUs == 0 || n.PricePerGPUHour > 0 {
			continue
		}
		offer, err := cat.Find(n.GPUModel, "")
		if err != nil {
			return fmt.Errorf("a dollar --budget needs the GPUs' prices: node %s: %w", n.Name, err)
		}
		p, err := offer.PerGPUHour(price.Capacity(n.CapacityType()))
		if err != nil {
			return fmt.Errorf("a dollar --budget needs the GPUs' prices: node %s: %w", n.Name, err)
		}
		n.PricePerGPUHour = p.USDPerGPUHour
	}
	return nil
}
