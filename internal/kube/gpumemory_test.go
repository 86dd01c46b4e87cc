package kube

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// TestUnitJobByGPUMemory converts annotated pods into the core's job: the
// core picks the model and count, the pods must request that count, and
// their GPUs are kept to the model chosen.
func TestUnitJobByGPUMemory(t *testing.T) {
	f := &fleet.Fleet{}
	for i, model := range []string{"H100-80GB", "H100-80GB", "H200-141GB"} {
		f.Nodes = append(f.Nodes, fleet.Node{Name: fmt.Sprintf("n%d", i), CPUMilli: 64000, MemoryMiB: 1 << 20, GPUModel: model, GPUs: 8})
	}
	st, err := gang.New(f)
	if err != nil {
		t.Fatal(err)
	}
	annotated := func(gpus int, ann ...string) *corev1.Pod {
		p := pod("p", gpus)
		p.Annotations = map[string]string{}
		for i := 0; i+1 < len(ann); i += 2 {
			p.Annotations[ann[i]] = ann[i+1]
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		model string // the model the job is kept to; "" none
		err   string
	}{
		{"not annotated", annotated(8), "", ""},
		{"the core's shape requested", annotated(5, AnnotationGPUMemory, "600Gi"), "H200-141GB", ""},
		{"allowed models", annotated(8, AnnotationGPUMemory, "600G", AnnotationGPUModels, "H100-80GB"), "H100-80GB", ""},
		{"another count requested", annotated(8, AnnotationGPUMemory, "600Gi"), "",
			"asks 600Gi of GPU memory: corral chose 5x H200-141GB (705Gi); its pods must request it: 1 pods of nvidia.com/gpu: 5 each (they request 1 pods of 8 GPUs)"},
		{"no model meets it", annotated(8, AnnotationGPUMemory, "600Gi", AnnotationGPUMemoryPerGPU, "200Gi"), "",
			"H200-141GB has 141Gi per GPU, under the 200Gi asked"},
		{"a bad value", annotated(8, AnnotationGPUMemory, "lots"), "", `annotation corral.sh/gpu-memory: "lots"`},
		{"a minimum alone", annotated(8, AnnotationGPUMemoryPerGPU, "80G"), "", "annotation corral.sh/gpu-memory-per-gpu goes with corral.sh/gpu-memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unit{job: "pod p", pods: []*corev1.Pod{tc.pod}}
			j, _, err := unitJob(u, &snapshot{state: st})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			models := strings.Join(j.Groups[0].Task.Models, ",")
			if models != tc.model || (tc.model != "") != (j.Shape != nil) {
				t.Errorf("job kept to models %q with shape %v, want %q", models, j.Shape, tc.model)
			}
			if tc.model == "" {
				return
			}
			p, unfit := st.Place(j)
			if unfit != nil {
				t.Fatal(unfit)
			}
			if got := f.Nodes[p.Tasks[0].Node].GPUModel; got != tc.model {
				t.Errorf("placed on a %s node, want %s", got, tc.model)
			}
			st.Release(j.Name)
		})
	}
}

// TestPodAskingByGPUMemoryOnAPIServer runs the annotation against a real
// API server: on an H100 node and an H200 node, a pod asking 600Gi and
// requesting the 5 GPUs the core chose binds to the H200 node; one
// requesting 8 waits, told the shape to request.
func TestPodAskingByGPUMemoryOnAPIServer(t *testing.T) {
	e := newEnv(t)
	e.node("mem-h100", 8, nil)
	e.nodeSpec(kubetest.Node{Name: "mem-h200", GPUs: 8, Product: "NVIDIA-H200", GPUMemMiB: 144384})
	e.start(e.config())
	asking := func(name string, gpus int) *corev1.Pod {
		p := pod(name, gpus)
		p.Annotations = map[string]string{AnnotationGPUMemory: "600Gi"}
		return p
	}
	e.create(asking("fits", 5))
	if got := e.waitBound("fits"); got["fits"] != "mem-h200" {
		t.Errorf("fits bound to %s, want mem-h200 (5 H200s)", got["fits"])
	}
	e.create(asking("eight", 8))
	e.waitUnschedulable("eight", "corral chose 5x H200-141GB (705Gi); its pods must request it: 1 pods of nvidia.com/gpu: 5 each")
}
