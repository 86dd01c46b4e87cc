package gang

import "github.com/corral-sched/corral/internal/placement"

// Learned is the mix of task shapes the packing policy has learned from
// the jobs offered so far: what a face persists, so that after a restart
// or a change of leader (or a state built again) the state places single
// tasks as the old one would have (Learn), instead of on a mix learned
// again from the jobs it finds running.
func (s *State) Learned() placement.Learned { return s.packer.learner.Learned() }

// Learn replaces what the packing policy has learned with learned, as
// written by Learned. Jobs the learned mix already counts are then
// adopted inside Counted, so that they are not learned twice. Inside a
// trial, Undo restores the mix before. It refuses a learned mix no state
// writes, changing nothing.
func (s *State) Learn(learned placement.Learned) error {
	s.noteLearner()
	return s.packer.learner.Learn(learned)
}

// Counted runs fn, in which Adopt and AdoptShareOn do not teach the
// packing policy the jobs they adopt: jobs that the mix given to Learn
// already counts.
func (s *State) Counted(fn func()) {
	s.counted = true
	defer func() { s.counted = false }()
	fn()
}
