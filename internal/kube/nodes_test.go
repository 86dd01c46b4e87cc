package kube

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
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
	cfg := (&Config{Levels: []Level{{"block", []string{"b"}}, {"rack", []string{"r"}}}}).withDefaults()
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
		{"unknown product", kubeNode("n", map[string]string{LabelProduct: "Voodoo-5"}, map[string]string{"nvidia.com/gpu": "1"}), func(t *testing.T, n fleet.Node) {
			if n.GPUs != 1 || n.GPUModel != "Voodoo-5" {
				t.Errorf("got GPUs %d model %q, want 1 Voodoo-5 described from the labels", n.GPUs, n.GPUModel)
			}
		}, ""},
		{"unknown product with MIG", kubeNode("n", map[string]string{LabelProduct: "Voodoo-6-MIG-1g.5gb", LabelCount: "1"},
			map[string]string{"nvidia.com/gpu": "7"}), nil, "MIG on a GPU model corral does not know"},
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
	tests := []struct {
		name, in string
		want     []Level
	}{
		{"one label a level", "block=corral.sh/block, rack=corral.sh/rack",
			[]Level{{"block", []string{"corral.sh/block"}}, {"rack", []string{"corral.sh/rack"}}}},
		{"labels tried in order", "leaf=topology.k8s.aws/network-node-layer-4|topology.k8s.aws/network-node-layer-3 ",
			[]Level{{"leaf", []string{LabelEKSLayer4, LabelEKSLayer3}}}},
		{"empty: no levels", "", nil},
	}
	for _, tt := range tests {
		got, err := ParseLevels(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, %v; want %v", tt.name, got, err, tt.want)
		}
		if len(got) > 0 && FormatLevels(got) != strings.ReplaceAll(strings.TrimSpace(tt.in), ", ", ",") {
			t.Errorf("%s: FormatLevels gives %q, not what was parsed", tt.name, FormatLevels(got))
		}
	}
	for _, bad := range []string{"rack", "rack=", "=a/b", "rack=|"} {
		if _, err := ParseLevels(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	defaults := FormatLevels(DefaultLevels())
	if got, err := ParseLevels(defaults); err != nil || !reflect.DeepEqual(got, DefaultLevels()) {
		t.Errorf("the default levels %q do not parse back: %v %v", defaults, got, err)
	}
}

// A node's domain at a level is the first of the level's labels it has;
// without any, "none" (with every other such node under its parent). At
// the NVLink level, once some node of the fleet has a clique, a node
// without one is a domain of its own; where none has, NVLink ends at the
// node (no NVLink level), as before cliques were read.
func TestNodeDomains(t *testing.T) {
	cfg := (&Config{}).withDefaults()
	gpus := map[string]string{"nvidia.com/gpu": "8"}
	tests := []struct {
		name   string
		labels map[string]string
		want   []string // region zone block subblock rack leaf clique
	}{
		{"EKS, three layers (p5)", map[string]string{LabelRegion: "us-east-1", LabelZone: "us-east-1a",
			LabelEKSLayer1: "nn-1", LabelEKSLayer2: "nn-2", LabelEKSLayer3: "nn-3"},
			[]string{"us-east-1", "us-east-1a", "nn-1", "nn-2", "nn-3", "nn-3", "n0"}},
		{"EKS, four layers (p6-b200): leaf is layer 4", map[string]string{LabelEKSLayer1: "nn-1", LabelEKSLayer2: "nn-2",
			LabelEKSLayer3: "nn-3", LabelEKSLayer4: "nn-4"},
			[]string{"none", "none", "nn-1", "nn-2", "nn-3", "nn-4", "n1"}},
		{"GKE", map[string]string{LabelGKEBlock: "b", LabelGKESubblock: "s", LabelGKEHost: "h"},
			[]string{"none", "none", "b", "s", "none", "none", "n2"}}, // the host is the node
		{"GB200 with GPU feature discovery's clique", map[string]string{LabelGKESubblock: "s", LabelGPUClique: "uuid.1"},
			[]string{"none", "none", "none", "s", "none", "none", "uuid.1"}},
		{"corral's own labels where no cloud's are", map[string]string{LabelCorralBlock: "b1", LabelCorralRack: "r1"},
			[]string{"none", "none", "b1", "none", "r1", "none", "n4"}},
		{"a cloud's label wins over corral's", map[string]string{LabelEKSLayer1: "nn-1", LabelCorralBlock: "b1"},
			[]string{"none", "none", "nn-1", "none", "none", "none", "n5"}},
	}
	var nodes []*corev1.Node
	for i, tt := range tests {
		nodes = append(nodes, kubeNode(fmt.Sprintf("n%d", i), tt.labels, gpus))
	}
	f, skipped, _ := buildFleet(nodes, &cfg, nil)
	if len(skipped) != 0 || f.NVLinkDomain != DefaultNVLinkLevel {
		t.Fatalf("skipped %v, NVLink level %q", skipped, f.NVLinkDomain)
	}
	for i, tt := range tests {
		if got := f.Nodes[i].Domains; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: domains %v, want %v", tt.name, got, tt.want)
		}
	}
	noClique := append(slices.Clone(nodes[:3]), nodes[4:]...)
	f, _, _ = buildFleet(noClique, &cfg, nil)
	if f.NVLinkDomain != "" || f.Nodes[0].Domains[6] != "none" {
		t.Errorf("no clique anywhere: NVLink level %q, domains %v; want none, and NVLink ending at the node", f.NVLinkDomain, f.Nodes[0].Domains)
	}
}

// GPU nodes of models the catalog lacks are described from their labels
// and capacity, and the note says so; they are never dropped.
func TestDescribeNodeOfUnknownModel(t *testing.T) {
	cfg := (&Config{}).withDefaults()
	tests := []struct {
		name, model, note string
		labels            map[string]string
		memMiB            int64
	}{
		{"H20 with memory", "NVIDIA-H20", "97871 MiB each",
			map[string]string{LabelProduct: "NVIDIA-H20", LabelMemory: "97871", LabelCount: "1"}, 97871},
		{"RTX PRO 6000 Blackwell with memory", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", `"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition" is not in corral's catalog`,
			map[string]string{LabelProduct: "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", LabelMemory: "95830"}, 95830},
		{"no product label", "unlabelled-46068MiB", "no nvidia.com/gpu.product label",
			map[string]string{LabelMemory: "46068"}, 46068},
		{"no labels at all", "unlabelled", "memory unknown", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, note, err := describeNode(kubeNode("n", tt.labels, map[string]string{"nvidia.com/gpu": "4"}), &cfg, "")
			if err != nil {
				t.Fatal(err)
			}
			if n.GPUs != 4 || n.GPUModel != tt.model || !strings.Contains(note, tt.note) {
				t.Errorf("got %d GPUs of %q, note %q; want 4 of %q, a note with %q", n.GPUs, n.GPUModel, note, tt.model, tt.note)
			}
			if m, err := gpu.Lookup(n.GPUModel); err != nil || m.MemoryMiB != tt.memMiB {
				t.Errorf("Lookup(%q) = %v, %v; want %d MiB", n.GPUModel, m, err, tt.memMiB)
			}
		})
	}
	// Two nodes naming one unknown model with different memory: the second
	// is left out, with a reason, not silently.
	other := kubeNode("m", map[string]string{LabelProduct: "NVIDIA-H20", LabelMemory: "1024"}, map[string]string{"nvidia.com/gpu": "1"})
	f, skipped, described := buildFleet([]*corev1.Node{other}, &cfg, nil)
	if len(f.Nodes) != 0 || skipped["m"] == nil || len(described) != 0 {
		t.Errorf("fleet %d nodes, skipped %v, described %v; want m left out for its memory", len(f.Nodes), skipped, described)
	}
}

// A node's GPU price comes from its corral.sh/gpu-price annotation; a
// malformed one leaves the node unpriced, and scheduled, with a note.
func TestNodePriceAnnotation(t *testing.T) {
	for _, tc := range []struct {
		value string
		price float64
		bad   bool
	}{{"3.93", 3.93, false}, {" $2.5 ", 2.5, false}, {"cheap", 0, true}, {"-1", 0, true}, {"1e9", 0, true}} {
		n := &corev1.Node{}
		n.Name, n.Annotations = "n", map[string]string{AnnotationGPUPrice: tc.value}
		p, err := nodePrice(n)
		if p != tc.price || (err != nil) != tc.bad {
			t.Errorf("%q: $%v, %v; want $%v, error %v", tc.value, p, err, tc.price, tc.bad)
		}
	}
	n := &corev1.Node{}
	n.Name, n.Labels = "n", map[string]string{}
	n.Annotations = map[string]string{AnnotationGPUPrice: "cheap"}
	fn, note, err := describeNode(n, &Config{}, "")
	if err != nil || fn.PricePerGPUHour != 0 || !strings.Contains(note, AnnotationGPUPrice) {
		t.Errorf("a malformed price: node %+v, note %q, error %v; want it kept, unpriced, with a note", fn, note, err)
	}
}
