package sim

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
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
// quotas, by which the core refuses what they never admit. A tenant given
// a quota (GPUs) has it, and the others share what is left in proportion
// to their work; given quotas above the fleet, or for a tenant the
// workload lacks, are an error.
func newBook(w workload.Workload, gpus int, given map[string]float64) (*queue.Book, *sched.Ceiling, map[string]float64, error) {
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
	for _, t := range names {
		entitled[t] = 1.0 / float64(len(names))
		if total > 0 {
			entitled[t] = work[t] / total
		}
	}
	quotas, err := nominalQuotas(names, entitled, gpus, given)
	if err != nil {
		return nil, nil, nil, err
	}
	var specs []queue.Spec
	for _, t := range names {
		specs = append(specs, queue.Spec{Name: t, Cohort: "fleet", Nominal: queue.Amounts{quotaFlavor: quotas[t]}, Order: queue.PriorityFIFO})
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

// ErrBadQuota is a quota Options.Quotas gives that the workload and fleet
// cannot take: a tenant it lacks, or more GPUs than the fleet has.
var ErrBadQuota = errors.New("options")

// nominalQuotas are the tenants' quotas in milli-GPUs: those given, and
// for the others their share of the rest in proportion to their work.
// The last tenant not given one takes what rounding left, so that the
// quotas add up to the fleet exactly and a job asking for all of it fits.
func nominalQuotas(names []string, entitled map[string]float64, gpus int, given map[string]float64) (map[string]int64, error) {
	out := map[string]int64{}
	left := int64(gpus) * queue.Milli
	for _, t := range slices.Sorted(maps.Keys(given)) {
		if _, ok := entitled[t]; !ok {
			return nil, fmt.Errorf("%w: quota for tenant %q: the workload has no such tenant (it has %s)", ErrBadQuota, t, strings.Join(names, ", "))
		}
		m := int64(math.Round(given[t] * queue.Milli))
		if m < 0 || m > left {
			return nil, fmt.Errorf("%w: quota %s=%g: the given quotas add up to more than the fleet's %d GPUs", ErrBadQuota, t, given[t], gpus)
		}
		out[t], left = m, left-m
	}
	rest, share := []string{}, 0.0
	for _, t := range names {
		if _, ok := given[t]; !ok {
			rest, share = append(rest, t), share+entitled[t]
		}
	}
	pool := left
	for i, t := range rest {
		m := left
		switch {
		case i == len(rest)-1:
		case len(given) == 0:
			m = min(int64(entitled[t]*float64(gpus)*queue.Milli), left)
		case share > 0:
			m = min(int64(entitled[t]/share*float64(pool)), left)
		}
		out[t], left = m, left-m
	}
	return out, nil
}

// charger is how the simulator's quotas count work: the core's one
// charge, in quotaFlavor.
var charger = sched.Charger{GPU: quotaFlavor}

// need is the quota a job uses: the core's charge (an elastic job of one
// task shape is charged for its minimum size).
func (s *Sim) need(a *workload.Arrival) queue.Amounts { return charger.Need(s.state, a.Job) }
