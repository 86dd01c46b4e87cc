package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

func smallFleet(nodes, gpus int) *fleet.Fleet {
	f := &fleet.Fleet{Levels: []string{"rack"}}
	for i := 0; i < nodes; i++ {
		f.Nodes = append(f.Nodes, fleet.Node{Name: fmt.Sprintf("n%d", i), Domains: []string{"r0"},
			CPUMilli: 64000, MemoryMiB: 1 << 20, GPUModel: "H100", GPUs: gpus})
	}
	return f
}

func arrival(name string, at time.Duration, tasks, gpus int, dur, est time.Duration) workload.Arrival {
	return workload.Arrival{At: at, Duration: dur, Class: "training", Job: &job.Job{
		Name: name, Tenant: "t", Runtime: est,
		Groups: []job.Group{{Name: "w", Count: tasks, Task: job.Demand{GPUs: gpus, CPUMilli: 1000}}},
	}}
}

func run(t *testing.T, policy string, f *fleet.Fleet, arrivals ...workload.Arrival) *Result {
	t.Helper()
	p, err := NewPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(f, workload.Workload{Arrivals: arrivals, Horizon: 24 * time.Hour}, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func record(t *testing.T, r *Result, name string) JobRecord {
	t.Helper()
	for _, j := range r.Jobs {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("no record of %s", name)
	return JobRecord{}
}

// crossedGangs is two gangs that each need the whole fleet, the second of
// higher priority, arriving while a job that may not be preempted holds
// one node: pods placed one at a time deadlock (a holds one node, b the
// other, each waiting for the rest); gangs placed whole run b, then a.
func crossedGangs() []workload.Arrival {
	r := arrival("r", 0, 1, 8, time.Hour, time.Hour)
	a := arrival("a", time.Minute, 2, 8, time.Hour, time.Hour)
	b := arrival("b", 2*time.Minute, 2, 8, time.Hour, time.Hour)
	b.Job.Priority = 1
	return []workload.Arrival{r, a, b}
}

func TestKubeDefaultDeadlocksWhereGangsDoNot(t *testing.T) {
	for _, c := range []struct {
		policy       string
		partial      int
		aStart, bEnd time.Duration // 0: never
	}{
		{"kube-default", 2, 0, 0},
		{"kube-packed", 2, 0, 0},
		{"corral", 0, 2 * time.Hour, 2 * time.Hour},
		{"volcano-like", 0, 2 * time.Hour, 2 * time.Hour},
	} {
		t.Run(c.policy, func(t *testing.T) {
			res := run(t, c.policy, smallFleet(2, 8), crossedGangs()...)
			a, b := record(t, res, "a"), record(t, res, "b")
			if res.Summary.PartialAtEnd != c.partial || a.Start != c.aStart || b.End != c.bEnd {
				t.Errorf("%d partial holders, a starts at %v, b ends at %v; want %d, %v, %v",
					res.Summary.PartialAtEnd, a.Start, b.End, c.partial, c.aStart, c.bEnd)
			}
		})
	}
}

// The head gang's reservation: a job that would delay it does not
// backfill; one that ends before it does.
func TestBackfillNeverDelaysTheReservation(t *testing.T) {
	f := smallFleet(2, 8)
	res := run(t, "corral", f,
		arrival("running", 0, 1, 4, 10*time.Hour, 10*time.Hour),
		arrival("head", time.Minute, 2, 8, time.Hour, time.Hour),
		arrival("long", 2*time.Minute, 1, 4, 20*time.Hour, 20*time.Hour),
		arrival("short", 3*time.Minute, 1, 4, 5*time.Hour, 5*time.Hour),
	)
	if r := record(t, res, "head"); r.Start != 10*time.Hour {
		t.Errorf("head started at %v, want 10h (when running ends)", r.Start)
	}
	if r := record(t, res, "short"); r.Start != 3*time.Minute {
		t.Errorf("short started at %v, want at once (backfill)", r.Start)
	}
	if r := record(t, res, "long"); r.Start < 11*time.Hour {
		t.Errorf("long started at %v, before the head finished: it delayed or raced the reservation", r.Start)
	}
	// The head was told when it would start, and it did.
	if r := record(t, res, "head"); r.Estimate != 10*time.Hour || r.EstimatedAt != time.Minute {
		t.Errorf("head: estimated at %v to start at %v, want at 1m (when it first waited) for 10h", r.EstimatedAt, r.Estimate)
	}
	if s := res.Summary; s.Estimates != 1 || s.EstimateErrH != 0 || s.EstimateEarly != 1 {
		t.Errorf("estimates %d, error %.2fh, kept %.2f; want 1, 0, 1", s.Estimates, s.EstimateErrH, s.EstimateEarly)
	}
}

// cons_tres: three 1-GPU jobs on two 8-GPU nodes all start at once under
// slurm-like (a GPU task gets GPUs) and corral; slurm-exclusive gives each
// a whole node, so the third waits an hour.
func TestSlurmLikeGivesAGPUTaskGPUsNotANode(t *testing.T) {
	jobs := []workload.Arrival{arrival("x", 0, 1, 1, time.Hour, time.Hour), arrival("y", 0, 1, 1, time.Hour, time.Hour), arrival("z", 0, 1, 1, time.Hour, time.Hour)}
	for _, c := range []struct {
		policy string
		z      time.Duration
	}{{"slurm-like", 0}, {"corral", 0}, {"slurm-exclusive", time.Hour}} {
		if r := record(t, run(t, c.policy, smallFleet(2, 8), jobs...), "z"); r.Start != c.z {
			t.Errorf("%s started z at %v, want %v", c.policy, r.Start, c.z)
		}
	}
}

func TestDeterministic(t *testing.T) {
	f := smallFleet(4, 8)
	var arr []workload.Arrival
	for i := 0; i < 40; i++ {
		arr = append(arr, arrival(fmt.Sprintf("j%02d", i), time.Duration(i)*7*time.Minute, 1+i%3, 1+i%8, time.Duration(1+i%5)*time.Hour, time.Duration(2+i%4)*time.Hour))
	}
	for _, p := range PolicyNames() {
		a, b := run(t, p, f, arr...), run(t, p, f, arr...)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: two runs differ", p)
		}
	}
}

func TestExplainTellsWhyAJobWaited(t *testing.T) {
	p, _ := NewPolicy("corral")
	w := workload.Workload{Horizon: 24 * time.Hour, Arrivals: []workload.Arrival{
		arrival("running", 0, 1, 4, 10*time.Hour, 10*time.Hour),
		arrival("head", time.Minute, 2, 8, time.Hour, time.Hour),
		arrival("long", 2*time.Minute, 1, 4, 20*time.Hour, 20*time.Hour),
	}}
	for _, tc := range []struct{ job, want string }{
		{"long", "starting it would delay head, which holds a reservation"},
		{"head", "not enough quota; reserved to start at 10.00h, when running end"},
	} {
		res, err := RunWith(smallFleet(2, 8), w, p, Options{Explain: tc.job})
		if err != nil {
			t.Fatal(err)
		}
		story := strings.Join(res.Explain, "\n")
		if !strings.Contains(story, tc.want) || !strings.Contains(story, "arrives") || !strings.Contains(story, "finishes") {
			t.Errorf("%s's story lacks %q:\n%s", tc.job, tc.want, story)
		}
	}
}

// Every model says why the explained job waits: the queue models when
// their quota or share holds it (kai-like lets a job that may not be
// preempted run within its queue's quota only), the others what placement
// finds. Three tenants on one 8-GPU node; carol's invented quota is a
// sliver of a GPU.
func TestExplainSaysWhatHoldsAJobInEveryModel(t *testing.T) {
	of := func(tenant string, a workload.Arrival) workload.Arrival { a.Job.Tenant = tenant; return a }
	w := workload.Workload{Horizon: 24 * time.Hour, Arrivals: []workload.Arrival{
		of("alice", arrival("a1", 0, 1, 4, 10*time.Hour, 0)),
		of("alice", arrival("a2", time.Minute, 1, 2, 10*time.Hour, 0)),
		of("bob", arrival("b1", 2*time.Minute, 1, 1, time.Hour, 0)),
		of("carol", arrival("c1", 3*time.Minute, 1, 2, 10*time.Minute, 0)),
	}}
	want := map[string]string{
		"kai-like":     "waits (quota): queue carol may hold 0.04 GPUs for a job that may not be preempted (its quota; its share is",
		"volcano-like": "waits (quota): queue carol may hold",
		"corral":       "waits (quota): queue carol",
	}
	for _, name := range PolicyNames() {
		p, _ := NewPolicy(name)
		res, err := RunWith(smallFleet(1, 8), w, p, Options{Explain: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		story := strings.Join(res.Explain, "\n")
		w, ok := want[name]
		if !ok {
			w = "waits: needs 2 GPUs (1 task of 2); the fleet has room for 0 GPUs"
		}
		if !strings.Contains(story, w) {
			t.Errorf("%s: c1's story lacks %q:\n%s", name, w, story)
		}
	}
}
