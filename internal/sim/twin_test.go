package sim

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/twin"
	"github.com/corral-sched/corral/internal/workload"
)

// simFace runs a twin script through the simulator's corral policy: jobs
// arrive when submitted, end when the script finishes them, and each
// settle is one moment of the simulator's clock, a minute after the last,
// at which the policy decides as it does in a replay.
type simFace struct {
	s        *Sim
	fleet    twin.Fleet
	gpus     int // in the whole fleet
	specs    []queue.Spec
	arrivals int
	stops    map[string]int // preemptions per job at the last settle
	before   map[string]bool
	moved    []string   // jobs moved off failed nodes since the last settle
	sizes    twin.Sizes // the running jobs' tasks, for Resized
}

func newSimFace() *simFace {
	return &simFace{stops: map[string]int{}, before: map[string]bool{}}
}

// Fleet builds the script's machine. Borrowers are stopped at once, as
// the twin's core and the other faces are set to.
func (f *simFace) Fleet(tf twin.Fleet) error {
	fl, _, err := twin.BuildFleet(tf)
	if err != nil {
		return err
	}
	s, err := newSim(fl, workload.Workload{Horizon: 1000 * time.Hour}, corralPolicy{}, Options{PriorityPreemption: true, ReclaimPatience: -1})
	f.s, f.fleet, f.gpus = s, tf, tf.GPUs*len(tf.NodeNames())
	return err
}

// Tenant gives the simulator the script's quotas in place of the shares
// of work it derives from a workload, as the twin's core has them.
func (f *simFace) Tenant(t twin.Tenant) error {
	f.specs = append(f.specs, twin.QueueSpec(t, f.gpus, quotaFlavor))
	var err error
	if f.s.book, err = queue.NewBook(f.specs, 0); err != nil {
		return err
	}
	f.s.ceiling, err = sched.NewCeiling(f.specs)
	return err
}

func (f *simFace) Submit(j twin.Job) error {
	f.arrivals++
	cj := twin.CoreJob(j)
	cj.Preemptible = true // as the twin's core runs every job
	// Arrivals a nanosecond apart keep the script's order among jobs
	// submitted at one moment.
	a := &workload.Arrival{At: f.s.now + time.Duration(f.arrivals), Job: cj, Duration: 1000 * time.Hour}
	f.s.arrive(a)
	return nil
}

func (f *simFace) Finish(name string) error {
	if f.s.running[name] == nil {
		return fmt.Errorf("%s is not running", name)
	}
	f.s.finish(name)
	return nil
}

// Down fails a node (every node for ""), as a fault of the simulator's
// fault process does; Up repairs it.
func (f *simFace) Down(node string) error {
	for _, n := range f.nodes(node) {
		struck := map[string]bool{}
		for _, part := range f.s.state.Affected(n) {
			struck[f.s.ownerOf(part)] = true
		}
		f.s.fault(workload.Fault{At: f.s.now, Kind: workload.NodeFailure, Node: n})
		for name := range struck {
			if f.s.running[name] != nil && !slices.Contains(f.moved, name) {
				f.moved = append(f.moved, name) // still running: moved, not stopped
			}
		}
	}
	return nil
}

// Moved returns the jobs the simulator moved off failed nodes since the
// last call.
func (f *simFace) Moved() []string {
	m := f.moved
	f.moved = nil
	return m
}

func (f *simFace) Up(node string) error {
	for _, n := range f.nodes(node) {
		f.s.fault(workload.Fault{At: f.s.now, Kind: workload.NodeRepair, Node: n})
	}
	return nil
}

// Restart does nothing: a replay keeps nothing past its process.
func (f *simFace) Restart() error { return nil }

func (f *simFace) nodes(node string) []string {
	if node == "" {
		return f.fleet.NodeNames()
	}
	return []string{node}
}

func (f *simFace) Settle() (started, preempted, waiting []string, err error) {
	f.s.now += time.Minute
	if err := f.s.book.Advance(f.s.now); err != nil {
		return nil, nil, nil, err
	}
	corralPolicy{}.Cycle(f.s)
	for _, rec := range f.s.records {
		for range rec.Preemptions - f.stops[rec.Name] {
			preempted = append(preempted, rec.Name)
		}
		f.stops[rec.Name] = rec.Preemptions
	}
	for name := range f.s.running {
		if !f.before[name] || f.restarted(name) {
			started = append(started, name)
		}
	}
	f.before = map[string]bool{}
	for name := range f.s.running {
		f.before[name] = true
	}
	for _, p := range f.s.pending {
		waiting = append(waiting, p.a.Job.Name)
	}
	slices.Sort(started)
	for _, name := range started {
		f.sizes.Started(name)
	}
	return started, preempted, waiting, nil
}

// Resized returns the running jobs with more tasks than at the last
// call, and with fewer, among those that ran then and did not start
// again since.
func (f *simFace) Resized() (grew, shrank []string) {
	now := map[string]int{}
	for name, r := range f.s.running {
		for _, p := range f.s.placements(r.parts) {
			now[name] += len(p.Tasks)
		}
	}
	return f.sizes.Changes(now)
}

// restarted reports whether a running job (stopped by a preemption or
// with its node) started again at this moment.
func (f *simFace) restarted(name string) bool { return f.s.running[name].start == f.s.now }

var (
	_ twin.Face    = (*simFace)(nil)
	_ twin.Mover   = (*simFace)(nil)
	_ twin.Resizer = (*simFace)(nil)
)

// TestTwinSim holds the simulator's corral policy to the transcripts the
// core writes (internal/twin/testdata), as the server's and the
// Kubernetes face's twin tests hold them.
func TestTwinSim(t *testing.T) {
	for _, path := range twin.Scripts(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s := twin.Load(t, path)
			got, err := twin.Run(newSimFace(), s)
			if err != nil {
				t.Fatal(err)
			}
			twin.Compare(t, got, s.Want)
		})
	}
}
