package gang

import "github.com/corral-sched/corral/internal/job"

// WhatIf reports whether job j would fit if the named placed jobs were
// released first. It changes nothing. For a job of one task shape it only
// counts capacity (exact for one shape, as placement is); otherwise it
// places the job and undoes it.
func (s *State) WhatIf(release []string, j *job.Job) bool {
	pl, err := s.compile(j)
	if err != nil {
		return false
	}
	s.savepoint()
	s.quiet = true
	defer func() { s.quiet = false; s.rollback() }()
	s.untakeJobs(release)
	if len(pl.reqs) == 1 {
		return s.fitsSingle(pl)
	}
	_, unfit := s.placePlan(pl)
	return unfit == nil
}

// fitsSingle reports whether placeSingle would place pl, without placing.
func (s *State) fitsSingle(pl *plan) bool {
	lim := pl.lim
	if lim.spreadDepth >= 0 && !pl.spread.Required {
		lim.spreadDepth = -2 // a preferred spread gives way in the end
	}
	return s.room(pl, lim) >= pl.job.MinTasks()
}

// Explain says why job j does not fit now, without placing it; nil when it
// fits.
func (s *State) Explain(j *job.Job) *Unfit {
	pl, err := s.compile(j)
	if err != nil {
		return &Unfit{Job: j.Name, Refused: err.Error()}
	}
	if s.WhatIf(nil, j) {
		return nil
	}
	if len(pl.reqs) == 1 {
		return withShapeReason(s.explain(pl, pl.reqs[0], pl.job.MinTasks()), pl.job)
	}
	return withShapeReason(s.explainMulti(pl), pl.job)
}

// PlaceIf returns where job j would be placed if the named placed jobs
// were released first. It changes nothing; the placement is not recorded.
func (s *State) PlaceIf(release []string, j *job.Job) (*Placement, bool) {
	pl, err := s.compile(j)
	if err != nil {
		return nil, false
	}
	s.savepoint()
	s.quiet = true
	defer func() { s.quiet = false; s.rollback() }()
	s.untakeJobs(release)
	tasks, unfit := s.placePlan(pl)
	if unfit != nil {
		return nil, false
	}
	return &Placement{Job: j.Name, Tasks: tasks, Span: s.span(tasks), job: pl.job}, true
}

// untakeJobs frees what the named placed jobs hold, inside a savepoint.
func (s *State) untakeJobs(names []string) {
	s.untaken = s.untaken[:0]
	for _, name := range names {
		if p := s.jobs[name]; p != nil {
			s.giveTasks(p.Tasks)
		}
	}
	s.reindexUntaken()
}
