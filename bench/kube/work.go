package main

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
	"github.com/corral-sched/corral/internal/openb"
	"github.com/corral-sched/corral/internal/placement"
)

// podSpec is one pod to create: GPUs (or, with -replicas, time-sliced
// replicas of one GPU, with -dra a claim, and the thousandths of a GPU the
// trace asked for), CPU and memory, and its group.
type podSpec struct {
	name      string
	gpus      int64
	replicas  int64
	milli     int64
	cpuMilli  int64
	memoryMiB int64
	group     string
}

type groupSpec struct {
	name      string
	minMember int
	gpus      int // per pod
}

type workload struct {
	pods                          []podSpec // singles, then group members
	groups                        []groupSpec
	singles                       int
	podGPUs, groupPods, groupGPUs int
	// With -replicas: the fractional pods, the thousandths of a GPU they
	// ask for, and how many nodes offer time-sliced GPUs.
	shares      int
	shareMilli  int64
	sharedNodes int
	dra         bool // the fractional pods claim memory of DRA GPUs (dra.go)
}

// loadWork takes the first GPU pods of the openb trace (with o.plain, as
// many plain pods of one GPU, one CPU and 4 GiB instead): o.pods of them,
// or with o.fill > 0 as many as ask for that share of the fleet's GPUs
// with the pod groups. The trace's fractional pods (gpu_milli < 1000) ask
// for one whole GPU, unless o.replicas is set: then they ask for the
// time-sliced replicas of one GPU their share comes to (rounded up, which
// the results measure), on the nodes that offer them (sharedNodes: the
// fleet's part in proportion to the GPU they ask for). The groups
// (makeGroups) are created evenly among the single pods.
func loadWork(o options) (*workload, error) {
	var trace []placement.Pod
	if !o.plain {
		var err error
		if trace, err = openb.ReadPodsFile(o.trace); err != nil {
			return nil, err
		}
	}
	w := &workload{dra: o.dra}
	groups := makeGroups(o)
	budget := int(o.fill * float64(o.nodes*o.gpusPerNode))
	for _, g := range groups {
		budget -= g.minMember * g.gpus
	}
	var singles []podSpec
	if o.plain {
		for i := range o.pods {
			singles = append(singles, podSpec{name: fmt.Sprintf("pod-%05d", i), gpus: 1, cpuMilli: 1000, memoryMiB: 4096})
		}
		w.podGPUs = o.pods
	}
	for _, p := range trace {
		if o.fill == 0 && len(singles) == o.pods || o.fill > 0 && w.podGPUs+p.NumGPU > budget {
			break
		}
		if !p.IsGPU() {
			continue
		}
		ps := podSpec{name: fmt.Sprintf("pod-%04d", len(singles)), gpus: int64(p.NumGPU),
			cpuMilli: min(p.CPUMilli, 16000), memoryMiB: min(p.MemoryMiB, 64*1024)}
		if (o.replicas > 0 || o.dra) && p.IsShare() {
			ps.gpus, ps.milli = 0, p.GPUMilli
			ps.replicas = (p.GPUMilli*int64(o.replicas) + 999) / 1000
			w.shares++
			w.shareMilli += p.GPUMilli
		}
		singles = append(singles, ps)
		w.podGPUs += p.NumGPU
	}
	if w.podGPUs > 0 {
		w.sharedNodes = int((w.shareMilli*int64(o.nodes) + int64(w.podGPUs)*1000 - 1) / (int64(w.podGPUs) * 1000))
	}
	if o.fill == 0 && len(singles) < o.pods {
		return nil, fmt.Errorf("%s has %d GPU pods, want %d", o.trace, len(singles), o.pods)
	}
	w.groups = groups
	next := 0
	for i, g := range groups {
		// group i follows the first (i+1)/(groups+1) of the single pods
		upto := (i + 1) * len(singles) / (len(groups) + 1)
		w.pods = append(w.pods, singles[next:upto]...)
		next = upto
		for k := range g.minMember {
			w.pods = append(w.pods, podSpec{name: fmt.Sprintf("%s-%d", g.name, k), gpus: int64(g.gpus), cpuMilli: 4000, memoryMiB: 16384, group: g.name})
			w.groupPods++
			w.groupGPUs += g.gpus
		}
	}
	w.pods = append(w.pods, singles[next:]...)
	w.singles = len(singles)
	return w, nil
}

// packedOffline is how many GPUs the fractional pods' shares fill when
// packed knowing them all, largest first, each onto the first GPU with
// room (first fit decreasing): near the fewest any placement could use,
// what the GPUs they occupy compare with.
func (w *workload) packedOffline() int {
	var millis []int64
	for _, p := range w.pods {
		if p.milli > 0 {
			millis = append(millis, p.milli)
		}
	}
	slices.Sort(millis)
	slices.Reverse(millis)
	var gpus []int64 // thousandths used
	for _, m := range millis {
		i := slices.IndexFunc(gpus, func(used int64) bool { return used+m <= 1000 })
		if i < 0 {
			gpus = append(gpus, 0)
			i = len(gpus) - 1
		}
		gpus[i] += m
	}
	return len(gpus)
}

// makeGroups shapes the pod groups: o.groupPods pods of o.groupGPUs GPUs
// each, or when those are 0, 2 + i%4 pods of 1 << (i%4) GPUs for group i.
func makeGroups(o options) []groupSpec {
	out := make([]groupSpec, o.groups)
	for i := range out {
		out[i] = groupSpec{name: fmt.Sprintf("gang-%02d", i), minMember: 2 + i%4, gpus: 1 << (i % 4)}
		if o.groupPods > 0 {
			out[i].minMember = o.groupPods
		}
		if o.groupGPUs > 0 {
			out[i].gpus = o.groupGPUs
		}
	}
	return out
}

// addNodes creates the GPU nodes; with shared > 0, every node i with
// i%(nodes/shared) == 0, up to shared of them, offers its GPUs as the
// device plugin's time-sliced replicas (nvidia.com/gpu.shared, o.replicas
// a GPU) instead of whole GPUs.
func addNodes(ctx context.Context, c *kubetest.Cluster, o options, shared int) error {
	return parallel(o.nodes, func(i int) error {
		n := kubetest.Node{
			Name: fmt.Sprintf("gpu-%03d", i), GPUs: o.gpusPerNode, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559,
			CPU: "128", Memory: "1Ti",
			Labels: map[string]string{"corral.sh/rack": fmt.Sprintf("rack-%02d", i%o.racks), "bench": "gpu"},
		}
		switch {
		case isShared(i, o.nodes, shared) && o.dra:
			n.GPUs, n.Product, n.GPUMemMiB = 0, "", 0 // only the DRA driver publishes them
		case isShared(i, o.nodes, shared):
			n.Labels[kube.LabelCount], n.Labels[kube.LabelReplicas] = fmt.Sprint(o.gpusPerNode), fmt.Sprint(o.replicas)
			n.Resources = map[string]string{string(kube.ResourceShared): fmt.Sprint(o.gpusPerNode * o.replicas), string(kubetest.ResourceGPU): "0"}
		}
		if _, err := c.AddNode(ctx, n); err != nil {
			return err
		}
		if isShared(i, o.nodes, shared) && o.dra {
			return publishSharedGPUs(ctx, c, n.Name, o.gpusPerNode)
		}
		return nil
	})
}

// isShared reports whether node i of nodes is one of the shared ones,
// spread evenly over the fleet.
func isShared(i, nodes, shared int) bool {
	if shared <= 0 {
		return false
	}
	step := max(nodes/shared, 1)
	return i%step == 0 && i/step < shared
}

// createWork creates the pod groups, then the pods, for scheduler name.
func createWork(ctx context.Context, c *kubetest.Cluster, ns, scheduler string, w *workload) error {
	for _, g := range w.groups {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
			"metadata": map[string]any{"name": g.name, "namespace": ns},
			"spec":     map[string]any{"minMember": int64(g.minMember)},
		}}
		if _, err := c.Dynamic.Resource(kube.PodGroupResource).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("pod group %s: %w", g.name, err)
		}
	}
	return parallel(len(w.pods), func(i int) error {
		if w.dra && w.pods[i].milli > 0 {
			if err := createFractionClaim(ctx, c, ns, w.pods[i]); err != nil {
				return err
			}
		}
		_, err := c.Client.CoreV1().Pods(ns).Create(ctx, benchPod(w.pods[i], scheduler, w.dra), metav1.CreateOptions{})
		return err
	})
}

func benchPod(p podSpec, scheduler string, dra bool) *corev1.Pod {
	gpus := corev1.ResourceList{kubetest.ResourceGPU: *resource.NewQuantity(p.gpus, resource.DecimalSI)}
	switch {
	case dra && p.milli > 0:
		gpus = corev1.ResourceList{}
	case p.replicas > 0:
		gpus = corev1.ResourceList{kube.ResourceShared: *resource.NewQuantity(p.replicas, resource.DecimalSI)}
	}
	req := gpus.DeepCopy()
	req[corev1.ResourceCPU] = *resource.NewMilliQuantity(p.cpuMilli, resource.DecimalSI)
	req[corev1.ResourceMemory] = *resource.NewQuantity(p.memoryMiB<<20, resource.BinarySI)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Labels: map[string]string{}},
		Spec: corev1.PodSpec{SchedulerName: scheduler, Containers: []corev1.Container{{
			Name: "main", Image: "registry.invalid/work:1",
			Resources: corev1.ResourceRequirements{Requests: req, Limits: gpus},
		}}},
	}
	if p.group != "" {
		pod.Labels[kube.LabelPodGroup] = p.group
	}
	if dra && p.milli > 0 {
		claim := p.name
		pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}}
		pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}
	return pod
}

// parallel runs fn(0..n-1) on 16 workers and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return first
}
