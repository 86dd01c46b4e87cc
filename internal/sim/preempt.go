package sim

import (
	"github.com/corral-sched/corral/internal/sched"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

// preemptionBudget reports whether n more preemptions stay within the
// hourly bound; when they do not, p is woken when the oldest one leaves the
// window.
func (s *Sim) preemptionBudget(p *pendingJob, n int) bool {
	limit := s.opt.MaxPreemptionsPerHour
	if limit <= 0 {
		return true
	}
	used := s.preempted.count(s.now)
	if used+n <= limit {
		return true
	}
	s.note(p.a.Job.Name, "waits: reclaiming its quota needs %d preemptions; %d of at most %d per hour are used", n, used, limit)
	if n <= limit && used > 0 {
		s.schedule(event{at: s.preempted[0] + time.Hour, arrival: -1, wake: p.a.Job.Name})
	}
	return false
}

// stopFor stops running jobs so that p (shaped j) starts: each is counted
// (record runs first, while the job still runs) and noted in window, then
// stopped with the grace period to checkpoint in. p is placed now and starts
// when the grace runs out, on the capacity held for it.
func (s *Sim) stopFor(p *pendingJob, j *job.Job, victims []string, cause string, window *hourWindow, record func(name string)) bool {
	for _, name := range victims {
		record(name)
		window.add(s.now)
		s.interrupt(name, s.opt.PreemptGrace > 0, cause+" "+p.a.Job.Name)
	}
	p.startDelay = s.opt.PreemptGrace
	return s.placeAdmitted(p, j, true)
}

// hourWindow holds the times of recent events, oldest first, for bounds
// per hour.
type hourWindow []time.Duration

func (w *hourWindow) add(at time.Duration) { *w = append(*w, at) }

// count forgets the events an hour old or more at now and counts the rest.
func (w *hourWindow) count(now time.Duration) int {
	i := 0
	for i < len(*w) && (*w)[i] <= now-time.Hour {
		i++
	}
	*w = (*w)[i:]
	return len(*w)
}

// reclaimPatience is how long a job within its tenant's quota waits for
// room to appear by itself before it preempts borrowers: the core's
// default unless Options.ReclaimPatience says otherwise.
func (s *Sim) reclaimPatience() time.Duration { return sched.Patience(s.opt.ReclaimPatience) }

// withinNominal reports whether p's tenant stays within its own quota with
// p: what a job in re-borrowing back-off may use.
func (s *Sim) withinNominal(p *pendingJob) bool {
	t := tenantOf(p.a)
	spec, _ := s.book.Spec(t)
	return s.book.Usage(t)[quotaFlavor]+s.need(p.a)[quotaFlavor] <= spec.Nominal[quotaFlavor]
}

// restartCost is what stopping a job costs beyond its lost work: loading
// the model and the checkpoint again, per GPU. It keeps reclaim from
// stopping a large gang that has just checkpointed to make room for one
// small task.
const restartCost = 5 * time.Minute

// stopCost is the GPU-hours a running job would lose if stopped now: its
// work since its last periodic checkpoint, and the restart.
func (s *Sim) stopCost(r *runningJob) float64 {
	elapsed := s.now - r.start
	if every := r.a.Job.CheckpointEvery; every > 0 {
		elapsed -= elapsed / every * every
	}
	return r.gpus * (elapsed + restartCost).Hours()
}
