package kube

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
)

// Names the NVIDIA device plugin and GPU feature discovery use.
const (
	ResourceGPU       = corev1.ResourceName("nvidia.com/gpu")
	ResourceShared    = corev1.ResourceName("nvidia.com/gpu.shared")
	resourceMIGPrefix = "nvidia.com/mig-"
	LabelProduct      = "nvidia.com/gpu.product"
	LabelCount        = "nvidia.com/gpu.count"
	LabelReplicas     = "nvidia.com/gpu.replicas"
	LabelMIGStrategy  = "nvidia.com/mig.strategy"
	LabelMemory       = "nvidia.com/gpu.memory" // MiB per GPU
	noDomain          = "none"                  // the domain of a node without a topology label
	// sharedOnly is the core taint of nodes that offer only time-sliced
	// shares; pods asking for nvidia.com/gpu.shared tolerate it.
	sharedOnly = "corral.sh/time-sliced-only"
)

// corral's own names for what it reads of DRA claims and slices (dra.go),
// on its copies of nodes and pods; no object in the cluster carries them.
const (
	// labelFractional marks a node whose GPUs are shared by fractions.
	labelFractional = "corral.sh/gpu.fractional"
	// labelDRAOnly marks a node whose GPUs only a DRA driver publishes;
	// the core keeps off it (taint draOnly) the pods that ask for the
	// device plugin's GPUs, which the filter plugins are not shown
	// (upstream.withoutCoreResources). Pods asking through DRA carry
	// annotationDRA and tolerate it.
	labelDRAOnly  = "corral.sh/gpu.dra-only"
	draOnly       = "corral.sh/dra-only"
	annotationDRA = "corral.sh/dra"
	// resourceDRAGPUMemory is the MiB of one GPU's memory a pod claims.
	resourceDRAGPUMemory = corev1.ResourceName("corral.sh/dra-gpu-memory-mib")
	// annotationDRAGPU is the place on its node of the GPU a pod's share
	// was allocated.
	annotationDRAGPU = "corral.sh/dra-gpu-index"
)

// AnnotationShareGPU is the place on its node of the GPU corral counted a
// pod's time-sliced share on, written with the binding. The device
// plugin hands out replicas without regard to it; corral keeps its own
// count of each GPU's shares by it, so that a restarted scheduler or a
// new leader counts them on the GPUs the one that bound them did, not as
// it would place them afresh.
const AnnotationShareGPU = "corral.sh/share-gpu-index"

const mib = 1 << 20

// buildFleet turns the nodes into a fleet, in name order, each node with
// its extra core taints. A node whose GPUs corral cannot describe is left
// out and reported in skipped; a node whose GPU model the catalog lacks is
// described from its labels and reported in described.
func buildFleet(nodes []*corev1.Node, cfg *Config, extra map[string][]string) (f *fleet.Fleet, skipped map[string]error, described map[string]string) {
	nvlink := nvlinkLevel(nodes, cfg)
	f = &fleet.Fleet{NVLinkDomain: nvlink}
	for _, l := range cfg.Levels {
		f.Levels = append(f.Levels, l.Name)
	}
	sorted := slices.Clone(nodes)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	skipped, described = map[string]error{}, map[string]string{}
	for _, n := range sorted {
		fn, note, err := describeNode(n, cfg, nvlink)
		if err != nil {
			skipped[n.Name] = err
			continue
		}
		if note != "" {
			described[n.Name] = note
		}
		addTaints(&fn, extra[n.Name])
		f.Nodes = append(f.Nodes, fn)
	}
	return f, skipped, described
}

// addTaints gives fn the core taints of the cycle (node selectors, the
// filter plugins' verdicts) besides its own, sorted.
func addTaints(fn *fleet.Node, taints []string) {
	if len(taints) > 0 {
		fn.Taints = append(fn.Taints, taints...)
		sort.Strings(fn.Taints)
	}
}

// nvlinkLevel is cfg's NVLink level when one of nodes has a label of it,
// else none: where no node names a multi-node NVLink domain, NVLink ends
// at the node and the level's domains ("none") say nothing of it.
func nvlinkLevel(nodes []*corev1.Node, cfg *Config) string {
	for _, l := range cfg.Levels {
		if l.Name != cfg.NVLinkLevel {
			continue
		}
		for _, n := range nodes {
			if _, v := l.label(n.Labels); v != "" {
				return l.Name
			}
		}
	}
	return ""
}

// fleetNode describes one node as describeNode does, without its note.
func fleetNode(n *corev1.Node, cfg *Config) (fleet.Node, error) {
	fn, _, err := describeNode(n, cfg, nvlinkLevel([]*corev1.Node{n}, cfg))
	return fn, err
}

// describeNode describes one node: its domains from topology labels (at
// the NVLink level nvlink, when set, the node alone if it has no label
// there), its allocatable CPU and memory, and its GPUs from the device
// plugin's resources and GPU feature discovery's labels. note says how a
// GPU model the catalog lacks was described, or is empty.
func describeNode(n *corev1.Node, cfg *Config, nvlink string) (fn fleet.Node, note string, err error) {
	alloc := n.Status.Allocatable
	fn = fleet.Node{
		Name:      n.Name,
		Labels:    n.Labels,
		CPUMilli:  quantity(alloc, corev1.ResourceCPU, true),
		MemoryMiB: quantity(alloc, corev1.ResourceMemory, false) / mib,
		Health:    cfg.Health.fleetHealth(n),
		Spare:     cfg.Health.spare(n),
		Taints:    nodeTaints(n),
		Images:    nodeImages(n),
	}
	if n.Labels[labelDRAOnly] == "true" {
		fn.Taints = append(fn.Taints, draOnly)
	}
	for _, l := range cfg.Levels {
		fn.Domains = append(fn.Domains, nodeDomain(n, l, nvlink))
	}
	if note, err = describeGPUs(&fn, n); err != nil {
		return fn, "", fmt.Errorf("node %s: %w", n.Name, err)
	}
	var bad error
	if fn.PricePerGPUHour, bad = nodePrice(n); bad != nil {
		note = strings.TrimPrefix(note+"; "+bad.Error()+": no price (the node is scheduled as before)", "; ")
	}
	return fn, note, nil
}

// AnnotationGPUPrice on a node is what one of its GPUs costs an hour, in
// US dollars ("3.93"): what a Queue's dollar budget (spec.budget
// "$20000/month") charges for a GPU-hour there.
const AnnotationGPUPrice = "corral.sh/gpu-price"

// nodePrice reads n's AnnotationGPUPrice: 0 without one.
func nodePrice(n *corev1.Node) (float64, error) {
	v, ok := n.Annotations[AnnotationGPUPrice]
	if !ok {
		return 0, nil
	}
	p, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(v), "$"), 64)
	if err != nil || !(p >= 0 && p <= 1e4) {
		return 0, fmt.Errorf("annotation %s=%q: want US dollars per GPU-hour, from 0 to 10000, such as 3.93", AnnotationGPUPrice, v)
	}
	return p, nil
}

// nodeDomain is n's domain at level l: the value of the first of its
// labels that n has; without one, noDomain, or at the NVLink level nvlink
// the node alone (its name), as NVLink then ends at the node.
func nodeDomain(n *corev1.Node, l Level, nvlink string) string {
	if _, v := l.label(n.Labels); v != "" {
		return v
	}
	if l.Name == nvlink {
		return n.Name
	}
	return noDomain
}

// describeGPUs sets the GPU fields of fn: whole GPUs, MIG instances (the
// device plugin's mixed or single strategy) or time-sliced GPUs. note says
// how a model the catalog lacks was described.
func describeGPUs(fn *fleet.Node, n *corev1.Node) (note string, err error) {
	alloc := n.Status.Allocatable
	whole := int(quantity(alloc, ResourceGPU, false))
	shared := int(quantity(alloc, ResourceShared, false))
	mig := migResources(alloc)
	if whole == 0 && shared == 0 && len(mig) == 0 {
		return "", nil
	}
	model, note, err := nodeModel(n)
	if err != nil {
		return "", err
	}
	fn.GPUModel = model.Name
	return note, describeCount(fn, n, model, whole, shared, mig)
}

// describeCount sets how many GPUs fn has, and how they are shared.
func describeCount(fn *fleet.Node, n *corev1.Node, model *gpu.Model, whole, shared int, mig map[string]int) error {
	count, _ := strconv.Atoi(n.Labels[LabelCount])
	switch replicas, _ := strconv.Atoi(n.Labels[LabelReplicas]); {
	case len(mig) > 0:
		return describeMIG(fn, model, mig, count)
	case replicas > 1:
		fn.TimeSlices = replicas
		fn.GPUs = max(whole, shared) / replicas
		if count > 0 {
			fn.GPUs = count
		}
		if whole == 0 {
			// Renamed to nvidia.com/gpu.shared: the node offers no whole
			// GPUs, and only pods asking for shares may come.
			fn.Taints = append(fn.Taints, sharedOnly)
		}
	default:
		fn.GPUs = whole
		fn.Fractional = n.Labels[labelFractional] == "true"
	}
	return nil
}

// nodeModel is the node's GPU model: the catalog's, or one described from
// the node's labels when the catalog lacks it or the product label is
// missing (GPU feature discovery's nvidia.com/gpu.memory gives its memory;
// the device plugin's resources its count). note then says so.
func nodeModel(n *corev1.Node) (model *gpu.Model, note string, err error) {
	label := n.Labels[LabelProduct]
	product, _, isMIG := strings.Cut(label, "-MIG-") // single strategy: each MIG device is offered as a GPU
	if isMIG {
		if model, err = gpu.Lookup(product); err != nil {
			return nil, "", fmt.Errorf("label %s=%q: MIG on a GPU model corral does not know: %w", LabelProduct, label, err)
		}
		return model, "", nil
	}
	memMiB, _ := strconv.ParseInt(n.Labels[LabelMemory], 10, 64)
	memMiB = max(memMiB, 0)
	name := product
	if name == "" {
		name = "unlabelled"
		if memMiB > 0 {
			name = fmt.Sprintf("unlabelled-%dMiB", memMiB)
		}
	}
	model, err = gpu.Register(name, memMiB)
	switch {
	case errors.Is(err, gpu.ErrInCatalog):
		return model, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("label %s=%q is not in corral's catalog, and describing it from the node's labels failed: %w", LabelProduct, label, err)
	}
	return model, unknownModelNote(label, model), nil
}

func unknownModelNote(label string, m *gpu.Model) string {
	what := fmt.Sprintf("GPU model %q is not in corral's catalog", label)
	if label == "" {
		what = fmt.Sprintf("no %s label", LabelProduct)
	}
	mem := fmt.Sprintf("%d MiB each (label %s)", m.MemoryMiB, LabelMemory)
	if m.MemoryMiB == 0 {
		mem = fmt.Sprintf("memory unknown (no %s label): pods asking for GPU memory do not fit", LabelMemory)
	}
	return fmt.Sprintf("%s: described from the node's labels and capacity as model %s, %s", what, m.Name, mem)
}

// describeMIG makes a static MIG node whose every GPU has the same layout:
// the mixed strategy's instance counts divided by the number of GPUs.
func describeMIG(fn *fleet.Node, model *gpu.Model, mig map[string]int, count int) error {
	if count <= 0 {
		return fmt.Errorf("MIG resources %v but no %s label", mig, LabelCount)
	}
	var layout []string
	for _, p := range slices.Backward(model.Profiles) { // largest first
		k := mig[p.Name]
		if k%count != 0 {
			return fmt.Errorf("%d instances of MIG %s on %d GPUs: not the same layout on every GPU", k, p.Name, count)
		}
		for range k / count {
			layout = append(layout, p.Name)
		}
		delete(mig, p.Name)
	}
	for name := range mig {
		return fmt.Errorf("MIG profile %s is not one of %s's", name, model.Name)
	}
	if _, err := gpu.NewLayout(model, layout...); err != nil {
		return err
	}
	fn.GPUs, fn.MIG, fn.MIGLayout = count, fleet.MIGStatic, layout
	return nil
}

// migResources returns the node's nvidia.com/mig-<profile> counts.
func migResources(alloc corev1.ResourceList) map[string]int {
	out := map[string]int{}
	for name, q := range alloc {
		if p, ok := strings.CutPrefix(string(name), resourceMIGPrefix); ok && q.Value() > 0 {
			out[p] = int(q.Value())
		}
	}
	return out
}

func nodeHealth(n *corev1.Node) fleet.Health {
	if n.Spec.Unschedulable {
		return fleet.Cordoned
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return fleet.Healthy
			}
			break
		}
	}
	return fleet.Unhealthy
}

// nodeTaints lists the taints that keep pods off: NoSchedule and
// NoExecute, as key=value:effect, sorted.
func nodeTaints(n *corev1.Node) []string {
	var out []string
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, taintString(t))
		}
	}
	sort.Strings(out)
	return out
}

func taintString(t corev1.Taint) string { return t.Key + "=" + t.Value + ":" + string(t.Effect) }

// quantity reads a resource as an integer (milli-units when milli).
func quantity(l corev1.ResourceList, name corev1.ResourceName, milli bool) int64 {
	q, ok := l[name]
	if !ok {
		return 0
	}
	if milli {
		return q.MilliValue()
	}
	return q.Value()
}
