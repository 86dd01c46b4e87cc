package main

import (
	"fmt"
	"io"

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
		fmt.Fprintf(w, "  %-12s %9s %9s %12s %10s %9s %13s\n", "tenant", "from (h)", "to (h)", "budget GPU-h", "used GPU-h", "held jobs", "carried GPU-h")
		held, tooBig, carried := 0, 0, 0.0
		for _, p := range r.Budgets {
			fmt.Fprintf(w, "  %-12s %9.0f %9.0f %12.1f %10.1f %9d %13.1f\n", p.Tenant, p.Start.Hours(), p.End.Hours(), p.BudgetGPUH, p.UsedGPUH, p.Held, p.CarriedGPUH)
			held, tooBig, carried = held+p.Held, tooBig+p.TooBig, carried+p.CarriedGPUH
		}
		fmt.Fprintf(w, "  %d jobs held by a budget, %d of them needing more than a whole period's budget (they never start under it);\n", held, tooBig)
		fmt.Fprintf(w, "  %.1f GPU-hours of held work ran in a period after the one the budget first held it in\n", carried)
	}
}
