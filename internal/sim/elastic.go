package sim

import (
	"fmt"
	"sort"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/sched"
)

// ran is the GPU-hours a running job has run so far in its current run,
// over every size it had.
func (s *Sim) ran(r *runningJob) float64 {
	from := max(r.seg, r.start)
	return r.gpuH + r.gpus*max(s.now-from, 0).Hours()
}

// resize changes the GPUs a running job uses from now, its placements
// already changed from old to r.parts.
func (s *Sim) resize(r *runningJob, old []*gang.Placement, gpus float64) {
	r.gpuH = s.ran(r)
	r.seg = max(s.now, r.start)
	s.series.use(old, r.gpus, -1)
	s.series.use(s.placements(r.parts), gpus, 1)
	s.acct.used += gpus - r.gpus
	r.gpus = gpus
	entry := s.coreEntry(r)
	entry.Parts, entry.GPUs, entry.Grown, entry.Grow = r.parts, gpus, r.grown, s.growJob(r)
}

// growJob is what a running elastic job below its full size may still
// add (sched.Running.Grow): the tasks it runs without, any number of
// them, named for its next part; nil when it cannot grow.
func (s *Sim) growJob(r *runningJob) *job.Job {
	name := r.a.Job.Name
	if !s.growable[name] {
		return nil
	}
	g := r.a.Job.Groups[0]
	shape := *r.a.Job
	shape.Name = fmt.Sprintf("%s+%d", name, r.run*1000+len(r.grown)+1)
	shape.Groups = []job.Group{{Name: g.Name, Count: r.missing, Task: g.Task}}
	shape.MinMember = 1
	return &shape
}

// growElastic adds tasks to running elastic jobs that started smaller than
// they asked, as far as the fleet allows, in name order: volcano-like's
// growth of jobs above minAvailable. corral's cycle decides its own
// (sched.Decisions.Grows, applied by grew).
func (s *Sim) growElastic() {
	if len(s.growable) == 0 || s.growTried == s.version+1 {
		return // nothing changed since the last attempt
	}
	defer func() { s.growTried = s.version + 1 }()
	names := make([]string, 0, len(s.growable))
	for name := range s.growable {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if p, ok := s.tryPlace(s.growJob(s.running[name])); ok {
			s.addGrown(name, p)
		}
	}
}

// grew applies a part the cycle grew an elastic job by, already placed.
func (s *Sim) grew(g sched.Grow) {
	s.acct.allocated += placedGPUs(g.Placement)
	s.series.hold(g.Placement, 1)
	s.placedOn(g.Placement)
	s.addGrown(g.Unit, g.Placement)
}

// addGrown makes p, just placed, a part of the named elastic job.
func (s *Sim) addGrown(name string, p *gang.Placement) {
	r := s.running[name]
	old := s.placements(r.parts)
	r.parts = append(r.parts, p.Job)
	r.grown = append(r.grown, p.Job)
	s.owner[p.Job] = name
	r.missing -= len(p.Tasks)
	if r.missing == 0 {
		delete(s.growable, name)
	}
	s.resize(r, old, r.gpus+float64(len(p.Tasks))*taskGPUs(r.a.Job.Groups[0].Task))
	s.version++
	s.note(name, "grows by %d tasks to %d", len(p.Tasks), r.a.Job.Tasks()-r.missing)
}

// gaveBack applies a part the cycle took back from an elastic job for a
// waiting job: the state no longer holds it, s.gone does until now.
func (s *Sim) gaveBack(gb sched.GiveBack) {
	name, part, p := gb.Unit, gb.Part, gb.Placement
	r := s.running[name]
	old := s.placements(r.parts) // the parts not yet applied are in s.gone
	delete(s.gone, part)
	tasks := len(p.Tasks)
	r.parts = remove(r.parts, part)
	r.grown = remove(r.grown, part)
	r.missing += tasks
	s.growable[name] = true
	s.resize(r, old, r.gpus-float64(tasks)*taskGPUs(r.a.Job.Groups[0].Task))
	s.acct.allocated -= placedGPUs(p)
	s.series.hold(p, -1)
	s.releasedFrom(p)
	delete(s.owner, part)
	s.version++
	s.note(name, "shrinks by %d tasks to %d", tasks, r.a.Job.Tasks()-r.missing)
}

func remove(xs []string, x string) []string {
	for i, y := range xs {
		if y == x {
			return append(xs[:i:i], xs[i+1:]...)
		}
	}
	return xs
}
