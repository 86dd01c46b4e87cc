package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// corral sim replays a live cluster: two 8-GPU nodes, one 6-GPU pod
// running on each (for 2 and 4 more hours), and a waiting pod group of
// two 4-GPU pods.
func TestSimFromALiveCluster(t *testing.T) {
	c := kubetest.StartFor(t)
	kubeconfig, err := c.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"snap-0", "snap-1"} {
		c.CreateNode(t, kubetest.Node{Name: n, GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3"})
	}
	ns := c.Namespace(t)
	pod := func(name, node string, gpus int, labels, annotations map[string]string) {
		req := corev1.ResourceList{kubetest.ResourceGPU: *resource.NewQuantity(int64(gpus), resource.DecimalSI)}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
			Spec: corev1.PodSpec{SchedulerName: "corral", NodeName: node,
				Containers: []corev1.Container{{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}}}}
		if _, err := c.Client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod("run-0", "snap-0", 6, nil, map[string]string{kube.AnnotationRuntime: "2h"})
	pod("run-1", "snap-1", 6, nil, map[string]string{kube.AnnotationRuntime: "4h"})
	group := map[string]string{kube.LabelPodGroup: "g"}
	pod("wait-0", "", 4, group, map[string]string{kube.AnnotationRuntime: "1h"})
	pod("wait-1", "", 4, group, nil)

	jsonPath := filepath.Join(t.TempDir(), "sim.json")
	out, errOut, code := runCLI(t, "sim", "--workload", "kube", "--kubeconfig", kubeconfig, "--policies", "corral,kube-default", "--json", jsonPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"2 GPU pods running, 1 jobs waiting", "pending at snapshot", "running at snapshot"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []struct {
			Policy  string
			Summary struct {
				Jobs    int
				Classes []struct {
					Class     string
					MeanWaitH float64 `json:"mean_wait_h"`
				}
			}
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	// The group needs 4 free GPUs on each of two nodes, or 8 on one: it
	// starts when run-0 ends, 2 hours in.
	for _, r := range doc.Results {
		if r.Summary.Jobs != 3 {
			t.Errorf("%s: %d jobs, want 3", r.Policy, r.Summary.Jobs)
		}
		for _, c := range r.Summary.Classes {
			if c.Class == "pending at snapshot" && (c.MeanWaitH < 1.99 || c.MeanWaitH > 2.01) {
				t.Errorf("%s: the waiting group waits %.2f h, want 2", r.Policy, c.MeanWaitH)
			}
		}
	}
}
