package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/workload"
)

// fault applies one event of a fault process. A node failure stops every
// job on the node at once: each keeps the work of its last periodic
// checkpoint and goes back to the queue. A spot notice cordons the node
// and stops its jobs too, but they checkpoint during the notice, so they
// lose nothing if they checkpoint at all; the node comes back, a fresh
// spot node, when the notice runs out. Pods of jobs still waiting for
// their siblings that sat on the node are lost and placed again.
func (s *Sim) fault(f workload.Fault) {
	if s.isAbsent(f.Node) {
		return // a node scaled away (or still joining) has no faults
	}
	switch f.Kind {
	case workload.NodeFailure:
		s.setHealth(f.Node, fleet.Unhealthy)
		s.evict(f.Node, false)
	case workload.NodeRepair:
		s.setHealth(f.Node, fleet.Healthy)
		if n, err := s.state.NodeIndex(f.Node); err == nil {
			s.noteEmpty(n)
		}
	case workload.SpotNotice:
		s.setHealth(f.Node, fleet.Cordoned)
		s.evict(f.Node, true)
		s.schedule(event{at: s.now + f.Notice, arrival: -1, back: f.Node})
	}
}

func (s *Sim) setHealth(node string, h fleet.Health) {
	if err := s.state.SetHealth(node, h); err != nil {
		panic(fmt.Sprintf("sim: %v", err))
	}
	s.healthChanges++
	if h == fleet.Healthy {
		s.freed = true // room appeared
	}
}

// evict stops every job with a placement on node.
func (s *Sim) evict(node string, notice bool) {
	jobs := map[string]bool{}
	var names []string
	for _, part := range s.state.Affected(node) {
		name := s.ownerOf(part)
		if !jobs[name] {
			jobs[name] = true
			names = append(names, name)
		}
	}
	for _, name := range names {
		rec := s.faultRecord(name, node, notice)
		lost := s.lostSoFar(name)
		if s.replaceOnSpare(name, node, notice) {
			s.recordFault(rec, faultrec.Replaced, lost)
			continue
		}
		if s.running[name] != nil {
			defer s.recordFault(rec, faultrec.Requeued, lost) // once stopped
		}
		if s.running[name] != nil {
			cause := "node failure"
			if notice {
				cause = "spot notice"
			}
			s.interrupt(name, notice, cause)
		} else {
			s.dropHeld(name)
		}
	}
}

// ownerOf names the job a placement belongs to.
func (s *Sim) ownerOf(part string) string {
	if owner, ok := s.owner[part]; ok {
		return owner
	}
	if i := strings.IndexByte(part, '/'); i > 0 {
		return part[:i] // a pod of a job still waiting for its siblings
	}
	return part
}

// interrupt stops a running job and requeues it with the work it saved:
// all of it when it had notice and checkpoints, else its last periodic
// checkpoint.
func (s *Sim) interrupt(name string, notice bool, cause string) {
	r := s.stop(name)
	kept := s.chargeStop(r, notice, "stopped ("+cause+")")
	p := r.pending
	p.done, p.held, p.admitted, p.fresh = r.done+kept, nil, false, true
	p.requeued = s.now
	s.pending = append(s.pending, p)
	s.sortPending()
}

// chargeStop records on a running job's record that its run stops now, and
// returns the work of the run it keeps: all of it after a notice to
// checkpoint, else up to its last periodic checkpoint; nothing if it does
// not checkpoint. A job stopped while still held for its start did no work.
func (s *Sim) chargeStop(r *runningJob, notice bool, what string) time.Duration {
	elapsed := max(s.now-r.start, 0)
	kept := elapsed
	if every := r.a.Job.CheckpointEvery; every <= 0 {
		kept = 0
	} else if !notice {
		kept = elapsed / every * every
	}
	lost := r.gpus * (elapsed - kept).Hours()
	s.note(r.a.Job.Name, "%s: keeps %v of work, loses %.1f GPU-hours", what, r.done+kept, lost)
	rec := &s.records[s.byName[r.a.Job.Name]]
	rec.Interruptions++
	rec.GPUHours += s.ran(r)
	rec.LostGPUHours += lost
	return kept
}

// dropHeld frees the pods a waiting job holds, so that they are placed
// again from the start.
func (s *Sim) dropHeld(name string) {
	for _, p := range s.pending {
		if p.a.Job.Name != name {
			continue
		}
		for _, part := range p.held {
			s.release(part)
		}
		p.held = nil
		if p.admitted {
			s.unadmit(p)
		}
	}
}

// faultRecord starts the record of a fault on node that stops or moves
// the named job: the replay's clock reads as time from the Unix epoch.
func (s *Sim) faultRecord(name, node string, notice bool) faultrec.Record {
	kind := faultrec.NodeFailure
	if notice {
		kind = faultrec.SpotNotice
	}
	r := faultrec.Record{Event: faultrec.Event, Time: time.Unix(0, 0).UTC().Add(s.now), Kind: kind, Node: node, Work: name}
	if run := s.running[name]; run != nil {
		r.GPUs = run.gpus
	}
	return r
}

// lostSoFar is the job's lost GPU-hours before this fault.
func (s *Sim) lostSoFar(name string) float64 {
	if i, ok := s.byName[name]; ok {
		return s.records[i].LostGPUHours
	}
	return 0
}

// recordFault completes a fault's record once the job was handled: what
// it lost to this fault; the decision is at once in the replay.
func (s *Sim) recordFault(r faultrec.Record, action string, lostBefore float64) {
	r.Action = action
	r.LostGPUHours = s.lostSoFar(r.Work) - lostBefore
	if action == faultrec.Replaced {
		r.To = s.movedTo(r.Work, r.Node)
	}
	s.handledFaults = append(s.handledFaults, r)
}

// movedTo is the node a replaced job's tasks went to: one of its nodes
// that is not the failed one and was not before (the last such).
func (s *Sim) movedTo(name, failed string) string {
	p := s.state.Job(name)
	if p == nil {
		return ""
	}
	to := ""
	for _, t := range p.Tasks {
		if n := s.fleet.Nodes[t.Node].Name; n != failed {
			to = n
		}
	}
	return to
}
