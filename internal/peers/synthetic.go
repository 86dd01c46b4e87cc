package peers

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// Synthetic is n jobs of two tenants (research, product) arriving
// uniformly over span, drawn from seed: 1, 2, 4 or 8 GPUs per task (equally
// likely), half the 8-GPU jobs two tasks (a gang of two nodes), priority
// 0, 1 or 2, and 5 to 20 minutes of work each.
func Synthetic(n int, span time.Duration, seed uint64) workload.Workload {
	rng := rand.New(rand.NewPCG(seed, 0))
	var w workload.Workload
	for i := range n {
		gpus := []int{1, 2, 4, 8}[rng.IntN(4)]
		tasks := 1
		if gpus == 8 && rng.IntN(2) == 0 {
			tasks = 2
		}
		a := workload.Arrival{At: time.Duration(rng.Int64N(int64(span))).Round(time.Second), Class: workload.Recorded,
			Duration: time.Duration(5+rng.IntN(16)) * time.Minute,
			Job: &job.Job{Name: fmt.Sprintf("job-%04d", i), Tenant: []string{"research", "product"}[i%2], Priority: rng.IntN(3), Preemptible: true,
				Groups: []job.Group{{Name: "tasks", Count: tasks, Task: job.Demand{GPUs: gpus, CPUMilli: 4000, MemoryMiB: 16 << 10}}}}}
		w.Arrivals = append(w.Arrivals, a)
		w.Horizon = max(w.Horizon, a.At)
	}
	workload.SortArrivals(w.Arrivals)
	return w
}
