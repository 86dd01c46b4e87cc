package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/store"
)

// recover loads the waiting jobs and re-adopts the tasks of the jobs the
// store records as running. A job whose tasks are gone ends as lost (and
// is requeued when its spec says so) once Run starts.
func (s *Server) recover() error {
	s.loadTenants() // their grace caps, for the runs adopted
	var running []store.Job
	err := s.st.View(func(tx *store.Tx) error {
		return tx.Jobs(func(j *store.Job) bool {
			switch {
			case j.State.Waiting():
				s.waiting[j.ID] = *j
			case j.State == store.Running:
				running = append(running, *j)
			}
			return true
		})
	})
	if err != nil {
		return err
	}
	for _, j := range running {
		s.adopt(j)
	}
	s.restoreMemory()
	s.restoreLearned()
	return s.rebuild()
}

// adopt re-attaches to the tasks of a running job.
func (s *Server) adopt(j store.Job) {
	r := &run{job: j, grace: s.graceOf(&j)}
	s.runs[j.ID] = r
	var lostErr error
	never := 0 // ranks no supervisor ever started
	for i := range j.Tasks {
		t, err := executor.Adopt(s.taskSpec(&j, i), j.Tasks[i].PID)
		if errors.Is(err, executor.ErrNeverStarted) && j.Tasks[i].PID == 0 {
			never++
			continue
		}
		if err != nil {
			if !errors.Is(err, executor.ErrLost) {
				err = fmt.Errorf("%w: rank %d: %v", errLost, i, err)
			} else {
				err = fmt.Errorf("%w: rank %d", errLost, i)
			}
			lostErr = err
			break
		}
		r.tasks = append(r.tasks, t)
	}
	if never == len(j.Tasks) && lostErr == nil {
		delete(s.runs, j.ID)
		s.requeueUnlaunched(j)
		return
	}
	if lostErr == nil && never > 0 {
		lostErr = fmt.Errorf("%w: %d of %d ranks never started", errLost, never, len(j.Tasks))
	}
	if lostErr != nil {
		s.log.Warn("job lost across restart", "job", j.Name(), "err", lostErr)
		s.abandon(r, lostErr)
		return
	}
	s.log.Info("re-adopted job", "job", j.Name(), "pids", pids(j.Tasks))
	if j.Stopping != "" { // the previous server decided to stop it
		r.stop()
	}
	go s.watch(r, nil)
}

// requeueUnlaunched puts back in the queue a job whose start was
// recorded but none of whose tasks was launched (the server stopped in
// between): it never ran, so the attempt is undone and nothing charged.
func (s *Server) requeueUnlaunched(j store.Job) {
	cancelled := j.Stopping == store.StopCancel
	j.State, j.Attempts = store.Pending, max(j.Attempts-1, 0)
	j.Started, j.Tasks, j.Port, j.Stopping = time.Time{}, nil, 0, ""
	j.Reason = "requeued: the server stopped after recording its start and before launching it"
	if cancelled {
		j.State, j.Ended, j.Reason = store.Cancelled, s.now().UTC(), "cancelled"
	}
	if err := s.st.Update(func(tx *store.Tx) error { return tx.PutJob(&j) }); err != nil {
		s.log.Error("persist requeue", "job", j.Name(), "err", err)
	}
	s.log.Warn("job requeued: its start was recorded but it was never launched", "job", j.Name())
	if j.State.Waiting() {
		s.waiting[j.ID] = j
	}
}

func pids(tasks []store.Task) []int {
	out := make([]int, len(tasks))
	for i, t := range tasks {
		out[i] = t.PID
	}
	return out
}

// pair records that the core's GPUs are the physical ones, unless that
// contradicts an earlier pairing (two jobs sharing one GPU differently).
func pair(pairs map[int]int, core, phys []int) {
	for k := range min(len(core), len(phys)) {
		if _, ok := pairs[core[k]]; ok {
			continue
		}
		taken := false
		for _, p := range pairs {
			taken = taken || p == phys[k]
		}
		if !taken {
			pairs[core[k]] = phys[k]
		}
	}
}

// completeMapping extends pairs to a one-to-one mapping of every core GPU
// index to a physical GPU.
func completeMapping(pairs map[int]int, gpus []GPU) []int {
	used := map[int]bool{}
	for _, p := range pairs {
		used[p] = true
	}
	var free []int
	for _, g := range gpus {
		if !used[g.Index] {
			free = append(free, g.Index)
		}
	}
	out := make([]int, len(gpus))
	for i := range out {
		if p, ok := pairs[i]; ok {
			out[i] = p
			continue
		}
		out[i], free = free[0], free[1:]
	}
	return out
}
