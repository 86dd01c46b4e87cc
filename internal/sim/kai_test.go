package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// KAI runs non-preemptible work within its queue's quota only: b's quota
// is 4 of 16 GPUs (a quarter of the work: 16 of 64 GPU-hours), so its
// second 4-GPU job waits
// for its first with 8 GPUs idle; the same jobs made preemptible borrow
// the idle GPUs and start at once, as volcano-like starts them.
func TestKAIKeepsNonPreemptibleWorkWithinQuota(t *testing.T) {
	jobs := func(preempt bool) func() []workload.Arrival {
		return func() []workload.Arrival {
			b1 := withTenant(arrival("b1", 0, 1, 4, 2*time.Hour, 2*time.Hour), "b")
			b2 := withTenant(arrival("b2", time.Minute, 1, 4, 2*time.Hour, 2*time.Hour), "b")
			a := withTenant(arrival("a1", 10*time.Hour, 1, 8, 6*time.Hour, 6*time.Hour), "a")
			if preempt {
				b1, b2 = preemptible(b1, 0), preemptible(b2, 0)
			}
			return []workload.Arrival{b1, b2, a}
		}
	}
	checkStarts(t, jobs(false), 2, []startCase{
		{"kai-like", "b2", 2 * time.Hour},
		{"volcano-like", "b2", time.Minute},
	})
	checkStarts(t, jobs(true), 2, []startCase{{"kai-like", "b2", time.Minute}})
}

// Quota and fair-share reclaim take over-quota work only: b borrows 12
// GPUs (quota 4) when a's job comes within a's quota, and a's job evicts
// b's cheapest job and starts at once, as under volcano-like.
func TestKAIReclaimsOverQuotaWork(t *testing.T) {
	checkStarts(t, lentQuota, 2, []startCase{{"kai-like", "a1", time.Hour}})
	res := run(t, "kai-like", smallFleet(2, 8), lentQuota()...)
	if b1, b2 := record(t, res, "b1"), record(t, res, "b2"); b1.Interruptions+b2.Interruptions != 1 {
		t.Errorf("interruptions: b1 %d, b2 %d; want one of them stopped", b1.Interruptions, b2.Interruptions)
	}
}
