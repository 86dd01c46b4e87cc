package sim

import (
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// Refusal is a job refused when it arrived, as corral's faces refuse it at
// submit: its tenant's quota, with everything its cohort could lend, can
// never admit it. Quotas come from the workload, not from the policy, so
// every policy refuses the same jobs, and none of them counts in the work
// the policies are compared on.
type Refusal struct {
	Name     string        `json:"name"`
	Tenant   string        `json:"tenant"`
	Class    string        `json:"class"`
	GPUs     float64       `json:"gpus"`
	WorkGPUH float64       `json:"work_gpu_hours"` // GPUs x run time: the work it asked for
	Arrive   time.Duration `json:"arrive_ns"`
	Reason   string        `json:"reason"`
}

// RefusedOverQuota labels the refusals in reports.
const RefusedOverQuota = "refused: over quota forever"

// neverAdmitted says why a's tenant's quota can never admit it, with
// everything its cohort could lend, or "" when some state of the quotas
// does: the core's one check (sched.Ceiling), as the faces refuse at
// submit.
func (s *Sim) neverAdmitted(a *workload.Arrival) string {
	if err := s.ceiling.Refuse(tenantOf(a), s.need(a)); err != nil {
		return "tenant " + err.Error()
	}
	return ""
}

// refuse records a job refused at arrival; it never waits.
func (s *Sim) refuse(a *workload.Arrival, reason string) {
	s.refused = append(s.refused, Refusal{Name: a.Job.Name, Tenant: a.Job.Tenant, Class: a.Class, GPUs: demandGPUs(a),
		WorkGPUH: workGPUH(a), Arrive: a.At, Reason: reason})
	s.note(a.Job.Name, "%s: %s", RefusedOverQuota, reason)
}

// workGPUH is the work a job asks for: its GPUs for its run time.
func workGPUH(a *workload.Arrival) float64 { return demandGPUs(a) * a.Duration.Hours() }
