package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/store"
)

// finish records how a run ended, in one transaction with its accounting
// record, then gives its GPUs back to the core.
func (s *Server) finish(e ended) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[e.id]
	if r == nil {
		return
	}
	j := r.job
	j.Tasks = slices.Clone(j.Tasks) // the run's copy may be read elsewhere
	for i, res := range e.results {
		if i < len(j.Tasks) {
			code := res.ExitCode
			j.Tasks[i].ExitCode, j.Tasks[i].Signal = &code, res.Signal
		}
	}
	j.Ended = endTime(e.results, s.now().UTC())
	culprit := failingRank(e.results)
	code := jobExit(e, culprit)
	j.ExitCode = &code
	j.State, j.Reason, j.Outcome = outcome(&j, e, culprit)
	rec := s.record(&j, e.results, culprit)
	if j.State.Waiting() {
		j.Tasks, j.ExitCode = nil, nil
	}
	j.Stopping = ""
	if !r.drained {
		if err := s.state.Release(j.Name()); err != nil {
			s.log.Error("release", "job", j.Name(), "err", err)
		}
	}
	delete(s.runs, e.id)
	s.unsaved[j.ID] = &unsavedEnd{job: j, rec: rec}
	s.saveEnds()
	s.metrics.ended.WithLabelValues(endLabel(j.State)).Inc()
	s.log.Info("job ended", "job", j.Name(), "state", j.State, "reason", j.Reason, "exit", code)
}

// unsavedEnd is a run's end, with its accounting record, that the store
// has not recorded yet: it could not write (a full disk, an I/O error).
type unsavedEnd struct {
	job   store.Job
	rec   store.Record
	tries int
}

// saveEnds records the ends the store has not, each in one transaction
// with its accounting record; finish calls it, and every cycle retries
// what is left. Until its end is recorded a job shows as ended (liveView)
// but is not requeued or counted in the accounting, and a restart reads
// its end again from its tasks' exit records. The caller holds s.mu.
func (s *Server) saveEnds() {
	for _, id := range sortedIDs(s.unsaved) {
		u := s.unsaved[id]
		err := s.st.Update(func(tx *store.Tx) error {
			if err := tx.PutJob(&u.job); err != nil {
				return err
			}
			return tx.AddRecord(u.rec)
		})
		u.tries++
		if err != nil {
			if u.tries == 1 {
				s.log.Error("persist end: kept in memory and retried each cycle", "job", u.job.Name(), "state", u.job.State, "err", err)
			}
			return // the store is not writing: the rest would fail alike
		}
		if u.tries > 1 {
			s.log.Info("persist end: recorded", "job", u.job.Name(), "tries", u.tries)
		}
		delete(s.unsaved, id)
		s.records++
		if u.job.State.Waiting() {
			s.waiting[id] = u.job
		}
		if u.job.State.Final() {
			s.fitDiskCapSoon(u.job.Tenant)
		}
	}
}

// endTime is when the run ended: when its last task exited, as the
// tasks' exit records say (a run that ended while the server was down
// ended then, not at the restart), else now.
func endTime(results []executor.Result, now time.Time) time.Time {
	var end time.Time
	for _, r := range results {
		if r.Ended.After(end) {
			end = r.Ended
		}
	}
	if end.IsZero() || end.After(now) {
		return now
	}
	return end.UTC()
}

// failingRank is the rank whose end brought the run down: of the tasks
// that failed on their own (not stopped because another failed), the
// first to end; else the first that failed at all; -1 when none did.
func failingRank(results []executor.Result) int {
	culprit, stopped := -1, -1
	for i, r := range results {
		if !failed(r) {
			continue
		}
		if r.Stopped {
			if stopped < 0 {
				stopped = i
			}
			continue
		}
		if culprit < 0 || r.Ended.Before(results[culprit].Ended) {
			culprit = i
		}
	}
	if culprit < 0 {
		return stopped
	}
	return culprit
}

// failed reports whether a task failed: as Slurm, a task whose cgroup
// had a process killed at its memory limit did, whatever its exit code.
func failed(r executor.Result) bool {
	return r.ExitCode != 0 || r.Signal != "" || r.TimedOut || r.Lost || r.OOMKilled
}

// jobExit is the job's exit code: what a task that did not start or was
// lost would give a shell (never 0), else the failing rank's, else 0.
func jobExit(e ended, culprit int) int {
	var le *executor.LaunchError
	switch {
	case errors.As(e.err, &le):
		return le.ExitCode
	case e.err != nil || lost(e.results):
		return executor.ExitNotStarted
	case culprit >= 0:
		return e.results[culprit].ExitCode
	}
	return 0
}

// outcome is the state a run ends in, why, and its Slurm name.
func outcome(j *store.Job, e ended, culprit int) (store.State, string, string) {
	isLost := errors.Is(e.err, errLost) || lost(e.results)
	switch {
	case j.Stopping == store.StopCancel:
		return store.Cancelled, "cancelled", store.OutcomeCancelled
	case j.Stopping == store.StopRequeue:
		return store.Pending, store.StopRequeue, store.OutcomeRequeued
	case strings.HasPrefix(j.Stopping, "preempted"):
		return store.Preempted, j.Stopping, store.OutcomePreempted
	case isDrain(j.Stopping):
		return store.Pending, j.Stopping + "; requeued", store.OutcomeNodeFail
	case j.Stopping != "" || isLost:
		return lostOutcome(j, isLost)
	case e.err != nil:
		return store.Failed, "did not start: " + e.err.Error(), store.OutcomeFailed
	case culprit >= 0:
		return rankOutcome(j, e.results[culprit], culprit)
	}
	return store.Succeeded, "", store.OutcomeCompleted
}

// lostOutcome ends a run stopped for another reason, or whose tasks
// vanished: requeued when its spec says so.
func lostOutcome(j *store.Job, isLost bool) (store.State, string, string) {
	why, out := j.Stopping, store.OutcomeFailed
	if isLost {
		out = store.OutcomeNodeFail
	}
	if why == "" {
		why = errLost.Error()
	}
	if j.Spec.Requeue {
		return store.Pending, why + "; requeued", out
	}
	return store.Failed, why, out
}

// rankOutcome names how the failing rank ended.
func rankOutcome(j *store.Job, r executor.Result, rank int) (store.State, string, string) {
	switch {
	case r.OOMKilled:
		return store.Failed, fmt.Sprintf("rank %d ran out of memory: the kernel killed it at its limit", rank), store.OutcomeOutOfMemory
	case r.TimedOut:
		return store.Failed, fmt.Sprintf("rank %d reached the time limit %v", rank, j.Spec.TimeLimit), store.OutcomeTimeout
	case r.Signal != "":
		return store.Failed, fmt.Sprintf("rank %d killed by %s", rank, r.Signal), store.OutcomeFailed
	}
	return store.Failed, fmt.Sprintf("rank %d exited with code %d", rank, r.ExitCode), store.OutcomeFailed
}

func lost(results []executor.Result) bool {
	for _, r := range results {
		if r.Lost {
			return true
		}
	}
	return false
}

// record is the accounting of one attempt of j.
func (s *Server) record(j *store.Job, results []executor.Result, culprit int) store.Record {
	gpus := float64(s.need(j)[gpuFlavor]) / 1000
	start, end := j.Started, j.Ended
	for _, r := range results {
		if !r.Started.IsZero() && r.Started.After(start) {
			start = r.Started
		}
	}
	secs := end.Sub(start).Seconds()
	if secs < 0 {
		secs = 0
	}
	var rss int64
	var cpu float64
	for _, r := range results {
		rss, cpu = max(rss, r.MaxRSSKiB), cpu+r.CPUSeconds
	}
	return store.Record{
		MaxRSSKiB: rss, CPUSeconds: cpu,
		JobID: j.ID, Tenant: j.Tenant, Name: j.Spec.Name, Attempt: j.Attempts,
		GPUModel: j.GPUModel, MIGProfile: j.Spec.MIG, GPUs: gpus,
		Start: j.Started, End: end, GPUSeconds: gpus * secs,
		State: j.State, ExitCode: *j.ExitCode, Signal: signalOf(results, culprit), Outcome: j.Outcome,
		Submitted: j.Submitted, Tasks: j.Spec.Tasks, TaskGPUs: j.Spec.GPUs, GPUMilli: j.Spec.GPUMilli,
		CPUMilli: j.Spec.CPUMilli, MemoryMiB: j.Spec.MemoryMiB, Priority: j.Spec.Priority,
		CheckpointEvery: j.Spec.CheckpointEvery, TimeLimit: j.Spec.TimeLimit,
	}
}

// signalOf is the signal that ended the failing rank, if any.
func signalOf(results []executor.Result, culprit int) string {
	if culprit < 0 {
		return ""
	}
	return results[culprit].Signal
}
