package scalebench

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// gangShape is a gang of tasks tasks of gpus GPUs each.
type gangShape struct{ tasks, gpus int }

// gang512 times 512-GPU gangs with a required block constraint on a fresh
// state whose free GPUs are scattered: even trials as 512/G tasks of G
// GPUs, odd ones as 512/(G/2) tasks of G/2.
func gang512(o Options, f *fleet.Fleet, res *Result) error {
	s, err := gang.New(f)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 2))
	t := newTracker(s, res.GPUs)
	if err := fragment(rng, t, f, res, o.GPUsPerNode); err != nil {
		return err
	}
	g, half := o.GPUsPerNode, max(o.GPUsPerNode/2, 1)
	shapes := []gangShape{{ceilDiv(gangGPUs, g), g}, {ceilDiv(gangGPUs, half), half}}
	lat := make([]time.Duration, o.GangTrials)
	byShape := make([][]time.Duration, len(shapes))
	res.Gang512Shapes = make([]ShapeStats, len(shapes))
	for i, sh := range shapes {
		res.Gang512Shapes[i] = ShapeStats{Tasks: sh.tasks, GPUsPerTask: sh.gpus}
	}
	bar := o.phase("gang512 trials")
	for i := range lat {
		k := i % len(shapes)
		d, err := gangTrial(rng, t, shapes[k], g, res, &res.Gang512Shapes[k])
		if err != nil {
			return err
		}
		lat[i] = d
		byShape[k] = append(byShape[k], d)
		bar(i+1, len(lat))
	}
	res.Gang512Trials = len(lat)
	q := quantiles(lat)
	res.Gang512P50Ms, res.Gang512P99Ms, res.Gang512MaxMs = q.at(0.5), q.at(0.99), q.at(1)
	for k := range shapes {
		qs := quantiles(byShape[k])
		res.Gang512Shapes[k].P50Ms, res.Gang512Shapes[k].P99Ms = qs.at(0.5), qs.at(0.99)
	}
	return nil
}

// fragment fills t's state with random jobs until one does not fit, then
// releases random jobs down to 70%, and counts the free nodes left.
func fragment(rng *rand.Rand, t *tracker, f *fleet.Fleet, res *Result, g int) error {
	res.Gang512FillJobs = t.fillUntil(rng, 1, g)
	res.Gang512FillPeakPct = 100 * t.occupancy()
	if err := t.releaseDownTo(rng, 0.7); err != nil {
		return fmt.Errorf("fragment: %w", err)
	}
	res.Gang512OccupancyPct = 100 * t.occupancy()
	half := max(g/2, 1)
	for n := range f.Nodes {
		switch free := t.s.FreeGPUs(n); {
		case free == g:
			res.Gang512FreeNodes++
		case free >= half:
			res.Gang512HalfFreeNodes++
		}
	}
	return nil
}

// gangTrial times one gang of shape sh with a required block, releases it
// if placed, then churns 16 fill jobs and fills back to 70% (untimed).
func gangTrial(rng *rand.Rand, t *tracker, sh gangShape, g int, res *Result, out *ShapeStats) (time.Duration, error) {
	j := &job.Job{Name: "gang512",
		Groups:   []job.Group{{Name: "worker", Count: sh.tasks, Task: wholeGPUs(sh.gpus, g)}},
		Topology: []job.Constraint{{Level: "block", Required: true}}}
	start := time.Now()
	_, unfit := t.s.Place(j)
	d := time.Since(start)
	out.Trials++
	if unfit == nil {
		out.Placed++
		res.Gang512Placed++
		if err := t.s.Release(j.Name); err != nil {
			return d, fmt.Errorf("release the gang: %w", err)
		}
	} else {
		out.Unfit++
		res.Gang512Unfit++
	}
	for c := 0; c < 16 && len(t.live) > 0; c++ {
		if _, err := t.releaseAt(rng.IntN(len(t.live))); err != nil {
			return d, fmt.Errorf("churn: %w", err)
		}
	}
	t.fillUntil(rng, 0.7, g)
	return d, nil
}

// mixedGangs places o.Gangs gangs of whole-node tasks over a background of
// small jobs, releasing the oldest gangs first to keep room.
func mixedGangs(o Options, f *fleet.Fleet, res *Result) error {
	s, err := gang.New(f)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 3))
	g := o.GPUsPerNode
	bg := newTracker(s, res.GPUs)
	bg.fillUntil(rng, 0.3, g)
	if err := bg.releaseDownTo(rng, 0.2); err != nil {
		return fmt.Errorf("background: %w", err)
	}
	gangs := newTracker(s, res.GPUs)
	gangs.used = bg.used // one occupancy for both
	lat := make([]time.Duration, o.Gangs)
	var placeTotal time.Duration
	bar := o.phase("mixed gangs")
	start := time.Now()
	for i := range lat {
		j, tasks := mixedGang(rng, gangs.name("g"), g)
		units := tasks * g * migUnitsPerGPU
		for len(gangs.live) > 0 && float64(gangs.used+units) > 0.8*float64(gangs.total) {
			if err := gangs.releaseOldest(); err != nil {
				return fmt.Errorf("release the oldest gang: %w", err)
			}
			res.MixedGangsReleased++
		}
		d, ok := gangs.place(j, units)
		lat[i] = d
		placeTotal += d
		if ok {
			res.MixedGangsPlaced++
			res.MixedGangsGPUsPlaced += tasks * g
		} else {
			res.MixedGangsUnfit++
		}
		bar(i+1, len(lat))
	}
	res.MixedGangsLoopSeconds = time.Since(start).Seconds()
	res.MixedGangs = len(lat)
	res.MixedGangsSeconds = placeTotal.Seconds()
	q := quantiles(lat)
	res.MixedGangsP50Ms, res.MixedGangsP99Ms, res.MixedGangsMaxMs = q.at(0.5), q.at(0.99), q.at(1)
	return nil
}

// mixedGang draws one gang of 1..512/g tasks of g GPUs: 40% unconstrained,
// 40% with a required block, 20% with a required rack (at most a rack's
// nodes). It returns the job and its number of tasks.
func mixedGang(rng *rand.Rand, name string, g int) (*job.Job, int) {
	maxTasks := ceilDiv(gangGPUs, g)
	j := &job.Job{Name: name}
	tasks := 1 + rng.IntN(maxTasks)
	switch r := rng.IntN(100); {
	case r < 40:
	case r < 80:
		j.Topology = []job.Constraint{{Level: "block", Required: true}}
	default:
		tasks = 1 + rng.IntN(min(maxTasks, fleet.DefaultNodesPerRack))
		j.Topology = []job.Constraint{{Level: "rack", Required: true}}
	}
	j.Groups = []job.Group{{Name: "worker", Count: tasks, Task: wholeGPUs(g, g)}}
	return j, tasks
}
