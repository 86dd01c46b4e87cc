package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// extendedClass creates a DeviceClass of the fake driver's devices that
// stands for the extended resource name (spec.extendedResourceName,
// KEP-5004) and returns its name.
func (e *env) extendedClass(name corev1.ResourceName) string {
	e.t.Helper()
	ext := string(name)
	return e.fakeClass("ext-"+e.ns, &ext)
}

// extendedClaim is the ResourceClaim kube-scheduler's DynamicResources
// plugin made for pod's extended resources, nil while there is none.
func (e *env) extendedClaim(pod string) *resourcev1.ResourceClaim {
	e.t.Helper()
	list, err := e.c.Client.ResourceV1().ResourceClaims(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for i, c := range list.Items {
		if c.Annotations[resourcev1.ExtendedResourceClaimAnnotation] != "true" {
			continue
		}
		for _, o := range c.OwnerReferences {
			if o.Kind == "Pod" && o.Name == pod {
				return &list.Items[i]
			}
		}
	}
	return nil
}

// extendedAllocatedOn checks that pod has a claim made for its extended
// resources, allocating devices of node and reserved for it, which the
// pod's status names.
func (e *env) extendedAllocatedOn(pod, node string, devices int) {
	e.t.Helper()
	var c *resourcev1.ResourceClaim
	e.eventually(func() error {
		if c = e.extendedClaim(pod); c == nil || c.Status.Allocation == nil {
			return fmt.Errorf("no allocated extended-resource claim for %s yet (%v)", pod, c)
		}
		return nil
	})
	e.allocatedOn(c.Name, node, pod, devices)
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if st := p.Status.ExtendedResourceClaimStatus; st == nil || st.ResourceClaimName != c.Name {
		e.t.Errorf("pod %s: status extendedResourceClaimStatus %+v, want it to name claim %s", pod, st, c.Name)
	}
}

// A pod asking for an extended resource that a DeviceClass stands for
// (KEP-5004), which no node advertises, is bound where the class's
// devices are; the upstream DynamicResources plugin makes its claim,
// owned by the pod and allocated there, and maps the pod's request to it
// in the pod's status. A second pod asking for more than is left waits.
func TestDRAExtendedResourceMapping(t *testing.T) {
	e := newEnv(t)
	e.node("ext-0", 8, nil)
	e.node("ext-1", 8, nil)
	e.start(e.config())
	const accel = corev1.ResourceName("example.com/accel")
	e.extendedClass(accel)
	e.devices("ext-1", 2, "H100", "80Gi")
	asking := func(name string, n int64) *corev1.Pod {
		return podWith(name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
			accel: *resource.NewQuantity(n, resource.DecimalSI)})
	}
	e.create(asking("accel", 2))
	if got := e.waitBound("accel"); got["accel"] != "ext-1" {
		t.Fatalf("accel bound to %s, want ext-1, the node with the devices", got["accel"])
	}
	e.extendedAllocatedOn("accel", "ext-1", 2)
	e.create(asking("more", 1))
	e.waitUnschedulable("more", "")
	time.Sleep(3 * e.config().Interval)
	if got := e.nodesOf(); got["more"] != "" {
		t.Errorf("more bound to %s while both devices are allocated", got["more"])
	}
}

// NVIDIA GPUs asked for as an extended resource their DeviceClass stands
// for, by its own name (deviceclass.resource.kubernetes.io/<class>) or by
// the name the class gives (nvidia.com/gpu, as a cluster moving from the
// device plugin to DRA would), are allocated by the DynamicResources
// plugin on a node without a device plugin, and are GPUs to the core: a
// Queue's quota of 2 GPUs runs the first pod of 2 and keeps the second
// waiting over quota, though the node has 4.
func TestDRAExtendedResourceNVIDIAGPUsCountAsGPUs(t *testing.T) {
	for _, byName := range []bool{false, true} {
		t.Run(map[bool]string{false: "class name", true: "nvidia.com/gpu"}[byName], func(t *testing.T) {
			e := newEnv(t)
			node := "nvext-" + map[bool]string{false: "0", true: "1"}[byName]
			e.nodeSpec(kubetest.Node{Name: node}) // no device plugin GPUs
			var ext *string
			if byName {
				gpu := string(kubetest.ResourceGPU)
				ext = &gpu
			}
			class := e.nvidiaClassFor("gpu", ext)
			e.nvidiaSlice(node, h100Devices(4))
			q := e.createQueue("ext", 2)
			e.start(e.config())
			name := corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix + class)
			if byName {
				name = kubetest.ResourceGPU
			}
			for _, n := range []string{"first", "second"} {
				p := podWith(n, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
					name: *resource.NewQuantity(2, resource.DecimalSI)})
				p.Labels[LabelQueue] = q
				e.create(p)
				if n == "first" {
					e.waitBound("first")
					e.extendedAllocatedOn("first", node, 2)
				}
			}
			e.waitUnschedulable("second", "over quota")
			if got := e.nodesOf(); got["second"] != "" {
				t.Fatalf("second bound to %s beyond its queue's 2 GPUs", got["second"])
			}
		})
	}
}
