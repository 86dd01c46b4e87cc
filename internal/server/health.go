package server

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
)

// stopDrain starts Job.Stopping for a job stopped because its GPU failed;
// such a job is always requeued.
const stopDrain = "drained: "

// HealthFunc reports the problems of each GPU by physical index; a GPU
// missing from the map, or with no problems, is healthy.
type HealthFunc func() (map[int][]string, error)

// checkHealth polls cfg.Health and applies a change: the jobs on a GPU that
// turned unhealthy are stopped and requeued, and the core's view of the
// machine is rebuilt without that GPU (or with it again once it recovers).
func (s *Server) checkHealth() {
	if s.cfg.Health == nil {
		return
	}
	problems, err := s.cfg.Health()
	if err != nil {
		s.log.Warn("GPU health check", "err", err)
		return
	}
	bad := map[int]string{}
	for i, p := range problems {
		if len(p) > 0 {
			bad[i] = strings.Join(p, "; ")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if maps.Equal(bad, s.bad) {
		return
	}
	s.setBad(bad)
}

// setBad drains the GPUs in bad and rebuilds the core's state. The caller
// holds s.mu.
func (s *Server) setBad(bad map[int]string) {
	for _, g := range slices.Sorted(maps.Keys(bad)) {
		if _, was := s.bad[g]; !was {
			s.log.Warn("GPU unhealthy: draining it", "gpu", g, "problems", bad[g])
			s.drain(g, bad[g])
		}
	}
	for g := range s.bad {
		if _, still := bad[g]; !still {
			s.log.Info("GPU healthy again", "gpu", g)
		}
	}
	s.bad = bad
	if err := s.rebuild(); err != nil {
		s.log.Error("rebuild after a GPU health change", "err", err)
	}
}

// drain stops and requeues every job with a task on GPU g.
func (s *Server) drain(g int, why string) {
	var victims []*run
	for _, id := range sortedIDs(s.runs) {
		r := s.runs[id]
		if slices.Contains(gpusOf(r.job.Tasks), g) && !r.drained {
			r.drained = true
			victims = append(victims, r)
		}
	}
	if len(victims) > 0 {
		s.stopRuns(victims, fmt.Sprintf("%sGPU %d unhealthy (%s)", stopDrain, g, why))
	}
}

// healthyGPUs lists the GPUs that take work.
func (s *Server) healthyGPUs() []GPU {
	var out []GPU
	for _, g := range s.gpus {
		if _, bad := s.bad[g.Index]; !bad {
			out = append(out, g)
		}
	}
	return out
}

// rebuild makes a new core state of the healthy GPUs and places the
// running jobs (those not being drained) in it, in ID order, mapping the
// core's GPU indices onto the physical GPUs they hold. The caller holds
// s.mu.
func (s *Server) rebuild() error {
	healthy := s.healthyGPUs()
	gpus := healthy
	if len(gpus) == 0 {
		gpus = s.gpus // keep a fleet, but take no work
	}
	f, _, err := buildFleet(gpus, &s.cfg)
	if err != nil {
		return err
	}
	state, err := gang.New(f)
	if err != nil {
		return err
	}
	if len(healthy) == 0 {
		if err := state.SetHealth(nodeName, fleet.Unhealthy); err != nil {
			return err
		}
	}
	adopt := func(fn func()) { fn() }
	if s.learnedCounts { // what the old state learned counts the running jobs already
		if err := state.Learn(s.state.Learned()); err != nil {
			return err
		}
		adopt = state.Counted
	}
	pairs := map[int]int{}
	adopt(func() {
		for _, id := range sortedIDs(s.runs) {
			r := s.runs[id]
			if r.drained {
				continue
			}
			p, err := state.Adopt(gangJob(&r.job), nodeName)
			if err != nil {
				s.log.Error("running job does not fit the machine's GPUs", "job", r.job.Name(), "err", err)
				continue
			}
			for i, t := range p.Tasks {
				if i < len(r.job.Tasks) {
					pair(pairs, t.GPUs, r.job.Tasks[i].GPUs)
				}
			}
		}
	})
	s.state, s.phys, s.learnedCounts = state, completeMapping(pairs, gpus), true
	return nil
}

// healthLoop polls GPU health every interval until the server stops.
func (s *Server) healthLoop(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case <-t.C:
			s.checkHealth()
			s.poke()
		}
	}
}

// isDrain reports whether a stop reason is a drain.
func isDrain(stopping string) bool { return strings.HasPrefix(stopping, stopDrain) }
