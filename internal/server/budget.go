package server

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/store"
)

// spentCache is what a tenant's ended runs used in the period starting
// at start, as of the records'th accounting record.
type spentCache struct {
	budget  sched.Budget
	start   time.Time
	records int
	gpuH    float64
}

// budgets are the tenants' budgets (store.Tenant.Budget) as the cycle
// takes them, and what each tenant's ended runs used in its current
// period: summed from the store's accounting records, so that it
// outlives a restart. Running jobs' use the cycle counts itself.
func (s *Server) budgets(now time.Time) (map[string]sched.Budget, map[string]float64) {
	var budgets map[string]sched.Budget
	var spent map[string]float64
	for _, name := range slices.Sorted(maps.Keys(s.tenants)) {
		spec := s.tenants[name].Budget
		if spec == "" {
			continue
		}
		b, err := sched.ParseBudget(spec)
		if err != nil {
			s.log.Error("tenant budget", "tenant", name, "err", err) // checked when it was set
			continue
		}
		gpuH, err := s.spentIn(name, b, now)
		if err != nil {
			s.log.Error("tenant budget: read the accounting", "tenant", name, "err", err)
		}
		if budgets == nil {
			budgets, spent = map[string]sched.Budget{}, map[string]float64{}
		}
		budgets[name], spent[name] = b, gpuH
	}
	return budgets, spent
}

// spentIn is what the tenant's ended runs used in b's period holding now,
// in the budget's unit (GPU-hours, or dollars at the GPUs' price).
func (s *Server) spentIn(tenant string, b sched.Budget, now time.Time) (float64, error) {
	start, _ := b.Period(now)
	if c, ok := s.spent[tenant]; ok && c.budget == b && c.start.Equal(start) && c.records == s.records {
		return c.gpuH, nil
	}
	recs, err := s.st.Records(store.Window{Tenant: tenant, Since: start})
	if err != nil {
		return 0, fmt.Errorf("records of %s: %w", tenant, err)
	}
	gpuH := 0.0
	for _, r := range recs {
		gpuH += b.Within(r.GPUs, s.cfg.GPUPrice, r.Start, r.End, now)
	}
	s.spent[tenant] = spentCache{budget: b, start: start, records: s.records, gpuH: gpuH}
	return gpuH, nil
}

// forecast says when the budget runs out at its period's rate so far.
func forecast(w *sched.BudgetWait) string {
	if w == nil {
		return ""
	}
	if w.RunsOut.IsZero() {
		return "; at this period's rate it lasts to the reset"
	}
	return "; at this period's rate it runs out at " + w.RunsOut.UTC().Format(time.RFC3339)
}
