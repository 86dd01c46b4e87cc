package bound

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/openb"
)

// BenchmarkCompute runs Compute on a synthetic input of realistic size:
// 1,200 nodes of 15 types and 10,000 pods of 1,000 shapes.
func BenchmarkCompute(b *testing.B) {
	nodes, pods := synthetic(5, 1200, 10000, 1000)
	b.ResetTimer()
	start := time.Now()
	var res Result
	for b.Loop() {
		var err error
		if res, err = Compute(nodes, pods); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/compute")
	b.ReportMetric(res.MinUnallocatedPct(), "min-unalloc-%")
	b.ReportMetric(res.PackedUnallocatedPct(), "packed-unalloc-%")
}

// TestOpenb computes the bound for the whole openb default trace. It runs
// only when BOUND_OPENB_DIR names the directory holding the openb CSVs.
func TestOpenb(t *testing.T) {
	dir := os.Getenv("BOUND_OPENB_DIR")
	if dir == "" {
		t.Skip("set BOUND_OPENB_DIR to the alibaba-gpu-v2023 directory to run")
	}
	nodes, err := openb.ReadNodesFile(filepath.Join(dir, "openb_node_list_gpu_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := openb.ReadPodsFile(filepath.Join(dir, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := Compute(nodes, pods)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d nodes, %d pods: %.2fs; capacity %d milli, upper %.1f, packed %d; min unallocated %.3f%%, packed unallocated %.3f%%",
		len(nodes), len(pods), time.Since(start).Seconds(), res.CapacityMilli, res.UpperMilli, res.PackedMilli,
		res.MinUnallocatedPct(), res.PackedUnallocatedPct())
}
