package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/workload"
)

func runFaults(t *testing.T, policy string, nodes int, faults []workload.Fault, arrivals ...workload.Arrival) *Result {
	t.Helper()
	p, err := NewPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(smallFleet(nodes, 8), workload.Workload{Arrivals: arrivals, Faults: faults, Horizon: 48 * time.Hour}, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func checkpointing(a workload.Arrival, every time.Duration) workload.Arrival {
	a.Job.CheckpointEvery = every
	return a
}

// A spot notice: the job checkpoints during the notice, goes back to the
// queue, restarts elsewhere at once and loses nothing.
func TestSpotNoticeCheckpointsAndResumes(t *testing.T) {
	a := checkpointing(arrival("train", 0, 1, 8, 10*time.Hour, 10*time.Hour), time.Hour)
	notice := workload.Fault{At: 150 * time.Minute, Kind: workload.SpotNotice, Node: "n0", Notice: 2 * time.Minute}
	res := runFaults(t, "corral", 2, []workload.Fault{notice}, a)
	r := record(t, res, "train")
	if r.Interruptions != 1 || r.LostGPUHours != 0 || r.End != 10*time.Hour {
		t.Fatalf("interruptions %d, lost %.2f GPU-h, end %v; want 1, 0, 10h (resumed at once from the notice)", r.Interruptions, r.LostGPUHours, r.End)
	}
	if f := res.Faults; len(f) != 1 || f[0].Kind != faultrec.SpotNotice || f[0].Action != faultrec.Requeued || f[0].LostGPUHours != 0 || f[0].GPUs != 8 {
		t.Errorf("fault records %+v", f)
	}
}

// A node failure: only the work since the last checkpoint is lost.
func TestNodeFailureLosesWorkSinceCheckpoint(t *testing.T) {
	a := checkpointing(arrival("train", 0, 1, 8, 10*time.Hour, 10*time.Hour), time.Hour)
	b := arrival("nockpt", 0, 1, 8, 10*time.Hour, 10*time.Hour)
	fail := []workload.Fault{
		{At: 150 * time.Minute, Kind: workload.NodeFailure, Node: "n0"},
		{At: 150 * time.Minute, Kind: workload.NodeFailure, Node: "n1"},
		{At: 3 * time.Hour, Kind: workload.NodeRepair, Node: "n0"},
		{At: 3 * time.Hour, Kind: workload.NodeRepair, Node: "n1"},
	}
	res := runFaults(t, "corral", 2, fail, a, b)
	r := record(t, res, "train")
	// 2.5 h run, checkpoint at 2 h: 0.5 h x 8 GPUs lost; 8 h left from 3 h.
	if r.LostGPUHours != 4 || r.End != 11*time.Hour {
		t.Errorf("checkpointing job: lost %.2f GPU-h, end %v; want 4 and 11h", r.LostGPUHours, r.End)
	}
	n := record(t, res, "nockpt")
	if n.LostGPUHours != 20 || n.End != 13*time.Hour {
		t.Errorf("job without checkpoints: lost %.2f GPU-h, end %v; want 20 and 13h (starts over)", n.LostGPUHours, n.End)
	}
	if res.Summary.LostGPUHours != 24 || res.Summary.Interruptions != 2 {
		t.Errorf("summary: lost %.2f, interruptions %d", res.Summary.LostGPUHours, res.Summary.Interruptions)
	}
}

// An elastic gang that loses a node restarts with the tasks that fit, at
// or above its minimum, instead of waiting for its full size.
func TestElasticGangRestartsSmaller(t *testing.T) {
	a := checkpointing(arrival("elastic", 0, 4, 8, 10*time.Hour, 10*time.Hour), time.Hour)
	a.Job.MinMember, a.Job.Elastic = 2, true
	fail := []workload.Fault{{At: time.Hour, Kind: workload.NodeFailure, Node: "n2"}}
	res := runFaults(t, "corral", 4, fail, a)
	r := record(t, res, "elastic")
	if r.Interruptions != 1 || r.End != 10*time.Hour {
		t.Fatalf("interruptions %d, end %v; want 1 and 10h: restarted at once on the 3 nodes left", r.Interruptions, r.End)
	}
}

// A tenant takes back the quota it lent: the borrowing job that loses the
// least work since its last checkpoint is stopped, the owner's job starts.
func TestReclaimLentQuotaPreemptsTheCheapestBorrower(t *testing.T) {
	b1 := checkpointing(arrival("b1", 0, 1, 8, 10*time.Hour, 10*time.Hour), time.Hour)
	b2 := checkpointing(arrival("b2", 10*time.Minute, 1, 8, 10*time.Hour, 10*time.Hour), time.Hour)
	a1 := arrival("a1", 90*time.Minute, 1, 8, 20*time.Hour, 20*time.Hour)
	b1.Job.Tenant, b2.Job.Tenant, a1.Job.Tenant = "b", "b", "a"
	b1.Job.Preemptible, b2.Job.Preemptible = true, true
	res := runFaults(t, "corral", 2, nil, b1, b2, a1) // equal work: 8 GPUs of quota each
	if r := record(t, res, "a1"); r.Start != 150*time.Minute {
		t.Errorf("a1 started at %v, want 2h30m (after waiting an hour, reclaiming its quota)", r.Start)
	}
	// At 2h30m b1 would lose 30 min of 8 GPUs, b2 20 min: b2 goes.
	if r := record(t, res, "b2"); r.Preemptions != 1 || r.LostGPUHours < 2.66 || r.LostGPUHours > 2.67 {
		t.Errorf("b2: %d preemptions, %.3f GPU-h lost; want 1 and 2.667", r.Preemptions, r.LostGPUHours)
	}
	if r := record(t, res, "b1"); r.Preemptions != 0 || r.End != 10*time.Hour {
		t.Errorf("b1: %d preemptions, end %v; want untouched", r.Preemptions, r.End)
	}
}

// A tenant already at its nominal quota takes nothing from others.
func TestNoReclaimBeyondNominal(t *testing.T) {
	b1 := checkpointing(arrival("b1", 0, 2, 8, 10*time.Hour, 10*time.Hour), time.Hour)
	a1 := arrival("a1", time.Hour, 1, 8, 10*time.Hour, 10*time.Hour)
	a2 := arrival("a2", 2*time.Hour, 1, 8, 10*time.Hour, 10*time.Hour)
	b1.Job.Tenant, a1.Job.Tenant, a2.Job.Tenant = "b", "a", "a"
	b1.Job.Preemptible = true
	res := runFaults(t, "corral", 2, nil, b1, a1, a2) // a: 16 of 32 GPU-days of work
	if res.Summary.Preemptions != 1 {
		t.Errorf("%d preemptions, want 1 (a1 reclaims its 8 GPUs; a2 would exceed a's quota)", res.Summary.Preemptions)
	}
}

// Adversarial arrivals: tenant a reclaims its quota every two hours, for
// 800 hours, from tenant b's borrowing job. Re-borrowing backs off, doubling after every
// preemption, so the job is not preempted at every arrival.
func TestNoPreemptRequeueLoop(t *testing.T) {
	var arr []workload.Arrival
	for i, name := range []string{"b1", "b2"} {
		b := checkpointing(arrival(name, time.Duration(i)*time.Minute, 1, 8, 200*time.Hour, 200*time.Hour), time.Hour)
		b.Job.Tenant, b.Job.Preemptible = "b", true
		arr = append(arr, b)
	}
	for i := 0; i < 400; i++ {
		a := arrival(fmt.Sprintf("a%03d", i), time.Hour+time.Duration(i)*2*time.Hour, 1, 8, time.Hour, time.Hour)
		a.Job.Tenant = "a"
		arr = append(arr, a)
	}
	workload.SortArrivals(arr)
	res := runFaults(t, "corral", 2, nil, arr...)
	if n := res.Summary.Preemptions; n < 1 || n > 20 {
		t.Errorf("%d preemptions over 400 reclaiming arrivals; want a handful (back-off), not one per arrival", n)
	}
	t.Logf("%d preemptions, %.1f GPU-h lost", res.Summary.Preemptions, res.Summary.LostGPUHours)
}

// However often its tenant's quota is reclaimed, one job is stopped at
// most sched.DefaultMaxPreemptions times.
func TestPreemptionsPerJobAreBounded(t *testing.T) {
	b := checkpointing(arrival("b1", 0, 2, 8, 100*time.Hour, 100*time.Hour), time.Hour)
	b.Job.Tenant, b.Job.Preemptible = "b", true
	arr := []workload.Arrival{b}
	for i := 0; i < 50; i++ {
		a := arrival(fmt.Sprintf("a%03d", i), 3*time.Hour+time.Duration(i)*8*time.Hour, 1, 8, 4*time.Hour, 4*time.Hour)
		a.Job.Tenant = "a"
		arr = append(arr, a)
	}
	workload.SortArrivals(arr)
	res := runFaults(t, "corral", 2, nil, arr...)
	t.Logf("b1 preempted %d times", record(t, res, "b1").Preemptions)
	if r := record(t, res, "b1"); r.Preemptions < 1 || r.Preemptions > sched.DefaultMaxPreemptions {
		t.Errorf("b1 preempted %d times, want 1..%d", r.Preemptions, sched.DefaultMaxPreemptions)
	}
}
