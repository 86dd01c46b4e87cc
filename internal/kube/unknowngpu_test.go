package kube

import (
	"testing"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// GPU nodes whose model corral's catalog lacks (GH200, H100 NVL) or whose
// product label is missing are described from their labels and capacity
// and reported with a node event, never dropped: pods land on them, by
// model selector too.
func TestUnknownGPUModelsAreDescribedAndReported(t *testing.T) {
	e := newEnv(t)
	e.nodeSpec(kubetest.Node{Name: "gh200-0", GPUs: 1, Product: "NVIDIA-GH200-480GB", GPUMemMiB: 97871})
	e.nodeSpec(kubetest.Node{Name: "h100nvl-0", GPUs: 2, Product: "NVIDIA-H100-NVL", GPUMemMiB: 95830})
	e.nodeSpec(kubetest.Node{Name: "nolabel-0", GPUs: 4}) // no product, no memory label
	e.start(e.config())
	gh, nvl := pod("on-gh200", 1), pod("on-nvl", 2)
	gh.Spec.NodeSelector = map[string]string{LabelProduct: "NVIDIA-GH200-480GB"}
	nvl.Spec.NodeSelector = map[string]string{LabelProduct: "NVIDIA-H100-NVL"}
	e.create(gh, nvl, pod("four", 4))
	got := e.waitBound("on-gh200", "on-nvl", "four")
	want := map[string]string{"on-gh200": "gh200-0", "on-nvl": "h100nvl-0", "four": "nolabel-0"}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("%s on %s, want %s", p, got[p], n)
		}
	}
	for node, note := range map[string]string{
		"gh200-0":   `"NVIDIA-GH200-480GB" is not in corral's catalog: described from the node's labels and capacity as model NVIDIA-GH200-480GB, 97871 MiB each`,
		"h100nvl-0": "as model NVIDIA-H100-NVL, 95830 MiB each",
		"nolabel-0": "no nvidia.com/gpu.product label",
	} {
		e.eventually(func() error { return e.nodeEvent(node, EventUnknownGPUModel, note) })
	}
}
