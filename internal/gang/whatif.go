package gang

import "github.com/corral-sched/corral/internal/job"

// WhatIf reports whether job j would fit if the named placed jobs were
// released first. It changes nothing.
func (s *State) WhatIf(release []string, j *job.Job) bool {
	pl, err := s.compile(j)
	if err != nil {
		return false
	}
	s.savepoint()
	s.quiet = true
	defer func() { s.quiet = false; s.rollback() }()
	for _, name := range release {
		if p := s.jobs[name]; p != nil {
			for i := len(p.Tasks) - 1; i >= 0; i-- {
				s.untake(p.Tasks[i])
			}
		}
	}
	_, unfit := s.placePlan(pl)
	return unfit == nil
}
