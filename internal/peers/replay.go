package peers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/corral-sched/corral/internal/workload"
)

// Labels and annotations the replay puts on its Jobs.
const (
	labelReplay     = "corral.sh/replay"
	annotationJob   = "corral.sh/replay-job" // the workload's job name
	annotationDelay = "pod-complete.stage.kwok.x-k8s.io/delay"
	gpuResource     = "nvidia.com/gpu"
)

// Result is what a replay saw.
type Result struct {
	*workload.Jobs
	// Stops counts, per job, its pods that failed or were deleted while
	// bound (preempted), each replaced by the Job controller.
	Stops map[string]int
	// Holds are every bound pod's time on its node, in simulated time.
	Holds []Hold
}

// Options tune a replay.
type Options struct {
	Scheduler string // KubePacked, Kueue or Corral
	// Speedup is how many simulated seconds pass in one real second: 60
	// replays a simulated minute per second.
	Speedup float64
	QPS     float64 // the scheduler's client; default 100
	// Slack is how long after the last arrival's end, at the longest, the
	// replay waits for jobs still running or waiting (real time); default
	// the workload's span again.
	Slack time.Duration
	GPUs  int // the fleet's GPUs, for Kueue's quotas
	Dir   string
	// PodGroups makes each gang a Workload API PodGroup for corral too,
	// as for KubeGang (which has no other gang), so that both read the
	// same objects; otherwise corral infers the gang from its Job.
	PodGroups bool
}

// Replay submits w's jobs to the rig as Indexed Jobs (one pod per task, all
// in one gang where the scheduler knows gangs) at their arrival times
// divided by Speedup, each pod running its duration divided by Speedup,
// under the scheduler named, and returns the workload with what happened
// to each job, in simulated time: a job starts when its last pod is bound
// and ends when its last pod ends, as seen by a watch on the API server.
func (r *Rig) Replay(ctx context.Context, w workload.Workload, o Options) (*Result, error) {
	if o.Speedup <= 0 {
		return nil, errors.New("replay: speedup must be positive")
	}
	if o.QPS == 0 {
		o.QPS = 100
	}
	names, err := r.prepare(ctx, w, o)
	if err != nil {
		return nil, err
	}
	rec := newRecorder()
	stopWatch, err := r.watch(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer stopWatch()
	stop, err := r.startScheduler(ctx, w, o)
	if err != nil {
		return nil, err
	}
	defer stop()
	t0 := time.Now()
	rec.setStart(t0)
	real := func(d time.Duration) time.Duration { return time.Duration(float64(d) / o.Speedup) }
	for _, a := range w.Arrivals {
		if err := sleepUntil(ctx, t0.Add(real(a.At))); err != nil {
			return nil, err
		}
		if err := r.submit(ctx, a, names[a.Job.Name], o); err != nil {
			return nil, err
		}
	}
	span := real(w.Horizon)
	for _, a := range w.Arrivals {
		span = max(span, real(a.At+a.Duration))
	}
	slack := o.Slack
	if slack == 0 {
		slack = span
	}
	rec.wait(ctx, t0.Add(span+slack), names)
	return &Result{Jobs: rec.outcomes(w, names, o.Speedup), Stops: rec.stopCounts(), Holds: rec.tenures(time.Now(), o.Speedup)}, nil
}

// jobRef is where a workload's job lives in the cluster.
type jobRef struct {
	namespace, name string
	tasks           int
}

// prepare makes a namespace per tenant, a PriorityClass per priority and
// a Kubernetes name per job.
func (r *Rig) prepare(ctx context.Context, w workload.Workload, o Options) (map[string]jobRef, error) {
	names := map[string]jobRef{}
	used := map[string]bool{}
	for i, a := range w.Arrivals {
		if err := replayable(a); err != nil {
			return nil, err
		}
		ns := dnsName(tenant(a), "t")
		if err := r.Namespace(ctx, ns); err != nil {
			return nil, err
		}
		if err := r.priorityClass(ctx, a.Job.Priority); err != nil {
			return nil, err
		}
		name := dnsName(a.Job.Name, "j")
		if used[ns+"/"+name] {
			name = fmt.Sprintf("%s-%d", name, i)
		}
		used[ns+"/"+name] = true
		names[a.Job.Name] = jobRef{namespace: ns, name: name, tasks: a.Job.Tasks()}
	}
	return names, nil
}

// replayable refuses what the rig cannot run: more than one task shape,
// and fractions or MIG slices of GPUs (upstream has no notion of them).
func replayable(a workload.Arrival) error {
	if len(a.Job.Groups) != 1 {
		return fmt.Errorf("replay: job %s has %d task groups; the replay runs jobs of one shape", a.Job.Name, len(a.Job.Groups))
	}
	if d := a.Job.Groups[0].Task; d.MIG != "" || d.GPUMilli > 0 || d.Shares > 0 || d.GPUMemoryMiB > 0 {
		return fmt.Errorf("replay: job %s asks for part of a GPU; the replay runs whole GPUs only", a.Job.Name)
	}
	return nil
}

func tenant(a workload.Arrival) string {
	if a.Job.Tenant == "" {
		return "default"
	}
	return a.Job.Tenant
}

// dnsName turns s into a DNS label: lower case, other characters as '-',
// prefixed when it would not start with a letter.
func dnsName(s, prefix string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" || out[0] < 'a' || out[0] > 'z' {
		out = prefix + "-" + out
	}
	return strings.TrimRight(out[:min(len(out), 52)], "-")
}

func priorityClassName(p int) string {
	if p < 0 {
		return "replay-m" + strconv.Itoa(-p)
	}
	return "replay-" + strconv.Itoa(p)
}

func (r *Rig) priorityClass(ctx context.Context, p int) error {
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: priorityClassName(p)}, Value: int32(p)}
	_, err := r.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("priority class %d: %w", p, err)
	}
	return nil
}

// submit creates a's Job.
func (r *Rig) submit(ctx context.Context, a workload.Arrival, ref jobRef, o Options) error {
	d := a.Job.Groups[0].Task
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(max(d.CPUMilli, 100), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(max(d.MemoryMiB, 64)<<20, resource.BinarySI),
	}
	if d.GPUs > 0 {
		res[gpuResource] = *resource.NewQuantity(int64(d.GPUs), resource.DecimalSI)
	}
	n := int32(ref.tasks)
	run := time.Duration(float64(a.Duration) / o.Speedup).Round(time.Millisecond)
	mode := batchv1.IndexedCompletion
	// A preempted pod is replaced, as a requeued job restarts.
	backoff := int32(100)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: ref.name, Namespace: ref.namespace, Labels: map[string]string{labelReplay: "1"},
			Annotations: map[string]string{annotationJob: a.Job.Name}},
		Spec: batchv1.JobSpec{
			Parallelism: &n, Completions: &n, CompletionMode: &mode, BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{labelReplay: "1"},
					Annotations: map[string]string{annotationDelay: run.String(), annotationJob: a.Job.Name}},
				Spec: corev1.PodSpec{
					RestartPolicy:     corev1.RestartPolicyNever,
					PriorityClassName: priorityClassName(a.Job.Priority),
					Containers:        []corev1.Container{{Name: "task", Image: "replay", Resources: corev1.ResourceRequirements{Requests: res, Limits: res}}},
				},
			},
		},
	}
	r.decorate(job, o.Scheduler)
	if err := r.constrain(ctx, job, a.Job, o); err != nil {
		return fmt.Errorf("replay: job %s: %w", a.Job.Name, err)
	}
	if _, err := r.Client.BatchV1().Jobs(ref.namespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("replay: job %s: %w", a.Job.Name, err)
	}
	return nil
}

// decorate sets what the scheduler needs on a Job: its scheduler name,
// or Kueue's queue label (Kueue admits a Job by unsuspending it).
func (r *Rig) decorate(job *batchv1.Job, scheduler string) {
	switch {
	case isCorral(scheduler):
		job.Spec.Template.Spec.SchedulerName = "corral"
	case isKueue(scheduler):
		job.Labels[kueueQueueLabel] = localQueueName
		suspend := true
		job.Spec.Suspend = &suspend
	}
}

// startScheduler starts the scheduler of o and returns its stop.
func (r *Rig) startScheduler(ctx context.Context, w workload.Workload, o Options) (func(), error) {
	dir := o.Dir
	switch o.Scheduler {
	case KubePacked, KubeGang:
		return func() {}, r.startKubePacked(dir, o.QPS, o.Scheduler == KubeGang)
	case Corral:
		return r.startCorral(ctx, o.QPS, 0)
	case CorralNoReserve:
		return r.startCorral(ctx, o.QPS, -1)
	case Kueue, KueueTAS:
		if err := r.startKueue(ctx, dir, w, o); err != nil {
			return nil, err
		}
		return func() {}, r.startKubePacked(dir, o.QPS, false)
	}
	return nil, fmt.Errorf("replay: unknown scheduler %q (want %s)", o.Scheduler, strings.Join(GangSchedulers(), ", "))
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watch records the replay's pods until the returned stop.
func (r *Rig) watch(ctx context.Context, rc *recorder) (func(), error) {
	f := informers.NewSharedInformerFactoryWithOptions(r.Client, 0,
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = labelReplay + "=1" }))
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    rc.see,
		UpdateFunc: func(_, obj any) { rc.see(obj) },
		DeleteFunc: rc.gone,
	}); err != nil {
		return nil, fmt.Errorf("replay: watch: %w", err)
	}
	stop := make(chan struct{})
	f.Start(stop)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		close(stop)
		return nil, errors.New("replay: watch did not sync")
	}
	return func() { close(stop); f.Shutdown() }, nil
}
