package kube

import (
	"context"
	"fmt"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// sharedH100s are n H100s as a DRA driver publishes GPUs several claims
// may share by their memory (KEP-5075: allowMultipleAllocations, a
// consumable "memory" capacity), each with its "index".
func sharedH100s(n int) []resourcev1.Device {
	devices := h100Devices(n)
	yes := true
	for i := range devices {
		idx := int64(i)
		devices[i].AllowMultipleAllocations = &yes
		devices[i].Attributes["index"] = resourcev1.DeviceAttribute{IntValue: &idx}
	}
	return devices
}

// fractionClaim creates a claim for memory of one GPU of class (on the
// GPU of that index, when gpu is not negative).
func (e *env) fractionClaim(name, class, memory string, gpu int) {
	e.t.Helper()
	req := &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1,
		Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse(memory)}}}
	if gpu >= 0 {
		req.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf(`device.attributes["gpu.nvidia.com"].index == %d`, gpu)}}}
	}
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpus", Exactly: req}}}}}
	if _, err := e.c.Client.ResourceV1().ResourceClaims(e.ns).Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// consumed checks that claim was allocated memory of one device of node
// and returns that device.
func (e *env) consumed(claim, node, memory string) string {
	e.t.Helper()
	e.allocatedOn(claim, node, claim, 1)
	r := e.getClaim(claim).Status.Allocation.Devices.Results[0]
	if got := r.ConsumedCapacity["memory"]; got.Cmp(resource.MustParse(memory)) != 0 {
		e.t.Errorf("claim %s consumed %s of %s's memory, want %s", claim, got.String(), r.Device, memory)
	}
	return r.Device
}

// Pods claiming parts of GPUs that allow several allocations are
// fractions to the core, not whole GPUs: four claims of 0.6, 0.5, 0.4 and
// 0.5 of a GPU's memory all start in a queue of 2 GPUs (counted as a GPU
// each, two would wait), each allocated its part of a device by the
// DynamicResources plugin; a fifth, of 0.1, waits over quota although a
// GPU is free: the queue is charged the fractions.
func TestDRAFractionsOfSharedGPUs(t *testing.T) {
	e := newEnv(t)
	node := "nvfrac-0"
	e.nodeSpec(kubetest.Node{Name: node})
	e.nvidiaSlice(node, sharedH100s(3))
	class := e.nvidiaClass("gpu")
	q := e.createQueue("frac", 2)
	e.start(e.config())
	asks := map[string]string{"f1": "48Gi", "f2": "40Gi", "f3": "32Gi", "f4": "40Gi", "f5": "8Gi"}
	create := func(n string) {
		e.fractionClaim(n, class, asks[n], -1)
		p := claimPod(n, n)
		p.Labels[LabelQueue] = q
		e.create(p)
	}
	for _, n := range []string{"f1", "f2", "f3", "f4"} {
		create(n)
	}
	e.waitBound("f1", "f2", "f3", "f4")
	for _, n := range []string{"f1", "f2", "f3", "f4"} {
		e.consumed(n, node, asks[n])
	}
	create("f5")
	e.waitUnschedulable("f5", "over quota")
}

// The core records a bound pod's share on the GPU the allocator gave it:
// 40Gi and 24Gi on GPU 0, 40Gi on GPU 1, as their claims' selectors have
// it, not as the core would have packed them (40Gi beside 40Gi).
func TestDRAFractionsRecordedWhereAllocated(t *testing.T) {
	e := newEnv(t)
	node := "nvfrac-1"
	e.nodeSpec(kubetest.Node{Name: node})
	e.nvidiaSlice(node, sharedH100s(2))
	class := e.nvidiaClass("gpu")
	s, stop := e.start(e.config())
	want := map[string]int{}
	for _, c := range []struct {
		name, mem string
		gpu       int
	}{{"a", "40Gi", 0}, {"b", "40Gi", 1}, {"c", "24Gi", 0}} {
		e.fractionClaim(c.name, class, c.mem, c.gpu)
		e.create(claimPod(c.name, c.name))
		e.waitBound(c.name)
		if got := e.consumed(c.name, node, c.mem); got != fmt.Sprintf("gpu-%d", c.gpu) {
			t.Fatalf("claim %s allocated %s, want gpu-%d", c.name, got, c.gpu)
		}
		want[c.name] = c.gpu
	}
	e.fractionClaim("big", class, "48Gi", -1) // fits no GPU: it waits, so the core's state is built
	e.create(claimPod("big", "big"))
	e.waitUnschedulable("big", "cannot allocate all claims")
	stop() // the test takes the snapshot: the scheduler's loop must not take one at the same time
	e.eventually(func() error {
		changed, err := s.refreshPods()
		if err != nil {
			return err
		}
		snap, err := s.snapshot(context.Background(), changed)
		if err != nil || snap.state == nil {
			return fmt.Errorf("no state built: %v", err)
		}
		got := map[string]int{}
		for _, b := range snap.boundPods() {
			if p := snap.state.Job(b.job); p != nil && len(p.Tasks) == 1 && len(p.Tasks[0].GPUs) == 1 {
				got[b.pod.Name] = p.Tasks[0].GPUs[0]
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("the core holds the shares on GPUs %v, the allocator gave %v", got, want)
		}
		return nil
	})
}
