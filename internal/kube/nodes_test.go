package kube

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/fleet"
)

// kubeNode builds a Ready node with labels and allocatable resources.
func kubeNode(name string, labels map[string]string, alloc map[string]string) *corev1.Node {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi")}
	for k, v := range alloc {
		res[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Allocatable: res, Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

func TestFleetNode(t *testing.T) {
	cfg := (&Config{Levels: []Level{{"block", "b"}, {"rack", "r"}}}).withDefaults()
	h100 := map[string]string{LabelProduct: "NVIDIA-H100-80GB-HBM3", LabelCount: "8", "r": "r7"}
	tests := []struct {
		name  string
		node  *corev1.Node
		check func(t *testing.T, n fleet.Node)
		err   string
	}{
		{"whole GPUs with topology labels", kubeNode("n", h100, map[string]string{"nvidia.com/gpu": "8"}), func(t *testing.T, n fleet.Node) {
			want := fleet.Node{Name: "n", Labels: h100, Domains: []string{"none", "r7"}, CPUMilli: 64000, MemoryMiB: 512 * 1024,
				GPUModel: "H100-80GB", GPUs: 8, Health: fleet.Healthy}
			if !reflect.DeepEqual(n, want) {
				t.Errorf("got %+v\nwant %+v", n, want)
			}
		}, ""},
		{"mixed MIG strategy: one layout per GPU", kubeNode("n", map[string]string{LabelProduct: "NVIDIA-A100-SXM4-80GB", LabelCount: "2"},
			map[string]string{"nvidia.com/mig-3g.40gb": "2", "nvidia.com/mig-1g.10gb": "6"}), func(t *testing.T, n fleet.Node) {
			if n.MIG != fleet.MIGStatic || n.GPUs != 2 || strings.Join(n.MIGLayout, " ") != "3g.40gb 1g.10gb 1g.10gb 1g.10gb" {
				t.Errorf("got MIG %q GPUs %d layout %v", n.MIG, n.GPUs, n.MIGLayout)
			}
		}, ""},
		{"mixed MIG that differs between GPUs", kubeNode("n", map[string]string{LabelProduct: "NVIDIA-A100-SXM4-80GB", LabelCount: "2"},
			map[string]string{"nvidia.com/mig-1g.10gb": "3"}), nil, "not the same layout on every GPU"},
		{"single MIG strategy: MIG devices as GPUs", kubeNode("n", map[string]string{LabelProduct: "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", LabelCount: "1"},
			map[string]string{"nvidia.com/gpu": "7"}), func(t *testing.T, n fleet.Node) {
			if n.GPUs != 7 || n.MIG != fleet.MIGNone || n.GPUModel != "A100-40GB" {
				t.Errorf("got GPUs %d MIG %q model %s", n.GPUs, n.MIG, n.GPUModel)
			}
		}, ""},
		{"time-sliced GPUs", kubeNode("n", map[string]string{LabelProduct: "NVIDIA-L4", LabelCount: "4", LabelReplicas: "4"},
			map[string]string{"nvidia.com/gpu.shared": "16"}), func(t *testing.T, n fleet.Node) {
			if n.GPUs != 4 || n.TimeSlices != 4 {
				t.Errorf("got GPUs %d slices %d", n.GPUs, n.TimeSlices)
			}
		}, ""},
		{"unknown product", kubeNode("n", map[string]string{LabelProduct: "Voodoo-5"}, map[string]string{"nvidia.com/gpu": "1"}), nil, "Voodoo-5"},
		{"CPU-only node", kubeNode("n", nil, nil), func(t *testing.T, n fleet.Node) {
			if n.GPUs != 0 || n.GPUModel != "" {
				t.Errorf("got GPUs %d model %q", n.GPUs, n.GPUModel)
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := fleetNode(tt.node, &cfg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, n)
		})
	}
}

func TestNodeHealthAndTaints(t *testing.T) {
	n := kubeNode("n", nil, nil)
	n.Spec.Taints = []corev1.Taint{
		{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule},
		{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule},
	}
	if got := nodeTaints(n); !reflect.DeepEqual(got, []string{"spot=true:NoSchedule"}) {
		t.Errorf("taints %v", got)
	}
	if h := nodeHealth(n); h != fleet.Healthy {
		t.Errorf("ready node: %s", h)
	}
	n.Status.Conditions[0].Status = corev1.ConditionFalse
	if h := nodeHealth(n); h != fleet.Unhealthy {
		t.Errorf("not-ready node: %s", h)
	}
	n.Spec.Unschedulable = true
	if h := nodeHealth(n); h != fleet.Cordoned {
		t.Errorf("cordoned node: %s", h)
	}
}

func TestParseLevels(t *testing.T) {
	got, err := ParseLevels("block=corral.sh/block, rack=corral.sh/rack")
	want := []Level{{"block", "corral.sh/block"}, {"rack", "corral.sh/rack"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := ParseLevels("rack"); err == nil {
		t.Error("a level without a label parsed")
	}
}
