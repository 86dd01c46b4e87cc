package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/workload"
)

// TestBudgetMovesWorkToTheNextPeriod: tenant a may use 100 GPU-hours a
// day; its four 40 GPU-hour jobs would all run on the first day, but the
// budget starts two and holds the others until the day resets, while
// tenant b's job runs as it would have.
func TestBudgetMovesWorkToTheNextPeriod(t *testing.T) {
	var arr []workload.Arrival
	for _, name := range []string{"a1", "a2", "a3", "a4"} {
		a := arrival(name, 0, 1, 8, 5*time.Hour, 5*time.Hour)
		a.Job.Tenant = "a"
		arr = append(arr, a)
	}
	b := arrival("b1", 0, 1, 8, 5*time.Hour, 5*time.Hour)
	b.Job.Tenant = "b"
	arr = append(arr, b)
	day := sched.Budget{Amount: 100, Every: 24 * time.Hour}

	free := runWith(t, 2, Options{}, arr...)
	held := runWith(t, 2, Options{Budgets: map[string]sched.Budget{"a": day}}, arr...)
	startOf := func(r *Result, name string) time.Duration {
		for _, j := range r.Jobs {
			if j.Name == name && j.Started {
				return j.Start
			}
		}
		t.Fatalf("%s never started", name)
		return 0
	}
	for _, name := range []string{"a3", "a4"} {
		if at := startOf(free, name); at >= 24*time.Hour {
			t.Errorf("without a budget %s starts at %v, want the first day", name, at)
		}
		if at := startOf(held, name); at != 24*time.Hour {
			t.Errorf("with the budget %s starts at %v, want the reset at 24h", name, at)
		}
	}
	if startOf(held, "b1") != startOf(free, "b1") {
		t.Errorf("b1 starts at %v with a's budget, %v without", startOf(held, "b1"), startOf(free, "b1"))
	}
	want := []BudgetPeriod{
		{Tenant: "a", Start: 0, End: 24 * time.Hour, BudgetGPUH: 100, UsedGPUH: 80, Held: 2},
		{Tenant: "a", Start: 24 * time.Hour, End: 48 * time.Hour, BudgetGPUH: 100, UsedGPUH: 80, CarriedGPUH: 80},
	}
	if len(held.Budgets) != len(want) {
		t.Fatalf("budget periods %+v, want %+v", held.Budgets, want)
	}
	for i := range want {
		if held.Budgets[i] != want[i] {
			t.Errorf("period %d: %+v, want %+v", i, held.Budgets[i], want[i])
		}
	}
}
