package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// Work is conserved through every stop, and the invariants hold at every
// moment (see invariants.go): on random workloads with node
// failures, spot notices, preemptions, grace periods and spare
// replacements, a finished job ran exactly its duration of useful work plus
// the work it lost (GPU-hours), never finished before it could, and never
// lost more than it ran.
func TestCheckpointProgressIsConserved(t *testing.T) {
	checkInvariants = true // and after every moment: quotas, whole gangs, GPUs
	defer func() { checkInvariants = false }()
	var stops, preemptions, lost float64
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		f := smallFleet(6, 8)
		f.Nodes[5].Spare = r.IntN(2) == 0
		var nodes []string
		for _, n := range f.Nodes {
			nodes = append(nodes, n.Name)
		}
		var arr []workload.Arrival
		for i := 0; i < 30; i++ {
			tasks, gpus := 1+r.IntN(3), []int{1, 2, 4, 8}[r.IntN(4)]
			dur := time.Duration(1+r.IntN(12*60)) * time.Minute
			a := arrival(fmt.Sprintf("j%02d", i), time.Duration(r.IntN(24*60))*time.Minute, tasks, gpus, dur, dur)
			a.Job.Tenant = []string{"a", "b"}[r.IntN(2)]
			a.Job.Preemptible = r.IntN(2) == 0
			if r.IntN(3) > 0 {
				a.Job.CheckpointEvery = time.Duration(10+r.IntN(120)) * time.Minute
			}
			if tasks > 1 && r.IntN(2) == 0 {
				a.Job.Topology = []job.Constraint{{Level: "rack", Required: true}}
			}
			arr = append(arr, a)
		}
		workload.SortArrivals(arr)
		fails, err := workload.NodeFailures(nodes, 40*time.Hour, 2*time.Hour, 48*time.Hour, seed)
		if err != nil {
			t.Fatal(err)
		}
		spots, err := workload.SpotInterruptions(nodes[:2], 0.05, 2*time.Minute, 48*time.Hour, seed)
		if err != nil {
			t.Fatal(err)
		}
		faults := append(fails, spots...)
		workload.SortFaults(faults)
		opt := Options{PreemptGrace: time.Duration(r.IntN(3)) * time.Minute}
		for _, policy := range PolicyNames() {
			p, _ := NewPolicy(policy)
			res, err := RunWith(f, workload.Workload{Arrivals: arr, Faults: faults, Horizon: 48 * time.Hour}, p, opt)
			if err != nil {
				t.Fatal(err)
			}
			stops += float64(res.Summary.Interruptions)
			preemptions += float64(res.Summary.Preemptions)
			lost += res.Summary.LostGPUHours
			for _, a := range arr {
				rec := record(t, res, a.Job.Name)
				if rec.LostGPUHours < -1e-9 || rec.LostGPUHours > rec.GPUHours+1e-9 {
					t.Fatalf("seed %d %s %s: lost %.3f of %.3f GPU-h run", seed, policy, rec.Name, rec.LostGPUHours, rec.GPUHours)
				}
				if !rec.Finished {
					continue
				}
				if rec.End < rec.Start+a.Duration-time.Nanosecond && rec.Interruptions == 0 || rec.End < a.At+a.Duration {
					t.Fatalf("seed %d %s %s: ran %v..%v, shorter than its %v", seed, policy, rec.Name, rec.Start, rec.End, a.Duration)
				}
				useful := rec.UsedGPUs * a.Duration.Hours()
				if math.Abs(rec.GPUHours-rec.LostGPUHours-useful) > 1e-6 {
					t.Fatalf("seed %d %s %s: ran %.4f GPU-h, lost %.4f, useful %.4f; want ran = useful + lost (stops %d)",
						seed, policy, rec.Name, rec.GPUHours, rec.LostGPUHours, useful, rec.Interruptions)
				}
			}
		}
	}
	t.Logf("%.0f stops, %.0f of them preemptions, %.0f GPU-h lost", stops, preemptions, lost)
	if stops < 100 || preemptions == 0 || lost == 0 {
		t.Errorf("the workloads hardly stopped anything: %.0f stops, %.0f preemptions", stops, preemptions)
	}
}
