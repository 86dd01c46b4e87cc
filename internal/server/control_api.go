package server

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/eligible"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/slurmfmt"
	"github.com/corral-sched/corral/internal/store"
)

// The changes a tenant makes to its jobs after submitting them, as
// scontrol makes them: hold, release, requeue and update. A path's job
// may name an array by its ID (every task) or one task (j000017_3).

var errNotWaiting = errors.New("only a waiting job can be changed so (a running one takes a new time limit and name)")

func (s *Server) handleHold(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	s.control(w, r, who, func(jobs []store.Job) ([]store.Job, error) { return s.Hold(jobs, true) })
}

func (s *Server) handleRelease(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	s.control(w, r, who, func(jobs []store.Job) ([]store.Job, error) { return s.Hold(jobs, false) })
}

func (s *Server) handleRequeue(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	var req api.Requeue
	if r.ContentLength != 0 {
		if code, err := decode(r, &req); err != nil {
			writeError(w, code, err.Error())
			return
		}
	}
	s.control(w, r, who, func(jobs []store.Job) ([]store.Job, error) { return s.Requeue(jobs, req.Hold) })
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	var u api.JobUpdate
	if code, err := decode(r, &u); err != nil {
		writeError(w, code, err.Error())
		return
	}
	ch, err := s.changeOf(u, who)
	if err != nil {
		writeError(w, errorCode(err, http.StatusBadRequest), err.Error())
		return
	}
	s.control(w, r, who, func(jobs []store.Job) ([]store.Job, error) { return s.Update(jobs, ch) })
}

// control resolves the path's job and applies do to it; a job not in a
// state do takes answers 409.
func (s *Server) control(w http.ResponseWriter, r *http.Request, who store.Tenant, do func([]store.Job) ([]store.Job, error)) {
	jobs, err := s.resolveText(r.PathValue("id"), who)
	if err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	changed, err := do(jobs)
	switch {
	case errors.Is(err, errNotWaiting), errors.Is(err, errNotRunning):
		writeError(w, http.StatusConflict, err.Error())
		return
	case err != nil:
		writeError(w, errorCode(err, http.StatusInternalServerError), err.Error())
		return
	}
	s.poke()
	out := api.JobList{Jobs: []api.Job{}}
	for i := range changed {
		out.Jobs = append(out.Jobs, view(&changed[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

// Hold holds (or releases) the waiting ones of jobs; a single job that
// does not wait is an error, an array's tasks that do not are skipped.
func (s *Server) Hold(jobs []store.Job, held bool) ([]store.Job, error) {
	verb := map[bool]string{true: "hold", false: "release"}[held]
	return s.changeWaiting(jobs, verb, func(j *store.Job) error {
		j.Held = held
		return nil
	})
}

// change is a checked JobUpdate: the fields to set.
type change struct {
	name       *string
	time       *time.Duration
	priority   *int
	begin      *time.Time
	dependency *string
	arrayLimit *int
	who        store.Tenant
}

// changeOf checks an update as a submission's fields are checked.
func (s *Server) changeOf(u api.JobUpdate, who store.Tenant) (change, error) {
	ch := change{name: u.Name, priority: u.Priority, dependency: u.Dependency, arrayLimit: u.ArrayLimit, who: who}
	if u.Name != nil && !api.ValidName(*u.Name) {
		return ch, fmt.Errorf("name %q: use letters, digits, '.', '_' and '-'", *u.Name)
	}
	if u.Time != nil {
		d, err := slurmfmt.ParseTime(*u.Time)
		if err != nil {
			return ch, fmt.Errorf("time %q: %w", *u.Time, err)
		}
		ch.time = &d
	}
	if p := u.Priority; p != nil && *p > who.MaxPriority {
		return ch, &httpError{http.StatusForbidden, fmt.Errorf("priority %d: tenant %s may ask for at most %d", *p, who.Name, who.MaxPriority)}
	}
	if u.Begin != nil {
		var at time.Time
		if *u.Begin != "" {
			var err error
			if at, err = slurmfmt.ParseBegin(*u.Begin, s.now()); err != nil {
				return ch, fmt.Errorf("begin %q: %w", *u.Begin, err)
			}
		}
		at = at.UTC()
		ch.begin = &at
	}
	if l := u.ArrayLimit; l != nil && *l < 0 {
		return ch, fmt.Errorf("array_limit %d: want 0 (none) or more", *l)
	}
	return ch, nil
}

// Update applies ch to the waiting ones of jobs, and, when it changes
// only the time limit and the name, to the running ones too
// (updateRunning).
func (s *Server) Update(jobs []store.Job, ch change) ([]store.Job, error) {
	waiting, werr := s.updateWaiting(jobs, ch)
	if !ch.runningMayTake() || (werr != nil && !errors.Is(werr, errNotWaiting)) {
		return waiting, werr
	}
	running, rerr := s.updateRunning(jobs, ch)
	switch {
	case errors.Is(rerr, errNotWaiting) && werr == nil:
		return waiting, nil
	case rerr != nil:
		return nil, rerr
	}
	out := append(waiting, running...)
	slices.SortFunc(out, func(a, b store.Job) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// updateWaiting applies ch to the waiting ones of jobs.
func (s *Server) updateWaiting(jobs []store.Job, ch change) ([]store.Job, error) {
	var deps *eligible.Dependency
	if ch.dependency != nil {
		d, err := s.resolveDeps(*ch.dependency, ch.who)
		if err != nil {
			return nil, &httpError{http.StatusBadRequest, err}
		}
		deps = &d
	}
	return s.changeWaiting(jobs, "update", func(j *store.Job) error {
		if ch.name != nil {
			j.Spec.Name = *ch.name
		}
		if ch.time != nil {
			j.Spec.TimeLimit = *ch.time
		}
		if ch.priority != nil {
			j.Spec.Priority = *ch.priority
		}
		if ch.begin != nil {
			j.Spec.Begin = *ch.begin
		}
		if deps != nil {
			j.Spec.Dependency = *deps
		}
		if ch.arrayLimit != nil && j.Array != nil {
			j.Array.Limit = *ch.arrayLimit
		}
		return nil
	})
}

// changeWaiting applies fn to the waiting ones of jobs, in the store and
// in the queue, in one transaction.
func (s *Server) changeWaiting(jobs []store.Job, verb string, fn func(*store.Job) error) ([]store.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitSubmitted()
	var ids []uint64
	for _, j := range jobs {
		if _, ok := s.waiting[j.ID]; ok {
			ids = append(ids, j.ID)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s %s: %w (it is %s)", verb, jobs[0].ArrayName(), errNotWaiting, jobs[0].State)
	}
	var out []store.Job
	err := s.st.Update(func(tx *store.Tx) error {
		for _, id := range ids {
			j := s.waiting[id]
			if j.Array != nil {
				a := *j.Array
				j.Array = &a // the queue's copy is not changed before the store's
			}
			if err := fn(&j); err != nil {
				return err
			}
			if err := tx.PutJob(&j); err != nil {
				return err
			}
			out = append(out, j)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", verb, err)
	}
	for _, j := range out {
		s.waiting[j.ID] = j
		delete(s.waits, j.ID)
	}
	return out, nil
}

// Requeue puts jobs back in the queue, held when hold, as scontrol
// requeue does: a running one is stopped first (its attempt ends
// REQUEUED), an ended one waits again; a waiting one is left as it is.
func (s *Server) Requeue(jobs []store.Job, hold bool) ([]store.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var stop []*run
	var ended []uint64
	for _, j := range jobs {
		if r := s.runs[j.ID]; r != nil && r.job.Stopping == "" {
			r.job.Held = hold
			stop = append(stop, r)
		} else if j.State.Final() {
			ended = append(ended, j.ID)
		}
	}
	if len(stop) == 0 && len(ended) == 0 {
		return nil, fmt.Errorf("requeue %s: %w (it is %s)", jobs[0].ArrayName(), errNotRunning, jobs[0].State)
	}
	out, err := s.requeueEnded(ended, hold)
	if err != nil {
		return nil, err
	}
	if len(stop) > 0 {
		s.stopRuns(stop, store.StopRequeue)
	}
	for _, r := range stop {
		out = append(out, r.job)
	}
	slices.SortFunc(out, func(a, b store.Job) int { return int(a.ID - b.ID) })
	return out, nil
}

var errNotRunning = errors.New("only a running or ended job can be requeued")

// requeueEnded makes ended jobs wait again, in one transaction. The
// caller holds s.mu.
func (s *Server) requeueEnded(ids []uint64, hold bool) ([]store.Job, error) {
	var out []store.Job
	err := s.st.Update(func(tx *store.Tx) error {
		for _, id := range ids {
			j, err := tx.Job(id)
			if err != nil || !j.State.Final() {
				continue
			}
			j.State, j.Reason, j.Held = store.Pending, store.StopRequeue, hold
			j.Ended, j.ExitCode, j.Tasks, j.Stopping, j.Port = time.Time{}, nil, nil, "", 0
			if err := tx.PutJob(&j); err != nil {
				return err
			}
			out = append(out, j)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("requeue: %w", err)
	}
	for _, j := range out {
		s.waiting[j.ID] = j
	}
	return out, nil
}
