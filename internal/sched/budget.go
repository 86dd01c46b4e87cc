package sched

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/queue"
)

// Budget caps what an account (a tenant or a queue) may use in each
// period: Amount GPU-hours, or Amount US dollars when USD is set, a
// GPU-hour then costing its node's price (fleet.Node.PricePerGPUHour).
// The period is Every long, counted from Anchor (zero: the Unix epoch),
// or the calendar month in UTC when Every is 0. Use left over does not
// carry into the next period.
type Budget struct {
	Amount float64
	USD    bool
	Every  time.Duration
	Anchor time.Time
}

// Charge is what gpuHours GPU-hours at usdPerGPUHour take from the
// budget: the GPU-hours, or their price in a dollar budget.
func (b Budget) Charge(gpuHours, usdPerGPUHour float64) float64 {
	if b.USD {
		return gpuHours * usdPerGPUHour
	}
	return gpuHours
}

// Format writes an amount in the budget's unit: 12.5 GPU-hours, $12.50.
func (b Budget) Format(v float64) string {
	if b.USD {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("%.1f GPU-hours", v)
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
	if used >= b.Amount {
		return now, true
	}
	elapsed := now.Sub(start)
	if used <= 0 || elapsed <= 0 {
		return time.Time{}, false
	}
	at := now.Add(time.Duration(float64(elapsed) * (b.Amount - used) / used)).Round(time.Second)
	if !at.Before(end) {
		return time.Time{}, false
	}
	return at, true
}

// BudgetWait is the numbers behind a CodeBudget wait, in the budget's
// unit (GPU-hours, or US dollars when USD) for the account's current
// period: Used so far (ended work and running work up to now), Committed
// to running work up to its estimated end (within the period), and Need,
// what the unit would use: its GPUs times its time limit (Job.Runtime),
// all of it, at Price, the highest price per GPU-hour of the GPUs it may
// run on, in a dollar budget; 0 when it has no limit. Unpriced: a dollar
// budget, and some of those GPUs have no price.
type BudgetWait struct {
	Account               string
	Budget                float64
	USD                   bool
	Used, Committed, Need float64
	GPUs                  float64
	Price                 float64
	Unpriced              bool
	Resets                time.Time // the period's end
	RunsOut               time.Time // at the period's rate so far; zero: it lasts the period
}

func (w *BudgetWait) String() string {
	b := Budget{USD: w.USD}
	bare := func(v float64) string { return strings.TrimSuffix(b.Format(v), " GPU-hours") } // the unit said once
	ask := Amount(queue.Flavor{}, int64(w.GPUs*queue.Milli)) + " x its time limit"
	if w.USD {
		ask += fmt.Sprintf(" at up to $%.2f per GPU-hour", w.Price)
	}
	need := "it has no time limit, and the budget is spent"
	switch {
	case w.Unpriced:
		need = "some GPUs it may run on have no price, so a dollar budget cannot charge it: give the nodes a price"
	case w.Need > w.Budget:
		need = fmt.Sprintf("it would need %s = %s, more than the whole budget of a period: it cannot start under this budget", ask, b.Format(w.Need))
	case w.Need > 0:
		need = fmt.Sprintf("it would need %s = %s, %s are left", ask, b.Format(w.Need), bare(max(w.Budget-w.Used-w.Committed, 0)))
	}
	return fmt.Sprintf("budget of %s: %s of %s used this period, %s more committed to running work; %s; the period resets at %s",
		w.Account, bare(w.Used), b.Format(w.Budget), bare(w.Committed),
		need, w.Resets.UTC().Format(time.RFC3339))
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
	w := &BudgetWait{Account: acct, Budget: b.Amount, USD: b.USD, Used: use.used, Committed: use.committed,
		GPUs: unitGPUs(u), Resets: end}
	if b.USD {
		p := c.highestPrice(u)
		w.Price, w.Unpriced = p.usd, !p.priced
	}
	w.Need = b.Charge(budgetNeed(w.GPUs, u.Job.Runtime), w.Price)
	total := use.used + use.committed
	if !w.Unpriced && total < b.Amount && total+w.Need <= b.Amount {
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
		price := 0.0
		if b.USD {
			price = c.runningPrice(r)
		}
		if c.snap.Now.After(from) {
			use.used += b.Charge(r.GPUs*c.snap.Now.Sub(from).Hours(), price)
		}
		if until := r.End; until.After(c.snap.Now) {
			if until.After(end) {
				until = end
			}
			use.committed += b.Charge(r.GPUs*until.Sub(c.snap.Now).Hours(), price)
		}
	}
	c.budgets[acct] = use
	return use
}

// unitPrice is the highest price per GPU-hour of the GPUs a unit may use,
// and whether all of them have one.
type unitPrice struct {
	usd    float64
	priced bool
}

// highestPrice is gang.State.HighestPrice for u, found once per cycle for
// the units that allow the same GPU models.
func (c *cycle) highestPrice(u *Unit) unitPrice {
	var key strings.Builder
	for _, g := range u.Job.Groups {
		key.WriteString(strings.Join(g.Task.Models, ","))
		key.WriteByte(';')
	}
	if p, ok := c.prices[key.String()]; ok {
		return p
	}
	var p unitPrice
	p.usd, p.priced = c.snap.State.HighestPrice(u.Job)
	if c.prices == nil {
		c.prices = map[string]unitPrice{}
	}
	c.prices[key.String()] = p
	return p
}

// runningPrice is the price per GPU-hour of the GPUs r holds: its parts'
// prices an hour (gang.State.PlacedPrice) over the GPUs it holds.
func (c *cycle) runningPrice(r *Running) float64 {
	if r.GPUs <= 0 {
		return 0
	}
	names := r.Parts
	if len(names) == 0 {
		names = []string{r.Name}
	}
	perHour := 0.0
	for _, n := range names {
		p, _ := c.snap.State.PlacedPrice(n)
		perHour += p
	}
	return perHour / r.GPUs
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

// Within is what gpus GPUs at usdPerGPUHour, used from from to to inside
// the period holding now, take from the budget (Charge): what a face adds
// to Snapshot.Spent for work that ran then and no longer runs.
func (b Budget) Within(gpus, usdPerGPUHour float64, from, to, now time.Time) float64 {
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
	return b.Charge(gpus*to.Sub(from).Hours(), usdPerGPUHour)
}

// ParseBudget reads a budget written GPUH/PERIOD or $USD/PERIOD: GPUH
// GPU-hours, or USD US dollars (also written USDusd), 0 to 1e9, per
// PERIOD, a duration of at least an hour (720h) or month (the calendar
// month, UTC). Fixed periods count from the Unix epoch.
func ParseBudget(spec string) (Budget, error) {
	amount, period, ok := strings.Cut(spec, "/")
	if !ok {
		return Budget{}, fmt.Errorf("budget %q: want GPUH/PERIOD or $USD/PERIOD, e.g. 1000/720h, 1000/month or $20000/month", spec)
	}
	b := Budget{}
	if rest, ok := strings.CutPrefix(amount, "$"); ok {
		amount, b.USD = rest, true
	} else if rest, ok := strings.CutSuffix(strings.ToLower(amount), "usd"); ok {
		amount, b.USD = rest, true
	}
	v, err := strconv.ParseFloat(amount, 64)
	if err != nil || !(v >= 0 && v <= 1e9) {
		unit := "GPU-hours"
		if b.USD {
			unit = "dollars"
		}
		return Budget{}, fmt.Errorf("budget %q: %s %q: want a number from 0 to 1e9", spec, unit, amount)
	}
	b.Amount = v
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
	amount := strconv.FormatFloat(b.Amount, 'f', -1, 64)
	if b.USD {
		amount = "$" + amount
	}
	return amount + "/" + period
}
