package main

import (
	"fmt"

	"github.com/corral-sched/corral/internal/bound"
	"github.com/corral-sched/corral/internal/packbench"
	"github.com/corral-sched/corral/internal/report"
)

// boundJob is one (trace, seed): the pods arrived by x = 100 are the same
// for every policy.
type boundJob struct {
	spec            packbench.Spec
	minUnalloc, off float64
	err             error
}

// computeBounds finds, for every trace and seed, how few GPUs any placement
// of the pods arrived by x = 100 could leave unallocated (an LP bound), and
// the best offline packing of them found (a heuristic: the better of the
// bound package's packing and corral on the pods sorted largest first).
func computeBounds(specs []packbench.Spec, workers int, p *progress) ([]report.Bound, error) {
	jobs := uniqueTraceSeeds(specs)
	packbench.ForEach(len(jobs), workers, func(i int) { jobs[i].run() }, p.update)
	p.finish()
	return collectBounds(jobs)
}

func uniqueTraceSeeds(specs []packbench.Spec) []boundJob {
	type key struct {
		trace string
		seed  int64
	}
	seen := map[key]bool{}
	var jobs []boundJob
	for _, s := range specs {
		if k := (key{s.Trace, s.Seed}); !seen[k] {
			seen[k] = true
			jobs = append(jobs, boundJob{spec: s})
		}
	}
	return jobs
}

func (j *boundJob) run() {
	arrived, err := packbench.ArrivedBy(j.spec, 100)
	if err != nil {
		j.err = err
		return
	}
	r, err := bound.Compute(j.spec.Nodes, arrived)
	if err != nil {
		j.err = fmt.Errorf("bound %s seed %d: %w", j.spec.Trace, j.spec.Seed, err)
		return
	}
	packed := float64(r.PackedMilli)
	if corral, err := packbench.OfflinePacked(j.spec.Nodes, arrived, "corral"); err == nil {
		packed = max(packed, float64(corral))
	}
	j.minUnalloc = r.MinUnallocatedPct()
	j.off = 100 - 100*packed/float64(r.CapacityMilli)
}

func collectBounds(jobs []boundJob) ([]report.Bound, error) {
	var out []report.Bound
	index := map[string]int{}
	lp, off := map[string][]float64{}, map[string][]float64{}
	for _, j := range jobs {
		if j.err != nil {
			return nil, j.err
		}
		t := j.spec.Trace
		if _, ok := index[t]; !ok {
			index[t] = len(out)
			out = append(out, report.Bound{Trace: t})
		}
		lp[t] = append(lp[t], j.minUnalloc)
		off[t] = append(off[t], j.off)
	}
	for i := range out {
		out[i].LP = packbench.StatOf(lp[out[i].Trace])
		out[i].Packed = packbench.StatOf(off[out[i].Trace])
	}
	return out, nil
}
