package scalebench

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// podShape is one kind of pod in the decision stream.
type podShape struct {
	kind   string // as PodKindStats.Kind names it
	pct    int    // share of the stream
	demand job.Demand
	units  int // GPU eighths
}

// podShapes is the stream's mix; a fleet without whole-GPU or without MIG
// nodes gets only the pods it can host.
func podShapes(gpusPerNode, wholeNodes, migNodes int, pinWhole bool) []podShape {
	cpu := int64(fleet.DefaultCPUMilli / gpusPerNode) // one GPU's share of the node
	mem := int64(fleet.DefaultMemoryMiB / gpusPerNode)
	one := job.Demand{GPUs: 1, CPUMilli: cpu / 2, MemoryMiB: mem / 2}
	if pinWhole {
		one.Models = []string{GPUModel}
	}
	whole := []podShape{{"1 GPU", 50, one, migUnitsPerGPU}}
	mig := []podShape{
		{"MIG 1g.10gb", 25, job.Demand{MIG: "1g.10gb", CPUMilli: cpu / 8, MemoryMiB: mem / 8}, 1},
		{"MIG 2g.20gb", 15, job.Demand{MIG: "2g.20gb", CPUMilli: cpu / 4, MemoryMiB: mem / 4}, 2},
		{"MIG 3g.40gb", 10, job.Demand{MIG: "3g.40gb", CPUMilli: cpu / 2, MemoryMiB: mem / 2}, 4},
	}
	switch {
	case migNodes == 0:
		return whole
	case wholeNodes == 0:
		return mig
	}
	return append(whole, mig...)
}

// pickShape draws the index of a shape in proportion to its pct.
func pickShape(rng *rand.Rand, shapes []podShape) int {
	total := 0
	for _, sh := range shapes {
		total += sh.pct
	}
	r := rng.IntN(total)
	for i, sh := range shapes {
		if r < sh.pct {
			return i
		}
		r -= sh.pct
	}
	return len(shapes) - 1
}

// streamTarget is the occupancy the stream aims at before decision i of n:
// two triangles from 50% up to 80% and back.
func streamTarget(i, n int) float64 {
	phase := 2 * float64(i) / float64(n)
	frac := phase - math.Floor(phase)
	return 0.5 + 0.3*(1-math.Abs(2*frac-1))
}

// streamRun is what the stream loop collects besides the result's counts.
type streamRun struct {
	lat, rel               []time.Duration
	byKind                 [][]time.Duration // lat split by shape
	placedByKind           []int
	place, wall            time.Duration
	occMin, occMax, occSum float64
}

// stream runs the pod decision stream on s: an untimed warm-up to 50%
// occupancy, then the timed decisions.
func stream(o Options, s *gang.State, res *Result) {
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	t := newTracker(s, res.GPUs)
	shapes := podShapes(o.GPUsPerNode, res.WholeNodes, res.MIGNodes, o.PinWhole)
	for misses := 0; t.occupancy() < 0.5 && misses < 100; { // warm-up, untimed
		sh := shapes[pickShape(rng, shapes)]
		if _, ok := t.place(oneTask(t.name("p"), sh.demand), sh.units); ok {
			res.WarmupPlaced++
		} else {
			misses++
		}
	}
	run := streamRun{lat: make([]time.Duration, o.decisions()), occMin: math.Inf(1),
		byKind: make([][]time.Duration, len(shapes)), placedByKind: make([]int, len(shapes))}
	bar := o.phase("pod decisions")
	start := time.Now()
	for i := range run.lat {
		for target := streamTarget(i, len(run.lat)); t.occupancy() > target && len(t.live) > 0; {
			d, _ := t.releaseAt(rng.IntN(len(t.live))) // names come from live: no error
			run.rel = append(run.rel, d)
		}
		k := pickShape(rng, shapes)
		d, ok := t.place(oneTask(t.name("p"), shapes[k].demand), shapes[k].units)
		run.lat[i] = d
		run.place += d
		run.byKind[k] = append(run.byKind[k], d)
		if ok {
			run.placedByKind[k]++
		}
		res.count(d, ok, shapes[k].demand.MIG != "")
		occ := t.occupancy()
		run.occMin, run.occMax, run.occSum = min(run.occMin, occ), max(run.occMax, occ), run.occSum+occ
		bar(i+1, len(run.lat))
	}
	run.wall = time.Since(start)
	res.summariseStream(&run)
	res.PodKinds = kindStats(shapes, &run)
}

// kindStats splits the stream's decisions by kind of pod.
func kindStats(shapes []podShape, run *streamRun) []PodKindStats {
	out := make([]PodKindStats, len(shapes))
	for k, sh := range shapes {
		var sum time.Duration
		for _, d := range run.byKind[k] {
			sum += d
		}
		policy := podPolicy
		if sh.demand.MIG != "" {
			policy = "mig"
		}
		q := quantiles(run.byKind[k])
		out[k] = PodKindStats{Kind: sh.kind, Policy: policy, Decisions: len(run.byKind[k]),
			Placed: run.placedByKind[k], PlaceSeconds: sum.Seconds(), P50Ms: q.at(0.5), P99Ms: q.at(0.99)}
		if sum > 0 {
			out[k].PerSecPlaceOnly = float64(len(run.byKind[k])) / sum.Seconds()
		}
	}
	return out
}

// count records one stream decision of duration d.
func (r *Result) count(d time.Duration, placed, mig bool) {
	if d > time.Millisecond {
		r.DecisionsOver1ms++
	}
	switch {
	case placed:
		r.DecisionsPlaced++
	case mig:
		r.DecisionsUnfit++
		r.DecisionsUnfitMIG++
	default:
		r.DecisionsUnfit++
	}
}

// summariseStream fills in the stream's rates, quantiles and occupancy.
func (r *Result) summariseStream(run *streamRun) {
	n := len(run.lat)
	r.Decisions = n
	r.Releases = len(run.rel)
	r.StreamSeconds = run.wall.Seconds()
	r.DecisionsPerSec = float64(n) / run.wall.Seconds()
	r.DecisionsPerSecPlaceOnly = float64(n) / run.place.Seconds()
	q := quantiles(run.lat)
	r.P50DecisionMs, r.P90DecisionMs, r.P99DecisionMs = q.at(0.50), q.at(0.90), q.at(0.99)
	r.P999DecisionMs, r.MaxDecisionMs = q.at(0.999), q.at(1)
	r.P99ReleaseMs = quantiles(run.rel).at(0.99)
	r.OccupancyMinPct, r.OccupancyMaxPct = 100*run.occMin, 100*run.occMax
	r.OccupancyMeanPct = 100 * run.occSum / float64(n)
}
