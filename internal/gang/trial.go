package gang

import (
	"errors"
	"slices"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/placement"
)

// A trial lets a face keep one State from cycle to cycle, as a live
// scheduler keeps its cache: the face tells the state what runs (Adopt,
// Release, SetHealth), opens a trial (Begin) for a cycle's decisions, and
// undoes them (Undo) before it tells the state what changed since. Undo
// restores what every placement, release, resize, health change and
// arrival learnt in the trial changed, so a cycle costs what it decides,
// not what the fleet holds.
type trial struct {
	open bool
	// jobs holds each job changed in the trial as it was before its first
	// change (nil: it was not placed).
	jobs map[string]*Placement
	// observed holds each job whose arrival mark changed, with its mark
	// before.
	observed map[string]bool
	// health holds each node whose health changed, with its health before.
	health map[int]fleet.Health
	// learner is what the packer had learnt before the trial's first
	// arrival; learnt says whether it is set.
	learner placement.Saved
	learnt  bool
	shares  shareMix // the running shared tasks before
}

// ErrTrial is returned by Begin when a trial is already open and by Undo
// when none is.
var ErrTrial = errors.New("gang: trials do not nest; Undo closes the one open")

// Begin opens a trial: every change from now on is undone by Undo.
func (s *State) Begin() error {
	if s.trial.open || len(s.journal.marks) > 0 {
		return ErrTrial
	}
	s.trial = trial{open: true, jobs: map[string]*Placement{}, observed: map[string]bool{}, health: map[int]fleet.Health{},
		shares: shareMix{sizes: slices.Clone(s.shares.sizes), counts: slices.Clone(s.shares.counts), total: s.shares.total}}
	s.savepoint()
	return nil
}

// InTrial reports whether a trial is open.
func (s *State) InTrial() bool { return s.trial.open }

// Undo closes the open trial and restores the state as it was at Begin.
// The version moves on: what a cache keyed by it saw in the trial is gone.
func (s *State) Undo() error {
	t := &s.trial
	if !t.open || len(s.journal.marks) != 1 {
		return ErrTrial
	}
	for n, h := range t.health {
		s.fleet.Nodes[n].Health = h
	}
	s.rollback()
	for n := range t.health {
		s.reindex(n) // a health change alone touches no node
	}
	for name, before := range t.jobs {
		if before != nil {
			s.jobs[name] = before
		} else {
			delete(s.jobs, name)
		}
	}
	s.shares = t.shares
	for name, mark := range t.observed {
		if mark {
			s.packer.observed[name] = true
		} else {
			delete(s.packer.observed, name)
		}
	}
	if t.learnt {
		s.packer.learner.Restore(t.learner)
	}
	s.trial = trial{}
	s.version++
	return nil
}

// noteJob keeps, in an open trial, job name as it is before its first
// change: a copy, since a move (Replace) changes a placement in place.
func (s *State) noteJob(name string) {
	if !s.trial.open {
		return
	}
	if _, ok := s.trial.jobs[name]; ok {
		return
	}
	var before *Placement
	if p := s.jobs[name]; p != nil {
		c := *p
		before = &c
	}
	s.trial.jobs[name] = before
}

// noteObserved keeps, in an open trial, job name's arrival mark before its
// first change.
func (s *State) noteObserved(name string) {
	if !s.trial.open {
		return
	}
	if _, ok := s.trial.observed[name]; !ok {
		s.trial.observed[name] = s.packer.observed[name]
	}
}

// noteLearner keeps, in an open trial, what the packer learnt before the
// trial's first arrival.
func (s *State) noteLearner() {
	if s.trial.open && !s.trial.learnt {
		s.trial.learner, s.trial.learnt = s.packer.learner.Save(), true
	}
}

// noteHealth keeps, in an open trial, node n's health before its first
// change.
func (s *State) noteHealth(n int) {
	if !s.trial.open {
		return
	}
	if _, ok := s.trial.health[n]; !ok {
		s.trial.health[n] = s.fleet.Nodes[n].Health
	}
}
