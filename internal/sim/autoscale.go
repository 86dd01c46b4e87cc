package sim

import (
	"fmt"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// Autoscale sizes one pool between Min and Max nodes: the fleet's nodes of
// the pool are the most it can have (Max caps them further). A node is
// provisioned when a waiting job would fit with it and not without, and
// takes ProvisionDelay to join; a node empty for ScaleDownAfter goes
// away, down to Min (0: scale to zero). Nodes that are not there are
// neither schedulable nor paid for.
type Autoscale struct {
	Pool           string
	Min, Max       int
	ProvisionDelay time.Duration
	ScaleDownAfter time.Duration
}

func (a Autoscale) check() error {
	if a.Pool == "" || a.Min < 0 || a.Max < a.Min || a.ProvisionDelay < 0 || a.ScaleDownAfter <= 0 {
		return fmt.Errorf("autoscale %q: min %d, max %d, delay %v, scale down after %v: want a pool name, 0 <= min <= max, delay >= 0, scale-down time > 0",
			a.Pool, a.Min, a.Max, a.ProvisionDelay, a.ScaleDownAfter)
	}
	return nil
}

// Node states under an autoscaler.
type nodeState uint8

const (
	absent nodeState = iota
	provisioning
	present
)

// scaler runs one pool's autoscaling.
type scaler struct {
	cfg   Autoscale
	nodes []int // the pool's node indices, fleet order, at most Max
	state []nodeState
	live  int // present or provisioning
}

// autoscaling is the simulator's autoscalers and what they did.
type autoscaling struct {
	scalers    []*scaler
	of         map[int]*scaler // node index -> its scaler
	slot       map[int]int     // node index -> index in its scaler
	emptySince map[int]time.Duration
	ups, downs int
	boughtSec  float64 // GPU-seconds of nodes present or provisioning
	liveGPUs   float64
	last       time.Duration
}

// setUpAutoscaling starts every autoscaled pool at its minimum: the
// pool's first Min nodes are there, the rest are not.
func (s *Sim) setUpAutoscaling() error {
	s.scale = autoscaling{of: map[int]*scaler{}, slot: map[int]int{}, emptySince: map[int]time.Duration{}}
	for _, n := range s.fleet.Nodes {
		if n.Schedulable() {
			s.scale.liveGPUs += float64(n.GPUs)
		}
	}
	for _, cfg := range s.opt.Autoscale {
		if err := cfg.check(); err != nil {
			return err
		}
		sc := &scaler{cfg: cfg}
		for i := range s.fleet.Nodes {
			if s.fleet.Nodes[i].Pool == cfg.Pool {
				sc.nodes = append(sc.nodes, i)
			}
		}
		if len(sc.nodes) == 0 {
			return fmt.Errorf("autoscale: the fleet has no pool %q", cfg.Pool)
		}
		sc.state = make([]nodeState, len(sc.nodes))
		for k, n := range sc.nodes {
			s.scale.of[n], s.scale.slot[n] = sc, k
			switch {
			case k < cfg.Min:
				sc.state[k] = present
				sc.live++
				s.noteEmpty(n)
			default:
				s.scale.liveGPUs -= float64(s.fleet.Nodes[n].GPUs)
				s.setHealth(s.fleet.Nodes[n].Name, fleet.Cordoned)
			}
		}
		s.scale.scalers = append(s.scale.scalers, sc)
	}
	return nil
}

// advanceBought integrates the GPUs paid for up to now.
func (s *Sim) advanceBought(to time.Duration) {
	if to > s.scale.last {
		s.scale.boughtSec += s.scale.liveGPUs * (to - s.scale.last).Seconds()
		s.scale.last = to
	}
}

// scaleUp provisions nodes for waiting jobs that would fit with them and
// do not fit now, in queue order, one job's worth of nodes at a time.
func (s *Sim) scaleUp() {
	if len(s.scale.scalers) == 0 {
		return
	}
	const look = 64 // waiting jobs considered per moment
	for i, p := range s.pending {
		if i == look {
			break
		}
		if p.awaitingNodes > 0 || p.scaleTried == s.version+1 {
			continue
		}
		p.scaleTried = s.version + 1
		j := p.a.Job
		if s.state.WhatIf(nil, j) {
			continue // it fits already: it waits for its turn, not for nodes
		}
		for _, sc := range s.scale.scalers {
			if nodes := s.nodesThatFit(sc, j); nodes != nil {
				s.provision(sc, nodes, p)
				break
			}
		}
	}
}

// nodesThatFit returns the fewest absent nodes of sc, in fleet order,
// with which j would fit, trying as many nodes as j has tasks at most; nil
// if none do.
func (s *Sim) nodesThatFit(sc *scaler, j *job.Job) []int {
	var absentNodes []int
	for k, st := range sc.state {
		if st == absent {
			absentNodes = append(absentNodes, sc.nodes[k])
		}
	}
	room := sc.cfg.Max - sc.live
	most := min(len(absentNodes), room, j.Tasks())
	for n := 1; n <= most; n++ {
		for _, node := range absentNodes[:n] {
			s.mustSetHealth(node, fleet.Healthy)
		}
		fits := s.state.WhatIf(nil, j)
		for _, node := range absentNodes[:n] {
			s.mustSetHealth(node, fleet.Cordoned)
		}
		if fits {
			return absentNodes[:n]
		}
	}
	return nil
}

func (s *Sim) mustSetHealth(node int, h fleet.Health) {
	if err := s.state.SetHealth(s.fleet.Nodes[node].Name, h); err != nil {
		panic(fmt.Sprintf("sim: %v", err))
	}
	s.healthChanges++
}

// provision starts nodes joining; they are paid for from now.
func (s *Sim) provision(sc *scaler, nodes []int, p *pendingJob) {
	for _, n := range nodes {
		sc.state[s.scale.slot[n]] = provisioning
		sc.live++
		s.scale.ups++
		s.scale.liveGPUs += float64(s.fleet.Nodes[n].GPUs)
		s.schedule(event{at: s.now + sc.cfg.ProvisionDelay, arrival: -1, provisioned: s.fleet.Nodes[n].Name, forJob: p})
	}
	p.awaitingNodes += len(nodes)
	s.note(p.a.Job.Name, "waits for %d new node(s) of pool %s, ready at %.2fh", len(nodes), sc.cfg.Pool, (s.now + sc.cfg.ProvisionDelay).Hours())
}

// joined brings a provisioned node into the fleet.
func (s *Sim) joined(name string, p *pendingJob) {
	n, _ := s.state.NodeIndex(name)
	sc := s.scale.of[n]
	sc.state[s.scale.slot[n]] = present
	s.setHealth(name, fleet.Healthy)
	s.noteEmpty(n)
	if p.awaitingNodes > 0 {
		p.awaitingNodes--
	}
	p.fresh = true
}

// noteEmpty records that node n is empty from now, and checks again when
// its idle time would run out.
func (s *Sim) noteEmpty(n int) {
	sc := s.scale.of[n]
	if sc == nil || sc.state[s.scale.slot[n]] != present || s.state.FreeGPUs(n) < s.fleet.Nodes[n].GPUs {
		return
	}
	if _, ok := s.scale.emptySince[n]; ok {
		return
	}
	s.scale.emptySince[n] = s.now
	s.schedule(event{at: s.now + sc.cfg.ScaleDownAfter, arrival: -1, idle: s.fleet.Nodes[n].Name})
}

// placedOn marks the nodes of a placement busy.
func (s *Sim) placedOn(p *gang.Placement) {
	if len(s.scale.scalers) == 0 {
		return
	}
	for _, t := range p.Tasks {
		delete(s.scale.emptySince, t.Node)
	}
}

// releasedFrom notes nodes a placement leaves empty.
func (s *Sim) releasedFrom(p *gang.Placement) {
	if len(s.scale.scalers) == 0 || p == nil {
		return
	}
	for _, t := range p.Tasks {
		s.noteEmpty(t.Node)
	}
}

// idleCheck removes a node that stayed empty for its pool's scale-down
// time, unless the pool is at its minimum.
func (s *Sim) idleCheck(name string) {
	n, _ := s.state.NodeIndex(name)
	sc := s.scale.of[n]
	since, ok := s.scale.emptySince[n]
	if !ok || s.now-since < sc.cfg.ScaleDownAfter {
		return // busy again since, or a later check is due
	}
	delete(s.scale.emptySince, n)
	if sc.live <= sc.cfg.Min || !s.fleet.Nodes[n].Schedulable() {
		return
	}
	sc.state[s.scale.slot[n]] = absent
	sc.live--
	s.scale.downs++
	s.scale.liveGPUs -= float64(s.fleet.Nodes[n].GPUs)
	s.setHealth(name, fleet.Cordoned)
}

// isAbsent reports whether a node is not in the fleet now (scaled down or
// still joining): faults do not touch it.
func (s *Sim) isAbsent(name string) bool {
	n, err := s.state.NodeIndex(name)
	if err != nil {
		return false
	}
	sc := s.scale.of[n]
	return sc != nil && sc.state[s.scale.slot[n]] != present
}
