package kube

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/kube/kubetest"
	"github.com/corral-sched/corral/internal/twin"
)

// TestTwinKube holds corral kube-scheduler to the core's transcripts: the
// same scripted workload, as pods and pod groups on the real API server,
// starts and preempts the same jobs at the same steps. The test drives the
// scheduler's cycles itself, so that a step reaches it whole, and plays the
// kubelet and the job controller: a finished job's pods are deleted, an
// evicted pod is deleted and created again.
func TestTwinKube(t *testing.T) {
	for _, path := range twin.Scripts(t) {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			if why, ok := kubeDiffers[filepath.Base(path)]; ok {
				t.Skip(why)
			}
			s := twin.Load(t, path)
			f := &kubeFace{t: t, e: newEnv(t), jobs: map[string]*kubeJob{}, queues: map[string]string{}}
			got, err := twin.Run(f, s)
			if errors.Is(err, twin.ErrNoResize) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			twin.Compare(t, got, s.Want)
		})
	}
}

const labelTwinJob = "corral.test/twin-job"

// kubeDiffers are the scripts whose transcript the Kubernetes face does
// not give, and why: a known difference of model, not of decision.
var kubeDiffers = map[string]string{}

type kubeFace struct {
	t          *testing.T
	fleet      twin.Fleet
	e          *env
	cfg        Config
	s          *Scheduler
	stop       context.CancelFunc // ends s
	queues     map[string]string  // tenant -> Queue name
	jobs       map[string]*kubeJob
	submitting []twin.Job
	finishing  []string
	started    []string
	moved      []string
	preempted  []string
	// acct is the scheduler's accounting log, whose fault records say
	// which gangs it moved off a failed node (all of whose pods may have
	// been there); read is how many of its lines were read.
	acct *lockedBuffer
	read int
}

type kubeJob struct {
	j       twin.Job
	running bool      // its pods are bound
	gone    bool      // finished
	queued  time.Time // when it was submitted: its pods keep this place in the queue
	// pods are the UIDs of its pods when last seen bound: a running job
	// whose pods changed without stopping was moved off a failed node.
	pods []string
}

// Fleet makes the script's nodes, in racks by the rack label the test
// configuration reads, and starts the scheduler on them. Borrowers are
// evicted at once, as the twin's core does. The scheduler keeps its
// units' memory in a ConfigMap, for Restart.
//
// Time-sliced GPUs are offered as the device plugin's renamed replicas
// (nvidia.com/gpu.shared); MIG GPUs as its mixed strategy, seven 1g.10gb
// instances per GPU: the twin's MIG scripts ask for 1g.10gb only, which
// this fixed layout and the server's MIG cut on demand place alike.
func (f *kubeFace) Fleet(tf twin.Fleet) error {
	f.fleet = tf
	for i, name := range tf.NodeNames() {
		f.createNode(f.node(name), tf.Rack(i), tf.Spare(i))
	}
	f.cfg = f.e.config()
	f.acct = &lockedBuffer{}
	f.cfg.Accounting = f.acct
	f.cfg.ReclaimPatience = -1
	f.cfg.UnitMemoryConfigMap = leaseNamespace + "/" + f.e.ns + "-twin-memory"
	f.t.Cleanup(func() {
		_ = f.e.c.Client.CoreV1().ConfigMaps(leaseNamespace).Delete(context.Background(), f.e.ns+"-twin-memory", metav1.DeleteOptions{})
	})
	return f.startScheduler()
}

// createNode makes one node of the script's model and mode, in rack
// ("" for none).
func (f *kubeFace) createNode(name, rack string, spare bool) {
	tf := f.fleet
	model := cmp.Or(tf.Model, twin.DefaultModel)
	labels := map[string]string{LabelProduct: "NVIDIA-" + model, LabelCount: fmt.Sprint(tf.GPUs)}
	rackLabel := map[string]string{}
	if rack != "" {
		labels["corral.test/rack"] = rack
		rackLabel["corral.test/rack"] = rack
	}
	if spare {
		key, value, _ := strings.Cut(DefaultSpareLabel, "=")
		labels[key], rackLabel[key] = value, value
	}
	switch {
	case tf.MIG:
		labels["nvidia.com/mig.strategy"] = "mixed"
		f.e.nodeSpec(kubetest.Node{Name: name, Labels: labels, Resources: map[string]string{"nvidia.com/mig-1g.10gb": fmt.Sprint(7 * tf.GPUs)}})
	case tf.Slices > 1:
		labels[LabelReplicas] = fmt.Sprint(tf.Slices)
		f.e.nodeSpec(kubetest.Node{Name: name, Labels: labels, Resources: map[string]string{string(ResourceShared): fmt.Sprint(tf.Slices * tf.GPUs)}})
	default:
		f.e.node(name, tf.GPUs, rackLabel)
	}
}

// startScheduler starts a scheduler on the cluster and has it read back
// the units' memory, as a replica that takes the lead does.
func (f *kubeFace) startScheduler() error {
	f.s = f.e.newScheduler(f.cfg)
	ctx, cancel := context.WithCancel(context.Background())
	f.stop = cancel
	f.t.Cleanup(cancel)
	if err := f.s.Start(ctx); err != nil {
		return err
	}
	f.s.restoreUnits(ctx)
	return nil
}

// Restart is a change of leader: the scheduler goes away and a new one
// starts on what the API server holds (the pods, their bindings, the
// units' memory in its ConfigMap).
func (f *kubeFace) Restart() error {
	f.stop()
	return f.startScheduler()
}

// node is a script's node as this test names it.
func (f *kubeFace) node(name string) string { return f.e.ns + "-" + name }

func (f *kubeFace) Tenant(t twin.Tenant) error {
	name := t.Name
	q := f.e.ns + "-" + name
	spec := map[string]any{"tenant": name}
	if t.Quota > 0 {
		spec["quota"] = map[string]any{"gpus": int64(t.Quota)}
	}
	if t.Cohort != "" {
		spec["cohort"] = f.e.ns + "-" + t.Cohort
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "corral.sh/v1alpha1", "kind": "Queue", "metadata": map[string]any{"name": q}, "spec": spec}}
	ctx := context.Background()
	if _, err := f.e.c.Dynamic.Resource(QueueResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return err
	}
	f.t.Cleanup(func() { _ = f.e.c.Dynamic.Resource(QueueResource).Delete(ctx, q, metav1.DeleteOptions{}) })
	f.queues[name] = q
	return nil
}

// Submit keeps j for the next settle. An elastic job is refused: the
// number of a workload's pods is its controller's to change.
func (f *kubeFace) Submit(j twin.Job) error {
	if j.Elastic() {
		return twin.ErrNoResize
	}
	f.submitting = append(f.submitting, j)
	return nil
}

// Down makes a node NotReady (every node for ""): the scheduler deletes
// its pods at once and queues copies of them again. Up makes it Ready.
func (f *kubeFace) Down(node string) error {
	for _, n := range f.nodes(node) {
		f.e.setReady(n, false)
	}
	return nil
}

func (f *kubeFace) Up(node string) error {
	for _, n := range f.nodes(node) {
		f.e.setReady(n, true)
	}
	return nil
}

func (f *kubeFace) nodes(node string) []string {
	if node != "" {
		return []string{f.node(node)}
	}
	var out []string
	for _, n := range f.fleet.NodeNames() {
		out = append(out, f.node(n))
	}
	return out
}

func (f *kubeFace) Finish(name string) error {
	f.finishing = append(f.finishing, name)
	return nil
}

// Settle applies the step, then runs cycles until one neither binds nor
// evicts, ending evicted pods and creating them again between cycles.
func (f *kubeFace) Settle() (started, preempted, waiting []string, err error) {
	for _, name := range f.finishing {
		f.deletePods(name)
		f.jobs[name].gone = true
	}
	for _, j := range f.submitting {
		f.jobs[j.Name] = &kubeJob{j: j, queued: time.Now()}
		f.createPods(f.jobs[j.Name])
	}
	f.finishing, f.submitting = nil, nil
	for range 20 {
		f.waitCache()
		before, pods := f.s.Stats(), podUIDs(f.pods())
		if err := f.s.Cycle(context.Background()); err != nil {
			return nil, nil, nil, err
		}
		after := f.s.Stats()
		changed := !slices.Equal(pods, podUIDs(f.pods())) // a fault's pods stopped, or queued again as copies
		f.observe()
		if after.Binds == before.Binds && after.Evictions == before.Evictions && !changed {
			break
		}
	}
	for _, name := range slices.Sorted(maps.Keys(f.jobs)) {
		if j := f.jobs[name]; !j.gone && !j.running {
			waiting = append(waiting, name)
		}
	}
	started, preempted = f.started, f.preempted
	f.started, f.preempted = nil, nil
	return started, preempted, waiting, nil
}

// observe records the jobs that started and the evicted ones, which it
// deletes and creates again (their controller would).
func (f *kubeFace) observe() {
	pods := f.pods()
	replaced := f.replaced()
	for name, j := range f.jobs {
		if j.gone {
			continue
		}
		mine := slices.DeleteFunc(slices.Clone(pods), func(p corev1.Pod) bool { return p.Labels[labelTwinJob] != name })
		mine = f.endReplaced(mine)
		evicted := slices.ContainsFunc(mine, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
		bound := len(mine) == max(j.j.Tasks, 1) && !slices.ContainsFunc(mine, func(p corev1.Pod) bool { return p.Spec.NodeName == "" })
		switch {
		case evicted:
			f.preempted = append(f.preempted, name)
			f.deletePods(name)
			f.createPods(j)
			j.running = false
		case bound && !j.running:
			f.started = append(f.started, name)
			j.running = true
		case bound && !slices.Equal(j.pods, podUIDs(mine)):
			if kept(j.pods, podUIDs(mine)) || replaced[name] {
				f.moved = append(f.moved, name) // its pods on a failed node started again beside the rest, or elsewhere
			} else {
				f.started = append(f.started, name) // stopped with its node and placed anew at once
			}
		case !bound && j.running: // stopped with its node, and queued again
			j.running = false
		}
		j.pods = nil
		if bound {
			j.pods = podUIDs(mine)
		}
	}
}

// replaced are the jobs the accounting log says were moved off a failed
// node since the last call.
func (f *kubeFace) replaced() map[string]bool {
	f.acct.mu.Lock()
	defer f.acct.mu.Unlock()
	out := map[string]bool{}
	lines := strings.Split(strings.TrimSpace(f.acct.buf.String()), "\n")
	for _, line := range lines[min(f.read, len(lines)):] {
		var r faultrec.Record
		if json.Unmarshal([]byte(line), &r) == nil && r.Event == faultrec.Event && r.Action == faultrec.Replaced {
			out[r.Work[strings.LastIndex(r.Work, "/")+1:]] = true
		}
	}
	f.read = len(lines)
	return out
}

// Moved returns the jobs moved off failed nodes since the last call.
func (f *kubeFace) Moved() []string {
	m := f.moved
	f.moved = nil
	return m
}

// endReplaced ends, as their kubelet would, the stopping pods that corral
// replaced with copies (a unit stopped by a node fault is queued again as
// copies while its pods on healthy nodes take their grace), and returns
// the others: such a stop is not a preemption.
func (f *kubeFace) endReplaced(pods []corev1.Pod) []corev1.Pod {
	replaced := map[string]bool{}
	for _, p := range pods {
		if from := p.Annotations[AnnotationRequeuedFrom]; from != "" {
			replaced[from] = true
		}
	}
	return slices.DeleteFunc(pods, func(p corev1.Pod) bool {
		if p.DeletionTimestamp == nil || !replaced[p.Name] {
			return false
		}
		zero := int64(0)
		err := f.e.c.Client.CoreV1().Pods(p.Namespace).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if err != nil && !apierrors.IsNotFound(err) {
			f.t.Fatal(err)
		}
		return true
	})
}

// kept reports whether some pod of before is among now.
func kept(before, now []string) bool {
	return slices.ContainsFunc(before, func(uid string) bool { return slices.Contains(now, uid) })
}

func podUIDs(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, string(p.UID))
	}
	slices.Sort(out)
	return out
}

// createPods creates a job's pods, in a pod group when it has several. As
// a job controller that remembers when the job was submitted (Kueue's
// Workload does), it marks each pod with that time, so that pods created
// again after an eviction keep the job's place in its queue, as the
// core's requeued units do.
func (f *kubeFace) createPods(kj *kubeJob) {
	j := kj.j
	prio := f.e.priorityClassOnce(j.Priority)
	tasks := max(j.Tasks, 1)
	if tasks > 1 && !f.groupExists(j.Name) {
		var ann map[string]string
		if j.Pack != "" {
			ann = map[string]string{AnnotationPack: j.Pack}
		}
		f.e.podGroup(j.Name, tasks, ann)
	}
	for i := range tasks {
		name := j.Name
		if tasks > 1 {
			name = fmt.Sprintf("%s-%d", j.Name, i)
		}
		p := f.pod(name, j)
		p.Labels[LabelQueue], p.Labels[labelTwinJob] = f.queues[j.Tenant], j.Name
		p.Annotations = map[string]string{AnnotationQueuedSince: kj.queued.UTC().Format(time.RFC3339Nano)}
		p.Spec.PriorityClassName = prio
		if tasks > 1 {
			inGroup(p, j.Name)
		}
		f.e.create(p)
	}
}

// pod is one task of j as a pod asks for it: whole GPUs, the replicas of
// a time-sliced GPU its share comes to, or one MIG instance.
func (f *kubeFace) pod(name string, j twin.Job) *corev1.Pod {
	switch {
	case j.Share > 0:
		return resPod(name, string(ResourceShared), j.Share*f.fleet.Slices/1000)
	case j.MIG != "":
		return resPod(name, resourceMIGPrefix+j.MIG, 1)
	}
	return pod(name, j.GPUs)
}

func (f *kubeFace) groupExists(name string) bool {
	_, err := f.e.c.Dynamic.Resource(PodGroupResource).Namespace(f.e.ns).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

// deletePods deletes a job's pods at once and waits until they are gone.
func (f *kubeFace) deletePods(name string) {
	now := int64(0)
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: labelTwinJob + "=" + name}
	if err := f.e.c.Client.CoreV1().Pods(f.e.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &now}, sel); err != nil {
		f.t.Fatal(err)
	}
	f.e.eventually(func() error {
		list, err := f.e.c.Client.CoreV1().Pods(f.e.ns).List(ctx, sel)
		if err == nil && len(list.Items) > 0 {
			err = fmt.Errorf("%d pods of %s left", len(list.Items), name)
		}
		return err
	})
}

func (f *kubeFace) pods() []corev1.Pod {
	list, err := f.e.c.Client.CoreV1().Pods(f.e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// waitCache waits until the scheduler's informers show the namespace's
// pods as the API server has them.
func (f *kubeFace) waitCache() {
	f.e.eventually(func() error {
		want := map[string]string{}
		for _, p := range f.pods() {
			want[string(p.UID)] = p.Spec.NodeName
		}
		cached, err := f.s.pods.Pods(f.e.ns).List(labels.Everything())
		if err != nil {
			return err
		}
		if len(cached) != len(want) {
			return fmt.Errorf("cache has %d pods, the API server %d", len(cached), len(want))
		}
		for _, p := range cached {
			if node, ok := want[string(p.UID)]; !ok || node != p.Spec.NodeName {
				return fmt.Errorf("cache behind on pod %s", p.Name)
			}
		}
		return nil
	})
	time.Sleep(20 * time.Millisecond) // custom resources' informers
}

// priorityClassOnce is the class of a priority, made the first time.
func (e *env) priorityClassOnce(value int) string {
	name := fmt.Sprintf("twin-%d", value)
	if _, err := e.c.Client.SchedulingV1().PriorityClasses().Get(context.Background(), e.ns+"-"+name, metav1.GetOptions{}); err == nil {
		return e.ns + "-" + name
	}
	return e.priorityClass(name, int32(value))
}
