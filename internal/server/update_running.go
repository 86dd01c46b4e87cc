package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/store"
)

// runningMayTake reports whether ch changes only what a running job
// may change: its time limit and its name.
func (ch change) runningMayTake() bool {
	return (ch.time != nil || ch.name != nil) && ch.priority == nil && ch.begin == nil &&
		ch.dependency == nil && ch.arrayLimit == nil
}

// updateRunning sets a new time limit and name on the running ones of
// jobs, as scontrol update does: a tenant may lower a running job's
// time limit, only an admin may raise or lift it. A limit already
// passed stops the job at once, as a time-out. The store is written
// first, then every task's supervisor is told.
func (s *Server) updateRunning(jobs []store.Job, ch change) ([]store.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var runs []*run
	for _, j := range jobs {
		if r := s.runs[j.ID]; r != nil && r.job.Stopping == "" {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("update %s: %w (it is %s)", jobs[0].ArrayName(), errNotWaiting, jobs[0].State)
	}
	if ch.time != nil {
		for _, r := range runs {
			if err := mayRetime(r, *ch.time, ch.who); err != nil {
				return nil, err
			}
		}
	}
	var out []store.Job
	err := s.st.Update(func(tx *store.Tx) error {
		for _, r := range runs {
			j := r.job
			if ch.time != nil {
				j.Spec.TimeLimit = *ch.time
			}
			if ch.name != nil {
				j.Spec.Name = *ch.name
			}
			if err := tx.PutJob(&j); err != nil {
				return err
			}
			out = append(out, j)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	for i, r := range runs {
		r.job = out[i]
		if ch.time != nil {
			s.retime(r)
		}
	}
	return out, nil
}

// mayRetime checks a new time limit for a running job: its supervisors
// must take it, and only an admin may raise or lift it.
func mayRetime(r *run, limit time.Duration, who store.Tenant) error {
	for _, t := range r.tasks {
		if !t.TakesTimeLimit() {
			return &httpError{http.StatusConflict, fmt.Errorf("update %s: its tasks were started by an older corral server, whose supervisors cannot change a running time limit", r.job.Name())}
		}
	}
	old := r.job.Spec.TimeLimit
	raised := limit == 0 && old != 0 || old != 0 && limit > old
	if raised && !who.Admin {
		return &httpError{http.StatusForbidden, fmt.Errorf("update %s: tenant %s may only lower a running job's time limit (now %s); an admin may raise it, as with scontrol",
			r.job.Name(), who.Name, old)}
	}
	return nil
}

// retime hands a running job's new time limit to its tasks'
// supervisors. A task that has just ended is left as it is.
func (s *Server) retime(r *run) {
	for _, t := range r.tasks {
		if err := t.SetTimeLimit(r.job.Spec.TimeLimit); err != nil && !errors.Is(err, executor.ErrNoLimitChange) {
			s.log.Warn("change a running task's time limit", "job", r.job.Name(), "err", err)
		}
	}
}
