package sched

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/queue"
)

// Budget caps the GPU-hours an account (a tenant or a queue) may use in
// each period. The period is Every long, counted from Anchor (zero: the
// Unix epoch), or the calendar month in UTC when Every is 0. Use left
// over does not carry into the next period.
type Budget struct {
	GPUHours float64
	Every    time.Duration
	Anchor   time.Time
}

// Period is the period holding now: [start, end).
func (b Budget) Period(now time.Time) (start, end time.Time) {
	if b.Every <= 0 {
		y, m, _ := now.UTC().Date()
		start = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	anchor := b.Anchor
	if anchor.IsZero() {
		anchor = time.Unix(0, 0).UTC()
	}
	k := now.Sub(anchor) / b.Every
	if now.Before(anchor.Add(k * b.Every)) {
		k-- // before the anchor: the period holding now starts earlier
	}
	start = anchor.Add(k * b.Every)
	return start, start.Add(b.Every)
}

// RunsOut forecasts when the budget runs out if the account goes on at
// the rate it used it so far this period (used GPU-hours since the
// period's start, up to now): now when it is already spent. False when
// nothing was used yet, or when at that rate it lasts the period.
func (b Budget) RunsOut(used float64, now time.Time) (time.Time, bool) {
	start, end := b.Period(now)
	if used >= b.GPUHours {
		return now, true
	}
	elapsed := now.Sub(start)
	if used <= 0 || elapsed <= 0 {
		return time.Time{}, false
	}
	at := now.Add(time.Duration(float64(elapsed) * (b.GPUHours - used) / used)).Round(time.Second)
	if !at.Before(end) {
		return time.Time{}, false
	}
	return at, true
}

// BudgetWait is the numbers behind a CodeBudget wait, in GPU-hours of the
// account's current period: Used so far (ended work and running work up
// to now), Committed to running work up to its estimated end (within
// the period), and Need, what the unit would use: its GPUs times its
// time limit (Job.Runtime), all of it; 0 when it has no limit.
type BudgetWait struct {
	Account               string
	Budget                float64
	Used, Committed, Need float64
	GPUs                  float64
	Resets                time.Time // the period's end
	RunsOut               time.Time // at the period's rate so far; zero: it lasts the period
}

func (w *BudgetWait) String() string {
	need := "it has no time limit, and the budget is spent"
	switch {
	case w.Need > w.Budget:
		need = fmt.Sprintf("it would need %s x its time limit = %.1f GPU-hours, more than the whole budget of a period: it cannot start under this budget",
			Amount(queue.Flavor{}, int64(w.GPUs*queue.Milli)), w.Need)
	case w.Need > 0:
		need = fmt.Sprintf("it would need %s x its time limit = %.1f GPU-hours, %.1f are left",
			Amount(queue.Flavor{}, int64(w.GPUs*queue.Milli)), w.Need, max(w.Budget-w.Used-w.Committed, 0))
	}
	return fmt.Sprintf("budget of %s: %.1f of %.1f GPU-hours used this period, %.1f more committed to running work; %s; the period resets at %s",
		w.Account, w.Used, w.Budget, w.Committed, need, w.Resets.UTC().Format(time.RFC3339))
}

// account is the budget a unit is charged to.
func (u *Unit) account() string {
	if u.Account != "" {
		return u.Account
	}
	return u.Queue
}

func (r *Running) account() string {
	if r.Account != "" {
		return r.Account
	}
	return r.Queue
}

// budgetUse is what an account used and committed this period.
type budgetUse struct{ used, committed float64 }

// overBudget reports, and records, that starting u would overrun its
// account's budget: with a time limit, when what is used, what running
// work is committed to and what u needs come to more than the budget;
// without one, only when the budget is already spent.
func (c *cycle) overBudget(u *Unit) bool {
	acct := u.account()
	b, ok := c.snap.Config.Budgets[acct]
	if !ok {
		return false
	}
	use := c.budgetUse(acct, b)
	_, end := b.Period(c.snap.Now)
	w := &BudgetWait{Account: acct, Budget: b.GPUHours, Used: use.used, Committed: use.committed,
		GPUs: unitGPUs(u), Resets: end}
	w.Need = budgetNeed(w.GPUs, u.Job.Runtime)
	total := use.used + use.committed
	if total < b.GPUHours && total+w.Need <= b.GPUHours {
		c.budgetNeed[u.Job.Name] = w.Need
		return false
	}
	w.RunsOut, _ = b.RunsOut(use.used, c.snap.Now)
	c.wait(u, CodeBudget, w.String())
	c.out.Waiting[len(c.out.Waiting)-1].Budget = w
	return true
}

// budgetNeed is what gpus GPUs use over limit: all of it counts in the
// period it starts in, so that work started just before a reset cannot
// overrun the next period's budget.
func budgetNeed(gpus float64, limit time.Duration) float64 {
	if limit <= 0 {
		return 0
	}
	return gpus * limit.Hours()
}

// budgetUse sums, once per cycle and account, the ended work's use the
// face reports (Snapshot.Spent) and the running units' use this period.
func (c *cycle) budgetUse(acct string, b Budget) budgetUse {
	if use, ok := c.budgets[acct]; ok {
		return use
	}
	start, end := b.Period(c.snap.Now)
	use := budgetUse{used: c.snap.Spent[acct]}
	for i := range c.snap.Running {
		r := &c.snap.Running[i]
		if r.account() != acct {
			continue
		}
		from := r.Started
		if from.Before(start) {
			from = start
		}
		if c.snap.Now.After(from) {
			use.used += r.GPUs * c.snap.Now.Sub(from).Hours()
		}
		if until := r.End; until.After(c.snap.Now) {
			if until.After(end) {
				until = end
			}
			use.committed += r.GPUs * until.Sub(c.snap.Now).Hours()
		}
	}
	c.budgets[acct] = use
	return use
}

// budgetStarted adds what a unit that started this cycle commits to its
// account's budget (the need overBudget found for it).
func (c *cycle) budgetStarted(u *Unit) {
	need, ok := c.budgetNeed[u.Job.Name]
	if !ok {
		return
	}
	acct := u.account()
	use := c.budgets[acct]
	use.committed += need
	c.budgets[acct] = use
	delete(c.budgetNeed, u.Job.Name)
}

// unitGPUs is the GPUs u holds: what its queue is charged for, or its
// whole GPUs when it is charged nothing.
func unitGPUs(u *Unit) float64 {
	var milli int64
	for f, v := range u.Need {
		if f != queue.CPU && f != queue.Memory {
			milli += v
		}
	}
	if milli > 0 {
		return float64(milli) / queue.Milli
	}
	n := 0
	for _, g := range u.Job.Groups {
		n += g.Count * g.Task.GPUs
	}
	return float64(n)
}

// Within is the GPU-hours gpus GPUs used from from to to inside the
// period holding now: what a face adds to Snapshot.Spent for work that
// ran then and no longer runs.
func (b Budget) Within(gpus float64, from, to, now time.Time) float64 {
	start, end := b.Period(now)
	if from.Before(start) {
		from = start
	}
	if to.After(end) {
		to = end
	}
	if !to.After(from) {
		return 0
	}
	return gpus * to.Sub(from).Hours()
}

// ParseBudget reads a budget written GPUH/PERIOD: GPUH GPU-hours (0 to
// 1e9) per PERIOD, a duration of at least an hour (720h) or month (the
// calendar month, UTC). Fixed periods count from the Unix epoch.
func ParseBudget(spec string) (Budget, error) {
	amount, period, ok := strings.Cut(spec, "/")
	if !ok {
		return Budget{}, fmt.Errorf("budget %q: want GPUH/PERIOD, e.g. 1000/720h or 1000/month", spec)
	}
	gpuh, err := strconv.ParseFloat(amount, 64)
	if err != nil || !(gpuh >= 0 && gpuh <= 1e9) {
		return Budget{}, fmt.Errorf("budget %q: GPU-hours %q: want a number from 0 to 1e9", spec, amount)
	}
	b := Budget{GPUHours: gpuh}
	if period == "month" {
		return b, nil
	}
	if b.Every, err = time.ParseDuration(period); err != nil || b.Every < time.Hour {
		return Budget{}, fmt.Errorf("budget %q: period %q: want month or a duration of at least 1h", spec, period)
	}
	return b, nil
}

// String writes the budget as ParseBudget reads it.
func (b Budget) String() string {
	period := "month"
	switch {
	case b.Every > 0 && b.Every%time.Hour == 0:
		period = strconv.FormatInt(int64(b.Every/time.Hour), 10) + "h"
	case b.Every > 0:
		period = b.Every.String()
	}
	return strconv.FormatFloat(b.GPUHours, 'f', -1, 64) + "/" + period
}
