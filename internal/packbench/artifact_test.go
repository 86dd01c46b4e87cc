package packbench

import (
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"testing"

	"github.com/corral-sched/corral/internal/openb"
)

// TestReproducesTheArtifact checks the ports against the authors' cached
// results for seed 42 on the default trace (unallocated GPU % at x = 100):
// the same draws from the same source must give the same number to the digit.
func TestReproducesTheArtifact(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the full default trace")
	}
	nodes, err := openb.ReadNodesFile(filepath.Join(openbDir, "openb_node_list_gpu_node.csv"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("openb traces not found beside the repository")
	}
	if err != nil {
		t.Fatal(err)
	}
	pods, err := openb.ReadPodsFile(filepath.Join(openbDir, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for policy, want := range map[string]float64{"fgd": 4.86, "bestfit": 7.06} {
		tr, err := Run(Spec{Trace: "default", Nodes: nodes, Pods: pods, Policy: policy, Seed: 42})
		if err != nil {
			t.Fatal(err)
		}
		if got := Summarise(tr).UnallocatedAt100; math.Abs(got-want) > 0.001 {
			t.Errorf("%s seed 42: %.2f%% unallocated at x = 100, the artifact has %.2f%%", policy, got, want)
		}
	}
}
