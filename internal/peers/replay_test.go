package peers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/kube/kubetest"
	"github.com/corral-sched/corral/internal/workload"
)

func startRig(t *testing.T, f Fleet) *Rig {
	t.Helper()
	r, err := Start(context.Background(), t.TempDir(), f)
	switch {
	case err == nil:
		t.Cleanup(r.Stop)
		return r
	case errors.Is(err, kubetest.ErrNoBinaries) && os.Getenv("CORRAL_INTEGRATION") != "1":
		t.Skipf("skipping: %v", err)
	default:
		t.Fatalf("starting the rig: %v", err)
	}
	return nil
}

// TestReplay runs 20 jobs on 8 fake 8-GPU nodes, a simulated minute per
// second, under each scheduler on a fresh control plane: every job starts
// after it arrives, runs its duration (within the watch's resolution) and
// ends.
func TestReplay(t *testing.T) {
	w := Synthetic(20, 20*time.Minute, 7)
	for _, s := range Schedulers() {
		t.Run(s, func(t *testing.T) {
			r := startRig(t, Fleet{Nodes: 8, GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3"})
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			got, err := r.Replay(ctx, w, Options{Scheduler: s, Speedup: 60, GPUs: 64, Dir: t.TempDir(), Slack: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			checkReplay(t, w, got)
			checkDeployed(t, r)
		})
	}
}

// checkDeployed checks that corral, where it ran, needed nothing beyond
// deploy/rbac.yaml.
func checkDeployed(t *testing.T, r *Rig) {
	t.Helper()
	if err := r.DeployedErr(); err != nil {
		t.Error(err)
	}
}

// checkReplay checks every job started after it arrived and ran its
// duration (at least, when it was preempted and ran again), and that each
// of its tasks held its GPUs on a node from then on.
func checkReplay(t *testing.T, w workload.Workload, got *Result) {
	t.Helper()
	checkHolds(t, w, got)
	const slack = 3 * time.Minute // 3 s of real time at 60x: watch and KWOK delays
	for _, a := range w.Arrivals {
		o := got.Outcomes[a.Job.Name]
		if !o.Started || !o.Ended {
			t.Errorf("%s: outcome %+v, want started and ended", a.Job.Name, o)
			continue
		}
		if o.Start < a.At {
			t.Errorf("%s: started at %v before it arrived at %v", a.Job.Name, o.Start, a.At)
		}
		// A job preempted (its pods deleted and replaced) runs again.
		stopped := got.Stops[a.Job.Name] > 0
		if run := o.End - o.Start; run < a.Duration-slack || run > a.Duration+slack && !stopped {
			t.Errorf("%s: ran %v, want %v (%d stops)", a.Job.Name, run, a.Duration, got.Stops[a.Job.Name])
		}
	}
}

// checkHolds checks the replay's holds: every task of every job held its
// GPUs on a node, no earlier than the job arrived, and while its job ran.
func checkHolds(t *testing.T, w workload.Workload, got *Result) {
	t.Helper()
	tasks := map[string]map[string]bool{}
	for _, h := range got.Holds {
		if tasks[h.Job] == nil {
			tasks[h.Job] = map[string]bool{}
		}
		tasks[h.Job][h.Task] = true
	}
	for _, a := range w.Arrivals {
		if n := len(tasks[a.Job.Name]); n != a.Job.Tasks() {
			t.Errorf("%s: holds of %d tasks, want %d", a.Job.Name, n, a.Job.Tasks())
		}
		o := got.Outcomes[a.Job.Name]
		for _, h := range got.Holds {
			if h.Job != a.Job.Name {
				continue
			}
			if h.GPUs != a.Job.Groups[0].Task.GPUs || h.Node == "" || h.From < a.At-time.Second || h.To < h.From || h.To > o.End+time.Minute {
				t.Errorf("%s: hold %+v; want %d GPUs on a node from its arrival at %v to no later than its end at %v", a.Job.Name, h, a.Job.Groups[0].Task.GPUs, a.At, o.End)
			}
		}
	}
}

// TestReplayKeepsGangsInTheirRack runs two gangs of 64 GPUs, each
// required to stay in one rack, and a few single pods on two NVL72-like
// racks (18 nodes of 4 GPUs each) under every scheduler that honours a
// topology: each gang starts whole in one rack, as its PodGroup, pack
// annotation or Kueue topology request says. Placed by chance, 16 of 36
// equal nodes would almost never fall in one rack.
func TestReplayKeepsGangsInTheirRack(t *testing.T) {
	f := NVL72(1, 2)
	gang := func(name string, at time.Duration) workload.Arrival {
		return workload.Arrival{At: at, Duration: 5 * time.Minute, Class: workload.Recorded, Job: &job.Job{Name: name, Tenant: "research",
			Groups:   []job.Group{{Name: "tasks", Count: 16, Task: job.Demand{GPUs: 4, CPUMilli: 1000, MemoryMiB: 1024}}},
			Topology: []job.Constraint{{Level: "rack", Required: true}}}}
	}
	w := workload.Workload{Horizon: time.Minute, Arrivals: []workload.Arrival{gang("g1", 0), gang("g2", 30*time.Second)}}
	for i := range 4 {
		w.Arrivals = append(w.Arrivals, workload.Arrival{At: time.Duration(i) * 10 * time.Second, Duration: 3 * time.Minute, Class: workload.Recorded,
			Job: &job.Job{Name: fmt.Sprintf("pod-%d", i), Tenant: "research", Groups: []job.Group{{Name: "tasks", Count: 1, Task: job.Demand{GPUs: 1, CPUMilli: 1000, MemoryMiB: 1024}}}}})
	}
	workload.SortArrivals(w.Arrivals)
	for _, s := range []string{KubeGang, KueueTAS, Corral} {
		t.Run(s, func(t *testing.T) {
			r := startRig(t, f)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			got, err := r.Replay(ctx, w, Options{Scheduler: s, Speedup: 60, GPUs: f.Nodes * f.GPUs, Dir: t.TempDir(), Slack: time.Minute, PodGroups: true})
			if err != nil {
				t.Fatal(err)
			}
			checkReplay(t, w, got)
			checkDeployed(t, r)
			for _, g := range []string{"g1", "g2"} {
				o := got.Outcomes[g]
				if racks, _ := f.domainsAt(got.Holds, g, o.Start); racks != 1 {
					t.Errorf("gang %s started on %d racks, want 1", g, racks)
				}
			}
		})
	}
}
