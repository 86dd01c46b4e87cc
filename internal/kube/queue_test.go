package kube

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/corral-sched/corral/internal/kube/kubetest"
	"github.com/corral-sched/corral/internal/queue"
)

func queueObject(name string, gpus int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "corral.sh/v1alpha1", "kind": "Queue",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"tenant": "research", "quota": map[string]any{"gpus": gpus}},
	}}
}

// createQueue makes a cluster-wide Queue for this test.
func (e *env) createQueue(name string, gpus int64) string {
	e.t.Helper()
	name = e.ns + "-" + name
	ctx := context.Background()
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, queueObject(name, gpus), metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("queue %s: %v", name, err)
	}
	e.t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, name, metav1.DeleteOptions{}) })
	return name
}

func TestQueueRejectsNegativeQuota(t *testing.T) {
	e := newEnv(t)
	_, err := e.c.Dynamic.Resource(QueueResource).Create(context.Background(), queueObject(e.ns+"-neg", -1), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.quota.gpus") {
		t.Fatalf("negative quota: err %v, want the API server to reject spec.quota.gpus", err)
	}
	e.createQueue("zero", 0)
}

func TestQueueQuotaAtAdmission(t *testing.T) {
	e := newEnv(t)
	e.node("quota-0", 8, nil)
	e.node("quota-1", 8, nil)
	q := e.createQueue("team", 6)
	e.start(e.config())
	a, b := pod("a", 4), pod("b", 4)
	a.Labels[LabelQueue], b.Labels[LabelQueue] = q, q
	e.create(a)
	e.waitBound("a")
	e.create(b)
	e.waitUnschedulable("b", "over quota")
	c := pod("c", 2)
	c.Labels[LabelQueue] = q
	e.create(c)
	e.waitBound("c")
}

// The API server checks a Queue's cohort fields against the CRD's schema,
// and the scheduler reads them.
func TestQueueCohortFields(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	bad := queueObject(e.ns+"-badborrow", 4)
	bad.Object["spec"].(map[string]any)["cohort"] = "lab"
	bad.Object["spec"].(map[string]any)["borrowingLimit"] = map[string]any{"gpus": int64(-2)}
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, bad, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.borrowingLimit.gpus") {
		t.Fatalf("negative borrowing limit: %v, want the API server to reject it", err)
	}
	good := queueObject(e.ns+"-lab", 4)
	good.Object["spec"].(map[string]any)["cohort"] = "lab"
	good.Object["spec"].(map[string]any)["borrowingLimit"] = map[string]any{"gpus": int64(2)}
	created, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, good, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, created.GetName(), metav1.DeleteOptions{}) })
	q, err := parseQueue(created)
	if err != nil || q.Cohort != "lab" || q.Borrow != 2 || q.GPUs != 4 {
		t.Errorf("parsed %+v, %v", q, err)
	}
}

// A Queue's CPU and memory quotas cap what its bound pods request, as its
// GPU quota caps their GPUs: with 8 GPUs, 4 CPUs and 6Gi, a pod of 1 GPU
// and 3 CPUs binds, a second such pod waits for quota naming the CPU, a
// pod of 1 CPU binds beside the first, and a pod of 8Gi waits naming the
// memory. The API server takes quantities ("4", 4, "6Gi") and refuses
// what is not one.
func TestQueueCPUAndMemoryQuota(t *testing.T) {
	e := newEnv(t)
	e.node("cpuquota-0", 8, nil)
	ctx := context.Background()
	name := e.ns + "-cpu"
	obj := queueObject(name, 8)
	obj.Object["spec"].(map[string]any)["quota"] = map[string]any{"gpus": int64(8), "cpu": int64(4), "memory": "6Gi"}
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, name, metav1.DeleteOptions{}) })
	bad := queueObject(e.ns+"-badcpu", 1)
	bad.Object["spec"].(map[string]any)["quota"] = map[string]any{"cpu": "lots"}
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, bad, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.quota.cpu") {
		t.Errorf("spec.quota.cpu lots: %v, want the API server to refuse it", err)
	}
	e.start(e.config())
	withRequests := func(podName, cpu, memory string) {
		p := podWith(podName, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
			kubetest.ResourceGPU: resource.MustParse("1")})
		p.Labels[LabelQueue] = name
		e.create(p)
	}
	withRequests("first", "3", "1Gi")
	e.waitBound("first")
	withRequests("second", "3", "1Gi")
	e.waitReason("second", ReasonWaitingForQuota, "has room for 1 CPUs of its 4 CPUs (spec.quota.cpu); this needs 3 CPUs")
	withRequests("small", "1", "1Gi")
	e.waitBound("small")
	withRequests("big-memory", "0", "8Gi")
	e.waitReason("big-memory", ReasonWaitingForQuota, "has room for 4096 MiB of memory of its 6144 MiB of memory (spec.quota.memory); this needs 8192 MiB of memory")
}

// spec.quota.cpu and memory, and the borrowing limits of each, read as
// Kubernetes quantities; a queue without a quota has no limit and lends
// none of it to its cohort.
func TestParseQueueResourceQuotas(t *testing.T) {
	obj := queueObject("q", 4)
	obj.Object["spec"].(map[string]any)["quota"] = map[string]any{"gpus": int64(4), "cpu": "1500m", "memory": int64(1 << 30)}
	obj.Object["spec"].(map[string]any)["borrowingLimit"] = map[string]any{"gpus": int64(2), "cpu": "2", "memory": "512Mi"}
	q, err := parseQueue(obj)
	if err != nil || q.CPUMilli == nil || *q.CPUMilli != 1500 || q.MemoryMiB == nil || *q.MemoryMiB != 1024 {
		t.Fatalf("parsed %+v, %v; want 1500 milli-cores and 1024 MiB", q, err)
	}
	free, err := parseQueue(queueObject("free", 4))
	if err != nil || free.CPUMilli != nil || free.MemoryMiB != nil {
		t.Fatalf("parsed %+v, %v; want no CPU or memory limit", free, err)
	}
	free.Cohort, q.Cohort = "lab", "lab"
	specs := queueSpecs(map[string]*queueSpec{"q": q, "free": free}, 8, nil)
	if s := specs[0]; s.Name != "free" || s.Nominal[queue.CPU] != noQuota || s.LendingLimit[queue.CPU] != 0 || s.LendingLimit[queue.Memory] != 0 {
		t.Errorf("the queue without CPU or memory quota: %+v", s)
	}
	if s := specs[1]; s.Nominal[queue.CPU] != 1500 || s.Nominal[queue.Memory] != 1024 || s.LendingLimit != nil ||
		s.BorrowingLimit[anyGPU] != 2000 || s.BorrowingLimit[queue.CPU] != 2000 || s.BorrowingLimit[queue.Memory] != 512 {
		t.Errorf("the queue with them: %+v", s)
	}
	if _, err := queue.NewBook(specs, 0); err != nil {
		t.Errorf("the book refuses the specs: %v", err)
	}
	alone := queueSpecs(map[string]*queueSpec{"free": {Name: "free", GPUs: -1, Borrow: -1}}, 8, nil)
	if _, err := queue.NewBook(alone, 0); err != nil || alone[0].LendingLimit != nil {
		t.Errorf("a queue of no cohort: %+v, the book says %v", alone[0], err)
	}
	obj.Object["spec"].(map[string]any)["quota"] = map[string]any{"cpu": "-1"}
	if _, err := parseQueue(obj); err == nil || !strings.Contains(err.Error(), "spec.quota.cpu") {
		t.Errorf("a negative CPU quota: %v", err)
	}
}

// CPU is lent and borrowed in a cohort within spec.borrowingLimit.cpu,
// as GPUs are: borrower (2 CPUs, borrowing at most 2) runs pods of 3 and
// 1 CPU on lender's unused 8, and a third pod of 1 CPU waits.
func TestQueueBorrowsCPUWithinItsLimit(t *testing.T) {
	e := newEnv(t)
	e.node("cpuborrow-0", 8, nil)
	ctx := context.Background()
	create := func(short string, cpu int64, borrow map[string]any) string {
		name := e.ns + "-" + short
		obj := queueObject(name, 8)
		spec := obj.Object["spec"].(map[string]any)
		spec["quota"], spec["cohort"] = map[string]any{"gpus": int64(4), "cpu": cpu}, e.ns+"-lab"
		if borrow != nil {
			spec["borrowingLimit"] = borrow
		}
		if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("queue %s: %v", name, err)
		}
		t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, name, metav1.DeleteOptions{}) })
		return name
	}
	create("lender", 8, nil)
	borrower := create("borrower", 2, map[string]any{"cpu": "2"})
	e.start(e.config())
	withCPU := func(podName, cpu string) {
		p := podWith(podName, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi"),
			kubetest.ResourceGPU: resource.MustParse("1")})
		p.Labels[LabelQueue] = borrower
		e.create(p)
	}
	withCPU("three", "3")
	e.waitBound("three")
	withCPU("one", "1")
	e.waitBound("one")
	withCPU("over", "1")
	e.waitReason("over", ReasonWaitingForQuota, "spec.quota.cpu")
}

// A Queue's spec.quota.models caps each model's GPUs within its quota:
// with 2 L4s at most, a pod of 4 GPUs of any model lands on the H100 node
// beside another pod, not on the empty L4 node where placement alone puts
// it; a pod pinned to L4s (gpu.product) asking 3 waits for quota naming
// the model's cap.
func TestQueueCapsGPUsPerModel(t *testing.T) {
	e := newEnv(t)
	e.node("mcap-h100", 8, nil)
	e.nodeSpec(kubetest.Node{Name: "mcap-l4", GPUs: 8, Product: "NVIDIA-L4", GPUMemMiB: 23034})
	ctx := context.Background()
	name := e.ns + "-models"
	obj := queueObject(name, 16)
	obj.Object["spec"].(map[string]any)["quota"] = map[string]any{"gpus": int64(16), "models": map[string]any{"L4": int64(2)}}
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, name, metav1.DeleteOptions{}) })
	e.start(e.config())
	inQueue := func(podName string, gpus int, product string) {
		p := pod(podName, gpus)
		p.Labels[LabelQueue] = name
		if product != "" {
			p.Spec.NodeSelector = map[string]string{kubetest.LabelProduct: product}
		}
		e.create(p)
	}
	inQueue("h100s", 4, "NVIDIA-H100-80GB-HBM3")
	e.waitBound("h100s")
	inQueue("anywhere", 4, "")
	e.waitBound("anywhere")
	if p, err := e.c.Client.CoreV1().Pods(e.ns).Get(ctx, "anywhere", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "mcap-h100" {
		t.Errorf("the pod of any model is on %q (%v), want mcap-h100: the L4 cap has room for 2 GPUs only", p.Spec.NodeName, err)
	}
	inQueue("l4s", 3, "NVIDIA-L4")
	e.waitReason("l4s", ReasonWaitingForQuota, `has room for 2 GPUs of its 2 L4 (spec.quota.models); this needs 3`)
}
