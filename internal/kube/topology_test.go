package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// topologyNodes are the nodes of testdata/topology/nodes.yaml: labelled as
// EKS, GKE and GPU feature discovery label them (sources in the file).
func topologyNodes(t *testing.T) []kubetest.Node {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "topology", "nodes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var nodes []kubetest.Node
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&nodes); err != nil {
		t.Fatal(err)
	}
	return nodes
}

// golden compares got with the file, or rewrites the file under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -run %s -update rewrites it); got:\n%s", path, t.Name(), got)
	}
}

// With no levels configured, the scheduler reads the labels EKS, GKE and
// GPU feature discovery publish: the tree it builds from them (as the
// deployed ServiceAccount lists the nodes) is the golden one, and gangs
// packed at the bottom network node (leaf) and in one NVLink domain land
// inside one such domain, the only one that holds them.
func TestTopologyOfPublishedLabels(t *testing.T) {
	e := newEnv(t)
	for _, n := range topologyNodes(t) {
		e.nodeSpec(n)
	}
	cfg := e.configNoGrace()
	cfg.Levels = nil // the defaults
	topo, err := ReadTopology(context.Background(), e.deployed().Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := topo.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "topology", "tree.txt"), text.Bytes())
	js, err := json.MarshalIndent(topo, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "topology", "tree.json"), append(js, '\n'))

	e.start(cfg)
	// Three 8-GPU pods in one leaf: only layer 3 nn-b57c19e0d4a2f6831 has
	// three free 8-GPU nodes (topo-eks-p5-0, first by name, is alone in
	// its leaf).
	e.podGroup("leaf", 3, map[string]string{AnnotationPack: "leaf"})
	var leaf []string
	for _, n := range []string{"leaf-0", "leaf-1", "leaf-2"} {
		e.create(inGroup(pod(n, 8), "leaf"))
		leaf = append(leaf, n)
	}
	wantNodes(t, e.waitBound(leaf...), leaf, "topo-eks-p5-1", "topo-eks-p5-2", "topo-eks-p5-3")
	// Three 4-GPU pods in one NVLink domain: 12 GPUs, more than any node
	// has, so only GB200 clique .1 (four nodes of 4) holds them.
	e.podGroup("nvl", 3, map[string]string{AnnotationPack: "nvlink"})
	var nvl []string
	for _, n := range []string{"nvl-0", "nvl-1", "nvl-2"} {
		e.create(inGroup(pod(n, 4), "nvl"))
		nvl = append(nvl, n)
	}
	got := e.waitBound(nvl...)
	for _, p := range nvl {
		if n := got[p]; !slices.Contains([]string{"topo-gke-a4x-1", "topo-gke-a4x-2", "topo-gke-a4x-3", "topo-gke-a4x-4"}, n) {
			t.Errorf("pod %s on %s, outside clique 7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1 (all: %v)", p, n, got)
		}
	}
}

// wantNodes fails t unless pods sit on exactly the nodes want (bound maps
// pods to nodes).
func wantNodes(t *testing.T, bound map[string]string, pods []string, want ...string) {
	t.Helper()
	var got []string
	for _, p := range pods {
		got = append(got, bound[p])
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("bound on %s, want %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// A label value under several parents is split by the tree: the printed
// topology says so, naming the parents.
func TestTopologyWarnsOfSplitDomains(t *testing.T) {
	gpus := map[string]string{"nvidia.com/gpu": "4"}
	clique := func(name, leaf string) *corev1.Node {
		return kubeNode(name, map[string]string{LabelEKSLayer3: leaf, LabelGPUClique: "uuid.1"}, gpus)
	}
	topo := DescribeTopology([]*corev1.Node{clique("a", "nn-1"), clique("b", "nn-2"), clique("c", "nn-2")}, Config{})
	if len(topo.Warnings) != 1 || !strings.Contains(topo.Warnings[0], "clique uuid.1 lies under 2 leaf domains") {
		t.Errorf("warnings %q, want the clique split over two leaves", topo.Warnings)
	}
	topo = DescribeTopology([]*corev1.Node{clique("b", "nn-2"), clique("c", "nn-2")}, Config{})
	if len(topo.Warnings) != 0 {
		t.Errorf("warnings %q for a clique under one leaf", topo.Warnings)
	}
}
