package sim

import (
	"fmt"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// kubePolicy models a default Kubernetes scheduler without gang support:
// every pod is placed on its own, in arrival order, on the least allocated
// node (spread), and holds its GPUs while its siblings wait; a job runs
// only once all its pods are placed. It is a model of that behaviour, not
// the real scheduler.
type kubePolicy struct{}

func (kubePolicy) Name() string { return "kube-default" }
func (kubePolicy) Describe() string {
	return "model: pods one at a time, spread (least allocated), no gangs: partial jobs hold GPUs"
}
func (kubePolicy) StateOptions() gang.Options { return gang.Options{Spread: true} }

// Cycle takes one pod of every pending job in turn, round after round,
// as pods that controllers create at the same time reach the scheduler
// interleaved; a job starts when all its pods are placed.
func (kubePolicy) Cycle(s *Sim) { s.placePods(append([]*pendingJob(nil), s.pending...)) }

// placePods places the pods of jobs one at a time, one pod of every job in
// turn, and starts each job whose pods are all placed.
func (s *Sim) placePods(jobs []*pendingJob) {
	failed := map[string]bool{}
	for progress := true; progress; {
		progress = false
		for _, p := range jobs {
			if p.pods == nil {
				p.pods = podsOf(p.a.Job)
			}
			if len(p.held) == len(p.pods) {
				continue
			}
			pod := p.pods[len(p.held)]
			key := fmt.Sprint(pod.Groups)
			if failed[key] {
				continue
			}
			if _, ok := s.tryPlace(pod); !ok {
				failed[key] = true
				continue
			}
			p.held = append(p.held, pod.Name)
			progress = true
		}
	}
	for _, p := range jobs {
		if len(p.held) == len(p.pods) {
			s.start(p, p.held)
		}
	}
}

// podsOf splits a job into one single-task job per pod, without topology
// constraints (the default scheduler knows none).
func podsOf(j *job.Job) []*job.Job {
	var pods []*job.Job
	for _, g := range j.Groups {
		for range g.Count {
			pods = append(pods, &job.Job{
				Name:   fmt.Sprintf("%s/%d", j.Name, len(pods)),
				Tenant: j.Tenant,
				Groups: []job.Group{{Name: g.Name, Count: 1, Task: g.Task}},
			})
		}
	}
	return pods
}
