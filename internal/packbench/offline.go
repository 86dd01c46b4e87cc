package packbench

import (
	"sort"

	"github.com/corral-sched/corral/internal/placement"
)

// OfflinePacked places pods, known all at once, in order of decreasing GPU
// request (then CPU) with the named policy on an empty cluster, and returns
// the milli-GPU placed. It is an achievable placement of the set (a
// heuristic, not a bound).
func OfflinePacked(nodes []placement.Node, pods []placement.Pod, policy string) (int64, error) {
	sorted := append([]placement.Pod(nil), pods...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.TotalGPUMilli() != b.TotalGPUMilli() {
			return a.TotalGPUMilli() > b.TotalGPUMilli()
		}
		return a.CPUMilli > b.CPUMilli
	})
	p, err := placement.New(policy, placement.Env{Mix: placement.TypicalMix(pods, TypicalPercent), Pods: pods})
	if err != nil {
		return 0, err
	}
	order := make([]int, len(nodes))
	for i := range order {
		order[i] = i
	}
	r := newReplay(placement.NewCluster(nodes), order, nil)
	for i := range sorted {
		r.place(p, &sorted[i])
	}
	return r.cluster.UsedGPUMilli(), nil
}
