package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	corralqty "github.com/corral-sched/corral/internal/quantity"
)

// A unit may ask for GPU memory in all (job.MemoryAsk) by annotating its
// pods: corral.sh/gpu-memory the total over the unit ("600Gi", or "600G"
// as GPU model names count), corral.sh/gpu-memory-per-gpu the least each
// GPU must have, corral.sh/gpu-models the models allowed (comma-separated
// catalog names). The core picks the model and the count
// (gang.State.Resolve). A pod's GPUs come from its requests, which the
// kubelet's device plugin or DRA driver reads and nobody may change once
// it exists, so the unit's pods must request what the core chose: as
// many pods as the shape's tasks, each requesting its GPUs. Such a unit
// runs on the chosen model only; any other is refused with the shape it
// should request.
const (
	AnnotationGPUMemory       = "corral.sh/gpu-memory"
	AnnotationGPUMemoryPerGPU = "corral.sh/gpu-memory-per-gpu"
	AnnotationGPUModels       = "corral.sh/gpu-models"
)

// memoryAsk reads the ask by GPU memory of a unit's pods from its first
// pod's annotations; nil when it asks for none.
func memoryAsk(pods []*corev1.Pod) (*job.MemoryAsk, error) {
	a := pods[0].Annotations
	total, ok := a[AnnotationGPUMemory]
	if !ok {
		for _, k := range []string{AnnotationGPUMemoryPerGPU, AnnotationGPUModels} {
			if _, set := a[k]; set {
				return nil, fmt.Errorf("annotation %s goes with %s (the GPU memory in all)", k, AnnotationGPUMemory)
			}
		}
		return nil, nil
	}
	ask := &job.MemoryAsk{}
	var err error
	if ask.TotalMiB, err = corralqty.GPUMemory(total); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", AnnotationGPUMemory, err)
	}
	if v, ok := a[AnnotationGPUMemoryPerGPU]; ok {
		if ask.MinPerGPUMiB, err = corralqty.GPUMemory(v); err != nil {
			return nil, fmt.Errorf("annotation %s: %w", AnnotationGPUMemoryPerGPU, err)
		}
	}
	if v := a[AnnotationGPUModels]; v != "" {
		ask.Models = strings.Split(v, ",")
	}
	return ask, nil
}

// byGPUMemory is unit job j, made from pods that ask ask, as the core
// resolved it on the cluster: its pods' GPUs kept to the chosen model,
// the ask and the shape recorded. An error says why no model meets the
// ask, or which pods and requests the chosen shape needs.
func byGPUMemory(j *job.Job, ask *job.MemoryAsk, state *gang.State) (*job.Job, error) {
	asked := *j
	asked.ByGPUMemory, asked.Groups = ask, nil
	if len(j.Groups) > 0 {
		g := j.Groups[0]
		g.Count, g.Task = 1, job.Demand{CPUMilli: g.Task.CPUMilli, MemoryMiB: g.Task.MemoryMiB}
		asked.Groups = []job.Group{g}
	}
	r, err := state.Resolve(&asked)
	if err != nil {
		return nil, err
	}
	sh := r.Shape
	if len(j.Groups) != 1 || j.Groups[0].Count != sh.Tasks || j.Groups[0].Task.Kind() != job.Whole || j.Groups[0].Task.GPUs != sh.GPUsPerTask {
		return nil, fmt.Errorf("asks %s: corral chose %s; its pods must request it: %d pods of %s: %d each (they request %s)",
			ask, sh, sh.Tasks, ResourceGPU, sh.GPUsPerTask, requested(j))
	}
	out := *j
	out.Groups = []job.Group{j.Groups[0]}
	out.Groups[0].Task.Models = []string{sh.Model}
	out.ByGPUMemory, out.Shape = ask, sh
	return &out, nil
}

// requested says what j's pods request of GPUs, for messages.
func requested(j *job.Job) string {
	var parts []string
	for _, g := range j.Groups {
		parts = append(parts, fmt.Sprintf("%d pods of %d GPUs", g.Count, g.Task.GPUs))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
