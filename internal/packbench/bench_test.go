package packbench

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/corral-sched/corral/internal/example"
	"github.com/corral-sched/corral/internal/openb"
	"github.com/corral-sched/corral/internal/placement"
)

// openbDir is where the public traces live beside the repository.
var openbDir = filepath.Join("..", "..", "..", "shared", "data", "alibaba-gpu-v2023")

func loadOpenb(b *testing.B, trace string) ([]placement.Node, []placement.Pod) {
	b.Helper()
	nodes, err := openb.ReadNodesFile(filepath.Join(openbDir, "openb_node_list_gpu_node.csv"))
	if errors.Is(err, fs.ErrNotExist) {
		b.Skip("openb traces not found beside the repository")
	}
	if err != nil {
		b.Fatal(err)
	}
	pods, err := openb.ReadPodsFile(filepath.Join(openbDir, "openb_pod_list_"+trace+".csv"))
	if err != nil {
		b.Fatal(err)
	}
	return nodes, pods
}

// BenchmarkRun times one run (one trace, one policy, one seed) of the
// protocol; the target is fgd on the default trace under 2 s.
func BenchmarkRun(b *testing.B) {
	for _, policy := range []string{"fgd", "corral", "corral-online", LivePolicy, "bestfit", "random"} {
		b.Run("default/"+policy, func(b *testing.B) {
			nodes, pods := loadOpenb(b, "default")
			benchRun(b, Spec{Trace: "default", Nodes: nodes, Pods: pods, Policy: policy, Seed: 42})
		})
	}
	nodes, pods, err := example.Load()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("example/fgd", func(b *testing.B) {
		benchRun(b, Spec{Trace: example.Trace, Nodes: nodes, Pods: pods, Policy: "fgd", Seed: 42})
	})
}

func benchRun(b *testing.B, spec Spec) {
	var pods int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t, err := Run(spec)
		if err != nil {
			b.Fatal(err)
		}
		pods = len(t.Records)
	}
	perRun := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perRun, "s/run")
	b.ReportMetric(float64(pods)/perRun, "pods/s")
}
