package peers

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/corral-sched/corral/internal/workload"
)

// annotationIndex is the completion index the Job controller gives each
// pod of an Indexed Job.
const annotationIndex = "batch.kubernetes.io/job-completion-index"

// task is one completion index of a job: when a watch first saw a pod of
// it bound, and when one succeeded.
type task struct {
	bound, done time.Time
}

// recorder keeps, per task of each job of the replay, what a watch on the
// API server saw, and the stops: pods that failed or went away before
// they succeeded.
type recorder struct {
	mu      sync.Mutex
	t0      time.Time
	tasks   map[string]map[string]*task // workload job -> completion index -> task
	pods    map[string]bool             // namespace/pod -> ended (succeeded, failed or deleted)
	stops   map[string]int              // workload job -> pods that failed or were deleted while bound
	holds   map[string]*tenure          // namespace/pod -> its time on its node, once bound
	changed chan struct{}
}

func newRecorder() *recorder {
	return &recorder{tasks: map[string]map[string]*task{}, pods: map[string]bool{}, stops: map[string]int{},
		holds: map[string]*tenure{}, changed: make(chan struct{}, 1)}
}

func (rc *recorder) setStart(t time.Time) {
	rc.mu.Lock()
	rc.t0 = t
	rc.mu.Unlock()
}

// taskOf is p's task, made on first sight; the lock is held.
func (rc *recorder) taskOf(p *corev1.Pod) *task {
	j := p.Annotations[annotationJob]
	if rc.tasks[j] == nil {
		rc.tasks[j] = map[string]*task{}
	}
	idx := p.Annotations[annotationIndex]
	t := rc.tasks[j][idx]
	if t == nil {
		t = &task{}
		rc.tasks[j][idx] = t
	}
	return t
}

func (rc *recorder) see(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	key := p.Namespace + "/" + p.Name
	rc.mu.Lock()
	defer rc.mu.Unlock()
	t := rc.taskOf(p)
	if t.bound.IsZero() && p.Spec.NodeName != "" {
		t.bound = now
	}
	if p.Spec.NodeName != "" && rc.holds[key] == nil && !rc.pods[key] {
		rc.holds[key] = &tenure{job: p.Annotations[annotationJob], task: p.Annotations[annotationIndex], node: p.Spec.NodeName, gpus: podGPUs(p), from: now}
	}
	if rc.pods[key] {
		return
	}
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		rc.ended(key, now)
		if t.done.IsZero() {
			t.done = now
		}
		rc.signal()
	case corev1.PodFailed:
		rc.ended(key, now)
		rc.stops[p.Annotations[annotationJob]]++
	}
}

// tenure is a bound pod's time on its node, in real time; to is zero
// while it holds.
type tenure struct {
	job, task, node string
	gpus            int
	from, to        time.Time
}

// ended marks the pod key as ended at t; the lock is held.
func (rc *recorder) ended(key string, t time.Time) {
	rc.pods[key] = true
	if h := rc.holds[key]; h != nil && h.to.IsZero() {
		h.to = t
	}
}

// podGPUs is the GPUs p asks for, summed over its containers.
func podGPUs(p *corev1.Pod) int {
	n := 0
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Requests[gpuResource]; ok {
			n += int(q.Value())
		}
	}
	return n
}

// gone counts a pod deleted before it ended (preempted, evicted) as a stop.
func (rc *recorder) gone(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key := p.Namespace + "/" + p.Name
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.pods[key] && p.Spec.NodeName != "" {
		rc.stops[p.Annotations[annotationJob]]++
	}
	rc.ended(key, time.Now())
}

func (rc *recorder) signal() {
	select {
	case rc.changed <- struct{}{}:
	default:
	}
}

// wait returns when every job's tasks have all succeeded, at deadline, or
// when ctx ends.
func (rc *recorder) wait(ctx context.Context, deadline time.Time, jobs map[string]jobRef) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for !rc.allDone(jobs) {
		select {
		case <-rc.changed:
		case <-tick.C:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (rc *recorder) allDone(jobs map[string]jobRef) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for name, ref := range jobs {
		done := 0
		for _, t := range rc.tasks[name] {
			if !t.done.IsZero() {
				done++
			}
		}
		if done < ref.tasks {
			return false
		}
	}
	return true
}

// outcomes turns what the watch saw into each job's start (when every
// task had been bound once: the last task's first binding) and end (its
// last task's success), in simulated time, and the stops of each job.
func (rc *recorder) outcomes(w workload.Workload, names map[string]jobRef, speedup float64) *workload.Jobs {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	sim := func(t time.Time) time.Duration {
		return time.Duration(float64(t.Sub(rc.t0)) * speedup).Round(time.Millisecond)
	}
	out := &workload.Jobs{Workload: w, Outcomes: map[string]workload.Outcome{}}
	for _, a := range w.Arrivals {
		var start, end time.Time
		bound, done := 0, 0
		for _, t := range rc.tasks[a.Job.Name] {
			if !t.bound.IsZero() {
				bound++
				start = later(start, t.bound)
			}
			if !t.done.IsZero() {
				done++
				end = later(end, t.done)
			}
		}
		var o workload.Outcome
		tasks := names[a.Job.Name].tasks
		if bound >= tasks {
			o.Start, o.Started = max(sim(start), a.At), true
		}
		if done >= tasks {
			o.End, o.Ended = sim(end), true
		}
		out.Outcomes[a.Job.Name] = o
	}
	return out
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// tenures are the pods' holds in simulated time, sorted; a pod still
// bound holds until end.
func (rc *recorder) tenures(end time.Time, speedup float64) []Hold {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	sim := func(t time.Time) time.Duration {
		return max(time.Duration(float64(t.Sub(rc.t0))*speedup).Round(time.Millisecond), 0)
	}
	out := make([]Hold, 0, len(rc.holds))
	for _, h := range rc.holds {
		to := h.to
		if to.IsZero() {
			to = end
		}
		out = append(out, Hold{Job: h.job, Task: h.task, Node: h.node, GPUs: h.gpus, From: sim(h.from), To: max(sim(to), sim(h.from))})
	}
	SortHolds(out)
	return out
}

// stopCounts copies the stops of each job.
func (rc *recorder) stopCounts() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.stops))
	for k, v := range rc.stops {
		out[k] = v
	}
	return out
}
