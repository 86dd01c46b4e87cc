package upstream

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// newTestFramework is a Framework on a fake client, its informers started
// and synced, stopped when the test or benchmark ends.
func newTestFramework(t testing.TB) *Framework {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	f, err := New(ctx, client, factory, "corral")
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return f
}

// Pods placed in a cycle count for the next: a second anti-affine pod is
// refused beside the first, fits on the other node, and once the first is
// taken back fits on both again.
func TestViewPlacesInOrder(t *testing.T) {
	f := newTestFramework(t)
	nodes := benchNodes(2)
	v := f.NewView(nodes, nil)
	ctx := context.Background()
	a, b := benchPod(1, true), benchPod(2, true)
	if got := v.Allowed(ctx, a); len(got.Nodes) != 2 {
		t.Fatalf("allowed %v, want both nodes", got.Nodes)
	}
	mark := v.Mark()
	if err := v.Place(ctx, a, "node-000"); err != nil {
		t.Fatal(err)
	}
	err := v.Place(ctx, b, "node-000")
	if err == nil || !strings.Contains(err.Error(), "anti-affinity") {
		t.Fatalf("second anti-affine pod beside the first: %v, want refused for anti-affinity", err)
	}
	if got := v.Allowed(ctx, b); len(got.Nodes) != 1 || got.Nodes[0] != "node-001" {
		t.Fatalf("allowed %v after the first pod was placed, want only node-001 (%s)", got.Nodes, got.Why(2))
	}
	if err := v.Place(ctx, b, "node-001"); err != nil {
		t.Fatalf("on the other node: %v", err)
	}
	v.Undo(ctx, mark)
	if got := v.Allowed(ctx, b); len(got.Nodes) != 2 {
		t.Fatalf("allowed %v after both were taken back, want both nodes", got.Nodes)
	}
}

// The core's resources are left to the core; the others are checked, and
// so is a core resource a DeviceClass stands for.
func TestWithoutCoreResources(t *testing.T) {
	p := benchPod(1, false)
	p.Spec.Containers[0].Resources.Requests["rdma/ib"] = resource.MustParse("1")
	p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	none := func(corev1.ResourceName) bool { return false }
	got := withoutCoreResources(p, none)
	req := got.Spec.Containers[0].Resources.Requests
	if _, ok := req[corev1.ResourceCPU]; ok {
		t.Errorf("cpu left in %v", req)
	}
	if _, ok := req["nvidia.com/gpu"]; ok {
		t.Errorf("nvidia.com/gpu left in %v", req)
	}
	if q := req["rdma/ib"]; q.Value() != 1 {
		t.Errorf("rdma/ib dropped from %v", req)
	}
	if len(got.Spec.Overhead) != 0 {
		t.Errorf("overhead %v left", got.Spec.Overhead)
	}
	if _, ok := p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; !ok {
		t.Error("the pod itself was changed")
	}
	gpus := func(n corev1.ResourceName) bool { return n == "nvidia.com/gpu" }
	req = withoutCoreResources(p, gpus).Spec.Containers[0].Resources.Requests
	if _, ok := req["nvidia.com/gpu"]; !ok {
		t.Errorf("nvidia.com/gpu, which a DeviceClass stands for, dropped from %v", req)
	}
	if _, ok := req[corev1.ResourceCPU]; ok {
		t.Errorf("cpu left in %v", req)
	}
}
