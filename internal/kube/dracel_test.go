package kube

import (
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
)

// listersOf are DRA listers over the fixtures' objects, no API server.
func listersOf(t *testing.T, classes []*resourcev1.DeviceClass, slices []*resourcev1.ResourceSlice) *draListers {
	t.Helper()
	ci := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	si := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, c := range classes {
		if err := ci.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range slices {
		if err := si.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return &draListers{classes: resourcelisters.NewDeviceClassLister(ci), slices: resourcelisters.NewResourceSliceLister(si),
		gpuDrivers: DefaultDRAGPUDrivers, compiled: &classCache{}}
}

// Which devices a class selects its CEL says, evaluated on the devices
// published: NVIDIA's single-quoted gpu class selects its GPUs, its mig
// class its MIG devices, the example driver's class its GPUs; a class of
// the driver's every device (GPUs and MIG devices alike) is neither, and
// a class of another driver's devices selects no GPU.
func TestDeviceClassesSelectByCEL(t *testing.T) {
	nv, _ := draFixture(t, "nvidia-deviceclasses.yaml", "")
	ex, exSlices := draFixture(t, "example-gpu.yaml", "ex-0")
	_, h100 := draFixture(t, "nvidia-resourceslice-h100.yaml", "nv-0")
	_, mig := draFixture(t, "nvidia-resourceslice-a100-mig.yaml", "nv-1")
	any := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "any-nvidia"}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: "device.driver == 'gpu.nvidia.com'"}}}}}
	nic := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "nic"}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: "device.driver == 'dra.net'"}}}}}
	d := listersOf(t, append(append(nv, ex...), any, nic), append(append(exSlices, h100...), mig...))
	gpus := d.nodeGPUs()
	if g := gpus["nv-0"]; g.count != 8 || g.product != "NVIDIA-H100-80GB-HBM3" || g.memMiB != 81559 {
		t.Errorf("nv-0: %+v, want 8 NVIDIA-H100-80GB-HBM3 of 81559 MiB", g)
	}
	if g := gpus["nv-1"]; g.mig["1g.10gb"] != 14 || len(g.parents) != 2 || g.count != 0 {
		t.Errorf("nv-1: %+v, want 14 1g.10gb on 2 GPUs", g)
	}
	if g := gpus["ex-0"]; g.count != 8 || g.product != "LATEST-GPU-MODEL" {
		t.Errorf("ex-0: %+v, want 8 LATEST-GPU-MODEL", g)
	}
	for _, tc := range []struct {
		class    string
		gpu, mig bool
	}{
		{"gpu.nvidia.com", true, false},
		{"mig.nvidia.com", false, true},
		{"gpu.example.com", true, false},
		{"any-nvidia", false, false},
		{"nic", false, false},
		{"absent", false, false},
	} {
		if gpu, mig := d.gpuClass(tc.class), d.migClass(tc.class); gpu != tc.gpu || mig != tc.mig {
			t.Errorf("class %s: gpu %v mig %v, want %v %v", tc.class, gpu, mig, tc.gpu, tc.mig)
		}
	}
	for sel, want := range map[string]string{
		"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'":                "1g.10gb",
		`device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`:                "1g.10gb",
		"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('9Gi')) > 0": "1g.10gb",
		"device.attributes['gpu.nvidia.com'].profile == '3g.40gb'":                "",
	} {
		req := &resourcev1.ExactDeviceRequest{DeviceClassName: "mig.nvidia.com",
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: sel}}}}
		if got := d.profileOf(req); got != want {
			t.Errorf("profile of %s: %q, want %q", sel, got, want)
		}
	}
}

// A class is compiled once per generation: the same class read again is
// not compiled again; a new generation is.
func TestDeviceClassCompiledOncePerGeneration(t *testing.T) {
	nv, _ := draFixture(t, "nvidia-deviceclasses.yaml", "")
	c := &classCache{}
	first := c.compiled(nv[0])
	if again := c.compiled(nv[0].DeepCopy()); again != first {
		t.Error("the same generation compiled again")
	}
	next := nv[0].DeepCopy()
	next.Generation++
	next.Spec.Selectors[0].CEL.Expression = "device.driver == 'gpu.example.com'"
	if got := c.compiled(next); got == first || len(got.selectors) != 1 || got.err != nil {
		t.Errorf("a new generation: %+v", got)
	}
}

// A class's verdict is kept across cycles while nothing changed, and
// taken again when the class changes (a new generation) or the slices do
// (a new version).
func TestDeviceClassVerdictFollowsChanges(t *testing.T) {
	nv, _ := draFixture(t, "nvidia-deviceclasses.yaml", "")
	_, h100 := draFixture(t, "nvidia-resourceslice-h100.yaml", "nv-0")
	_, mig := draFixture(t, "nvidia-resourceslice-a100-mig.yaml", "nv-0")
	h100[0].ResourceVersion = "1"
	d := listersOf(t, nv, h100)
	d.nodeGPUs()
	if !d.gpuClass("gpu.nvidia.com") || d.migClass("mig.nvidia.com") {
		t.Fatal("H100s: want gpu.nvidia.com a class of GPUs, mig.nvidia.com none")
	}
	changed := nv[0].DeepCopy()
	changed.Generation++
	changed.Spec.Selectors[0].CEL.Expression = "device.driver == 'gpu.example.com'"
	classes := []*resourcev1.DeviceClass{changed, nv[1]}
	mig[0].ResourceVersion = "2"
	next := listersOf(t, classes, mig)
	d.classes, d.slices = next.classes, next.slices
	if d.gpuClass("gpu.nvidia.com") {
		t.Error("a class whose new generation selects no published GPU still taken for GPUs")
	}
	d.nodeGPUs()
	if !d.migClass("mig.nvidia.com") {
		t.Error("MIG devices published since: mig.nvidia.com not taken for MIG")
	}
}
