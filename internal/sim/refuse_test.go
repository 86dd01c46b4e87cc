package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// tenantArrival is arrival for a given tenant.
func tenantArrival(tenant, name string, at time.Duration, tasks, gpus int, dur time.Duration) workload.Arrival {
	a := arrival(name, at, tasks, gpus, dur, dur)
	a.Job.Tenant = tenant
	return a
}

// Three tenants share 16 GPUs of quota by their work; with everything the
// others could lend, a tenant has all 16 (the quotas add up to the fleet
// exactly, so a job of the whole fleet is admitted). A 24-GPU job can never
// be admitted: it is refused when it arrives, under every policy,
// with the reason, and counts in none of the figures; the rest runs.
func TestJobOverQuotaForeverIsRefusedAtArrival(t *testing.T) {
	w := workload.Workload{Horizon: 24 * time.Hour, Arrivals: []workload.Arrival{
		tenantArrival("x", "x1", 0, 1, 8, 2*time.Hour),
		tenantArrival("y", "y1", 0, 1, 8, 4*time.Hour),
		tenantArrival("z", "z1", 0, 1, 8, 4*time.Hour),
		tenantArrival("x", "big", time.Minute, 3, 8, time.Hour),
	}}
	for _, name := range PolicyNames() {
		p, err := NewPolicy(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := RunWith(smallFleet(2, 8), w, p, Options{Explain: "big"})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Summary
		if len(res.Refused) != 1 || res.Refused[0].Name != "big" || s.Refused != 1 || s.RefusedGPUH != 24 {
			t.Fatalf("%s: refused %+v, summary %d (%g GPU-h), want big (24 GPU-h)", name, res.Refused, s.Refused, s.RefusedGPUH)
		}
		if why := res.Refused[0].Reason; !strings.Contains(why, "tenant x can never hold more than 16 GPUs: its own 6.153 GPUs and 9.847 GPUs its cohort fleet could lend; the job needs 24 GPUs") {
			t.Errorf("%s: reason %q", name, why)
		}
		finished, undone := 3, 0.0
		if name == "volcano-like" || name == "kai-like" {
			// proportion deserves each queue about a third of the 16 GPUs,
			// and no 8-GPU job fits in that (TestVolcanoKeepsQueuesWithinTheirDeservedShare);
			// KAI runs these jobs, which may not be preempted, within
			// their queue's quota only, a fifth to two fifths of the 16
			// (TestKAIKeepsNonPreemptibleWorkWithinQuota).
			finished, undone = 0, 80
		}
		if s.Jobs != 3 || s.Finished != finished || s.NeverStarted != 3-finished || s.WorkGPUH != 80 || s.UndoneGPUH != undone {
			t.Errorf("%s: %d jobs, %d finished, %d never started, work %g GPU-h, undone %g; want 3, %d, %d, 80, %g",
				name, s.Jobs, s.Finished, s.NeverStarted, s.WorkGPUH, s.UndoneGPUH, finished, 3-finished, undone)
		}
		for _, j := range res.Jobs {
			if j.Name == "big" {
				t.Errorf("%s: the refused job has a record: %+v", name, j)
			}
		}
		if story := strings.Join(res.Explain, "\n"); !strings.Contains(story, RefusedOverQuota+": tenant x can never hold more than 16 GPUs") {
			t.Errorf("%s: story of big:\n%s", name, story)
		}
	}
}

// Work left undone is the work of jobs that did not finish: the gangs
// deadlocked under kube-default are undone, the job before them is not.
func TestUndoneWorkOfJobsThatDidNotFinish(t *testing.T) {
	res := run(t, "kube-default", smallFleet(2, 8), crossedGangs()...)
	if s := res.Summary; s.WorkGPUH != 40 || s.UndoneGPUH != 32 || s.Finished != 1 {
		t.Errorf("deadlocked gangs: work %g, undone %g GPU-h, %d finished; want 40, 32, 1", s.WorkGPUH, s.UndoneGPUH, s.Finished)
	}
}

// A job whose quota frees only when a job without an estimate ends holds
// no reservation and is given no start time: never one 2562047.79 hours
// away.
func TestExplainTellsANeverReservation(t *testing.T) {
	p, _ := NewPolicy("corral")
	noEstimate := arrival("endless", 0, 1, 8, 30*time.Hour, 0)
	w := workload.Workload{Horizon: 48 * time.Hour, Arrivals: []workload.Arrival{
		noEstimate,
		arrival("half", 0, 1, 4, 2*time.Hour, 2*time.Hour),
		arrival("head", time.Minute, 2, 8, time.Hour, time.Hour),
		arrival("small", 2*time.Minute, 1, 1, time.Hour, time.Hour),
	}}
	res, err := RunWith(smallFleet(2, 8), w, p, Options{Explain: "head"})
	if err != nil {
		t.Fatal(err)
	}
	story := strings.Join(res.Explain, "\n")
	if strings.Contains(story, "2562047") || strings.Contains(story, "reserved to start at") || !strings.Contains(story, "not enough quota") {
		t.Errorf("story of head:\n%s", story)
	}
}

// Quotas that do not divide evenly (a third of 16 GPUs each) still add up
// to the whole fleet: a job asking for all of it is admitted and runs.
func TestWholeFleetJobFitsUnevenQuotas(t *testing.T) {
	w := workload.Workload{Horizon: 24 * time.Hour, Arrivals: []workload.Arrival{
		tenantArrival("x", "all", 0, 2, 8, time.Hour),
		tenantArrival("y", "y1", 2*time.Hour, 2, 8, time.Hour),
		tenantArrival("z", "z1", 4*time.Hour, 2, 8, time.Hour),
	}}
	for _, name := range []string{"corral", "kueue-like", "slurm-like"} {
		p, err := NewPolicy(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := RunWith(smallFleet(2, 8), w, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Refused) != 0 || res.Summary.Finished != 3 {
			t.Errorf("%s: refused %+v, %d finished; want none refused, 3 finished", name, res.Refused, res.Summary.Finished)
		}
	}
}
