package server

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/store"
)

// gpuFlavor is the one flavor the server counts quota in: GPUs of the
// machine's one model.
var gpuFlavor = queue.Flavor{Model: "gpu", Capacity: "local"}

// unlimited is the nominal quota of a tenant without a cap, in milli-GPUs.
const unlimited = int64(1) << 40

// charger is how the server's quotas count work: the core's one charge,
// GPUs in gpuFlavor, and the CPU and memory tenants' caps limit.
var charger = sched.Charger{GPU: gpuFlavor, Resources: true}

// need is what a job charges its tenant's queue while it runs (the core's
// charge): its GPUs, and the CPU and memory its tasks ask for.
func (s *Server) need(j *store.Job) queue.Amounts { return charger.Need(s.state, gangJob(j)) }

// queueSpecs is one queue per tenant that has a record, runs or waits. A
// tenant without a GPU cap has no GPU limit, and fair share measures its
// use against the whole machine.
func (s *Server) queueSpecs() []queue.Spec {
	use := map[string]queue.Amounts{}
	names := map[string]bool{}
	for _, r := range s.runs {
		if !r.drained {
			use[r.job.Tenant] = use[r.job.Tenant].Add(s.need(&r.job))
		}
	}
	for t := range s.tenants {
		names[t] = true
	}
	for t := range use {
		names[t] = true
	}
	for _, j := range s.waiting {
		names[j.Tenant] = true
	}
	return s.specsOf(names, use)
}

// specsOf is the queue of each named tenant, given what their running
// jobs use.
func (s *Server) specsOf(names map[string]bool, use map[string]queue.Amounts) []queue.Spec {
	var specs []queue.Spec
	for _, t := range slices.Sorted(maps.Keys(names)) {
		specs = append(specs, s.queueSpec(t, use[t]))
	}
	return specs
}

// queueSpec is tenant t's queue, given what its running jobs use
// (tenantQueue with the tenant's record as the server holds it).
func (s *Server) queueSpec(t string, use queue.Amounts) queue.Spec {
	return tenantQueue(t, s.tenants[t], len(s.gpus), use)
}

// tenantQueue is the queue of tenant name, whose record is tenant, on a
// machine of gpus GPUs, given what its running jobs use: each cap the
// tenant has (GPUs, CPU, memory) as nominal quota, raised to what it
// already runs when the cap was lowered below that; no cap is no limit.
// A capped tenant in a cohort lends its peers what it leaves unused, and
// what it runs beyond its GPU cap is borrowed, not a higher cap.
func tenantQueue(name string, tenant store.Tenant, gpus int, use queue.Amounts) queue.Spec {
	spec := queue.Spec{Name: name, ShareGPUs: float64(gpus), Order: queue.PriorityFIFO,
		Nominal: queue.Amounts{gpuFlavor: unlimited, queue.CPU: unlimited, queue.Memory: unlimited}}
	for f, q := range map[queue.Flavor]int64{gpuFlavor: int64(tenant.QuotaMilli), queue.CPU: tenant.QuotaCPUMilli, queue.Memory: tenant.QuotaMemoryMiB} {
		switch {
		case q > 0 && f == gpuFlavor && tenant.Cohort != "":
			spec.Nominal[f] = q // beyond it, it borrows from its cohort
		case q > 0:
			spec.Nominal[f] = max(q, use[f])
		}
	}
	if tenant.QuotaMilli > 0 {
		spec.ShareGPUs = 0 // fair share against its GPU cap
		spec.Cohort = tenant.Cohort
	}
	return spec
}

// gpuString writes milli-GPUs as GPUs: "4", "0.5".
func gpuString(m int) string {
	if m%1000 == 0 {
		return fmt.Sprint(m / 1000)
	}
	return strings.TrimRight(fmt.Sprintf("%.3f", float64(m)/1000), "0")
}

// refuseForever says why no quota who could ever hold or borrow admits
// j, the core's one check (sched.Ceiling) over every tenant's caps as
// the store has them now and j's need on the whole machine, healthy or
// not; nil when some state of the box's quotas admits it. It reads no
// state the scheduling cycle holds, so a submission never waits for a
// cycle to end.
func (s *Server) refuseForever(j *store.Job, who store.Tenant) error {
	stored, err := s.st.Tenants()
	if err != nil {
		return fmt.Errorf("tenant quotas: %w", err)
	}
	tenants := map[string]store.Tenant{who.Name: who}
	for _, t := range stored {
		if t.Name != who.Name {
			tenants[t.Name] = t
		}
	}
	var specs []queue.Spec
	for _, name := range slices.Sorted(maps.Keys(tenants)) {
		specs = append(specs, tenantQueue(name, tenants[name], len(s.gpus), nil))
	}
	ceiling, err := sched.NewCeiling(specs)
	if err != nil {
		return fmt.Errorf("tenant quotas: %w", err)
	}
	whole, err := gang.New(cloneFleet(s.full))
	if err != nil {
		return err
	}
	if err := ceiling.Refuse(who.Name, charger.Need(whole, gangJob(j))); err != nil {
		return fmt.Errorf("tenant %w", err)
	}
	return nil
}
