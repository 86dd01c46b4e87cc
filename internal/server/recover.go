package server

import (
	"errors"
	"fmt"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/store"
)

// recover loads the waiting jobs and re-adopts the tasks of the jobs the
// store records as running. A job whose tasks are gone ends as lost (and
// is requeued when its spec says so) once Run starts.
func (s *Server) recover() error {
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
	return s.rebuild()
}

// adopt re-attaches to the tasks of a running job.
func (s *Server) adopt(j store.Job) {
	r := &run{job: j, grace: s.graceOf(&j)}
	s.runs[j.ID] = r
	var lostErr error
	for i := range j.Tasks {
		t, err := executor.Adopt(s.taskSpec(&j, i), j.Tasks[i].PID)
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
