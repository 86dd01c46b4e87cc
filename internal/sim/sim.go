package sim

import (
	"container/heap"
	"fmt"
	"sort"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// Sim is one replay of a workload under one policy.
type Sim struct {
	now     time.Duration
	fleet   *fleet.Fleet
	state   *gang.State
	arr     []workload.Arrival
	pending []*pendingJob // in arrival order
	running map[string]*runningJob
	events  eventQueue
	seq     int
	acct    accounting
	records []JobRecord
	byName  map[string]int // job name -> index into records
}

// pendingJob is a job waiting to start, with the placements it already
// holds when its policy places tasks one at a time.
type pendingJob struct {
	a      *workload.Arrival
	held   []string   // names of task placements held (kube-default)
	pods   []*job.Job // the job split into pods (kube-default)
	shaped *job.Job   // the job as its policy asks for it (slurm-like)
}

// runningJob is a job that started.
type runningJob struct {
	a     *workload.Arrival
	parts []string // placement names to release when it ends
	gpus  float64
	start time.Duration
}

// Run replays w on a copy of f under p and returns what happened.
func Run(f *fleet.Fleet, w workload.Workload, p Policy) (*Result, error) {
	fc := copyFleet(f)
	state, err := gang.NewWithOptions(fc, p.StateOptions())
	if err != nil {
		return nil, fmt.Errorf("simulate %s: %w", p.Name(), err)
	}
	s := &Sim{fleet: fc, state: state, arr: w.Arrivals, running: map[string]*runningJob{}, byName: map[string]int{}}
	s.acct.capacity, s.acct.horizon = float64(fc.GPUs()), w.Horizon
	for i := range w.Arrivals {
		s.schedule(event{at: w.Arrivals[i].At, arrival: i})
	}
	for s.events.Len() > 0 {
		s.step(p)
	}
	return s.result(p.Name(), w.Horizon), nil
}

// step handles every event at the next moment, then lets the policy act.
func (s *Sim) step(p Policy) {
	at := s.events[0].at
	s.acct.advance(at)
	s.now = at
	for s.events.Len() > 0 && s.events[0].at == at {
		e := heap.Pop(&s.events).(event)
		if e.arrival >= 0 {
			s.arrive(&s.arr[e.arrival])
		} else {
			s.finish(e.job)
		}
	}
	p.Cycle(s)
}

func (s *Sim) arrive(a *workload.Arrival) {
	s.byName[a.Job.Name] = len(s.records)
	s.records = append(s.records, JobRecord{Name: a.Job.Name, Tenant: a.Job.Tenant, Class: a.Class,
		Arrive: a.At, GPUs: demandGPUs(a), Tasks: a.Job.Tasks()})
	s.pending = append(s.pending, &pendingJob{a: a})
}

// start marks a pending job running on the given placements.
func (s *Sim) start(p *pendingJob, parts []string) {
	gpus := demandGPUs(p.a) // what the job uses, whatever it holds
	r := &runningJob{a: p.a, parts: parts, gpus: gpus, start: s.now}
	s.running[p.a.Job.Name] = r
	s.acct.used += gpus
	s.schedule(event{at: s.now + p.a.Duration, arrival: -1, job: p.a.Job.Name})
	rec := &s.records[s.byName[p.a.Job.Name]]
	rec.Started, rec.Start = true, s.now
	s.removePending(p)
}

func (s *Sim) finish(name string) {
	r := s.running[name]
	for _, part := range r.parts {
		s.release(part)
	}
	s.acct.used -= r.gpus
	delete(s.running, name)
	rec := &s.records[s.byName[name]]
	rec.Finished, rec.End = true, s.now
}

// tryPlace places a job (or one task of it) whole and counts its GPUs as
// allocated.
func (s *Sim) tryPlace(j *job.Job) (*gang.Placement, bool) {
	p, ok := s.state.TryPlace(j)
	if ok {
		s.acct.allocated += placedGPUs(p)
	}
	return p, ok
}

// release frees a placement and its allocation.
func (s *Sim) release(name string) {
	s.acct.allocated -= placedGPUs(s.state.Job(name))
	if err := s.state.Release(name); err != nil {
		panic(fmt.Sprintf("sim: %v", err))
	}
}

func (s *Sim) removePending(p *pendingJob) {
	for i, q := range s.pending {
		if q == p {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return
		}
	}
}

// runningByEstimatedEnd lists running jobs by when they are expected to
// end (start + estimate; now for jobs past their estimate; never for jobs
// without one), then by name.
func (s *Sim) runningByEstimatedEnd() ([]string, []time.Duration) {
	names := make([]string, 0, len(s.running))
	for name := range s.running {
		names = append(names, name)
	}
	end := func(name string) time.Duration {
		r := s.running[name]
		if r.a.Job.Runtime <= 0 {
			return forever
		}
		return max(r.start+r.a.Job.Runtime, s.now)
	}
	sort.Slice(names, func(i, j int) bool {
		ei, ej := end(names[i]), end(names[j])
		if ei != ej {
			return ei < ej
		}
		return names[i] < names[j]
	})
	ends := make([]time.Duration, len(names))
	for i, n := range names {
		ends[i] = end(n)
	}
	return names, ends
}

const forever = time.Duration(1<<63 - 1)

func copyFleet(f *fleet.Fleet) *fleet.Fleet {
	c := *f
	c.Nodes = append([]fleet.Node(nil), f.Nodes...)
	return &c
}
