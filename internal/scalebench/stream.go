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
	pct    int // share of the stream
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
	whole := []podShape{{50, one, migUnitsPerGPU}}
	mig := []podShape{
		{25, job.Demand{MIG: "1g.10gb", CPUMilli: cpu / 8, MemoryMiB: mem / 8}, 1},
		{15, job.Demand{MIG: "2g.20gb", CPUMilli: cpu / 4, MemoryMiB: mem / 4}, 2},
		{10, job.Demand{MIG: "3g.40gb", CPUMilli: cpu / 2, MemoryMiB: mem / 2}, 4},
	}
	switch {
	case migNodes == 0:
		return whole
	case wholeNodes == 0:
		return mig
	}
	return append(whole, mig...)
}

func pickShape(rng *rand.Rand, shapes []podShape) podShape {
	total := 0
	for _, sh := range shapes {
		total += sh.pct
	}
	r := rng.IntN(total)
	for _, sh := range shapes {
		if r < sh.pct {
			return sh
		}
		r -= sh.pct
	}
	return shapes[len(shapes)-1]
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
	place, wall            time.Duration
	occMin, occMax, occSum float64
}

// stream runs the pod decision stream on s: an untimed warm-up to 50%
// occupancy, then the timed decisions.
func stream(o Options, s *gang.State, res *Result) {
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	t := newTracker(s, res.GPUs)
	shapes := podShapes(o.GPUsPerNode, res.WholeNodes, res.MIGNodes, o.PinWhole)
	for misses := 0; t.occupancy() < 0.5 && misses < 100; {
		sh := pickShape(rng, shapes)
		if _, ok := t.place(oneTask(t.name("p"), sh.demand), sh.units); ok {
			res.WarmupPlaced++
		} else {
			misses++
		}
	}
	run := streamRun{lat: make([]time.Duration, o.decisions()), occMin: math.Inf(1)}
	bar := o.phase("pod decisions")
	start := time.Now()
	for i := range run.lat {
		for target := streamTarget(i, len(run.lat)); t.occupancy() > target && len(t.live) > 0; {
			d, _ := t.releaseAt(rng.IntN(len(t.live))) // names come from live: no error
			run.rel = append(run.rel, d)
		}
		sh := pickShape(rng, shapes)
		d, ok := t.place(oneTask(t.name("p"), sh.demand), sh.units)
		run.lat[i] = d
		run.place += d
		res.count(d, ok, sh.demand.MIG != "")
		occ := t.occupancy()
		run.occMin, run.occMax, run.occSum = min(run.occMin, occ), max(run.occMax, occ), run.occSum+occ
		bar(i+1, len(run.lat))
	}
	run.wall = time.Since(start)
	res.summariseStream(&run)
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
