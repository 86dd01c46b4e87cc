package packbench

import (
	"fmt"

	"github.com/corral-sched/corral/internal/bound"
)

// Bound is, for one trace, how well any placement could do at x = 100
// (LP bound) and what an offline heuristic packing achieved, over seeds.
type Bound struct {
	Trace  string
	LP     Stat // lower bound on unallocated GPU %
	Packed Stat // unallocated GPU % of the offline heuristic
}

// boundJob is one (trace, seed): the pods arrived by x = 100 are the same
// for every policy.
type boundJob struct {
	spec            Spec
	minUnalloc, off float64
	err             error
}

// Bounds finds, for every trace and seed of specs, how few GPUs any
// placement of the pods arrived by x = 100 could leave unallocated (an LP
// bound), and the best offline packing of them found (a heuristic: the
// better of the bound package's packing and corral on the pods sorted
// largest first). It runs workers at a time and reports each one done to
// progress (which may be nil); the result has one Bound per trace, in the
// order of specs.
func Bounds(specs []Spec, workers int, progress func(done, total int)) ([]Bound, error) {
	jobs := uniqueTraceSeeds(specs)
	ForEach(len(jobs), workers, func(i int) { jobs[i].run() }, progress)
	return collectBounds(jobs)
}

func uniqueTraceSeeds(specs []Spec) []boundJob {
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
	arrived, err := ArrivedBy(j.spec, 100)
	if err != nil {
		j.err = fmt.Errorf("bound %s seed %d: %w", j.spec.Trace, j.spec.Seed, err)
		return
	}
	r, err := bound.Compute(j.spec.Nodes, arrived)
	if err != nil {
		j.err = fmt.Errorf("bound %s seed %d: %w", j.spec.Trace, j.spec.Seed, err)
		return
	}
	packed := float64(r.PackedMilli)
	if corral, err := OfflinePacked(j.spec.Nodes, arrived, "corral"); err == nil {
		packed = max(packed, float64(corral))
	}
	j.minUnalloc = r.MinUnallocatedPct()
	j.off = 100 - 100*packed/float64(r.CapacityMilli)
}

func collectBounds(jobs []boundJob) ([]Bound, error) {
	var out []Bound
	index := map[string]int{}
	lp, off := map[string][]float64{}, map[string][]float64{}
	for _, j := range jobs {
		if j.err != nil {
			return nil, j.err
		}
		t := j.spec.Trace
		if _, ok := index[t]; !ok {
			index[t] = len(out)
			out = append(out, Bound{Trace: t})
		}
		lp[t] = append(lp[t], j.minUnalloc)
		off[t] = append(off[t], j.off)
	}
	for i := range out {
		out[i].LP = StatOf(lp[out[i].Trace])
		out[i].Packed = StatOf(off[out[i].Trace])
	}
	return out, nil
}
