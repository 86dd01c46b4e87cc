package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// The tests of dynamic resource allocation (resource.k8s.io/v1) publish
// the devices of a fake driver as a DRA driver would, in ResourceSlices,
// and ask for them in ResourceClaims.

// fakeDriver is not a driver of GPUs (Config.DRAGPUDrivers): its devices
// are devices the core does not count, only the DynamicResources plugin.
const fakeDriver = "devices.example.com"

// deviceClass creates a DeviceClass of the fake driver's devices and
// returns its name.
func (e *env) deviceClass() string {
	e.t.Helper()
	return e.fakeClass("gpu-"+e.ns, nil)
}

// fakeClass creates a DeviceClass name of the fake driver's devices,
// standing for the extended resource ext when it is not nil.
func (e *env) fakeClass(name string, ext *string) string {
	e.t.Helper()
	dc := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: ext, Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", fakeDriver)}}}}}
	ctx := context.Background()
	if _, err := e.c.Client.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.c.Client.ResourceV1().DeviceClasses().Delete(ctx, dc.Name, metav1.DeleteOptions{}) })
	return dc.Name
}

// devices publishes n GPUs of product on node in a ResourceSlice, with
// the attributes and capacity NVIDIA's DRA driver gives its GPUs.
func (e *env) devices(node string, n int, product string, memory string) {
	e.t.Helper()
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-" + fakeDriver},
		Spec: resourcev1.ResourceSliceSpec{Driver: fakeDriver, NodeName: &node,
			Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
	for i := range n {
		prod, typ := product, "gpu"
		slice.Spec.Devices = append(slice.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"productName": {StringValue: &prod}, "type": {StringValue: &typ}},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse(memory)}},
		})
	}
	ctx := context.Background()
	if _, err := e.c.Client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.c.Client.ResourceV1().ResourceSlices().Delete(ctx, slice.Name, metav1.DeleteOptions{}) })
}

// nvidiaClass creates a DeviceClass of NVIDIA's DRA driver's devices of
// type typ ("gpu", "mig") and returns its name.
func (e *env) nvidiaClass(typ string) string {
	e.t.Helper()
	return e.nvidiaClassFor(typ, nil)
}

// nvidiaClassFor is nvidiaClass standing for the extended resource ext
// when it is not nil (KEP-5004).
func (e *env) nvidiaClassFor(typ string, ext *string) string {
	e.t.Helper()
	dc := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "nv" + typ + "-" + e.ns},
		Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: ext, Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf(`device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == %q`, typ)}}}}}
	ctx := context.Background()
	if _, err := e.c.Client.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.c.Client.ResourceV1().DeviceClasses().Delete(ctx, dc.Name, metav1.DeleteOptions{}) })
	return dc.Name
}

// nvidiaSlice publishes devices on node as NVIDIA's DRA driver would.
func (e *env) nvidiaSlice(node string, devices []resourcev1.Device) {
	e.t.Helper()
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-nvidia"},
		Spec: resourcev1.ResourceSliceSpec{Driver: DriverNVIDIA, NodeName: &node, Devices: devices,
			Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
	ctx := context.Background()
	if _, err := e.c.Client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.c.Client.ResourceV1().ResourceSlices().Delete(ctx, slice.Name, metav1.DeleteOptions{}) })
}

// h100Devices are n H100 GPUs as NVIDIA's DRA driver describes them.
func h100Devices(n int) []resourcev1.Device {
	var devices []resourcev1.Device
	for i := range n {
		prod, typ := "NVIDIA H100 80GB HBM3", "gpu"
		devices = append(devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"productName": {StringValue: &prod}, "type": {StringValue: &typ}},
			Capacity:   map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}}})
	}
	return devices
}

// claim creates a ResourceClaim for count devices of class that satisfy
// the CEL expression sel ("" for any).
func (e *env) claim(name, class string, count int64, sel string) {
	e.t.Helper()
	req := &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count}
	if sel != "" {
		req.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: sel}}}
	}
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpus", Exactly: req}}}}}
	if _, err := e.c.Client.ResourceV1().ResourceClaims(e.ns).Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// claimPod is a CPU pod for corral that uses the named ResourceClaim.
func claimPod(name, claim string) *corev1.Pod {
	p := pod(name, 0)
	p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimName: &claim}}
	p.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpus"}}
	return p
}

// getClaim reads a claim.
func (e *env) getClaim(name string) *resourcev1.ResourceClaim {
	e.t.Helper()
	c, err := e.c.Client.ResourceV1().ResourceClaims(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// boundWithClaim waits until the pods are bound, and checks that they are
// on one node, where the claim they share is allocated (devices of them)
// and reserved for each.
func (e *env) boundWithClaim(claim string, devices int, pods ...string) {
	e.t.Helper()
	got := e.waitBound(pods...)
	node := got[pods[0]]
	for _, n := range pods {
		if got[n] != node {
			e.t.Fatalf("pods on %v: a claim's devices are on one node, so all its pods must be", got)
		}
		e.allocatedOn(claim, node, n, devices)
	}
}

// allocatedOn checks that the claim is allocated, every device from
// node's pool, and reserved for the pod.
func (e *env) allocatedOn(claim, node, podName string, devices int) {
	e.t.Helper()
	c := e.getClaim(claim)
	if c.Status.Allocation == nil {
		e.t.Fatalf("claim %s not allocated, though its pod is bound", claim)
	}
	res := c.Status.Allocation.Devices.Results
	if len(res) != devices {
		e.t.Errorf("claim %s: %d devices allocated, want %d", claim, len(res), devices)
	}
	for _, r := range res {
		if r.Pool != node {
			e.t.Errorf("claim %s: device %s/%s/%s, want one of node %s", claim, r.Driver, r.Pool, r.Device, node)
		}
	}
	if !slices.ContainsFunc(c.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool { return r.Name == podName }) {
		e.t.Errorf("claim %s reserved for %+v, not for pod %s", claim, c.Status.ReservedFor, podName)
	}
}

// A claim whose CEL selector only one node's devices satisfy is allocated
// there, and its pod bound there; a pod whose claim no device satisfies
// waits.
func TestDRAClaimWithCELSelectorAllocated(t *testing.T) {
	e := newEnv(t)
	e.node("dra-a", 8, nil)
	e.node("dra-b", 8, nil)
	e.node("dra-c", 8, nil)
	class := e.deviceClass()
	e.devices("dra-a", 4, "A100", "40Gi")
	e.devices("dra-c", 4, "H100", "80Gi")
	e.start(e.config())
	sel := fmt.Sprintf(`device.attributes[%q].productName == "H100" && device.capacity[%q].memory.compareTo(quantity("80Gi")) >= 0`, fakeDriver, fakeDriver)
	e.claim("h100s", class, 2, sel)
	e.claim("b200s", class, 1, fmt.Sprintf(`device.attributes[%q].productName == "B200"`, fakeDriver))
	e.create(claimPod("wants-h100", "h100s"), claimPod("wants-b200", "b200s"))
	got := e.waitBound("wants-h100")
	if got["wants-h100"] != "dra-c" {
		t.Fatalf("wants-h100 bound to %s; only dra-c has H100 devices", got["wants-h100"])
	}
	e.allocatedOn("h100s", "dra-c", "wants-h100", 2)
	e.waitUnschedulable("wants-b200", "cannot allocate all claims")
	if c := e.getClaim("b200s"); c.Status.Allocation != nil {
		t.Errorf("claim b200s allocated %+v though no device is a B200", c.Status.Allocation)
	}
}

// A pod with a claim is never bound to a node with no devices, though the
// core alone would put it beside the pod already there.
func TestDRAPodNeverBoundWhereNoDevices(t *testing.T) {
	e := newEnv(t)
	e.node("nodev-0", 8, nil)
	e.start(e.config())
	class := e.deviceClass()
	e.create(pod("cpu", 0))
	e.waitBound("cpu")
	e.claim("one", class, 1, "")
	e.create(claimPod("needs-device", "one"))
	e.waitUnschedulable("needs-device", "cannot allocate all claims")
	time.Sleep(3 * e.config().Interval)
	if got := e.nodesOf(); got["needs-device"] != "" {
		t.Fatalf("needs-device bound to %s, which has no devices", got["needs-device"])
	}
	e.node("nodev-1", 8, nil)
	e.devices("nodev-1", 1, "H100", "80Gi")
	if got := e.waitBound("needs-device"); got["needs-device"] != "nodev-1" {
		t.Fatalf("needs-device bound to %s, want nodev-1, the node with a device", got["needs-device"])
	}
	e.allocatedOn("one", "nodev-1", "needs-device", 1)
}

// A pod group whose pods each hold a claim starts whole or not at all:
// three pods asking two devices each wait while only four devices exist,
// with no claim left allocated, and all start once four more appear.
func TestDRAGangOfClaimsWholeOrNotAtAll(t *testing.T) {
	e := newEnv(t)
	e.node("dgang-0", 8, nil)
	e.node("dgang-1", 8, nil)
	class := e.deviceClass()
	e.devices("dgang-0", 4, "H100", "80Gi")
	e.start(e.config())
	e.podGroup("trio", 3, nil)
	var names []string
	for i := range 3 {
		name := fmt.Sprintf("trio-%d", i)
		e.claim(name, class, 2, "")
		e.create(inGroup(claimPod(name, name), "trio"))
		names = append(names, name)
	}
	e.waitUnschedulable("trio-0", "")
	time.Sleep(4 * e.config().Interval)
	for _, n := range names {
		if node := e.nodesOf()[n]; node != "" {
			t.Fatalf("%s bound to %s while its group cannot have all its devices", n, node)
		}
		if c := e.getClaim(n); c.Status.Allocation != nil || len(c.Status.ReservedFor) > 0 {
			t.Fatalf("claim %s allocated or reserved (%+v) while its group waits", n, c.Status)
		}
	}
	e.devices("dgang-1", 4, "H100", "80Gi")
	got := e.waitBound(names...)
	perNode := map[string]int{}
	for _, n := range names {
		perNode[got[n]]++
		e.allocatedOn(n, got[n], n, 2)
	}
	if perNode["dgang-0"] > 2 || perNode["dgang-1"] > 2 {
		t.Fatalf("pods per node %v: a node of 4 devices holds at most 2 pods of 2", perNode)
	}
}

// A claim shared by pods is allocated once, on one node, and reserved for
// each pod; the pods all run on that node.
func TestDRAClaimSharedByPods(t *testing.T) {
	e := newEnv(t)
	e.node("dshare-0", 8, nil)
	e.node("dshare-1", 8, nil)
	class := e.deviceClass()
	e.devices("dshare-0", 2, "H100", "80Gi")
	e.devices("dshare-1", 2, "H100", "80Gi")
	e.start(e.config())
	e.claim("shared", class, 2, "")
	names := []string{"user-0", "user-1", "user-2"}
	for _, n := range names {
		e.create(claimPod(n, "shared"))
	}
	e.boundWithClaim("shared", 2, names...)
}

// A claim shared by the pods of a pod group is allocated once, on one
// node, and reserved for every pod; the group starts whole on that node.
func TestDRAClaimSharedByPodGroup(t *testing.T) {
	e := newEnv(t)
	e.node("dgshare-0", 8, nil)
	e.node("dgshare-1", 8, nil)
	class := e.deviceClass()
	e.devices("dgshare-0", 2, "H100", "80Gi")
	e.devices("dgshare-1", 2, "H100", "80Gi")
	e.start(e.config())
	e.claim("shared", class, 2, "")
	e.podGroup("trio", 3, nil)
	var names []string
	for i := range 3 {
		name := fmt.Sprintf("trio-%d", i)
		e.create(inGroup(claimPod(name, "shared"), "trio"))
		names = append(names, name)
	}
	e.boundWithClaim("shared", 2, names...)
}

// GPUs published as NVIDIA's DRA driver publishes them are GPUs to the
// core: the node's GPUs are counted from its ResourceSlices, a pod's from
// its claims, so a Queue's quota applies to them as to the device
// plugin's (a second pod of 2 GPUs waits for the 2-GPU quota the first
// uses; with the claims unread both would run).
func TestDRANVIDIAGPUsCountAsGPUs(t *testing.T) {
	e := newEnv(t)
	e.nodeSpec(kubetest.Node{Name: "nvdra-0"}) // no device plugin GPUs
	class := e.nvidiaClass("gpu")
	node := "nvdra-0"
	e.nvidiaSlice(node, h100Devices(4))
	q := e.createQueue("dra", 2)
	e.start(e.config())
	for _, n := range []string{"first", "second"} {
		e.claim(n, class, 2, "")
		p := claimPod(n, n)
		p.Labels[LabelQueue] = q
		e.create(p)
		if n == "first" {
			e.waitBound("first")
			e.allocatedOn("first", node, "first", 2)
		}
	}
	e.waitUnschedulable("second", "over quota")
	if got := e.nodesOf(); got["second"] != "" {
		t.Fatalf("second bound to %s beyond its queue's 2 GPUs", got["second"])
	}
}

// A pod asks for devices through a ResourceClaimTemplate: the resource
// claim controller (kube-controller-manager) makes its claim and names
// it in the pod's status; corral allocates that claim on the node with
// the devices, reserves it for the pod and binds the pod there.
func TestDRAClaimFromTemplate(t *testing.T) {
	e := newEnv(t)
	e.c.StartControllers(t, "resourceclaim-controller")
	e.node("dtmpl-0", 8, nil)
	e.node("dtmpl-1", 8, nil)
	class := e.deviceClass()
	e.devices("dtmpl-1", 2, "H100", "80Gi")
	e.start(e.config())
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "two-gpus"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2}}}}}}}
	ctx := context.Background()
	if _, err := e.c.Client.ResourceV1().ResourceClaimTemplates(e.ns).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := pod("from-template", 0)
	name := tmpl.Name
	p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: &name}}
	p.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpus"}}
	e.create(p)
	got := e.waitBound("from-template")
	if got["from-template"] != "dtmpl-1" {
		t.Fatalf("bound to %q, want dtmpl-1, the node with the devices", got["from-template"])
	}
	bound, err := e.c.Client.CoreV1().Pods(e.ns).Get(ctx, "from-template", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(bound.Status.ResourceClaimStatuses) != 1 || bound.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
		t.Fatalf("pod status names no claim made from the template: %+v", bound.Status.ResourceClaimStatuses)
	}
	e.allocatedOn(*bound.Status.ResourceClaimStatuses[0].ResourceClaimName, "dtmpl-1", "from-template", 2)
}

// MIG instances NVIDIA's DRA driver publishes (devices of type "mig" with
// their profile and parent GPU) are MIG instances to the core: on two
// A100s cut into seven 1g.10gb each, a queue of one GPU runs seven pods
// asking one 1g.10gb instance each (7 x 1/7 of a GPU) and the eighth waits
// over quota, though seven more instances are free.
func TestDRANVIDIAMIGCountsAsMIG(t *testing.T) {
	e := newEnv(t)
	node := "nvmig-0"
	e.nodeSpec(kubetest.Node{Name: node}) // no device plugin GPUs
	class := e.nvidiaClass("mig")
	var devices []resourcev1.Device
	for g := range 2 {
		parent := fmt.Sprintf("GPU-%d", g)
		for i := range 7 {
			prod, typ, profile := "NVIDIA A100-SXM4-80GB", "mig", "1g.10gb"
			devices = append(devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d-mig-1g10gb-%d", g, i),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"productName": {StringValue: &prod},
					"type": {StringValue: &typ}, "profile": {StringValue: &profile}, "parentUUID": {StringValue: &parent}},
				Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("10Gi")}}})
		}
	}
	e.nvidiaSlice(node, devices)
	e.migQuota(class, `device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`)
}

// migQuota runs eight pods claiming one device of class that sel selects,
// under a Queue of one GPU: seven bind, each allocated its device, and the
// eighth waits over quota.
func (e *env) migQuota(class, sel string) {
	e.t.Helper()
	q := e.createQueue("mig", 1)
	e.start(e.config())
	var names []string
	for i := range 8 {
		n := fmt.Sprintf("slice-%d", i)
		e.claim(n, class, 1, sel)
		p := claimPod(n, n)
		p.Labels[LabelQueue] = q
		e.create(p)
		names = append(names, n)
	}
	e.eventually(func() error {
		bound := 0
		for _, node := range e.nodesOf() {
			if node != "" {
				bound++
			}
		}
		if bound != 7 {
			return fmt.Errorf("%d pods bound, want 7", bound)
		}
		return nil
	})
	time.Sleep(3 * e.config().Interval)
	var waiting []string
	for _, n := range names {
		if node := e.nodesOf()[n]; node == "" {
			waiting = append(waiting, n)
		} else {
			e.allocatedOn(n, node, n, 1)
		}
	}
	if len(waiting) != 1 {
		e.t.Fatalf("waiting %v: want one pod over its queue's 1 GPU", waiting)
	}
	e.waitUnschedulable(waiting[0], "over quota")
}

// A pod asking for the device plugin's GPUs never goes to a node whose
// GPUs only NVIDIA's DRA driver publishes (the filter plugins are not
// shown nvidia.com/gpu, so the core must keep it off): of two such pods,
// one takes the device plugin's GPU, the other waits beside two free DRA
// GPUs.
func TestDRAOnlyNodesTakeNoDevicePluginPods(t *testing.T) {
	e := newEnv(t)
	e.nodeSpec(kubetest.Node{Name: "nvdra-only"})
	e.nvidiaSlice("nvdra-only", h100Devices(2))
	e.nvidiaClass("gpu")
	e.node("plugin-1", 1, nil)
	e.start(e.config())
	e.create(pod("p1", 1))
	e.create(pod("p2", 1))
	e.eventually(func() error {
		got := e.nodesOf()
		if n := got["p1"] + got["p2"]; n != "plugin-1" {
			return fmt.Errorf("pods on %v, want one on plugin-1 and one waiting", got)
		}
		return nil
	})
	waiting := "p2"
	if e.nodesOf()["p2"] == "plugin-1" {
		waiting = "p1"
	}
	// The taint that keeps it off is the face's own, which kubectl
	// describe node does not show: the message says what it stands for.
	msg := e.waitUnschedulable(waiting, "1 node: node offers its GPUs only through DRA (ResourceClaims), which the pod does not use")
	if strings.Contains(msg, "taint") {
		t.Errorf("message %q speaks of a taint the node does not show", msg)
	}
	if got := e.nodesOf(); got[waiting] != "" {
		t.Fatalf("%s bound to %s, a node of DRA GPUs only", waiting, got[waiting])
	}
}
