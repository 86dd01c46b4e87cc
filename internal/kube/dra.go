package kube

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	resourcelisters "k8s.io/client-go/listers/resource/v1"

	"github.com/corral-sched/corral/internal/kube/upstream"
)

// GPUs that a DRA driver of GPUs publishes (ResourceSlices of a driver of
// Config.DRAGPUDrivers: NVIDIA's gpu.nvidia.com, AMD's, the example
// driver's; devices of no type or of type "gpu") are GPUs to the core as those of
// the device plugin are: a node that offers them is described as if the
// device plugin offered as many nvidia.com/gpu (model from the devices'
// productName, memory from their memory capacity), and a pod whose claims
// ask for a number of them as if it asked that many nvidia.com/gpu, so
// that packing and quotas apply to both. Its MIG devices (type "mig", with
// their "profile" and "parentUUID") are MIG instances to the core as the
// device plugin's mixed strategy offers them: a node as if it offered that
// many nvidia.com/mig-<profile> on its parent GPUs, a claim for devices of
// a profile (the one profile of the MIG devices its selectors select) as
// a pod asking that many instances. Which devices a class or request
// selects, its CEL selectors say, evaluated as the allocator evaluates
// them (dracel.go). MIG devices the driver publishes as partitions of a GPU to be
// cut on demand (consuming the GPU's shared counters) are not counted: the
// core would take every possible partition for an existing instance.
// Which devices a pod gets is the DynamicResources plugin's to choose, on
// the node the core picked.
//
// GPUs published for several allocations at once with consumable
// capacity (KEP-5075: allowMultipleAllocations, a "memory" capacity) are
// GPUs shared by fractions to the core (fleet.Node.Fractional), and a
// claim for one such GPU asking part of its memory (capacity.requests
// memory) a task asking that fraction of one GPU (job.Demand.GPUMemoryMiB):
// the core packs the fractions as it packs them everywhere, not rounded
// up to replicas. Once the claim is allocated, the core records the share
// on the device the allocator gave it (gang.State.AdoptShareOn).

// DriverNVIDIA is the name of NVIDIA's DRA driver for GPUs.
const DriverNVIDIA = "gpu.nvidia.com"

// draGPU is what a node's DRA GPUs look like: whole GPUs, or MIG
// instances by profile on their parent GPUs.
type draGPU struct {
	count   int
	product string
	memMiB  int64
	mig     map[string]int
	parents map[string]bool
	// shared counts the GPUs that allow several allocations (consumable
	// capacity); names are the GPUs' device names, sorted once counted.
	shared int
	names  []string
}

// gpuIndex is the place among the node's GPUs of the named device, as the
// core numbers a node's GPUs (by device name); false for none of them.
func (g draGPU) gpuIndex(device string) (int, bool) {
	return slices.BinarySearch(g.names, device)
}

// fractional reports whether every GPU of the node is shared by
// fractions.
func (g draGPU) fractional() bool { return g.count > 0 && g.shared == g.count }

// draListers read the DRA objects the filter plugins' informers hold.
type draListers struct {
	slices  resourcelisters.ResourceSliceLister
	claims  resourcelisters.ResourceClaimLister
	classes resourcelisters.DeviceClassLister
	// classFor names the DeviceClass an extended resource stands for
	// (upstream.Framework.ClassFor), "" for none.
	classFor func(corev1.ResourceName) string
	// gpuDrivers are the drivers whose devices are GPUs
	// (Config.DRAGPUDrivers).
	gpuDrivers []string
	// compiled holds the classes' selectors compiled.
	compiled *classCache
	// devices are the GPU drivers' devices published (read by nodeGPUs
	// each cycle), and verdicts what each class selects of them, kept
	// while the slices (devicesKey: their names and versions) and the
	// class are unchanged.
	// mu guards them: a snapshot taken beside the cycle's waits for it.
	mu         sync.Mutex
	devices    []publishedDevice
	devicesKey string
	verdicts   map[string]classVerdict
}

// describe returns nodes and pods with the DRA GPUs described as the
// core counts GPUs (asGPUNodes, asGPUPods).
func (d *draListers) describe(nodes []*corev1.Node, pods []*corev1.Pod) ([]*corev1.Node, []*corev1.Pod) {
	d.mu.Lock()
	defer d.mu.Unlock()
	gpus := d.nodeGPUs()
	return asGPUNodes(nodes, gpus), d.asGPUPods(pods, gpus)
}

// describer is describe in two steps: the nodes now, and any pods given
// to the function it returns, against the same devices.
func (d *draListers) describer(nodes []*corev1.Node) ([]*corev1.Node, func([]*corev1.Pod) []*corev1.Pod) {
	d.mu.Lock()
	defer d.mu.Unlock()
	gpus := d.nodeGPUs()
	return asGPUNodes(nodes, gpus), func(pods []*corev1.Pod) []*corev1.Pod {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.asGPUPods(pods, gpus)
	}
}

// classVerdict is what a DeviceClass selects of the GPU drivers' devices.
type classVerdict struct {
	gpus bool              // whole GPUs, and no MIG devices
	migs []publishedDevice // MIG devices, and no whole GPUs
	// of the class of this uid and generation ("" for no class)
	uid        types.UID
	generation int64
}

// nodeGPUs counts each node's GPUs in the GPU drivers' ResourceSlices,
// and keeps the devices for the cycle's class verdicts.
func (d *draListers) nodeGPUs() map[string]draGPU {
	out := map[string]draGPU{}
	d.devices = nil
	list, err := d.slices.List(labels.Everything())
	if err != nil {
		return out
	}
	var versions []string
	for _, s := range list {
		if !slices.Contains(d.gpuDrivers, s.Spec.Driver) || s.Spec.NodeName == nil {
			continue
		}
		versions = append(versions, s.Name+"@"+s.ResourceVersion)
		g := out[*s.Spec.NodeName]
		for i := range s.Spec.Devices {
			dev := &s.Spec.Devices[i]
			kind := kindOf(d.gpuDrivers, s.Spec.Driver, dev)
			d.devices = append(d.devices, publishedDevice{driver: s.Spec.Driver, dev: dev, kind: kind})
			switch kind {
			case migDevice:
				g.addMIG(s.Spec.Driver, dev)
			case wholeGPU:
				g.addGPU(*dev)
				if p := productOf(s.Spec.Driver, dev); p != "" {
					g.product = p
				}
				if m, ok := dev.Capacity["memory"]; ok {
					g.memMiB = m.Value.Value() / mib
				}
			}
		}
		out[*s.Spec.NodeName] = g
	}
	for _, g := range out {
		slices.Sort(g.names)
	}
	slices.Sort(versions)
	if key := strings.Join(versions, ","); key != d.devicesKey || d.verdicts == nil {
		d.devicesKey, d.verdicts = key, map[string]classVerdict{}
	}
	return out
}

// verdict is what the named class selects of the cycle's devices, its
// selectors evaluated on each: again only when the devices or the class
// changed.
func (d *draListers) verdict(name string) classVerdict {
	c, err := d.classes.Get(name)
	if err != nil {
		c = &resourcev1.DeviceClass{}
	}
	if v, ok := d.verdicts[name]; ok && v.uid == c.UID && v.generation == c.Generation {
		return v
	}
	var v classVerdict
	if c.UID != "" || c.Name != "" {
		v = d.evaluate(c)
	}
	v.uid, v.generation = c.UID, c.Generation
	if d.verdicts == nil {
		d.verdicts = map[string]classVerdict{}
	}
	d.verdicts[name] = v
	return v
}

func (d *draListers) evaluate(c *resourcev1.DeviceClass) classVerdict {
	if d.compiled == nil {
		d.compiled = &classCache{}
	}
	cc := d.compiled.compiled(c)
	if cc.err != nil {
		return classVerdict{}
	}
	var v classVerdict
	gpus, migs := 0, []publishedDevice(nil)
	for _, p := range d.devices {
		if p.kind != wholeGPU && p.kind != migDevice || !selects(cc.selectors, p.driver, p.dev) {
			continue
		}
		if p.kind == wholeGPU {
			gpus++
		} else {
			migs = append(migs, p)
		}
	}
	switch {
	case gpus > 0 && len(migs) == 0:
		v.gpus = true
	case len(migs) > 0 && gpus == 0:
		v.migs = migs
	}
	return v
}

// addGPU counts one whole GPU.
func (g *draGPU) addGPU(dev resourcev1.Device) {
	g.count++
	if dev.AllowMultipleAllocations != nil && *dev.AllowMultipleAllocations {
		g.shared++
	}
	g.names = append(g.names, dev.Name)
}

// addMIG counts one MIG device of a static layout (kindOf: migDevice).
func (g *draGPU) addMIG(driver string, dev *resourcev1.Device) {
	if g.mig == nil {
		g.mig, g.parents = map[string]int{}, map[string]bool{}
	}
	g.mig[attrString(driver, dev, "profile")]++
	g.parents[attrString(driver, dev, "parentUUID")] = true
	if p := productOf(driver, dev); p != "" {
		g.product = p
	}
}

func spacesToDashes(s string) string { return strings.ReplaceAll(s, " ", "-") }

// asGPUNodes returns nodes with those that offer DRA GPUs, and no device
// plugin GPUs, described as the device plugin and GPU feature discovery
// would describe them (copies; the rest as they are).
func asGPUNodes(nodes []*corev1.Node, gpus map[string]draGPU) []*corev1.Node {
	if len(gpus) == 0 {
		return nodes
	}
	out := make([]*corev1.Node, len(nodes))
	for i, n := range nodes {
		out[i] = n
		g, ok := gpus[n.Name]
		if _, plugin := n.Status.Allocatable[ResourceGPU]; !ok || plugin || g.count == 0 && len(g.mig) == 0 {
			continue
		}
		c := n.DeepCopy()
		c.Labels = withLabels(c.Labels, map[string]string{labelDRAOnly: "true"})
		if len(g.mig) > 0 {
			// A node of MIG instances is described as the device plugin's
			// mixed strategy describes it; its whole DRA GPUs, if any,
			// are not counted beside them.
			for profile, k := range g.mig {
				c.Status.Allocatable[corev1.ResourceName(resourceMIGPrefix+profile)] = *resource.NewQuantity(int64(k), resource.DecimalSI)
			}
			c.Labels = withLabels(c.Labels, map[string]string{LabelProduct: g.product, LabelCount: fmt.Sprint(len(g.parents)), "nvidia.com/mig.strategy": "mixed"})
			out[i] = c
			continue
		}
		c.Status.Allocatable[ResourceGPU] = *resource.NewQuantity(int64(g.count), resource.DecimalSI)
		c.Labels = withLabels(c.Labels, map[string]string{LabelProduct: g.product, LabelCount: fmt.Sprint(g.count)})
		if g.fractional() {
			c.Labels[labelFractional] = "true"
		}
		if g.memMiB > 0 && c.Labels[LabelMemory] == "" {
			c.Labels[LabelMemory] = fmt.Sprint(g.memMiB)
		}
		out[i] = c
	}
	return out
}

func withLabels(have, add map[string]string) map[string]string {
	out := make(map[string]string, len(have)+len(add))
	for k, v := range have {
		out[k] = v
	}
	for k, v := range add {
		if v != "" && out[k] == "" {
			out[k] = v
		}
	}
	return out
}

// asGPUPods returns pods with those whose claims ask for NVIDIA GPUs
// marked (annotationDRA) and described as asking that many
// nvidia.com/gpu, a MIG instance as
// nvidia.com/mig-<profile>, a fraction of one GPU's memory as
// resourceDRAGPUMemory (with, once allocated, the GPU's place on its node,
// gpus says, in annotationDRAGPU): copies; the rest as they are.
func (d *draListers) asGPUPods(pods []*corev1.Pod, gpus map[string]draGPU) []*corev1.Pod {
	var out []*corev1.Pod
	for i, p := range pods {
		cl := d.claimsOf(p)
		frac, fracOK := cl.asFraction()
		name, n := ResourceGPU, cl.gpus
		switch profile, migOK := cl.asMIG(); {
		case fracOK:
			name, n = resourceDRAGPUMemory, frac.memMiB
		case n > 0:
		case d.gpusByDRA(p):
			name = "" // nvidia.com/gpu a DeviceClass stands for (KEP-5004): counted as it is
		case migOK:
			name, n = corev1.ResourceName(resourceMIGPrefix+profile), 1
		default:
			continue
		}
		if out == nil {
			out = append([]*corev1.Pod(nil), pods...)
		}
		c := p.DeepCopy()
		c.Annotations = withLabels(c.Annotations, map[string]string{annotationDRA: "true"})
		if name == "" {
			out[i] = c
			continue
		}
		if c.Spec.Containers[0].Resources.Requests == nil {
			c.Spec.Containers[0].Resources.Requests = corev1.ResourceList{}
		}
		c.Spec.Containers[0].Resources.Requests[name] = *resource.NewQuantity(n, resource.DecimalSI)
		if idx, ok := gpus[p.Spec.NodeName].gpuIndex(frac.device); fracOK && ok {
			c.Annotations[annotationDRAGPU] = fmt.Sprint(idx)
		}
		out[i] = c
	}
	if out == nil {
		return pods
	}
	return out
}

// gpusByDRA reports whether pod asks for nvidia.com/gpu and a DeviceClass
// stands for it (KEP-5004), so that the DynamicResources plugin allocates
// them, on nodes of the device plugin or of the DRA driver.
func (d *draListers) gpusByDRA(pod *corev1.Pod) bool {
	if d.classFor == nil || d.classFor(ResourceGPU) == "" {
		return false
	}
	q := podRequests(pod)[ResourceGPU]
	return q.Value() > 0
}

// fraction is a claim for part of one NVIDIA GPU's memory, and the device
// it was allocated ("" until it is).
type fraction struct {
	memMiB int64
	device string
}

// claimed is what a pod's claims ask of NVIDIA's devices, read in one
// walk over their exact requests (claimsOf).
type claimed struct {
	// gpus are whole GPUs: the exact counts of requests whose DeviceClass
	// selects the driver's GPUs, with no capacity asked. A claim shared
	// with other pods is counted for each. A pod not yet given the claim
	// of its extended resources (KEP-5004) asks for what their
	// DeviceClasses stand for.
	gpus int64
	// migs are the MIG devices asked of a class that selects the driver's
	// MIG devices; profile the one a selector names (`profile ==
	// "1g.10gb"`, as NVIDIA's examples write it).
	migs    int
	profile string
	// fractions count requests of the driver's GPUs asking capacity;
	// fraction is the last; fractionsOK that each asks part of one
	// device's "memory" (KEP-5075).
	fractions   int
	fraction    fraction
	fractionsOK bool
}

// asFraction is the fraction of one GPU the claims ask for: a single
// request for part of one device's memory; false for anything else.
func (c claimed) asFraction() (fraction, bool) {
	return c.fraction, c.fractions == 1 && c.fractionsOK
}

// asMIG is the profile of the one MIG instance the claims ask for: a
// single device of a profile a selector names; false for anything else,
// which the core then does not count (the DynamicResources plugin still
// checks it).
func (c claimed) asMIG() (string, bool) { return c.profile, c.migs == 1 && c.profile != "" }

// claimsOf reads what pod's claims ask of NVIDIA's devices.
func (d *draListers) claimsOf(pod *corev1.Pod) claimed {
	out := claimed{gpus: d.extendedGPUs(pod), fractionsOK: true}
	for _, name := range upstream.ClaimNames(pod) {
		c, err := d.claims.ResourceClaims(pod.Namespace).Get(name)
		if err != nil {
			continue
		}
		for _, r := range c.Spec.Devices.Requests {
			if e := r.Exactly; e != nil {
				out.add(d, c, r.Name, e)
			}
		}
	}
	return out
}

// add counts one exact request of claim c.
func (out *claimed) add(d *draListers, c *resourcev1.ResourceClaim, request string, e *resourcev1.ExactDeviceRequest) {
	all := e.AllocationMode == resourcev1.DeviceAllocationModeAll
	switch gpu := d.gpuClass(e.DeviceClassName); {
	case gpu && e.Capacity != nil:
		mem, asks := e.Capacity.Requests["memory"]
		out.fractions++
		out.fractionsOK = out.fractionsOK && asks && !all && e.Count <= 1
		out.fraction = fraction{memMiB: (mem.Value() + mib - 1) / mib, device: allocatedDevice(c, request, d.gpuDrivers)}
	case all:
	case gpu:
		out.gpus += max(e.Count, 1)
	case d.migClass(e.DeviceClassName):
		out.migs += int(max(e.Count, 1))
		if p := d.profileOf(e); p != "" {
			out.profile = p
		}
	}
}

// allocatedDevice is the GPU claim c was allocated for its request, ""
// until it is.
func allocatedDevice(c *resourcev1.ResourceClaim, request string, gpuDrivers []string) string {
	if c.Status.Allocation == nil {
		return ""
	}
	for _, r := range c.Status.Allocation.Devices.Results {
		if r.Request == request && slices.Contains(gpuDrivers, r.Driver) {
			return r.Device
		}
	}
	return ""
}

// extendedGPUs is how many NVIDIA GPUs pod asks for as extended resources
// a DeviceClass of the driver's GPUs stands for (its extendedResourceName,
// or deviceclass.resource.kubernetes.io/<class>), until the
// DynamicResources plugin has made their claim (which claimsOf then
// counts).
func (d *draListers) extendedGPUs(pod *corev1.Pod) int64 {
	if pod.Status.ExtendedResourceClaimStatus != nil {
		return 0
	}
	var n int64
	for _, c := range pod.Spec.Containers {
		for name, q := range c.Resources.Requests {
			if strings.HasPrefix(string(name), "nvidia.com/") || d.classFor == nil {
				continue // the device plugin's names: the core counts them as they are
			}
			if class := d.classFor(name); class != "" && d.gpuClass(class) {
				n += q.Value()
			}
		}
	}
	return n
}

// profileOf is the one MIG profile of the devices the request e selects,
// its class's selectors and its own evaluated on the MIG devices
// published; "" for none or several.
func (d *draListers) profileOf(e *resourcev1.ExactDeviceRequest) string {
	own, err := compileSelectors(e.Selectors)
	if err != nil {
		return ""
	}
	profile := ""
	for _, p := range d.verdict(e.DeviceClassName).migs {
		if !selects(own, p.driver, p.dev) {
			continue
		}
		switch got := attrString(p.driver, p.dev, "profile"); {
		case profile == "":
			profile = got
		case got != profile:
			return ""
		}
	}
	return profile
}

// migClass reports whether the DeviceClass selects MIG devices of the
// GPU drivers, and no whole GPUs, as its selectors evaluate.
func (d *draListers) migClass(name string) bool { return len(d.verdict(name).migs) > 0 }

// gpuClass reports whether the DeviceClass selects whole GPUs of the GPU
// drivers, and no MIG devices, as its selectors evaluate.
func (d *draListers) gpuClass(name string) bool { return d.verdict(name).gpus }
