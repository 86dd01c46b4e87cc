package workload

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

// PCG stream constants: arrival times and job shapes draw from separate
// streams of the seed, so a change of shapes leaves arrival times alone.
const (
	streamArrivals uint64 = 0x61727269 // "arri"
	streamJobs     uint64 = 0x6a6f6273 // "jobs"
)

// draft is an arrival before its job is made.
type draft struct {
	at     time.Duration
	seq    int // generation order, the tie-break
	tenant int
	shape  int
}

// generator holds a validated spec resolved into indices and choosers.
type generator struct {
	spec     GenSpec
	tenants  chooser
	mixes    []chooser // per tenant, over its mix
	mixShape [][]int   // per tenant, the shape index of each mix entry
	tasks    []chooser // per shape; zero chooser when Tasks is empty
	demands  []chooser // per shape
}

// Generate makes the workload spec describes. It is deterministic: the
// same spec and seed give deeply equal workloads. Arrivals are sorted by
// time and named Prefix-NNNNNN in that order; times are whole seconds.
func Generate(spec GenSpec, seed uint64) (Workload, error) {
	if err := spec.Validate(); err != nil {
		return Workload{}, fmt.Errorf("generate: %w", err)
	}
	g := newGenerator(spec)
	drafts := g.drafts(rand.New(rand.NewPCG(seed, streamArrivals)))
	r := rand.New(rand.NewPCG(seed, streamJobs))
	arrivals := make([]Arrival, len(drafts))
	width := max(6, len(strconv.Itoa(len(drafts)-1)))
	for i, d := range drafts {
		arrivals[i] = g.arrival(r, g.name(i, width), d)
	}
	return Workload{Arrivals: arrivals, Horizon: spec.Horizon}, nil
}

func newGenerator(spec GenSpec) *generator {
	if spec.Prefix == "" {
		spec.Prefix = "job"
	}
	g := &generator{spec: spec}
	tenants := make([]Weighted[string], len(spec.Tenants))
	for i, t := range spec.Tenants {
		tenants[i] = Weighted[string]{t.Name, t.Weight}
		g.mixes = append(g.mixes, newChooser(t.Mix))
		idx := make([]int, len(t.Mix))
		for j, c := range t.Mix {
			idx[j] = slices.IndexFunc(spec.Shapes, func(sh Shape) bool { return sh.Class == c.Value })
		}
		g.mixShape = append(g.mixShape, idx)
	}
	g.tenants = newChooser(tenants)
	for _, sh := range spec.Shapes {
		var tasks chooser
		if len(sh.Tasks) > 0 {
			tasks = newChooser(sh.Tasks)
		}
		g.tasks = append(g.tasks, tasks)
		g.demands = append(g.demands, newChooser(sh.Demands))
	}
	return g
}

// drafts runs the arrival process over the horizon and returns the
// arrivals sorted by time, then generation order. Offsets inside a burst
// are whole seconds below BurstWithin.
func (g *generator) drafts(r *rand.Rand) []draft {
	p := g.spec.Arrivals
	burstMean := max(p.BurstMean, 1)
	gap := time.Duration(float64(time.Hour) * burstMean / p.PerHour)   // mean time between bursts
	expected := int(min(g.spec.Horizon.Hours()*p.PerHour, 1<<22)) + 16 // a capacity hint
	out := make([]draft, 0, expected+expected/8)
	for t := exponential(r, gap); t < g.spec.Horizon; t += exponential(r, gap) {
		tenant := g.tenants.pick(r)
		shape := g.mixShape[tenant][g.mixes[tenant].pick(r)]
		for range geometric(r, p.BurstMean) {
			at := t
			if p.BurstWithin >= time.Second {
				at += time.Duration(r.Int64N(int64(p.BurstWithin/time.Second))) * time.Second
			}
			if at < g.spec.Horizon {
				out = append(out, draft{at: at, seq: len(out), tenant: tenant, shape: shape})
			}
		}
	}
	slices.SortFunc(out, func(a, b draft) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	return out
}

// name is Prefix-i with i zero-padded to width digits, so that names sort
// as their arrival order.
func (g *generator) name(i, width int) string {
	digits := strconv.Itoa(i)
	buf := make([]byte, 0, len(g.spec.Prefix)+1+width)
	buf = append(append(buf, g.spec.Prefix...), '-')
	for range width - len(digits) {
		buf = append(buf, '0')
	}
	return string(append(buf, digits...))
}

// arrival draws the job of one draft.
func (g *generator) arrival(r *rand.Rand, name string, d draft) Arrival {
	sh := &g.spec.Shapes[d.shape]
	t := &g.spec.Tenants[d.tenant]
	tasks := 1
	if len(sh.Tasks) > 0 {
		tasks = sh.Tasks[g.tasks[d.shape].pick(r)].Value
	}
	demand := g.spec.Sharing.apply(sh.Demands[g.demands[d.shape].pick(r)].Value)
	demand.Models = slices.Clone(demand.Models) // no job shares a slice with the spec
	duration := sh.Duration.sample(r)
	j := &job.Job{
		Name: name, Tenant: t.Name, Queue: t.Queue, Priority: t.Priority,
		Groups:      []job.Group{{Name: sh.Class, Count: tasks, Task: demand}},
		Topology:    sh.constraints(tasks),
		Preemptible: sh.Preemptible,
	}
	if sh.Checkpoint != (Span{}) {
		j.CheckpointEvery = sh.Checkpoint.sample(r, time.Minute)
	}
	if j.Preemptible && j.CheckpointEvery > 0 {
		j.Tolerations = []string{SpotTaint} // interruptible work may run on spot nodes
	}
	if sh.Elastic && tasks > 1 {
		j.MinMember, j.Elastic = 1, true
	}
	if !sh.NoEstimate {
		j.Runtime = g.spec.Estimates.estimate(duration, r)
	}
	return Arrival{At: d.at, Job: j, Duration: duration, Class: sh.Class}
}
