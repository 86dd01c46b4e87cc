package main

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
	"github.com/corral-sched/corral/internal/model"
)

// podSpec is one pod to create: GPUs, CPU and memory, and its group.
type podSpec struct {
	name      string
	gpus      int64
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
}

// loadWork takes the first GPU pods of the openb trace: o.pods of them,
// or with o.fill > 0 as many as ask for that share of the fleet's GPUs
// with the pod groups. The trace's fractional pods (gpu_milli < 1000) ask
// for one whole GPU here: neither scheduler shares GPUs in this benchmark.
// The groups (makeGroups) are created evenly among the single pods.
func loadWork(o options) (*workload, error) {
	trace, err := model.ReadPodsFile(o.trace)
	if err != nil {
		return nil, err
	}
	w := &workload{}
	groups := makeGroups(o)
	budget := int(o.fill * float64(o.nodes*o.gpusPerNode))
	for _, g := range groups {
		budget -= g.minMember * g.gpus
	}
	var singles []podSpec
	for _, p := range trace {
		if o.fill == 0 && len(singles) == o.pods || o.fill > 0 && w.podGPUs+p.NumGPU > budget {
			break
		}
		if !p.IsGPU() {
			continue
		}
		singles = append(singles, podSpec{name: fmt.Sprintf("pod-%04d", len(singles)), gpus: int64(p.NumGPU),
			cpuMilli: min(p.CPUMilli, 16000), memoryMiB: min(p.MemoryMiB, 64*1024)})
		w.podGPUs += p.NumGPU
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

func addNodes(ctx context.Context, c *kubetest.Cluster, o options) error {
	return parallel(o.nodes, func(i int) error {
		_, err := c.AddNode(ctx, kubetest.Node{
			Name: fmt.Sprintf("gpu-%03d", i), GPUs: o.gpusPerNode, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559,
			CPU: "128", Memory: "1Ti",
			Labels: map[string]string{"corral.sh/rack": fmt.Sprintf("rack-%02d", i%o.racks), "bench": "gpu"},
		})
		return err
	})
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
		_, err := c.Client.CoreV1().Pods(ns).Create(ctx, benchPod(w.pods[i], scheduler), metav1.CreateOptions{})
		return err
	})
}

func benchPod(p podSpec, scheduler string) *corev1.Pod {
	gpus := corev1.ResourceList{kubetest.ResourceGPU: *resource.NewQuantity(p.gpus, resource.DecimalSI)}
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
