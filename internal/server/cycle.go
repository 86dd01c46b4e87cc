package server

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/store"
)

// Reasons a waiting job did not start, as the queue shows them.
const (
	ReasonGPUs    = "waiting for GPUs"
	ReasonQuota   = "tenant GPU quota reached"
	ReasonPreempt = "preempting lower-priority work to make room"
)

// cycle is one scheduling pass over the waiting jobs:
//  1. order them by priority, then by submission, and take the first
//     Config.Depth;
//  2. skip a job whose tenant would go over its GPU quota;
//  3. place it with the core; when it fits, persist the decision and start it;
//  4. when it does not fit, preempt lower-priority running work if that
//     makes room (the job starts in a later cycle, once the work has stopped).
func (s *Server) cycle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitSubmitted()
	if len(s.waiting) == 0 {
		return
	}
	s.loadTenants()
	usage := s.usage()
	unfit := map[shape]bool{} // demand shapes that did not fit this cycle
	for n, id := range s.ordered() {
		if n == s.cfg.Depth {
			break // the rest waits for a later cycle, as behind a long queue
		}
		j := s.waiting[id]
		begin := time.Now()
		shape := shapeOf(j.Spec)
		if q := s.tenants[j.Tenant].QuotaMilli; q > 0 && usage[j.Tenant]+milli(j.Spec, s.model) > q {
			s.reasons[j.ID] = fmt.Sprintf("%s (%s of %s GPUs in use)", ReasonQuota, gpuString(usage[j.Tenant]), gpuString(q))
			continue
		}
		if unfit[shape] && !s.mayPreempt(&j) {
			s.reasons[j.ID] = ReasonGPUs
			continue
		}
		p, ok := s.state.TryPlace(gangJob(&j))
		if !ok {
			unfit[shape] = true
			s.reasons[j.ID] = ReasonGPUs
			if s.preemptFor(&j) {
				s.reasons[j.ID] = ReasonPreempt
			}
			continue
		}
		if err := s.start(j, p); err != nil {
			s.log.Error("start job", "job", j.Name(), "err", err)
			continue
		}
		usage[j.Tenant] += milli(j.Spec, s.model)
		s.metrics.decision.Observe(time.Since(begin).Seconds())
	}
}

// ordered lists the IDs of the waiting jobs: higher priority first,
// then older.
func (s *Server) ordered() []uint64 {
	type key struct {
		prio int
		id   uint64
	}
	keys := make([]key, 0, len(s.waiting))
	for id, j := range s.waiting {
		keys = append(keys, key{j.Spec.Priority, id})
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.prio != b.prio {
			return b.prio - a.prio
		}
		return cmp.Compare(a.id, b.id)
	})
	ids := make([]uint64, len(keys))
	for i, k := range keys {
		ids[i] = k.id
	}
	return ids
}

// shape is what placement depends on: jobs of one shape fit or not alike.
type shape struct {
	gpus, milli, tasks, prio int
	mig                      string
	cpu, mem                 int64
}

func shapeOf(s store.Spec) shape {
	return shape{gpus: s.GPUs, milli: s.GPUMilli, tasks: s.Tasks, prio: s.Priority, mig: s.MIG, cpu: s.CPUMilli, mem: s.MemoryMiB}
}

func (s *Server) loadTenants() {
	ts, err := s.st.Tenants()
	if err != nil {
		s.log.Error("load tenants", "err", err)
		return
	}
	for _, t := range ts {
		s.tenants[t.Name] = t
	}
}

// usage is the GPU use of each tenant's running jobs, in thousandths.
func (s *Server) usage() map[string]int {
	u := map[string]int{}
	for _, r := range s.runs {
		u[r.job.Tenant] += milli(r.job.Spec, s.model)
	}
	return u
}

func gpuString(m int) string {
	if m%1000 == 0 {
		return fmt.Sprint(m / 1000)
	}
	return strings.TrimRight(fmt.Sprintf("%.3f", float64(m)/1000), "0")
}

// mayPreempt reports whether some running job has a lower priority than j.
func (s *Server) mayPreempt(j *store.Job) bool {
	for _, r := range s.runs {
		if r.job.Spec.Priority < j.Spec.Priority {
			return true
		}
	}
	return false
}

// preemptFor stops the fewest lower-priority running jobs (lowest priority
// first, then the most recently started) whose GPUs would let j start,
// and reports whether it stopped any or some are already stopping for j.
func (s *Server) preemptFor(j *store.Job) bool {
	by := "preempted by " + j.Name()
	var victims []*run
	for _, r := range s.runs {
		if r.job.Stopping == by {
			return true // already making room
		}
		if r.job.Spec.Priority < j.Spec.Priority && r.job.Stopping == "" {
			victims = append(victims, r)
		}
	}
	if len(victims) == 0 {
		return false
	}
	sort.Slice(victims, func(a, b int) bool {
		va, vb := victims[a].job, victims[b].job
		if va.Spec.Priority != vb.Spec.Priority {
			return va.Spec.Priority < vb.Spec.Priority
		}
		if !va.Started.Equal(vb.Started) {
			return va.Started.After(vb.Started)
		}
		return va.ID > vb.ID
	})
	gj := gangJob(j)
	var release []string
	for i, v := range victims {
		release = append(release, v.job.Name())
		if s.state.WhatIf(release, gj) {
			s.stopRuns(victims[:i+1], by)
			s.metrics.preemptions.Add(float64(i + 1))
			return true
		}
	}
	return false
}

// stopRuns persists why the runs stop, then stops them with their grace
// periods. Their ends arrive through finish.
func (s *Server) stopRuns(runs []*run, why string) {
	err := s.st.Update(func(tx *store.Tx) error {
		for _, r := range runs {
			r.job.Stopping = why
			if err := tx.PutJob(&r.job); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.log.Error("persist stop", "why", why, "err", err)
	}
	for _, r := range runs {
		s.log.Info("stop job", "job", r.job.Name(), "why", why, "grace", r.job.Spec.Grace)
		r.stop()
	}
}

// estimate is when j could start if running jobs end at their time
// limits: the expected end of the first running job whose release makes
// room, or zero when that is unknown.
func (s *Server) estimate(j *store.Job) time.Time {
	type end struct {
		name string
		at   time.Time
	}
	var ends []end
	for _, r := range s.runs {
		if r.job.Spec.TimeLimit > 0 {
			ends = append(ends, end{r.job.Name(), r.job.Started.Add(r.job.Spec.TimeLimit)})
		}
	}
	slices.SortFunc(ends, func(a, b end) int { return a.at.Compare(b.at) })
	gj := gangJob(j)
	var release []string
	for _, e := range ends {
		release = append(release, e.name)
		if s.state.WhatIf(release, gj) {
			return e.at
		}
	}
	return time.Time{}
}

// placementGPUs translates a core decision into physical GPUs.
func (s *Server) placementGPUs(p *gang.Placement) []store.Task {
	tasks := make([]store.Task, len(p.Tasks))
	for i, t := range p.Tasks {
		st := store.Task{Rank: i, Milli: t.Milli}
		for _, g := range t.GPUs {
			phys := s.phys[g]
			st.GPUs = append(st.GPUs, phys)
			st.Devices = append(st.Devices, fmt.Sprint(phys))
		}
		if t.MIG != nil {
			st.MIG, st.MIGStart = t.MIG.Profile, t.MIG.Start
			if uuid := s.freeMIGInstance(st.GPUs[0], t.MIG.Profile, tasks[:i]); uuid != "" {
				st.Devices = []string{uuid}
			}
		}
		tasks[i] = st
	}
	return tasks
}

// freeMIGInstance returns the UUID of an existing MIG instance of profile
// on physical GPU phys that no running task (nor one of also, being
// placed) has, in the order NVML listed them; "" if there is none.
func (s *Server) freeMIGInstance(phys int, profile string, also []store.Task) string {
	var instances []MIGInstance
	for _, g := range s.gpus {
		if g.Index == phys {
			instances = g.MIGInstances
		}
	}
	if len(instances) == 0 {
		return ""
	}
	taken := map[string]bool{}
	for _, r := range s.runs {
		for _, t := range r.job.Tasks {
			for _, d := range t.Devices {
				taken[d] = true
			}
		}
	}
	for _, t := range also {
		for _, d := range t.Devices {
			taken[d] = true
		}
	}
	for _, in := range instances {
		if in.Profile == profile && !taken[in.UUID] {
			return in.UUID
		}
	}
	return ""
}
