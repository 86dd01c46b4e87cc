package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/workload"
)

// recordedJob is one job of an accounting history on its way to a jobs
// file: absolute times, its shape, and the class it gets.
type recordedJob struct {
	name, tenant             string
	submit, start, end       time.Time
	tasks                    int
	demand                   job.Demand
	priority                 int
	checkpoint, runtimeLimit time.Duration
}

// writeJobsFile writes jobs as a jobs file (corral sim --workload jobs),
// times counted from the earliest submission, each job's true duration its
// run time and its recorded start and end kept as outcomes; machines, where
// known, go in its fleet line, so that a replay runs on them.
func writeJobsFile(w io.Writer, jobs []recordedJob, machines *workload.Machines) error {
	if machines != nil {
		if _, err := fmt.Fprintln(w, machines.Line()); err != nil {
			return fmt.Errorf("jobs file: %w", err)
		}
	}
	var t0 time.Time
	for i, j := range jobs {
		if i == 0 || j.submit.Before(t0) {
			t0 = j.submit
		}
	}
	var wl workload.Workload
	outcomes := map[string]workload.Outcome{}
	ms := func(t time.Time) time.Duration { return t.Sub(t0).Round(time.Millisecond) } // what a jobs file keeps
	for _, j := range jobs {
		start, end := ms(j.start), ms(j.end)
		a := workload.Arrival{At: ms(j.submit), Duration: max(end-start, time.Millisecond), Class: workload.Recorded,
			Job: &job.Job{Name: j.name, Tenant: j.tenant, Priority: j.priority, CheckpointEvery: j.checkpoint, Runtime: j.runtimeLimit,
				Groups: []job.Group{{Name: "tasks", Count: max(j.tasks, 1), Task: j.demand}}}}
		wl.Arrivals = append(wl.Arrivals, a)
		outcomes[j.name] = workload.Outcome{Start: start, End: end, Started: true, Ended: true}
	}
	workload.SortArrivals(wl.Arrivals)
	return workload.WriteJobs(w, &wl, outcomes)
}

// serverJobs turns a server's accounting records into jobs: one per job,
// its last attempt's run. Records from before submission times were kept
// count as submitted when they started.
func serverJobs(recs []api.Record) []recordedJob {
	byJob := map[string]int{}
	var out []recordedJob
	for _, r := range recs {
		submit := r.Submitted
		if submit.IsZero() {
			submit = r.Start
		}
		j := recordedJob{name: r.Job, tenant: r.Tenant, submit: submit, start: r.Start, end: r.End, tasks: r.Tasks,
			demand:   job.Demand{GPUs: r.TaskGPUs, GPUMilli: r.GPUMilli, MIG: r.MIGProfile, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB},
			priority: r.Priority, checkpoint: seconds(r.CheckpointSeconds), runtimeLimit: seconds(r.TimeLimitSeconds)}
		if j.demand.GPUs == 0 && j.demand.GPUMilli == 0 && j.demand.MIG == "" && r.GPUs >= 1 && r.Tasks == 0 {
			j.demand.GPUs = int(math.Round(r.GPUs)) // an old record: only the GPUs held
		}
		if i, seen := byJob[r.Job]; seen {
			j.submit = out[i].submit // a requeued job: first submitted, last run
			out[i] = j
			continue
		}
		byJob[r.Job] = len(out)
		out = append(out, j)
	}
	return out
}

// kubeLogJobs reads the accounting log of corral kube-scheduler into jobs:
// a pod group is one job of as many tasks as it had pods, from its first
// pod's creation to its last pod's end; a pod of no group is a job of its
// own. Pods that never started are not in the log.
func kubeLogJobs(path string) ([]recordedJob, error) {
	recs, err := kubeRecords(path)
	if err != nil {
		return nil, err
	}
	byName := map[string]*recordedJob{}
	var order []string
	for _, r := range recs {
		if r.Event != "start" && r.Event != "end" {
			continue
		}
		name := r.Pod
		if r.Group != "" {
			name = r.Group
		}
		j := byName[name]
		if j == nil {
			j = &recordedJob{name: name, tenant: r.Tenant}
			byName[name] = j
			order = append(order, name)
		}
		kubeRecordInto(j, r)
	}
	var out []recordedJob
	for _, n := range order {
		if j := byName[n]; !j.end.IsZero() && !j.start.IsZero() {
			out = append(out, *j)
		}
	}
	return out, nil
}

// kubeRecordInto adds one start or end record of a pod to its job.
func kubeRecordInto(j *recordedJob, r kube.Record) {
	if r.Event == "end" {
		if r.Time.After(j.end) {
			j.end = r.Time
		}
		return
	}
	j.tasks++
	created := r.Time.Add(-time.Duration(r.WaitSeconds * float64(time.Second)))
	if j.submit.IsZero() || created.Before(j.submit) {
		j.submit = created
	}
	if j.start.IsZero() || r.Time.Before(j.start) {
		j.start = r.Time
	}
	switch {
	case r.MIGProfile != "":
		j.demand.MIG = r.MIGProfile
	case r.GPUs >= 1:
		j.demand.GPUs = int(math.Round(r.GPUs))
	case r.GPUs > 0:
		j.demand.GPUMilli = int(math.Round(r.GPUs * 1000))
	}
}

// serverMachines are the machines of a server's accounting answer, as a
// jobs file's fleet line gives them; nil from a server that does not say.
func serverMachines(m *api.Machine) *workload.Machines {
	if m == nil || m.GPUs == 0 {
		return nil
	}
	return &workload.Machines{Nodes: 1, GPUsPerNode: m.GPUs, GPUModel: m.GPUModel, MIG: m.MIG,
		TimeSlices: m.TimeSlices, CPUMilli: m.CPUMilli, MemoryMiB: m.MemoryMiB}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
