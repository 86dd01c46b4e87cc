package main

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// With -dra, the fractional pods claim part of one GPU's memory through
// DRA consumable capacity (KEP-5075) on nodes whose GPUs a DRA driver
// publishes for several allocations, which is how a GPU can be shared by
// thousandths on Kubernetes. Both schedulers allocate the claims with the
// same upstream allocator (the DynamicResources plugin).

// gpuClass is the DeviceClass of the driver's GPUs the claims ask for.
const gpuClass = "gpu.nvidia.com"

// gpuMemory is one H100's memory, as the driver publishes it.
var gpuMemory = resource.MustParse("80Gi")

// createGPUClass creates the DeviceClass of NVIDIA's GPUs.
func createGPUClass(ctx context.Context, c *kubetest.Cluster) error {
	dc := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: gpuClass},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`}}}}}
	_, err := c.Client.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{})
	return err
}

// publishSharedGPUs publishes node's GPUs as NVIDIA's DRA driver would,
// each allowing several allocations of its memory.
func publishSharedGPUs(ctx context.Context, c *kubetest.Cluster, node string, gpus int) error {
	yes := true
	prod, typ := "NVIDIA H100 80GB HBM3", "gpu"
	var devices []resourcev1.Device
	for i := range gpus {
		devices = append(devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i), AllowMultipleAllocations: &yes,
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"productName": {StringValue: &prod}, "type": {StringValue: &typ}},
			Capacity:   map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: gpuMemory}}})
	}
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-nvidia"},
		Spec: resourcev1.ResourceSliceSpec{Driver: kube.DriverNVIDIA, NodeName: &node, Devices: devices,
			Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
	_, err := c.Client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{})
	return err
}

// fractionMemory is the memory of one GPU a share of milli thousandths
// claims, in MiB (rounded up).
func fractionMemory(milli int64) resource.Quantity {
	mib := (gpuMemory.Value()>>20*milli + 999) / 1000
	return *resource.NewQuantity(mib<<20, resource.BinarySI)
}

// createFractionClaim creates the claim of pod p: one GPU, its share of
// the memory.
func createFractionClaim(ctx context.Context, c *kubetest.Cluster, ns string, p podSpec) error {
	req := &resourcev1.ExactDeviceRequest{DeviceClassName: gpuClass, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1,
		Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"memory": fractionMemory(p.milli)}}}
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: p.name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: req}}}}}
	if _, err := c.Client.ResourceV1().ResourceClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("claim %s: %w", p.name, err)
	}
	return nil
}

// measureClaims counts, from the allocated claims, the GPUs the shares
// occupy (devices with any memory consumed) by node, and the thousandths
// of a GPU they were given.
func measureClaims(ctx context.Context, c *kubetest.Cluster, ns string) (occupied map[string]int64, givenMilli int64, err error) {
	claims, err := c.Client.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, 0, err
	}
	devices := map[string]map[string]bool{} // node -> devices in use
	for _, cl := range claims.Items {
		if cl.Status.Allocation == nil {
			continue
		}
		for _, r := range cl.Status.Allocation.Devices.Results {
			if devices[r.Pool] == nil {
				devices[r.Pool] = map[string]bool{}
			}
			devices[r.Pool][r.Device] = true
			m := r.ConsumedCapacity["memory"]
			givenMilli += (m.Value()*1000 + gpuMemory.Value() - 1) / gpuMemory.Value()
		}
	}
	occupied = map[string]int64{}
	for node, d := range devices {
		occupied[node] = int64(len(d))
	}
	return occupied, givenMilli, nil
}

// deleteClaims removes the run's claims, with the finalizer the allocator
// put on them (no controller here removes it), so that the next run's
// allocator sees free devices.
func deleteClaims(ctx context.Context, c *kubetest.Cluster, ns string) error {
	claims, err := c.Client.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	return parallel(len(claims.Items), func(i int) error {
		name := claims.Items[i].Name
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := c.Client.ResourceV1().ResourceClaims(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("claim %s: %w", name, err)
		}
		return c.Client.ResourceV1().ResourceClaims(ns).Delete(ctx, name, metav1.DeleteOptions{})
	})
}
