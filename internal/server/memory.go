package server

import (
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/store"
)

// The scheduler's memory of jobs (sched.Memory: preemption counts,
// reborrow back-offs, claims on room freed by preemption) lives in the
// records of the jobs it concerns. The server restores it from the store
// when it starts, reads it into every cycle's snapshot, tells it what it
// carried out, and persists what it hands back: the server keeps none
// of it on its own.

// restoreMemory hands the memory of the jobs the store holds as waiting
// or running back to the scheduler. Called once, by recover.
func (s *Server) restoreMemory() {
	saved := map[string]sched.Remembered{}
	keep := func(j *store.Job) {
		if r := rememberedOf(j); r != (sched.Remembered{}) {
			saved[j.Name()] = r
		}
	}
	for id := range s.waiting {
		j := s.waiting[id]
		keep(&j)
	}
	for _, r := range s.runs {
		keep(&r.job)
	}
	s.mem.Restore(saved)
}

// rememberedOf is the scheduler's memory of a job as its record keeps it.
func rememberedOf(j *store.Job) sched.Remembered {
	return sched.Remembered{Preemptions: j.Preemptions, NoBorrowUntil: j.NoBorrowUntil, Claimed: j.Claimed}
}

// persistMemory writes what the memory changed into the records of the
// jobs it concerns, in the server's copies and in the store, in one
// transaction. A job that ended keeps its final record. When the write
// fails the changes are handed back, to be written with the next ones.
func (s *Server) persistMemory() {
	changes := s.mem.Changes()
	if len(changes) == 0 {
		return
	}
	err := s.st.Update(func(tx *store.Tx) error {
		for _, c := range changes {
			id, err := store.ParseID(c.Unit)
			if err != nil {
				continue // units are named by job ID
			}
			if j, ok := s.waiting[id]; ok {
				setRemembered(&j, c.Remembered)
				s.waiting[id] = j
				if err := tx.PutJob(&j); err != nil {
					return err
				}
			} else if r := s.runs[id]; r != nil {
				setRemembered(&r.job, c.Remembered)
				if err := tx.PutJob(&r.job); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		s.mem.Unsaved(changes)
		s.log.Error("persist the scheduler's memory", "jobs", len(changes), "err", err)
	}
}

func setRemembered(j *store.Job, r sched.Remembered) {
	j.Preemptions, j.NoBorrowUntil, j.Claimed = r.Preemptions, r.NoBorrowUntil, r.Claimed
}
