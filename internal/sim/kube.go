package sim

import (
	"fmt"
	"sort"
	"time"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// kubePolicy models the Kubernetes scheduler with its default profile, or
// with the profile its documentation gives for bin packing GPUs (packed).
// It is a model of that configuration, not kube-scheduler:
//
//   - PrioritySort (scheduling/config "Scheduling plugins"): pods leave the
//     queue by priority (the job's PriorityClass), then creation time; a
//     job's pods are created together, so they come out one after the
//     other. A pod that does not fit waits and the next is tried. A
//     preempted job's controller makes new pods, which queue from the
//     time it was stopped.
//   - NodeResourcesFit with its default LeastAllocated strategy spreads
//     pods over the least allocated nodes; packed uses MostAllocated with
//     nvidia.com/gpu weighted ("Resource Bin Packing"), placed by the core
//     packing one task at a time.
//   - DefaultPreemption ("Pod Priority and Preemption"): a pod that does not
//     fit evicts running preemptible jobs of lower priority if that makes
//     room for it; victims get --preempt-grace (terminationGracePeriod).
//   - No gangs: a job runs once all its pods are placed, and placed pods
//     hold their GPUs while their siblings wait. Pods know no topology.
type kubePolicy struct {
	packed    bool
	noPreempt failedAt
}

func newKubePolicy(packed bool) Policy { return kubePolicy{packed: packed, noPreempt: failedAt{}} }

func (k kubePolicy) Name() string {
	if k.packed {
		return "kube-packed"
	}
	return "kube-default"
}

func (k kubePolicy) Describe() string {
	if k.packed {
		return "model of kube-scheduler for GPU bin packing: PrioritySort, NodeResourcesFit MostAllocated (nvidia.com/gpu weighted), priority preemption, no gangs"
	}
	return "model of kube-scheduler's default profile: PrioritySort, NodeResourcesFit LeastAllocated (spread), priority preemption, no gangs"
}

func (k kubePolicy) StateOptions() gang.Options { return gang.Options{Spread: !k.packed} }

func (k kubePolicy) Docs() []string {
	docs := []string{
		"https://kubernetes.io/docs/reference/scheduling/config/ (default plugins: PrioritySort, NodeResourcesFit LeastAllocated, DefaultPreemption)",
		"https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/",
	}
	if k.packed {
		docs = append(docs, "https://kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/ (MostAllocated, resources nvidia.com/gpu weighted)")
	}
	return docs
}

// Cycle places the pods of every pending job in PrioritySort order; a
// pod that does not fit may preempt.
func (k kubePolicy) Cycle(s *Sim) {
	failed := map[string]bool{}
	for _, p := range byPriorityThenCreation(s.pending) {
		s.placeJobPods(p, failed, k.preemptFor(s))
	}
}

// byPriorityThenCreation is PrioritySort's order: priority, then the pod's
// creation time. A preempted job's pods are deleted and its controller
// (a Job) creates new ones, so a job stopped and requeued queues from then,
// behind the pods created before it (internal/peers' replays on a real
// kube-scheduler showed it).
func byPriorityThenCreation(pending []*pendingJob) []*pendingJob {
	order := append([]*pendingJob(nil), pending...)
	created := func(p *pendingJob) time.Duration { return max(p.a.At, p.requeued) }
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.a.Job.Priority != b.a.Job.Priority {
			return a.a.Job.Priority > b.a.Job.Priority
		}
		if created(a) != created(b) {
			return created(a) < created(b)
		}
		return a.a.Job.Name < b.a.Job.Name
	})
	return order
}

// preemptFor returns DefaultPreemption for one pod of p: false when it
// found no victims (tried once per state of the fleet).
func (k kubePolicy) preemptFor(s *Sim) func(p *pendingJob, pod *job.Job) bool {
	return func(p *pendingJob, pod *job.Job) bool {
		if k.noPreempt.same(pod.Name, s.version) {
			return false
		}
		if s.preemptPlaced(p, pod, lowerThan(p), "preempted by higher-priority pod of") {
			return true
		}
		k.noPreempt.note(pod.Name, s.version)
		return false
	}
}

// placeJobPods places p's remaining pods in order, one at a time; a pod
// that does not fit (and whose shape failed in this cycle, failed) stops
// the job's turn unless preempt (nil: none) makes room for it. A job
// whose pods are all placed starts.
func (s *Sim) placeJobPods(p *pendingJob, failed map[string]bool, preempt func(*pendingJob, *job.Job) bool) {
	if p.pods == nil {
		p.pods = podsOf(p.a.Job)
	}
	for len(p.held) < len(p.pods) {
		pod := p.pods[len(p.held)]
		key := fmt.Sprint(pod.Groups)
		placed := false
		if !failed[key] {
			_, placed = s.tryPlace(pod)
		}
		if !placed && preempt != nil && preempt(p, pod) {
			placed = true
			clear(failed) // victims freed room
		}
		if !placed {
			failed[key] = true
			return
		}
		p.held = append(p.held, pod.Name)
	}
	s.start(p, p.held)
}

// placePods places the pods of jobs one at a time, one pod of every job in
// turn, and starts each job whose pods are all placed (kueue-strict).
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
