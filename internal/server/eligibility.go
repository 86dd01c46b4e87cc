package server

import (
	"path/filepath"

	"github.com/corral-sched/corral/internal/eligible"
	"github.com/corral-sched/corral/internal/store"
)

// judge decides which waiting jobs the cycle may see (internal/eligible)
// and keeps the verdicts of the others in s.blocked, for the queue and
// explain. A job whose dependencies can never be met and that asked to
// be killed then (--kill-on-invalid-dep) is cancelled. The caller holds
// s.mu.
func (s *Server) judge() {
	ids := sortedIDs(s.waiting)
	pending := make([]eligible.Job, len(ids))
	for i, id := range ids {
		pending[i] = ruleJob(s.waiting[id])
	}
	verdicts := eligible.Evaluate(s.world(ids), pending)
	s.blocked = map[uint64]eligible.Verdict{}
	var kill []uint64
	for i, v := range verdicts {
		if v.Eligible() {
			continue
		}
		id := ids[i]
		s.blocked[id] = v
		delete(s.waits, id) // what an earlier cycle said of it no longer holds
		if v.Never() && s.waiting[id].Spec.KillOnInvalidDep {
			kill = append(kill, id)
		}
	}
	if len(kill) > 0 {
		if _, err := s.cancelWaitingWhy(kill, "cancelled: "+eligible.NeverSatisfied); err != nil {
			s.log.Error("cancel jobs whose dependencies are never met", "err", err)
		}
		s.poke() // their dependents may be decided now
	}
}

// ruleJob is a waiting job as the rules see it.
func ruleJob(j store.Job) eligible.Job {
	r := eligible.Job{ID: j.ID, Tenant: j.Tenant, Name: jobName(&j), Held: j.Held, Begin: j.Spec.Begin,
		Deps: j.Spec.Dependency, Started: j.Attempts > 0, Array: j.ArrayJob}
	if j.Array != nil {
		r.Limit = j.Array.Limit
	}
	return r
}

// jobName is a job's name as squeue shows it: its own, else its
// command's (a batch script's file name), as sbatch names a job.
func jobName(j *store.Job) string {
	if j.Spec.Name != "" {
		return j.Spec.Name
	}
	if len(j.Spec.Command) > 0 {
		return filepath.Base(j.Spec.Command[0])
	}
	return ""
}

// world is what the rules read: the time, the state of every job the
// waiting ones depend on, and the waiting and running jobs.
func (s *Server) world(waiting []uint64) eligible.World {
	w := eligible.World{Now: s.now(), Deps: map[uint64]eligible.Dep{}, Name: store.FormatID}
	var unknown []uint64
	for _, id := range waiting {
		j := s.waiting[id]
		w.Active = append(w.Active, eligible.Active{ID: id, Tenant: j.Tenant, Name: jobName(&j), Array: j.ArrayJob})
		for _, dep := range j.Spec.Dependency.IDs() {
			if _, seen := w.Deps[dep]; seen {
				continue
			}
			if d, ok := s.liveDep(dep); ok {
				w.Deps[dep] = d
			} else {
				w.Deps[dep] = eligible.Dep{Status: eligible.Unknown}
				unknown = append(unknown, dep)
			}
		}
	}
	for _, id := range sortedIDs(s.runs) {
		j := &s.runs[id].job
		w.Active = append(w.Active, eligible.Active{ID: id, Tenant: j.Tenant, Name: jobName(j), Running: true, Array: j.ArrayJob})
	}
	s.storedDeps(w.Deps, unknown)
	return w
}

// liveDep is the state of a job the server holds in memory.
func (s *Server) liveDep(id uint64) (eligible.Dep, bool) {
	if j, ok := s.waiting[id]; ok {
		return eligible.Dep{Status: eligible.Queued, Started: j.Attempts > 0, Since: j.Started}, true
	}
	if r, ok := s.runs[id]; ok {
		return eligible.Dep{Status: eligible.Running, Started: true, Since: r.job.Started}, true
	}
	return eligible.Dep{}, false
}

// storedDeps reads from the store the jobs neither waiting nor running:
// the ended ones, in one transaction.
func (s *Server) storedDeps(deps map[uint64]eligible.Dep, ids []uint64) {
	if len(ids) == 0 {
		return
	}
	err := s.st.View(func(tx *store.Tx) error {
		for _, id := range ids {
			if j, err := tx.Job(id); err == nil {
				deps[id] = depOf(&j)
			}
		}
		return nil
	})
	if err != nil {
		s.log.Error("read dependencies", "err", err)
	}
}

// depOf is the state of a job as read from the store.
func depOf(j *store.Job) eligible.Dep {
	d := eligible.Dep{Started: j.Attempts > 0, Since: j.Started}
	if !d.Started {
		d.Since = j.Ended // cancelled before it ran
	}
	switch j.State {
	case store.Succeeded:
		d.Status = eligible.Succeeded
	case store.Failed:
		d.Status = eligible.Failed
	case store.Cancelled:
		d.Status = eligible.Cancelled
	case store.Running:
		d.Status = eligible.Running
	default:
		d.Status = eligible.Queued
	}
	return d
}

// blockedReason is what the queue shows for a job the rules keep out of
// the cycle, or "".
func (s *Server) blockedReason(id uint64) (code, text string) {
	if v, ok := s.blocked[id]; ok {
		return v.Reason, v.String()
	}
	return "", ""
}
