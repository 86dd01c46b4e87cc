package server

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/store"
)

// gpuFlavor is the one flavor the server counts quota in: GPUs of the
// machine's one model.
var gpuFlavor = queue.Flavor{Model: "gpu", Capacity: "local"}

// unlimited is the nominal quota of a tenant without a cap, in milli-GPUs.
const unlimited = int64(1) << 40

// need is what a job charges its tenant's queue while it runs.
func need(spec store.Spec, model *gpu.Model) queue.Amounts {
	return queue.Amounts{gpuFlavor: int64(milli(spec, model))}
}

// queueSpecs is one queue per tenant that has a record, runs or waits: its
// GPU cap as nominal quota, raised to what it already runs when the cap was
// lowered below that. A tenant without a cap has no limit, and fair share
// measures its use against the whole machine.
func (s *Server) queueSpecs() []queue.Spec {
	use := map[string]int64{}
	for _, r := range s.runs {
		if !r.drained {
			use[r.job.Tenant] += int64(milli(r.job.Spec, s.model))
		}
	}
	names := map[string]bool{}
	for t := range s.tenants {
		names[t] = true
	}
	for t := range use {
		names[t] = true
	}
	for _, j := range s.waiting {
		names[j.Tenant] = true
	}
	var specs []queue.Spec
	for _, t := range slices.Sorted(maps.Keys(names)) {
		spec := queue.Spec{Name: t, Nominal: queue.Amounts{gpuFlavor: unlimited}, ShareGPUs: float64(len(s.gpus)), Order: queue.PriorityFIFO}
		if q := int64(s.tenants[t].QuotaMilli); q > 0 {
			spec.Nominal[gpuFlavor], spec.ShareGPUs = max(q, use[t]), 0
		}
		specs = append(specs, spec)
	}
	return specs
}

// gpuString writes milli-GPUs as GPUs: "4", "0.5".
func gpuString(m int) string {
	if m%1000 == 0 {
		return fmt.Sprint(m / 1000)
	}
	return strings.TrimRight(fmt.Sprintf("%.3f", float64(m)/1000), "0")
}
