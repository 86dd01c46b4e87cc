package gang

import (
	"fmt"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// grid builds a fleet of identical nodes: fanout[i] domains per parent at
// level i, then nodesPer nodes per innermost domain.
func grid(t testing.TB, levels []string, fanout []int, nodesPer, gpus int, model string) *fleet.Fleet {
	t.Helper()
	f := &fleet.Fleet{Levels: levels}
	var walk func(depth int, path []string)
	walk = func(depth int, path []string) {
		if depth == len(levels) {
			for i := 0; i < nodesPer; i++ {
				f.Nodes = append(f.Nodes, fleet.Node{
					Name:     fmt.Sprintf("n%03d", len(f.Nodes)),
					Domains:  append([]string(nil), path...),
					CPUMilli: 128000, MemoryMiB: 1 << 20,
					GPUModel: model, GPUs: gpus,
				})
			}
			return
		}
		for i := 0; i < fanout[depth]; i++ {
			walk(depth+1, append(path, fmt.Sprintf("%s%d", levels[depth], i)))
		}
	}
	walk(0, nil)
	return f
}

func newState(t testing.TB, f *fleet.Fleet) *State {
	t.Helper()
	s, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func gpuJob(name string, tasks, gpus int, topo ...job.Constraint) *job.Job {
	return &job.Job{Name: name, Groups: []job.Group{{Name: "w", Count: tasks, Task: job.Demand{GPUs: gpus, CPUMilli: 1000, MemoryMiB: 1024}}}, Topology: topo}
}

func nodesOf(p *Placement) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range p.Tasks {
		if !seen[t.NodeName] {
			seen[t.NodeName] = true
			out = append(out, t.NodeName)
		}
	}
	return out
}
