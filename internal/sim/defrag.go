package sim

import (
	"sort"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/sched"
)

// Defrag moves small checkpointing jobs out of the way of a large gang
// that waits only because free GPUs are scattered. Off unless Enabled.
type Defrag struct {
	Enabled bool
	// MaxMovesPerHour bounds the jobs moved in any hour (0: 4 per hour).
	MaxMovesPerHour int
	// MaxNodes bounds the nodes emptied for one gang (0: 16).
	MaxNodes int
}

func (d Defrag) movesPerHour() int { return cmpOr(d.MaxMovesPerHour, 4) }
func (d Defrag) maxNodes() int     { return cmpOr(d.MaxNodes, 16) }

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// defragment tries to start p (shaped j) now by moving small checkpointing
// jobs off a few nodes: only when enough GPUs are free in all, when the
// GPU-hours p gains by starting now rather than at its reservation exceed
// the work the moved jobs lose (since their last checkpoint, plus a
// restart, or only the restart with a grace period), and within the hourly
// bound. The moved jobs go back to the queue and restart elsewhere. It
// reports whether p was placed.
func (s *Sim) defragment(p *pendingJob, j *job.Job) bool {
	if !s.opt.Defrag.Enabled || s.acct.capacity-s.acct.allocated < demandGPUs(p.a)-1e-9 {
		return false // off, or GPUs are short, not scattered
	}
	if s.noDefrag.same(p.a.Job.Name, s.version) {
		return false
	}
	s.noDefrag.note(p.a.Job.Name, s.version)
	at, _ := s.reservation(j)
	if at == forever {
		return false // no estimate of what waiting costs
	}
	gain := demandGPUs(p.a) * (at - s.now).Hours()
	victims, lost := s.movablePlan(j, demandGPUs(p.a))
	if victims == nil || lost >= gain {
		if victims != nil {
			s.note(p.a.Job.Name, "waits: moving %d small jobs would lose %.1f GPU-h to gain %.1f", len(victims), lost, gain)
		}
		return false
	}
	if s.moved.count(s.now)+len(victims) > s.opt.Defrag.movesPerHour() {
		return false
	}
	s.defragGainGPUH += gain - lost
	s.note(p.a.Job.Name, "%d small jobs moved out of its way: gains %.1f GPU-h, they lose %.1f", len(victims), gain, lost)
	return s.stopFor(p, j, victims, "moved to make room for", &s.moved, func(name string) {
		s.records[s.byName[name]].Moves++
		s.schedule(event{at: s.now, arrival: -1, wake: name}) // placed again in the room left, this moment
	})
}

// movablePlan picks the nodes whose movable jobs, once gone, let j fit:
// nodes are taken in order of the GPUs that cannot move there (fewest
// first), then of the work their movable jobs would lose. It returns the
// jobs to move, in name order, and the GPU-hours they lose; nil if no
// such set of at most MaxNodes nodes exists. As many GPUs are free as j
// asks for, so the moved jobs, each smaller than j, go back to the queue
// with as many GPUs free as they held: usually they restart at once in
// the scattered room j did not need.
func (s *Sim) movablePlan(j *job.Job, need float64) ([]string, float64) {
	type candidate struct {
		node  int
		jobs  []string
		stuck float64 // GPUs held by what cannot move
		lost  float64
	}
	nodes := s.state.Fleet().Nodes
	var cands []candidate
	for n := range nodes {
		if !nodes[n].Schedulable() {
			continue
		}
		c := candidate{node: n}
		movable := true
		for _, part := range s.state.Affected(nodes[n].Name) {
			r := s.running[s.ownerOf(part)]
			held := placedGPUs(s.state.Job(part))
			if r == nil || !s.movable(r, need) {
				c.stuck += held
				movable = false
				continue
			}
			c.jobs = append(c.jobs, r.a.Job.Name)
			c.lost += s.moveCost(r)
		}
		if len(c.jobs) > 0 || movable {
			cands = append(cands, c)
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].stuck != cands[b].stuck {
			return cands[a].stuck < cands[b].stuck
		}
		return cands[a].lost < cands[b].lost
	})
	seen := map[string]bool{}
	var release []string
	lost := 0.0
	for i, c := range cands {
		if i == s.opt.Defrag.maxNodes() {
			break
		}
		for _, name := range c.jobs {
			if !seen[name] {
				seen[name] = true
				release = append(release, s.running[name].parts...)
				lost += s.moveCost(s.running[name])
			}
		}
		if len(release) > 0 && s.state.WhatIf(release, j) {
			names := make([]string, 0, len(seen))
			for name := range seen {
				names = append(names, name)
			}
			sort.Strings(names)
			return names, lost
		}
	}
	return nil, 0
}

// movable reports whether a running job may be moved for a gang asking
// for need GPUs: it checkpoints, runs on one node, is smaller than the
// gang, and has not been stopped too often.
func (s *Sim) movable(r *runningJob, need float64) bool {
	if r.a.Job.CheckpointEvery <= 0 || r.gpus >= need || s.now < r.start {
		return false
	}
	rec := &s.records[s.byName[r.a.Job.Name]]
	if rec.Moves+rec.Preemptions >= sched.DefaultMaxPreemptions {
		return false
	}
	node := -1
	for _, part := range r.parts {
		for _, t := range s.state.Job(part).Tasks {
			if node >= 0 && t.Node != node {
				return false
			}
			node = t.Node
		}
	}
	return true
}

// moveCost is what moving a running job loses: its restart, and with no
// grace period its work since the last checkpoint.
func (s *Sim) moveCost(r *runningJob) float64 {
	if s.opt.PreemptGrace > 0 {
		return r.gpus * restartCost.Hours()
	}
	return s.stopCost(r)
}
