package server

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/corral-sched/corral/internal/eligible"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// selection is what a bulk cancel selects: the jobs named in ids, or
// every waiting and running job, narrowed by the filters.
type selection struct {
	refs   []eligible.Ref // jobs named: an array's ID names all its tasks
	tenant string         // "" for every tenant (admins only)
	states []store.State
	name   string
	admin  bool
	who    string
}

// cancellable are the states a bulk cancel selects and may filter on.
var cancellable = []store.State{store.Pending, store.Preempted, store.Running}

func (s *Server) handleCancelMany(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	var req api.CancelRequest
	if code, err := decode(r, &req); err != nil {
		writeError(w, code, err.Error())
		return
	}
	sel, err := selectionOf(req, who)
	if err != nil {
		writeError(w, errorCode(err, http.StatusBadRequest), err.Error())
		return
	}
	res, err := s.CancelMany(sel)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// selectionOf checks a bulk cancel: a tenant other than an admin may name
// only itself, and a request that names nothing is refused rather than
// taken for "everything".
func selectionOf(req api.CancelRequest, who store.Tenant) (selection, error) {
	sel := selection{tenant: req.Tenant, name: req.Name, admin: who.Admin, who: who.Name}
	if len(req.IDs) == 0 && req.Tenant == "" && len(req.States) == 0 && req.Name == "" {
		return sel, errors.New("nothing selected: give ids, or a filter (tenant, states, name)")
	}
	if !who.Admin && req.Tenant != "" && req.Tenant != who.Name {
		return sel, &httpError{http.StatusForbidden, fmt.Errorf("tenant %q: only admins cancel other tenants' jobs", req.Tenant)}
	}
	if !who.Admin {
		sel.tenant = who.Name
	}
	if req.Name != "" && !api.ValidName(req.Name) {
		return sel, fmt.Errorf("name %q: use letters, digits, '.', '_' and '-'", req.Name)
	}
	for _, st := range req.States {
		if !slices.Contains(cancellable, store.State(st)) {
			return sel, fmt.Errorf("states: %q: want %v", st, cancellable)
		}
		sel.states = append(sel.states, store.State(st))
	}
	if len(sel.states) == 0 {
		sel.states = cancellable
	}
	for _, id := range req.IDs {
		r, err := eligible.ParseRef(id)
		if err != nil {
			return sel, fmt.Errorf("ids: %w", err)
		}
		sel.refs = append(sel.refs, r)
	}
	return sel, nil
}

// match reports whether j passes the selection's filters.
func (sel selection) match(j *store.Job) bool {
	return (sel.tenant == "" || j.Tenant == sel.tenant) && (sel.name == "" || j.Spec.Name == sel.name) &&
		slices.Contains(sel.states, j.State)
}

// CancelMany cancels every job sel selects under one hold of the
// scheduler's lock: the waiting ones in one transaction, then the running
// ones are stopped. No scheduling cycle runs in between, so a waiting job
// is never started by the GPUs that cancelling the running ones frees.
func (s *Server) CancelMany(sel selection) (api.CancelResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := api.CancelResult{Jobs: []api.Job{}}
	jobs, err := s.selected(sel, &res)
	if err != nil {
		return res, err
	}
	var waiting []uint64
	var runs []*run
	for _, j := range jobs {
		if r := s.runs[j.ID]; r != nil {
			runs = append(runs, r)
		} else if j.State.Waiting() {
			waiting = append(waiting, j.ID)
		}
	}
	cancelled, err := s.cancelWaiting(waiting)
	if err != nil {
		return res, err
	}
	s.stopForCancel(runs)
	for _, r := range runs {
		cancelled = append(cancelled, r.job)
	}
	slices.SortFunc(cancelled, func(a, b store.Job) int { return cmp.Compare(a.ID, b.ID) })
	for i := range cancelled {
		res.Jobs = append(res.Jobs, view(&cancelled[i]))
	}
	return res, nil
}

// selected reads the jobs sel selects in one transaction; a named job
// that is missing, another tenant's or already ended is an error in res
// (an array's tasks that ended are passed over).
func (s *Server) selected(sel selection, res *api.CancelResult) ([]store.Job, error) {
	var out []store.Job
	who := store.Tenant{Name: sel.who, Admin: sel.admin}
	seen := map[uint64]bool{}
	err := s.st.View(func(tx *store.Tx) error {
		if len(sel.refs) == 0 {
			return tx.Jobs(func(j *store.Job) bool {
				if sel.match(j) {
					out = append(out, *j)
				}
				return true
			})
		}
		for _, r := range sel.refs {
			jobs, err := s.resolve(tx, r, who)
			if err != nil {
				res.Errors = append(res.Errors, err.Error())
				continue
			}
			for _, j := range jobs {
				switch {
				case seen[j.ID]:
				case j.State.Final() && len(jobs) == 1:
					res.Errors = append(res.Errors, fmt.Sprintf("%s: %v (%s)", j.Name(), errFinal, j.State))
				case sel.match(&j):
					out = append(out, j)
				}
				seen[j.ID] = true
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b store.Job) int { return cmp.Compare(a.ID, b.ID) })
	return out, err
}

// cancelWaiting marks waiting jobs cancelled in one transaction and takes
// them out of the queue. The caller holds s.mu.
func (s *Server) cancelWaiting(ids []uint64) ([]store.Job, error) {
	return s.cancelWaitingWhy(ids, "cancelled")
}

// cancelWaitingWhy is cancelWaiting with why as the jobs' reason.
func (s *Server) cancelWaitingWhy(ids []uint64, why string) ([]store.Job, error) {
	var out []store.Job
	now := s.now().UTC()
	err := s.st.Update(func(tx *store.Tx) error {
		for _, id := range ids {
			j, err := tx.Job(id)
			if err != nil {
				return err
			}
			if !j.State.Waiting() {
				continue
			}
			j.State, j.Reason, j.Ended = store.Cancelled, why, now
			if err := tx.PutJob(&j); err != nil {
				return err
			}
			out = append(out, j)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cancel %d waiting jobs: %w", len(ids), err)
	}
	for _, j := range out {
		s.forgetWaiting(j.ID)
	}
	s.metrics.ended.WithLabelValues(string(store.Cancelled)).Add(float64(len(out)))
	return out, nil
}

// stopForCancel stops the runs that are not already stopping for a
// cancel. The caller holds s.mu.
func (s *Server) stopForCancel(runs []*run) {
	var stop []*run
	for _, r := range runs {
		if r.job.Stopping != store.StopCancel {
			stop = append(stop, r)
		}
	}
	if len(stop) > 0 {
		s.stopRuns(stop, store.StopCancel)
	}
}
