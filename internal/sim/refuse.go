package sim

import (
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/gang"
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
	// NoModel: it asked by GPU memory and no GPU model of the fleet
	// meets its ask; else its quota can never admit it.
	NoModel bool `json:"no_model,omitempty"`
}

// RefusedLabel labels a list of refusals in reports.
func RefusedLabel(refused []Refusal) string {
	if slices.ContainsFunc(refused, func(r Refusal) bool { return r.NoModel }) {
		return "refused: over quota forever, or no GPU model meets the ask"
	}
	return RefusedOverQuota
}

// RefusedOverQuota and RefusedNoModel label the refusals in reports.
const (
	RefusedOverQuota = "refused: over quota forever"
	RefusedNoModel   = "refused: no GPU model meets its ask by GPU memory"
)

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
func (s *Sim) refuse(a *workload.Arrival, label, reason string) {
	s.refused = append(s.refused, Refusal{Name: a.Job.Name, Tenant: a.Job.Tenant, Class: a.Class, GPUs: demandGPUs(a),
		WorkGPUH: workGPUH(a), Arrive: a.At, Reason: reason, NoModel: label == RefusedNoModel})
	s.note(a.Job.Name, "%s: %s", label, reason)
}

// resolveAsks is arrivals with every job that asks by GPU memory as the
// core resolved it on the fleet (gang.State.Resolve), so that every
// policy replays the same shape; unmet says, by job name, why no model
// meets an ask (those jobs are refused when they arrive). The arrivals
// given are not changed.
func resolveAsks(state *gang.State, arrivals []workload.Arrival) ([]workload.Arrival, map[string]string) {
	out, unmet, cloned := arrivals, map[string]string{}, false
	for i, a := range arrivals {
		if !a.Job.Asks() {
			continue
		}
		if !cloned {
			out, cloned = slices.Clone(arrivals), true
		}
		j, err := state.Resolve(a.Job)
		if err != nil {
			unmet[a.Job.Name] = err.Error()
			continue
		}
		out[i].Job = j
	}
	return out, unmet
}

// workGPUH is the work a job asks for: its GPUs for its run time.
func workGPUH(a *workload.Arrival) float64 { return demandGPUs(a) * a.Duration.Hours() }
