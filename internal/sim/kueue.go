package sim

import (
	"sort"

	"github.com/corral-sched/corral/internal/gang"
)

// kueuePolicy models quota-based admission in front of a default
// Kubernetes scheduler: each tenant's queue admits its jobs in strict FIFO
// order while its quota (plus what the cohort lends) has room, without
// looking at where the pods could go; the admitted jobs' pods are then
// placed one at a time by spreading, holding GPUs while their siblings
// wait. It is a model of that behaviour, not Kueue.
type kueuePolicy struct{}

func (kueuePolicy) Name() string { return "kueue-like" }
func (kueuePolicy) Describe() string {
	return "model: quota admission per tenant (strict FIFO, cohort borrowing), no topology; pods then spread one at a time"
}
func (kueuePolicy) StateOptions() gang.Options { return gang.Options{Spread: true} }

func (kueuePolicy) Cycle(s *Sim) {
	byTenant := map[string][]*pendingJob{}
	for _, p := range s.pending {
		byTenant[tenantOf(p.a)] = append(byTenant[tenantOf(p.a)], p)
	}
	tenants := make([]string, 0, len(byTenant))
	for t := range byTenant {
		tenants = append(tenants, t)
	}
	sort.Strings(tenants)
	var admitted []*pendingJob
	for _, t := range tenants {
		for _, p := range byTenant[t] {
			if !p.admitted && !s.admit(p) {
				break // the head of a strict FIFO queue blocks the queue
			}
		}
	}
	for _, p := range s.pending {
		if p.admitted {
			admitted = append(admitted, p)
		}
	}
	s.placePods(admitted)
}
