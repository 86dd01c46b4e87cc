package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// Each test here fails if the rule of a peer's model it names is removed:
// every case names the policy that has the rule and one that does not.

// starts runs the arrivals under each case's policy and checks when the
// named job starts.
type startCase struct {
	policy string
	job    string
	start  time.Duration
}

func checkStarts(t *testing.T, f func() []workload.Arrival, nodes int, cases []startCase) {
	t.Helper()
	for _, c := range cases {
		res := run(t, c.policy, smallFleet(nodes, 8), f()...)
		if r := record(t, res, c.job); r.Start != c.start || !r.Started {
			t.Errorf("%s: %s starts at %v (started %v), want %v", c.policy, c.job, r.Start, r.Started, c.start)
		}
	}
}

func withTenant(a workload.Arrival, tenant string) workload.Arrival {
	a.Job.Tenant = tenant
	return a
}

func preemptible(a workload.Arrival, priority int) workload.Arrival {
	a.Job.Preemptible, a.Job.Priority = true, priority
	return a
}

// Fair share (priority/multifactor, Fair Tree): account a has run for
// 10 hours, b never; when the node frees, b's job goes first although a's
// waited longer. slurm-exclusive (priority then FIFO) runs a's first.
func TestSlurmLikeOrdersByFairShare(t *testing.T) {
	jobs := func() []workload.Arrival {
		return []workload.Arrival{
			withTenant(arrival("a-hist", 0, 1, 6, 10*time.Hour, 10*time.Hour), "a"),
			withTenant(arrival("a-next", time.Hour, 1, 6, time.Hour, time.Hour), "a"),
			withTenant(arrival("b-next", 2*time.Hour, 1, 6, time.Hour, time.Hour), "b"),
		}
	}
	checkStarts(t, jobs, 1, []startCase{
		{"slurm-like", "b-next", 10 * time.Hour},
		{"slurm-like", "a-next", 11 * time.Hour},
		{"slurm-exclusive", "a-next", 10 * time.Hour},
	})
}

// preempt/qos: a job of a higher QOS requeues a running preemptible job
// of a lower one instead of waiting for it.
func TestSlurmLikePreemptsALowerQOS(t *testing.T) {
	jobs := func() []workload.Arrival {
		return []workload.Arrival{
			preemptible(arrival("low", 0, 1, 8, 10*time.Hour, 10*time.Hour), 0),
			preemptible(arrival("high", time.Hour, 1, 8, time.Hour, time.Hour), 1),
		}
	}
	checkStarts(t, jobs, 1, []startCase{
		{"slurm-like", "high", time.Hour},
		{"slurm-exclusive", "high", 10 * time.Hour},
	})
}

// NodeResourcesFit: LeastAllocated puts two 4-GPU pods on two nodes, so
// an 8-GPU pod waits for one to end; MostAllocated packs them on one node
// and the 8-GPU pod starts at once.
func TestKubePackedPacksWhereKubeDefaultSpreads(t *testing.T) {
	jobs := func() []workload.Arrival {
		return []workload.Arrival{
			arrival("a", 0, 1, 4, 10*time.Hour, 10*time.Hour),
			arrival("b", time.Minute, 1, 4, 10*time.Hour, 10*time.Hour),
			arrival("c", 2*time.Minute, 1, 8, time.Hour, time.Hour),
		}
	}
	checkStarts(t, jobs, 2, []startCase{
		{"kube-packed", "c", 2 * time.Minute},
		{"kube-default", "c", 10 * time.Hour},
	})
}

// PrioritySort: when the node frees, the later job of higher priority
// goes first; kueue-strict's pods go in arrival order.
func TestKubeDefaultSortsPodsByPriority(t *testing.T) {
	jobs := func() []workload.Arrival {
		hi := arrival("hi", 2*time.Minute, 1, 8, time.Hour, time.Hour)
		hi.Job.Priority = 1
		return []workload.Arrival{arrival("r", 0, 1, 8, time.Hour, time.Hour),
			arrival("lo", time.Minute, 1, 8, time.Hour, time.Hour), hi}
	}
	checkStarts(t, jobs, 1, []startCase{
		{"kube-default", "hi", time.Hour},
		{"kube-default", "lo", 2 * time.Hour},
		{"kueue-strict", "lo", time.Hour},
	})
}

// DefaultPreemption: a pod of higher priority evicts a running
// preemptible job of lower priority.
func TestKubeDefaultPreemptsLowerPriority(t *testing.T) {
	jobs := func() []workload.Arrival {
		return []workload.Arrival{
			preemptible(arrival("low", 0, 1, 8, 10*time.Hour, 10*time.Hour), 0),
			preemptible(arrival("high", time.Hour, 1, 8, time.Hour, time.Hour), 1),
		}
	}
	checkStarts(t, jobs, 1, []startCase{
		{"kube-default", "high", time.Hour},
		{"kube-packed", "high", time.Hour},
		{"kueue-strict", "high", 10 * time.Hour},
	})
}

// BestEffortFIFO: the head needs more quota than is left and waits; the
// smaller job behind it fits the quota and starts. StrictFIFO holds it
// behind the head.
func TestKueueBestEffortFIFOLetsASmallerJobPass(t *testing.T) {
	jobs := func() []workload.Arrival {
		return []workload.Arrival{
			arrival("running", 0, 3, 4, 10*time.Hour, 10*time.Hour),
			arrival("head", time.Minute, 1, 8, time.Hour, time.Hour),
			arrival("small", 2*time.Minute, 1, 4, time.Hour, time.Hour),
		}
	}
	checkStarts(t, jobs, 2, []startCase{
		{"kueue-like", "small", 2 * time.Minute},
		{"kueue-strict", "small", 10 * time.Hour},
	})
}

// waitForPodsReady: g is admitted but only one of its pods fits (the
// other node lacks cores while r runs); after 5 minutes it is evicted,
// its GPUs and quota freed, and y, which its quota held out, starts.
// Without it (kueue-strict), g holds its pod until r ends at 10h.
func TestKueueWaitForPodsReadyEvictsPartialHolders(t *testing.T) {
	jobs := func() []workload.Arrival {
		r := arrival("r", 0, 1, 2, 10*time.Hour, 10*time.Hour)
		g := arrival("g", time.Minute, 2, 4, time.Hour, time.Hour)
		r.Job.Groups[0].Task.CPUMilli, g.Job.Groups[0].Task.CPUMilli = 40_000, 40_000
		return []workload.Arrival{r, g, arrival("y", 3*time.Minute, 1, 8, time.Hour, time.Hour)}
	}
	checkStarts(t, jobs, 2, []startCase{
		{"kueue-like", "y", 6 * time.Minute},
		{"kueue-strict", "y", 11 * time.Hour},
	})
	p, _ := NewPolicy("kueue-like")
	res, err := RunWith(smallFleet(2, 8), workload.Workload{Arrivals: jobs(), Horizon: 24 * time.Hour}, p, Options{Explain: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if story := strings.Join(res.Explain, "\n"); !strings.Contains(story, "evicted: pods not ready within 5m0s (waitForPodsReady); requeued after 1m0s") {
		t.Errorf("story of g:\n%s", story)
	}
}

// reclaimWithinCohort: b borrows a's unused quota for two jobs; when a's
// job comes, within a's nominal quota, Kueue evicts b's most recently
// started job at once. kueue-strict does not preempt: a waits for b1.
func TestKueueReclaimsLentQuota(t *testing.T) {
	checkStarts(t, lentQuota, 2, []startCase{
		{"kueue-like", "a1", time.Hour},
		{"kueue-strict", "a1", 5 * time.Hour},
	})
	res := run(t, "kueue-like", smallFleet(2, 8), lentQuota()...)
	if b1, b2 := record(t, res, "b1"), record(t, res, "b2"); b1.Preemptions != 0 || b2.Preemptions != 1 {
		t.Errorf("preemptions: b1 %d, b2 %d; want 0, 1 (the most recently started)", b1.Preemptions, b2.Preemptions)
	}
}

// lentQuota: a has three quarters of the work (12 of 16 GPUs' quota), b a
// quarter (4); b runs 12 GPUs by borrowing before a's job comes.
func lentQuota() []workload.Arrival {
	return []workload.Arrival{
		preemptible(withTenant(arrival("b1", 0, 1, 8, 5*time.Hour, 5*time.Hour), "b"), 0),
		preemptible(withTenant(arrival("b2", time.Minute, 1, 4, 5*time.Hour, 5*time.Hour), "b"), 0),
		withTenant(arrival("a1", time.Hour, 1, 8, 22*time.Hour+30*time.Minute, time.Hour), "a"),
	}
}

// reclaim: queue a deserves 8 GPUs and holds none, queue b holds 12 for
// 8 deserved; a's job evicts b's cheapest job and starts. Without the
// reclaim action it would wait for b1, as kube-default (no queues) does.
func TestVolcanoReclaimsFromAnOverusedQueue(t *testing.T) {
	checkStarts(t, lentQuota, 2, []startCase{
		{"volcano-like", "a1", time.Hour},
		{"kube-default", "a1", 5 * time.Hour},
	})
}

// proportion: three equal queues ask for 8, 8 and 4 GPUs of 16; x's and
// y's deserve 6 each, and an 8-GPU job is not allocatable beyond that
// (Volcano's allocate skips a task its queue cannot hold), so they wait,
// with GPUs free, until z ends and they deserve 8. corral starts x at once.
func TestVolcanoKeepsQueuesWithinTheirDeservedShare(t *testing.T) {
	three := func() []workload.Arrival {
		return []workload.Arrival{
			withTenant(arrival("x", 0, 1, 8, time.Hour, time.Hour), "x"),
			withTenant(arrival("y", 0, 1, 8, time.Hour, time.Hour), "y"),
			withTenant(arrival("z", 0, 1, 4, 2*time.Hour, 2*time.Hour), "z"),
		}
	}
	checkStarts(t, three, 2, []startCase{
		{"volcano-like", "z", 0},
		{"volcano-like", "x", 2 * time.Hour},
		{"corral", "x", 0},
	})
}

// Every model of a peer names the documentation it follows.
func TestPeersCiteTheirDocumentation(t *testing.T) {
	for _, name := range PolicyNames() {
		p, _ := NewPolicy(name)
		docs := Docs(p)
		if name == "corral" {
			if docs != nil {
				t.Errorf("corral cites %v", docs)
			}
			continue
		}
		if len(docs) == 0 || !strings.HasPrefix(docs[0], "https://") {
			t.Errorf("%s cites %v", name, docs)
		}
	}
}
