package sim

import (
	"maps"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/queue"
)

// Result is one policy's replay.
type Result struct {
	Policy  string      `json:"policy"`
	Summary Summary     `json:"summary"`
	Jobs    []JobRecord `json:"jobs,omitempty"`
	Refused []Refusal   `json:"refused,omitempty"` // jobs refused at arrival: over quota forever
	// Faults are the jobs node failures and spot notices stopped or
	// moved, as corral kube-scheduler's accounting records them.
	Faults  []faultrec.Record `json:"faults,omitempty"`
	Explain []string          `json:"explain,omitempty"` // the story of Options.Explain's job
	Hours   []Hour            `json:"hours,omitempty"`   // the fleet at every hour boundary
	// Budgets is each budgeted tenant's use per period (Options.Budgets).
	Budgets []BudgetPeriod `json:"budgets,omitempty"`
}

// Summary condenses a replay. Times are hours. Allocation is the share of
// the fleet's GPU-hours held by placements over the workload's horizon
// (while work arrives); utilisation the share that running jobs asked for
// (a 1-GPU job on a whole node uses 1 GPU and holds the node; a task
// waiting for its siblings holds GPUs and uses none). JCT counts finished
// jobs; waits count every job, a job that never started waiting until the
// last event. Jobs refused at arrival (Result.Refused) count in none of
// them: only in Refused and RefusedGPUH.
type Summary struct {
	Jobs           int     `json:"jobs"`
	Started        int     `json:"started"`
	Finished       int     `json:"finished"`
	NeverStarted   int     `json:"never_started"`
	MeanWaitH      float64 `json:"mean_wait_h"`
	P50WaitH       float64 `json:"p50_wait_h"`
	P99WaitH       float64 `json:"p99_wait_h"`
	MeanJCTH       float64 `json:"mean_jct_h"`
	P99JCTH        float64 `json:"p99_jct_h"`
	Utilisation    float64 `json:"utilisation"`
	Allocation     float64 `json:"allocation"`
	IdleHeldGPUH   float64 `json:"idle_held_gpu_hours"`    // held but unused: waiting siblings, whole nodes
	PartialAtEnd   int     `json:"partial_holders_at_end"` // jobs holding some GPUs, never started: a gang deadlock
	Interruptions  int     `json:"interruptions"`
	Preemptions    int     `json:"preemptions"`
	PreemptPerHour float64 `json:"preemptions_per_hour"` // over the arrival horizon
	LostGPUHours   float64 `json:"lost_gpu_hours"`       // work since the last checkpoint, lost to interruptions
	MakespanH      float64 `json:"makespan_h"`
	HorizonH       float64 `json:"horizon_h"` // the arrival window: work arrives in [0, horizon)
	SimulatedEvent int     `json:"events"`
	// WorkGPUH is the work of the jobs accepted (GPUs x run time);
	// UndoneGPUH the part of it of jobs that did not finish: what a policy
	// left undone, to set beside what it cost. Refused jobs are apart.
	WorkGPUH    float64 `json:"work_gpu_hours"`
	UndoneGPUH  float64 `json:"work_undone_gpu_hours"`
	Refused     int     `json:"refused_over_quota"`
	RefusedGPUH float64 `json:"refused_work_gpu_hours"`
	// BoughtGPUHours: GPU-hours of the nodes there (or joining) over the
	// makespan; autoscaling lowers it. ScaleUps and ScaleDowns count nodes.
	BoughtGPUHours float64 `json:"bought_gpu_hours"`
	ScaleUps       int     `json:"scale_ups,omitempty"`
	ScaleDowns     int     `json:"scale_downs,omitempty"`
	// Moves: jobs moved to consolidate free GPUs for a waiting gang;
	// DefragGainGPUH: the GPU-hours the gangs gained by starting early,
	// less the work the moved jobs lost.
	// Estimates: jobs that held a reservation and started; EstimateErrH:
	// mean of |start - first estimate| over them, in hours; EarlyShare: the
	// share that started no later than estimated (estimates assume every
	// running job ends at its estimate).
	Estimates      int     `json:"estimates"`
	EstimateErrH   float64 `json:"estimate_error_h"`
	EstimateEarly  float64 `json:"estimate_kept_share"`
	Moves          int     `json:"moves,omitempty"`
	DefragGainGPUH float64 `json:"defrag_gain_gpu_hours,omitempty"`
	// ImagePulls is what pulling images cost (Options.ImagePull).
	ImagePulls *PullSummary `json:"image_pulls,omitempty"`
	// Tenants: waits and GPU-hours received per tenant; Jain is Jain's
	// fairness index over received / entitled GPU-hours (1 is fair).
	Tenants []TenantSummary `json:"tenants"`
	Jain    float64         `json:"jain"`
	// Classes: waits and completion times per workload class.
	Classes []ClassSummary `json:"classes"`
}

// ClassSummary is one workload class's part of a replay.
type ClassSummary struct {
	Class     string  `json:"class"`
	Jobs      int     `json:"jobs"`
	MeanWaitH float64 `json:"mean_wait_h"`
	P99WaitH  float64 `json:"p99_wait_h"`
	MeanJCTH  float64 `json:"mean_jct_h"`
}

// TenantSummary is one tenant's part of a replay.
type TenantSummary struct {
	Tenant    string  `json:"tenant"`
	Jobs      int     `json:"jobs"`
	MeanWaitH float64 `json:"mean_wait_h"`
	P99WaitH  float64 `json:"p99_wait_h"`
	GPUHours  float64 `json:"gpu_hours"` // received: used GPUs x run time
	Received  float64 `json:"received"`  // share of all GPU-hours received
	Entitled  float64 `json:"entitled"`  // share of the workload's GPU-hours
	// QuotaGPUs is the tenant's nominal quota in the replay: its share of
	// the workload's GPU-hours times the fleet's GPUs, in one cohort that
	// lends what is unused (newBook).
	QuotaGPUs float64 `json:"quota_gpus"`
}

func (s *Sim) result(policy string, horizon time.Duration) *Result {
	end := s.now
	sum := Summary{Jobs: len(s.records), MakespanH: end.Hours(), HorizonH: horizon.Hours(), SimulatedEvent: s.seq}
	var waits, jcts []float64
	for _, r := range s.records {
		waits = append(waits, r.Wait(end).Hours())
		if r.Started {
			sum.Started++
		}
		if r.Finished {
			sum.Finished++
			jcts = append(jcts, (r.End - r.Arrive).Hours())
		}
		sum.Interruptions += r.Interruptions
		sum.Preemptions += r.Preemptions
		sum.Moves += r.Moves
		if r.Estimate > 0 && r.Started {
			sum.Estimates++
			sum.EstimateErrH += (r.Start - r.Estimate).Abs().Hours()
			if r.Start <= r.Estimate {
				sum.EstimateEarly++
			}
		}
		sum.LostGPUHours += r.LostGPUHours
	}
	s.addWork(&sum)
	sum.NeverStarted = sum.Jobs - sum.Started
	if sum.Estimates > 0 {
		sum.EstimateErrH /= float64(sum.Estimates)
		sum.EstimateEarly /= float64(sum.Estimates)
	}
	for _, p := range s.pending {
		if len(p.held) > 0 {
			sum.PartialAtEnd++
		}
	}
	sum.MeanWaitH, sum.P50WaitH, sum.P99WaitH = mean(waits), percentile(sortedFloats(waits), 0.5), percentile(sortedFloats(waits), 0.99)
	sum.MeanJCTH, sum.P99JCTH = mean(jcts), percentile(sortedFloats(jcts), 0.99)
	if window := s.acct.capacity * horizon.Seconds(); window > 0 {
		sum.Utilisation = s.acct.usedSec / window
		sum.Allocation = s.acct.allocSec / window
	}
	sum.IdleHeldGPUH = s.acct.idleHeldSec / 3600
	s.advanceBought(end)
	sum.DefragGainGPUH = s.defragGainGPUH
	sum.BoughtGPUHours, sum.ScaleUps, sum.ScaleDowns = s.scale.boughtSec/3600, s.scale.ups, s.scale.downs
	if horizon > 0 {
		sum.PreemptPerHour = float64(sum.Preemptions) / horizon.Hours()
	}
	sum.Tenants, sum.Jain = s.tenantSummaries(end)
	sum.Classes = s.classSummaries(end)
	sum.ImagePulls = s.pullSummary()
	return &Result{Policy: policy, Summary: sum, Jobs: s.records, Refused: s.refused, Faults: s.handledFaults, Budgets: s.budgets.list()}
}

// addWork sums the work of the jobs accepted, the part left undone, and
// the work refused at arrival.
func (s *Sim) addWork(sum *Summary) {
	for _, r := range s.records {
		sum.WorkGPUH += r.WorkGPUH
		if !r.Finished {
			sum.UndoneGPUH += r.WorkGPUH
		}
	}
	sum.Refused = len(s.refused)
	for _, r := range s.refused {
		sum.RefusedGPUH += r.WorkGPUH
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// tenantSummaries condenses the records per tenant, in name order.
func (s *Sim) tenantSummaries(end time.Duration) ([]TenantSummary, float64) {
	waits := map[string][]float64{}
	got := map[string]float64{}
	total := 0.0
	for _, r := range s.records {
		t := r.Tenant
		if t == "" {
			t = "default"
		}
		waits[t] = append(waits[t], r.Wait(end).Hours())
		h := r.GPUHours
		if run := s.running[r.Name]; run != nil {
			h += s.ran(run)
		}
		got[t] += h
		total += h
	}
	var out []TenantSummary
	received, entitled := map[string]float64{}, map[string]float64{}
	for _, t := range slices.Sorted(maps.Keys(waits)) {
		w := sortedFloats(waits[t])
		ts := TenantSummary{Tenant: t, Jobs: len(w), MeanWaitH: mean(w), P99WaitH: percentile(w, 0.99),
			GPUHours: got[t], Entitled: s.entitled[t]}
		if spec, ok := s.book.Spec(t); ok {
			ts.QuotaGPUs = float64(spec.Nominal[quotaFlavor]) / queue.Milli
		}
		if total > 0 {
			ts.Received = got[t] / total
		}
		received[t], entitled[t] = ts.Received, ts.Entitled
		out = append(out, ts)
	}
	return out, queue.Jain(queue.Ratios(received, entitled))
}

// classSummaries condenses the records per workload class, in name order.
func (s *Sim) classSummaries(end time.Duration) []ClassSummary {
	waits, jcts := map[string][]float64{}, map[string][]float64{}
	for _, r := range s.records {
		waits[r.Class] = append(waits[r.Class], r.Wait(end).Hours())
		if r.Finished {
			jcts[r.Class] = append(jcts[r.Class], (r.End - r.Arrive).Hours())
		}
	}
	var out []ClassSummary
	for _, c := range slices.Sorted(maps.Keys(waits)) {
		w := sortedFloats(waits[c])
		out = append(out, ClassSummary{Class: c, Jobs: len(w), MeanWaitH: mean(w), P99WaitH: percentile(w, 0.99), MeanJCTH: mean(jcts[c])})
	}
	return out
}
