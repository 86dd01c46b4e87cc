package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/workload"
)

// A job the cycle never tried, because its attempts ran out on the jobs
// ahead of it, is handed to the next cycle even though nothing ended in
// between (sched.Memory.Retry): it starts at the next moment, not when
// its patience runs out an hour later.
func TestJobOutOfAttemptsIsTriedAtTheNextMoment(t *testing.T) {
	// Two 8-GPU nodes, each with 5 GPUs held for ten hours.
	arrivals := []workload.Arrival{arrival("b1", 0, 1, 5, 10*time.Hour, 10*time.Hour), arrival("b2", 0, 1, 5, 10*time.Hour, 10*time.Hour)}
	// As many 4-GPU jobs of distinct shapes as the cycle tries: each is
	// within quota, and none fits.
	for i := range sched.DefaultAttempts {
		a := arrival(fmt.Sprintf("gpu-%04d", i), time.Minute, 1, 4, time.Hour, time.Hour)
		a.Job.Groups[0].Task.CPUMilli = 1000 + int64(i)
		arrivals = append(arrivals, a)
	}
	// A job of CPUs only, which fits, comes with them, last; a later
	// arrival makes a moment at which nothing ends.
	cpu := arrival("cpu-only", time.Minute, 1, 0, time.Hour, time.Hour)
	cpu.Job.Groups[0].Task = job.Demand{CPUMilli: 1000, MemoryMiB: 1024}
	late := arrival("late", 3*time.Minute, 1, 1, time.Hour, time.Hour)
	res := runWith(t, 2, Options{}, append(arrivals, cpu, late)...)
	if r := record(t, res, "cpu-only"); !r.Started || r.Start != 3*time.Minute {
		t.Errorf("cpu-only started %v at %v, want at 3m: the cycle that did not try it should not be the last", r.Started, r.Start)
	}
}
