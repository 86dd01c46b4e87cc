package sim

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/sched"
)

// BudgetPeriod is one tenant's use of its budget (Options.Budgets) in one
// period of the replay. Times are the simulator's, from its time zero.
// Held counts the jobs first held by the budget in the period;
// CarriedGPUH the GPU-hours run in it by jobs the budget held in an
// earlier period: work the budget moved here. TooBig counts the jobs
// first held in it that need more than a whole period's budget (GPUs
// times their time limit): no reset lets them start. With USD the budget
// is in US dollars, and so are BudgetGPUH, UsedGPUH and CarriedGPUH.
type BudgetPeriod struct {
	Tenant      string        `json:"tenant"`
	USD         bool          `json:"usd,omitempty"`
	Start       time.Duration `json:"start_ns"`
	End         time.Duration `json:"end_ns"`
	BudgetGPUH  float64       `json:"budget_gpu_hours"`
	UsedGPUH    float64       `json:"used_gpu_hours"`
	Held        int           `json:"held_jobs"`
	TooBig      int           `json:"too_big_jobs,omitempty"`
	CarriedGPUH float64       `json:"carried_gpu_hours"`
}

// budgets keeps the tenants' use per period for the core's budget check
// (sched.Snapshot.Spent) and for the result.
type budgets struct {
	of      map[string]sched.Budget
	periods map[string]map[time.Time]*BudgetPeriod // by tenant, by period start
	held    map[string]time.Duration               // jobs the budget held, by name: the start of the period it first did
	wake    time.Duration                          // the latest reset a wake-up is scheduled for
}

// newBudgets anchors each budget of a fixed period at the replay's time
// zero; calendar months count from epoch.
func newBudgets(of map[string]sched.Budget) (*budgets, error) {
	b := &budgets{of: map[string]sched.Budget{}, periods: map[string]map[time.Time]*BudgetPeriod{}, held: map[string]time.Duration{}}
	for tenant, bud := range of {
		if bud.Amount < 0 || bud.Every < 0 {
			return nil, fmt.Errorf("options: budget of %s: %v per %v must not be negative", tenant, bud, bud.Every)
		}
		if bud.Every > 0 && bud.Anchor.IsZero() {
			bud.Anchor = epoch
		}
		b.of[tenant] = bud
	}
	return b, nil
}

// period is the tenant's period holding at, created on first use.
func (b *budgets) period(tenant string, at time.Time) *BudgetPeriod {
	bud := b.of[tenant]
	start, end := bud.Period(at)
	byStart := b.periods[tenant]
	if byStart == nil {
		byStart = map[time.Time]*BudgetPeriod{}
		b.periods[tenant] = byStart
	}
	p := byStart[start]
	if p == nil {
		p = &BudgetPeriod{Tenant: tenant, USD: bud.USD, Start: start.Sub(epoch), End: end.Sub(epoch), BudgetGPUH: bud.Amount}
		byStart[start] = p
	}
	return p
}

// charge books a run that ends now: gpuH GPU-hours over [from, to), each
// period its share, in the budget's unit (dollars at the price of the
// GPUs it holds, in a dollar budget).
func (s *Sim) chargeBudget(r *runningJob, gpuH float64) {
	tenant := tenantOf(r.a)
	bud, ok := s.budgets.of[tenant]
	if !ok || gpuH <= 0 || s.now <= r.start {
		return
	}
	if bud.USD {
		gpuH = bud.Charge(gpuH, s.pricePerGPUHour(r))
	}
	from, to := epoch.Add(r.start), epoch.Add(s.now)
	heldIn, held := s.budgets.held[r.a.Job.Name]
	for at := from; at.Before(to); {
		_, end := bud.Period(at)
		next := min(end.Sub(epoch), s.now)
		share := gpuH * float64(next-at.Sub(epoch)) / float64(s.now-r.start)
		p := s.budgets.period(tenant, at)
		p.UsedGPUH += share
		if held && p.Start > heldIn {
			p.CarriedGPUH += share
		}
		at = epoch.Add(next)
	}
}

// pricePerGPUHour is what a GPU-hour of r costs, from its nodes' prices.
func (s *Sim) pricePerGPUHour(r *runningJob) float64 {
	if r.gpus <= 0 {
		return 0
	}
	perHour := 0.0
	for _, part := range r.parts {
		p, _ := s.state.PlacedPrice(part)
		perHour += p
	}
	return perHour / r.gpus
}

// spent is what work no longer running used in each tenant's current
// period, for the core's snapshot.
func (s *Sim) spent() map[string]float64 {
	if len(s.budgets.of) == 0 {
		return nil
	}
	out := make(map[string]float64, len(s.budgets.of))
	for tenant := range s.budgets.of {
		out[tenant] = s.budgets.period(tenant, epoch.Add(s.now)).UsedGPUH
	}
	return out
}

// heldByBudget notes a job the budget holds, and wakes every job at the
// period's reset, unless the job needs more than a whole period's budget
// (no reset lets it start, and it waits for ever).
func (s *Sim) heldByBudget(w sched.Wait) {
	if w.Budget == nil {
		return
	}
	if _, ok := s.budgets.held[w.Unit]; !ok {
		p := s.budgets.period(w.Budget.Account, epoch.Add(s.now))
		s.budgets.held[w.Unit] = p.Start
		p.Held++
		if w.Budget.Need > w.Budget.Budget {
			p.TooBig++
		}
	}
	if at := w.Budget.Resets.Sub(epoch); at > s.budgets.wake && w.Budget.Need <= w.Budget.Budget {
		s.budgets.wake = at
		s.schedule(event{at: at, arrival: -1, wake: everyJob})
	}
}

// list is every tenant's periods, by tenant then time.
func (b *budgets) list() []BudgetPeriod {
	var out []BudgetPeriod
	for _, tenant := range slices.Sorted(maps.Keys(b.periods)) {
		for _, p := range b.periods[tenant] {
			out = append(out, *p)
		}
	}
	slices.SortStableFunc(out, func(x, y BudgetPeriod) int {
		return cmp.Or(cmp.Compare(x.Tenant, y.Tenant), cmp.Compare(x.Start, y.Start))
	})
	return out
}
