package sim

import (
	"fmt"
	"sort"
	"time"

	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/workload"
)

// quotaFlavor is the one flavor the simulator accounts quota in: GPUs of
// any model, on demand. Per-model quotas come with pools.
var quotaFlavor = queue.Flavor{Model: "gpu", Capacity: "on-demand"}

// fairShareHalfLife is how fast past use stops counting against a tenant.
const fairShareHalfLife = 24 * time.Hour

// tenantOf names the queue of an arrival: its tenant, or "default".
func tenantOf(a *workload.Arrival) string {
	if a.Job.Tenant == "" {
		return "default"
	}
	return a.Job.Tenant
}

// newBook gives every tenant of the workload a queue whose nominal quota
// is its share of the workload's GPU-hours times the fleet's GPUs, all in
// one cohort that lends whatever is unused; with it the ceiling of those
// quotas, by which the core refuses what they never admit.
func newBook(w workload.Workload, gpus int) (*queue.Book, *sched.Ceiling, map[string]float64, error) {
	work := map[string]float64{}
	total := 0.0
	for i := range w.Arrivals {
		a := &w.Arrivals[i]
		h := demandGPUs(a) * a.Duration.Hours()
		work[tenantOf(a)] += h
		total += h
	}
	names := make([]string, 0, len(work))
	for t := range work {
		names = append(names, t)
	}
	sort.Strings(names)
	entitled := map[string]float64{}
	var specs []queue.Spec
	left := int64(gpus) * queue.Milli
	for i, t := range names {
		share := 1.0 / float64(len(names))
		if total > 0 {
			share = work[t] / total
		}
		entitled[t] = share
		// The last tenant takes what rounding left, so that the quotas add
		// up to the fleet exactly and a job asking for all of it fits.
		milli := min(int64(share*float64(gpus)*queue.Milli), left)
		if i == len(names)-1 {
			milli = left
		}
		left -= milli
		specs = append(specs, queue.Spec{Name: t, Cohort: "fleet", Nominal: queue.Amounts{quotaFlavor: milli}, Order: queue.PriorityFIFO})
	}
	book, err := queue.NewBook(specs, fairShareHalfLife)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("tenant queues: %w", err)
	}
	ceiling, err := sched.NewCeiling(specs)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("tenant queues: %w", err)
	}
	return book, ceiling, entitled, nil
}

// charger is how the simulator's quotas count work: the core's one
// charge, in quotaFlavor.
var charger = sched.Charger{GPU: quotaFlavor}

// need is the quota a job uses: the core's charge (an elastic job of one
// task shape is charged for its minimum size).
func (s *Sim) need(a *workload.Arrival) queue.Amounts { return charger.Need(s.state, a.Job) }
