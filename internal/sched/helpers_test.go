package sched

import (
	"fmt"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
)

var (
	t0     = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gpu    = queue.Flavor{Model: "gpu", Capacity: "any"}
	noTime time.Time
)

// world builds snapshots: a fleet of nodes x gpus H100s, queues, running
// and pending units.
type world struct {
	t       *testing.T
	state   *gang.State
	book    *queue.Book
	running []Running
	pending []Unit
	arrival int64
}

func newWorld(t *testing.T, nodes, gpus int, queues ...queue.Spec) *world {
	t.Helper()
	f, err := fleet.Synthetic{Nodes: nodes, GPUsPerNode: gpus}.Build()
	if err != nil {
		t.Fatal(err)
	}
	st, err := gang.New(f)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, state: st}
	if len(queues) > 0 {
		if w.book, err = queue.NewBook(queues, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// quota is a queue with a nominal quota of gpus GPUs.
func quota(name string, gpus int64) queue.Spec {
	return queue.Spec{Name: name, Nominal: queue.GPUs(gpu, gpus), Order: queue.PriorityFIFO}
}

// gpuJob is tasks tasks of gpus GPUs each.
func gpuJob(name string, tasks, gpus, prio int) *job.Job {
	return &job.Job{Name: name, Priority: prio, Groups: []job.Group{{Name: "w", Count: tasks, Task: job.Demand{GPUs: gpus, CPUMilli: 1000, MemoryMiB: 1024}}}}
}

// run places j as running in queue q, ending at end (zero: unknown).
func (w *world) run(j *job.Job, q string, end time.Time, preemptible bool) *world {
	w.t.Helper()
	if _, u := w.state.Place(j); u != nil {
		w.t.Fatalf("running %s does not fit: %v", j.Name, u)
	}
	if w.book != nil && q != "" {
		if _, err := w.book.Admit(q, need(j)); err != nil {
			w.t.Fatal(err)
		}
	}
	w.running = append(w.running, Running{Name: j.Name, Queue: q, Need: need(j), Priority: j.Priority, Preemptible: preemptible,
		Started: t0.Add(-time.Duration(len(w.running)+1) * time.Minute), End: end})
	return w
}

// runMany runs n jobs of one GPU each, named prefix0..., in queue q.
func (w *world) runMany(prefix string, n, prio int, q string, preemptible bool) *world {
	w.t.Helper()
	for i := range n {
		w.run(gpuJob(fmt.Sprintf("%s%d", prefix, i), 1, 1, prio), q, noTime, preemptible)
	}
	return w
}

// submit adds j as pending in queue q.
func (w *world) submit(j *job.Job, q string) *world {
	w.arrival++
	w.pending = append(w.pending, Unit{Job: j, Queue: q, Need: need(j), Arrival: w.arrival})
	return w
}

func need(j *job.Job) queue.Amounts {
	n := int64(0)
	for _, g := range j.Groups {
		n += int64(g.Count * g.Task.GPUs)
	}
	return queue.GPUs(gpu, n)
}

func (w *world) snapshot(cfg Config) *Snapshot {
	return &Snapshot{Now: t0, State: w.state, Book: w.book, Running: w.running, Pending: w.pending, Config: cfg}
}

// transcript writes decisions one per line, for comparing with a want.
func transcript(d Decisions) []string {
	var out []string
	for _, s := range d.Starts {
		line := "start " + s.Unit.Job.Name
		if s.Backfill {
			line += " backfill"
		}
		out = append(out, line)
	}
	for _, p := range d.Preempts {
		out = append(out, fmt.Sprintf("preempt %s for %s", p.Victim, p.For))
	}
	for _, r := range d.Reservations {
		out = append(out, fmt.Sprintf("reserve %s releasing %v", r.Unit, r.Releasing))
	}
	for _, w := range d.Waiting {
		out = append(out, fmt.Sprintf("wait %s %s", w.Unit, w.Code))
	}
	return out
}

func waitOf(d Decisions, unit string) (Wait, bool) {
	for _, w := range d.Waiting {
		if w.Unit == unit {
			return w, true
		}
	}
	return Wait{}, false
}

func started(d Decisions, unit string) bool {
	for _, s := range d.Starts {
		if s.Unit.Job.Name == unit {
			return true
		}
	}
	return false
}
