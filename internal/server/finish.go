package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
	j.Ended = s.now().UTC()
	code := jobExit(e.results)
	j.ExitCode = &code
	j.State, j.Reason = outcome(&j, e)
	rec := s.record(&j, e.results)
	if j.State.Waiting() {
		j.Tasks, j.ExitCode = nil, nil
	}
	j.Stopping = ""
	err := s.st.Update(func(tx *store.Tx) error {
		if err := tx.PutJob(&j); err != nil {
			return err
		}
		return tx.AddRecord(rec)
	})
	if err != nil {
		s.log.Error("persist end", "job", j.Name(), "err", err)
	}
	if !r.drained {
		if err := s.state.Release(j.Name()); err != nil {
			s.log.Error("release", "job", j.Name(), "err", err)
		}
	}
	delete(s.runs, e.id)
	if j.State.Waiting() {
		s.waiting[j.ID] = j
	}
	s.metrics.ended.WithLabelValues(endLabel(j.State)).Inc()
	s.log.Info("job ended", "job", j.Name(), "state", j.State, "reason", j.Reason, "exit", code)
}

// jobExit is the first non-zero exit code of the tasks, else 0.
func jobExit(results []executor.Result) int {
	for _, r := range results {
		if r.ExitCode != 0 {
			return r.ExitCode
		}
	}
	return 0
}

// outcome is the state a run ends in, and why.
func outcome(j *store.Job, e ended) (store.State, string) {
	switch {
	case j.Stopping == store.StopCancel:
		return store.Cancelled, "cancelled"
	case strings.HasPrefix(j.Stopping, "preempted"):
		return store.Preempted, j.Stopping
	case isDrain(j.Stopping):
		return store.Pending, j.Stopping + "; requeued"
	case j.Stopping != "" || errors.Is(e.err, errLost) || lost(e.results):
		why := j.Stopping
		if why == "" {
			why = errLost.Error()
		}
		if j.Spec.Requeue {
			return store.Pending, why + "; requeued"
		}
		return store.Failed, why
	case e.err != nil:
		return store.Failed, e.err.Error()
	}
	for i, r := range e.results {
		switch {
		case r.TimedOut:
			return store.Failed, fmt.Sprintf("rank %d reached the time limit %v", i, j.Spec.TimeLimit)
		case r.Signal != "":
			return store.Failed, fmt.Sprintf("rank %d killed by %s", i, r.Signal)
		case r.ExitCode != 0:
			return store.Failed, fmt.Sprintf("rank %d exited with code %d", i, r.ExitCode)
		}
	}
	return store.Succeeded, ""
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
func (s *Server) record(j *store.Job, results []executor.Result) store.Record {
	gpus := float64(milli(j.Spec, s.model)) / 1000
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
	return store.Record{
		JobID: j.ID, Tenant: j.Tenant, Name: j.Spec.Name, Attempt: j.Attempts,
		GPUModel: j.GPUModel, MIGProfile: j.Spec.MIG, GPUs: gpus,
		Start: j.Started, End: end, GPUSeconds: gpus * secs,
		State: j.State, ExitCode: *j.ExitCode, Signal: firstSignal(results),
	}
}

func firstSignal(results []executor.Result) string {
	for _, r := range results {
		if r.Signal != "" {
			return r.Signal
		}
	}
	return ""
}
