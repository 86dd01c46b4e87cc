package kube

import (
	"testing"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// GPU nodes whose model corral's catalog lacks (H20, RTX PRO 6000 Blackwell) or whose
// product label is missing are described from their labels and capacity
// and reported with a node event, never dropped: pods land on them, by
// model selector too.
func TestUnknownGPUModelsAreDescribedAndReported(t *testing.T) {
	e := newEnv(t)
	e.nodeSpec(kubetest.Node{Name: "h20-0", GPUs: 1, Product: "NVIDIA-H20", GPUMemMiB: 97871})
	e.nodeSpec(kubetest.Node{Name: "rtxpro-0", GPUs: 2, Product: "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", GPUMemMiB: 95830})
	e.nodeSpec(kubetest.Node{Name: "nolabel-0", GPUs: 4}) // no product, no memory label
	e.start(e.config())
	gh, nvl := pod("on-h20", 1), pod("on-rtxpro", 2)
	gh.Spec.NodeSelector = map[string]string{LabelProduct: "NVIDIA-H20"}
	nvl.Spec.NodeSelector = map[string]string{LabelProduct: "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"}
	e.create(gh, nvl, pod("four", 4))
	got := e.waitBound("on-h20", "on-rtxpro", "four")
	want := map[string]string{"on-h20": "h20-0", "on-rtxpro": "rtxpro-0", "four": "nolabel-0"}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("%s on %s, want %s", p, got[p], n)
		}
	}
	for node, note := range map[string]string{
		"h20-0":     `"NVIDIA-H20" is not in corral's catalog: described from the node's labels and capacity as model NVIDIA-H20, 97871 MiB each`,
		"rtxpro-0":  "as model NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition, 95830 MiB each",
		"nolabel-0": "no nvidia.com/gpu.product label",
	} {
		e.eventually(func() error { return e.nodeEvent(node, EventUnknownGPUModel, note) })
	}
}
