package sched

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

// limited is one task of gpus GPUs with a time limit (0: none).
func limited(name string, gpus int, limit time.Duration) *job.Job {
	j := gpuJob(name, 1, gpus, 0)
	j.Runtime = limit
	return j
}

// monthly is a budget of gpuHours per calendar month.
func monthly(gpuHours float64) Budget { return Budget{Amount: gpuHours} }

// TestBudgetHoldsItsTenantOnly: a tenant whose budget is spent waits,
// with the numbers, while another tenant's work starts on the same fleet.
func TestBudgetHoldsItsTenantOnly(t *testing.T) {
	w := newWorld(t, 2, 8).submit(limited("a1", 4, time.Hour), "a").submit(limited("b1", 4, time.Hour), "b")
	snap := w.snapshot(Config{Budgets: map[string]Budget{"a": monthly(100), "b": monthly(100)}})
	snap.Spent = map[string]float64{"a": 100, "b": 10}
	d := Cycle(snap)
	if !started(d, "b1") || started(d, "a1") {
		t.Fatalf("want b1 started and a1 held: %v", transcript(d))
	}
	wt, _ := waitOf(d, "a1")
	if wt.Code != CodeBudget || wt.Budget == nil {
		t.Fatalf("a1 waits %v (%s), want budget", wt.Code, wt.Reason)
	}
	if b := wt.Budget; b.Used != 100 || b.Budget != 100 || b.Need != 4 || !b.Resets.Equal(t0.AddDate(0, 1, 0)) {
		t.Errorf("numbers %+v", *b)
	}
	for _, s := range []string{"100.0 of 100.0 GPU-hours", "4 GPUs x its time limit = 4.0 GPU-hours, 0.0 are left", "resets at 2026-02-01T00:00:00Z"} {
		if !strings.Contains(wt.Reason, s) {
			t.Errorf("reason %q lacks %q", wt.Reason, s)
		}
	}
}

// TestBudgetAdmitsWhatFits: what fits the budget left starts, counting
// the running work's use so far and its commitment to its time limit and
// the units started before it in the same cycle; what would overrun
// waits; a unit without a time limit is held only once the budget is spent.
func TestBudgetAdmitsWhatFits(t *testing.T) {
	cases := []struct {
		name    string
		spent   float64
		pending []*job.Job
		want    []string
	}{
		// 4 GPUs running for 10h with 10h to go: 40 used, 40 committed.
		{"fits exactly", 0, []*job.Job{limited("p", 4, 5*time.Hour)}, []string{"start p"}},
		{"one GPU-hour over", 0, []*job.Job{limited("p", 4, 5*time.Hour+15*time.Minute)}, []string{"wait p budget"}},
		{"the second overruns", 0, []*job.Job{limited("p", 2, 5*time.Hour), limited("q", 2, 5*time.Hour+time.Minute)},
			[]string{"start p", "wait q budget"}},
		{"too big for any period", 0, []*job.Job{limited("p", 8, 13*time.Hour)}, []string{"wait p budget"}},
		{"no limit, budget left", 19.5, []*job.Job{limited("p", 4, 0)}, []string{"start p"}},
		{"no limit, budget spent", 20, []*job.Job{limited("p", 4, 0)}, []string{"wait p budget"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 2, 8)
			w.run(limited("r", 4, 20*time.Hour), "a", t0.Add(10*time.Hour), false)
			w.running[0].Started, w.running[0].GPUs = t0.Add(-10*time.Hour), 4
			for _, j := range tc.pending {
				w.submit(j, "a")
			}
			snap := w.snapshot(Config{Budgets: map[string]Budget{"a": {Amount: 100, Every: 720 * time.Hour, Anchor: t0.Add(-24 * time.Hour)}}})
			snap.Spent = map[string]float64{"a": tc.spent}
			if got := transcript(Cycle(snap)); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBudgetPeriodResets: work that used a period's budget holds the
// account until the period ends; in the next period only its use since
// the boundary counts, and the account starts work again.
func TestBudgetPeriodResets(t *testing.T) {
	b := Budget{Amount: 1000, Every: 720 * time.Hour, Anchor: t0}
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{
		{719 * time.Hour, "wait p budget"}, // 8 GPUs x 719h used
		{721 * time.Hour, "start p"},       // 8 GPUs x 1h since the reset
	} {
		w := newWorld(t, 2, 8)
		w.run(gpuJob("r", 1, 8, 0), "a", noTime, false)
		w.running[0].Started, w.running[0].GPUs = t0, 8
		w.submit(limited("p", 1, time.Hour), "a")
		snap := w.snapshot(Config{Budgets: map[string]Budget{"a": b}})
		snap.Now = t0.Add(tc.at)
		if got := transcript(Cycle(snap)); len(got) != 1 || got[0] != tc.want {
			t.Errorf("at %v: got %v, want %s", tc.at, got, tc.want)
		}
	}
}

// TestBudgetCountsAllOfTheLimit: a unit that starts just before a reset
// is charged its whole time limit in the period it starts in, so that it
// cannot overrun the next period's budget; what fits the period left
// starts.
func TestBudgetCountsAllOfTheLimit(t *testing.T) {
	b := Budget{Amount: 100, Every: 24 * time.Hour, Anchor: t0}
	for _, tc := range []struct {
		limit time.Duration
		want  string
	}{
		{20 * time.Hour, "wait p budget"}, // 160 GPU-hours, 8 of them before the reset
		{12 * time.Hour, "start p"},
	} {
		w := newWorld(t, 1, 8).submit(limited("p", 8, tc.limit), "a")
		snap := w.snapshot(Config{Budgets: map[string]Budget{"a": b}})
		snap.Now = t0.Add(23 * time.Hour)
		d := Cycle(snap)
		if got := transcript(d); len(got) != 1 || got[0] != tc.want {
			t.Errorf("limit %v: got %v, want %s", tc.limit, got, tc.want)
		}
		if wt, ok := waitOf(d, "p"); ok && !strings.Contains(wt.Reason, "more than the whole budget of a period") {
			t.Errorf("reason %q does not say it can never fit", wt.Reason)
		}
	}
}

func TestBudgetPeriod(t *testing.T) {
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		b          Budget
		now        time.Time
		start, end time.Time
	}{
		{monthly(1), day(2, 14).Add(5 * time.Hour), day(2, 1), day(3, 1)},
		{monthly(1), day(3, 1), day(3, 1), day(4, 1)},
		{monthly(1), day(12, 31), day(12, 1), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Budget{Every: 720 * time.Hour, Anchor: day(1, 1)}, day(1, 31), day(1, 31), day(3, 2)},
		{Budget{Every: 720 * time.Hour, Anchor: day(1, 1)}, day(1, 30).Add(23 * time.Hour), day(1, 1), day(1, 31)},
		{Budget{Every: 24 * time.Hour, Anchor: day(1, 10)}, day(1, 9).Add(time.Hour), day(1, 9), day(1, 10)},
	}
	for _, tc := range cases {
		start, end := tc.b.Period(tc.now)
		if !start.Equal(tc.start) || !end.Equal(tc.end) {
			t.Errorf("%+v at %v: [%v, %v), want [%v, %v)", tc.b, tc.now, start, end, tc.start, tc.end)
		}
	}
}

func TestBudgetRunsOut(t *testing.T) {
	jan := func(d, h int) time.Time { return time.Date(2026, 1, d, h, 0, 0, 0, time.UTC) }
	b := monthly(1000)
	cases := []struct {
		used float64
		now  time.Time
		want time.Time // zero: it lasts the month
	}{
		{500, jan(11, 0), jan(21, 0)},  // 500 in 240h: the other 500 in 240h more
		{250, jan(11, 0), time.Time{}}, // 750 left take 720h, past the 1st of February
		{100, jan(2, 0), jan(11, 0)},   // 100 a day: out after 10 days
		{1000, jan(20, 0), jan(20, 0)}, // spent: now
		{0, jan(20, 0), time.Time{}},   // nothing used: no rate
		{10, jan(1, 0), time.Time{}},   // no time elapsed
	}
	for _, tc := range cases {
		at, ok := b.RunsOut(tc.used, tc.now)
		if ok != !tc.want.IsZero() || !at.Equal(tc.want) {
			t.Errorf("used %v at %v: %v %v, want %v", tc.used, tc.now, at, ok, tc.want)
		}
	}
}

func TestBudgetWithin(t *testing.T) {
	b := Budget{Every: 24 * time.Hour, Anchor: t0}
	now := t0.Add(30 * time.Hour) // the period [24h, 48h)
	for _, tc := range []struct {
		from, to time.Duration
		want     float64
	}{
		{20 * time.Hour, 26 * time.Hour, 4}, // 2h inside, 2 GPUs
		{25 * time.Hour, 27 * time.Hour, 4},
		{2 * time.Hour, 10 * time.Hour, 0},
		{40 * time.Hour, 50 * time.Hour, 16},
	} {
		if got := b.Within(2, 3, t0.Add(tc.from), t0.Add(tc.to), now); got != tc.want {
			t.Errorf("[%v, %v): %v, want %v", tc.from, tc.to, got, tc.want)
		}
		dollars := b
		dollars.USD = true
		if got := dollars.Within(2, 3, t0.Add(tc.from), t0.Add(tc.to), now); got != 3*tc.want {
			t.Errorf("[%v, %v) at $3: $%v, want $%v", tc.from, tc.to, got, 3*tc.want)
		}
	}
}

func TestParseBudget(t *testing.T) {
	for spec, want := range map[string]Budget{
		"1000/720h": {Amount: 1000, Every: 720 * time.Hour}, "2.5/month": {Amount: 2.5}, "0/24h": {Every: 24 * time.Hour},
		"$20000/month": {Amount: 20000, USD: true}, "$0.5/24h": {Amount: 0.5, USD: true, Every: 24 * time.Hour},
	} {
		got, err := ParseBudget(spec)
		if err != nil || got != want || got.String() != spec {
			t.Errorf("%s: %+v %v (%s), want %+v", spec, got, err, got.String(), want)
		}
	}
	if got, err := ParseBudget("20000USD/month"); err != nil || got != (Budget{Amount: 20000, USD: true}) {
		t.Errorf("20000USD/month: %+v %v, want $20000 a month", got, err)
	}
	for _, bad := range []string{"1000", "x/720h", "-1/720h", "NaN/720h", "1e10/month", "10/week", "10/30m", "$/month", "$-5/month", "$$5/month", "5usdusd/month"} {
		if _, err := ParseBudget(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestDollarBudget: a budget in dollars charges each GPU-hour at its
// node's price: the running work's use and commitment, and what a pending
// unit would need at the highest price of the GPUs it may run on. Work
// that may land on GPUs without a price waits, saying so.
func TestDollarBudget(t *testing.T) {
	cases := []struct {
		name    string
		prices  []float64 // per node
		pending []*job.Job
		want    []string
		reason  string
	}{
		// 4 GPUs at $2 running 10h with 10h to go: $80 used, $80 committed; $240 left.
		{"fits", []float64{2, 2}, []*job.Job{limited("p", 4, 5*time.Hour)}, []string{"start p"}, ""},
		{"overruns", []float64{2, 2}, []*job.Job{limited("p", 4, 31*time.Hour)}, []string{"wait p budget"},
			"$160.00 of $400.00 used this period, $80.00 more committed to running work; it would need 4 GPUs x its time limit at up to $2.00 per GPU-hour = $248.00, $160.00 are left"},
		{"the dearest node prices the need", []float64{2, 3}, []*job.Job{limited("p", 4, 14*time.Hour)}, []string{"wait p budget"},
			"at up to $3.00 per GPU-hour = $168.00"},
		{"unpriced GPUs", []float64{2, 0}, []*job.Job{limited("p", 1, time.Hour)}, []string{"wait p budget"},
			"some GPUs it may run on have no price"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 2, 8)
			for i, p := range tc.prices {
				w.state.Fleet().Nodes[i].PricePerGPUHour = p
			}
			r := limited("r", 4, 20*time.Hour)
			r.Groups[0].Task.Models = nil
			w.run(r, "a", t0.Add(10*time.Hour), false)
			w.running[0].Started, w.running[0].GPUs = t0.Add(-10*time.Hour), 4
			if p, ok := w.state.PlacedPrice("r"); p != 4*tc.prices[0] || !ok {
				t.Fatalf("r runs at $%v an hour (priced %v): want it on the first node, $%v", p, ok, 4*tc.prices[0])
			}
			for _, j := range tc.pending {
				w.submit(j, "a")
			}
			snap := w.snapshot(Config{Budgets: map[string]Budget{"a": {Amount: 400, USD: true, Every: 720 * time.Hour, Anchor: t0.Add(-24 * time.Hour)}}})
			snap.Spent = map[string]float64{"a": 80} // ended work, in dollars
			d := Cycle(snap)
			if got := transcript(d); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if tc.reason == "" {
				return
			}
			if wt, _ := waitOf(d, "p"); !strings.Contains(wt.Reason, tc.reason) {
				t.Errorf("reason %q lacks %q", wt.Reason, tc.reason)
			}
		})
	}
}
