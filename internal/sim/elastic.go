package sim

import (
	"fmt"
	"sort"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
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
	entry.Parts, entry.GPUs = r.parts, gpus
}

// growElastic adds tasks to running elastic jobs that started smaller than
// they asked, as far as the fleet allows, in name order. It runs only when
// nothing waits for room, and what it adds is given back first when
// something does (shrinkElastic).
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
		r := s.running[name]
		g := r.a.Job.Groups[0]
		shape := *r.a.Job
		shape.Name = fmt.Sprintf("%s+%d", name, r.run*1000+len(r.grown)+1)
		shape.Groups = []job.Group{{Name: g.Name, Count: r.missing, Task: g.Task}}
		shape.MinMember = 1
		p, ok := s.tryPlace(&shape)
		if !ok {
			continue
		}
		old := s.placements(r.parts)
		r.parts = append(r.parts, shape.Name)
		r.grown = append(r.grown, shape.Name)
		s.grown[name] = true
		s.owner[shape.Name] = name
		r.missing -= len(p.Tasks)
		if r.missing == 0 {
			delete(s.growable, name)
		}
		s.resize(r, old, r.gpus+float64(len(p.Tasks))*taskGPUs(g.Task))
		s.version++
		s.note(name, "grows by %d tasks to %d", len(p.Tasks), r.a.Job.Tasks()-r.missing)
	}
}

// shrinkElastic gives back tasks that elastic jobs grew by, newest first
// per job and jobs in name order, until p (shaped j) fits, and places it;
// it changes nothing and reports false if giving all of them back would
// not make room.
func (s *Sim) shrinkElastic(p *pendingJob, j *job.Job, quota bool) bool {
	if len(s.grown) == 0 || s.noShrink.same(p.a.Job.Name, s.version) {
		return false
	}
	s.noShrink.note(p.a.Job.Name, s.version)
	var parts []string
	names := make([]string, 0, len(s.grown))
	for name := range s.grown {
		names = append(names, name)
	}
	if len(names) == 0 {
		return false
	}
	sort.Strings(names)
	for _, name := range names {
		g := s.running[name].grown
		for i := len(g) - 1; i >= 0; i-- {
			parts = append(parts, g[i])
		}
	}
	if !s.state.WhatIf(parts, j) {
		return false
	}
	// The fewest placements, in this order, whose release makes room.
	k := sort.Search(len(parts), func(k int) bool { return s.state.WhatIf(parts[:k+1], j) }) + 1
	for _, part := range parts[:k] {
		s.giveBack(part)
	}
	s.note(j.Name, "elastic jobs give back %d grown placements to make room", k)
	return s.placeAdmitted(p, j, quota)
}

// giveBack releases one placement an elastic job grew by.
func (s *Sim) giveBack(part string) {
	name := s.owner[part]
	r := s.running[name]
	old := s.placements(r.parts)
	tasks := len(s.state.Job(part).Tasks)
	r.parts = remove(r.parts, part)
	r.grown = remove(r.grown, part)
	if len(r.grown) == 0 {
		delete(s.grown, name)
	}
	r.missing += tasks
	s.growable[name] = true
	s.resize(r, old, r.gpus-float64(tasks)*taskGPUs(r.a.Job.Groups[0].Task))
	s.release(part)
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
