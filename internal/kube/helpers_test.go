package kube

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(leaderChildEnv); spec != "" {
		os.Exit(runLeaderChild(spec)) // a scheduler process that a test kills
	}
	os.Exit(kubetest.Main(m))
}

// testLabel marks the nodes of one test; its scheduler places only there.
const testLabel = "corral.test/ns"

// env is one test's namespace, nodes and scheduler.
type env struct {
	t  *testing.T
	c  *kubetest.Cluster
	ns string
	sa *kubetest.Identity // corral as deployed, made when first asked for
}

// leaseNamespace is where deploy/rbac.yaml lets corral keep its Lease and
// its accounting log.
const leaseNamespace = "corral-system"

// deployed are the clients of corral as deploy/ runs it: the
// ServiceAccount of deploy/rbac.yaml, never an admin; the test fails if
// any request of theirs is forbidden.
func (e *env) deployed() *kubetest.Identity {
	if e.sa == nil {
		e.sa = e.c.Deployed(e.t)
	}
	return e.sa
}

// newScheduler is a scheduler with cfg running as deploy/ runs it.
func (e *env) newScheduler(cfg Config) *Scheduler {
	sa := e.deployed()
	return New(sa.Client, sa.Dynamic, cfg, testLogger())
}

func newEnv(t *testing.T) *env {
	c := kubetest.Shared(t)
	return &env{t: t, c: c, ns: c.Namespace(t)}
}

// node creates a GPU node of this test: gpus H100s with the given labels.
func (e *env) node(name string, gpus int, extra map[string]string) {
	e.t.Helper()
	l := map[string]string{testLabel: e.ns}
	for k, v := range extra {
		l[k] = v
	}
	e.c.CreateNode(e.t, kubetest.Node{Name: name, GPUs: gpus, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559, Labels: l})
}

// nodeSpec creates a node of this test from a full description.
func (e *env) nodeSpec(n kubetest.Node) {
	e.t.Helper()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[testLabel] = e.ns
	e.c.CreateNode(e.t, n)
}

func (e *env) config() Config {
	sel := labels.SelectorFromSet(labels.Set{testLabel: e.ns})
	return Config{NodeSelector: sel, Interval: 500 * time.Millisecond,
		Levels: []Level{{Name: "block", Labels: []string{"corral.test/block"}}, {Name: "rack", Labels: []string{"corral.test/rack"}}}}
}

// configNoGrace is config with no grace period for preemption victims:
// they are deleted at once, as no kubelet runs to stop them.
func (e *env) configNoGrace() Config {
	cfg := e.config()
	zero := int64(0)
	cfg.PreemptionGrace = &zero
	return cfg
}

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// start runs a scheduler until the test ends, or until the returned
// function stops it.
func (e *env) start(cfg Config) (*Scheduler, func()) {
	e.t.Helper()
	s := e.newScheduler(cfg)
	return s, e.startScheduler(s)
}

// startScheduler runs s until the test ends, or until the returned
// function stops it.
func (e *env) startScheduler(s *Scheduler) func() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Run(ctx); err != nil {
			e.t.Errorf("scheduler: %v", err)
		}
	}()
	stop := func() { cancel(); <-done }
	e.t.Cleanup(stop)
	return stop
}

// pod is a pod for corral asking for gpus whole GPUs and a little CPU.
func pod(name string, gpus int) *corev1.Pod {
	req := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1"),
		corev1.ResourceMemory: resource.MustParse("1Gi"),
	}
	if gpus > 0 {
		req[kubetest.ResourceGPU] = *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	}
	return podWith(name, req)
}

func podWith(name string, req corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Spec: corev1.PodSpec{
			SchedulerName: DefaultSchedulerName,
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.invalid/train:1",
				Resources: corev1.ResourceRequirements{Requests: req, Limits: extendedOnly(req)},
			}},
		},
	}
}

// extendedOnly keeps the extended resources, whose limits must equal
// their requests.
func extendedOnly(req corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range req {
		if strings.Contains(string(k), "/") {
			out[k] = v
		}
	}
	return out
}

func inGroup(p *corev1.Pod, group string) *corev1.Pod {
	p.Labels[LabelPodGroup] = group
	return p
}

func (e *env) create(pods ...*corev1.Pod) {
	e.t.Helper()
	for _, p := range pods {
		if err := e.createPod(p); err != nil {
			e.t.Fatalf("pod %s: %v", p.Name, err)
		}
	}
}

// createPod creates a pod, retrying for a few seconds while the API
// server's priority admission has not yet seen a PriorityClass just made.
func (e *env) createPod(p *corev1.Pod) error {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err := e.c.Client.CoreV1().Pods(e.ns).Create(context.Background(), p, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "no PriorityClass with name") || time.Now().After(deadline) {
			return err
		}
	}
}

// podGroup creates a PodGroup with minMember and annotations.
func (e *env) podGroup(name string, minMember int, ann map[string]string) {
	e.t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1",
		"kind":       "PodGroup",
		"metadata":   map[string]any{"name": name, "namespace": e.ns},
		"spec":       map[string]any{"minMember": int64(minMember)},
	}}
	obj.SetAnnotations(ann)
	_, err := e.c.Dynamic.Resource(PodGroupResource).Namespace(e.ns).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("pod group %s: %v", name, err)
	}
}

// nodesOf returns pod name -> node for the pods of the namespace.
func (e *env) nodesOf() map[string]string {
	e.t.Helper()
	list, err := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		out[p.Name] = p.Spec.NodeName
	}
	return out
}

// waitBound waits until every named pod is bound and returns pod -> node.
func (e *env) waitBound(names ...string) map[string]string {
	e.t.Helper()
	var got map[string]string
	e.eventually(func() error {
		got = e.nodesOf()
		for _, n := range names {
			if got[n] == "" {
				return fmt.Errorf("pod %s not bound (pods: %v)", n, got)
			}
		}
		return nil
	})
	return got
}

// waitUnschedulable waits until the pod has PodScheduled=False whose
// message contains want, and a FailedScheduling event saying the same.
func (e *env) waitUnschedulable(name, want string) string {
	e.t.Helper()
	return e.waitReason(name, "", want)
}

// waitReason waits as waitUnschedulable does, for a condition of reason
// too (any when empty).
func (e *env) waitReason(name, reason, want string) string {
	e.t.Helper()
	var msg string
	e.eventually(func() error {
		p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.NodeName != "" {
			e.t.Fatalf("pod %s bound to %s, want it pending", name, p.Spec.NodeName)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, want) &&
				(reason == "" || c.Reason == reason) {
				msg = c.Message
				return e.hasEvent(name, EventFailedScheduling, want)
			}
		}
		return fmt.Errorf("pod %s: conditions %+v lack %q", name, p.Status.Conditions, want)
	})
	return msg
}

func (e *env) hasEvent(pod, reason, want string) error {
	evs, err := e.c.Client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ev := range evs.Items {
		if ev.InvolvedObject.Name == pod && ev.Reason == reason && strings.Contains(ev.Message, want) {
			return nil
		}
	}
	return fmt.Errorf("no %s event for %s containing %q", reason, pod, want)
}

// eventually retries check until it passes or 30 s pass.
func (e *env) eventually(check func() error) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gpusPerNode sums the GPU requests of the namespace's bound pods by node.
func (e *env) gpusPerNode() map[string]int64 {
	e.t.Helper()
	list, err := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int64{}
	for i := range list.Items {
		p := &list.Items[i]
		if p.Spec.NodeName != "" {
			q := podRequests(p)[ResourceGPU]
			out[p.Spec.NodeName] += q.Value()
		}
	}
	return out
}

// priorityClass creates a PriorityClass for this test and returns its name.
func (e *env) priorityClass(name string, value int32) string {
	e.t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name}, Value: value}
	ctx := context.Background()
	if _, err := e.c.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("priority class %s: %v", pc.Name, err)
	}
	e.t.Cleanup(func() { _ = e.c.Client.SchedulingV1().PriorityClasses().Delete(ctx, pc.Name, metav1.DeleteOptions{}) })
	return pc.Name
}

// waitGroupStatus waits until the PodGroup's status says phase and
// scheduled.
// politeClass is a PriorityClass of value whose pods never preempt
// (preemptionPolicy: Never), removed when the test ends.
func (e *env) politeClass(value int32) string {
	e.t.Helper()
	never := corev1.PreemptNever
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "polite-" + e.ns}, Value: value, PreemptionPolicy: &never}
	if _, err := e.c.Client.SchedulingV1().PriorityClasses().Create(context.Background(), pc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = e.c.Client.SchedulingV1().PriorityClasses().Delete(context.Background(), pc.Name, metav1.DeleteOptions{})
	})
	return pc.Name
}

func (e *env) waitGroupStatus(name, phase string, scheduled int64) {
	e.t.Helper()
	e.eventually(func() error {
		obj, err := e.c.Dynamic.Resource(PodGroupResource).Namespace(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		gotPhase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		got, _, _ := unstructured.NestedInt64(obj.Object, "status", "scheduled")
		if gotPhase != phase || got != scheduled {
			return fmt.Errorf("pod group %s: status %v, want phase %s scheduled %d", name, obj.Object["status"], phase, scheduled)
		}
		return nil
	})
}

// gate adds a scheduling gate to p, as Kueue does to pods it holds.
func gate(p *corev1.Pod) *corev1.Pod {
	p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/admission"}}
	return p
}

// ungate removes the pod's scheduling gates.
func (e *env) ungate(name string) {
	e.t.Helper()
	ctx := context.Background()
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	p.Spec.SchedulingGates = nil
	if _, err := e.c.Client.CoreV1().Pods(e.ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("ungating %s: %v", name, err)
	}
}

// scheduledCondition is the pod's PodScheduled condition, or a zero one.
func (e *env) scheduledCondition(name string) (string, corev1.PodCondition) {
	e.t.Helper()
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return p.Spec.NodeName, c
		}
	}
	return p.Spec.NodeName, corev1.PodCondition{}
}

// nodeEvent checks for an event of reason on the node whose message
// contains want (node events live in the default namespace).
func (e *env) nodeEvent(node, reason, want string) error {
	evs, err := e.c.Client.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ev := range evs.Items {
		if ev.InvolvedObject.Kind == "Node" && ev.InvolvedObject.Name == node && ev.Reason == reason && strings.Contains(ev.Message, want) {
			return nil
		}
	}
	return fmt.Errorf("no %s event on node %s containing %q", reason, node, want)
}
